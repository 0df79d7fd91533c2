import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// One message of the visible branch. User messages sit right in a bubble (with their images and
// documents); replies sit left: collapsible reasoning, Markdown prose, code blocks with Copy, the
// knowledge sources the answer was written from (click one to open the file there), statistics.
// Actions appear on hover: copy, edit and resend (user), edit in place (reply), regenerate
// (reply), delete, and `< 1/2 >` between branches.
Item {
    id: root
    required property QtObject chat
    required property int index
    required property var messageId
    required property string role
    required property string content
    required property string reasoning
    required property var blocks
    required property string messageState
    required property string error
    required property bool streaming
    required property int branchIndex
    required property int branchCount
    required property var attachments
    required property var documents
    required property var sources
    required property string stats
    signal openImage(string source, string name)

    readonly property bool isUser: role === "user"
    property bool editing: false
    property bool reasoningOpen: false
    readonly property real maxWidth: Math.min(width - 48, 760)
    // Replies longer than this show their blocks as they come near the view.
    readonly property int lazyThreshold: 24000
    readonly property real revealMargin: 1200

    // Shows the blocks of a long reply that are within revealMargin of the view (once shown, a
    // block stays). Positions are laid out first; blocks not yet shown hold an estimated height.
    // Lays the reply out now. A delegate made while the view is replacing its rows (another
    // conversation opens) can miss the layouts' polish on Qt 6.4: its blocks would stay at zero
    // width until something else changes.
    function relayout() {
        blockColumn.forceLayout()
        answerColumn.ensurePolished()
        replyRow.ensurePolished()
        column.ensurePolished()
        if (blockColumn.lazy) revealBlocks()
    }
    Component.onCompleted: if (!isUser) Qt.callLater(relayout)

    function revealBlocks() {
        const view = ListView.view
        // Offsets from the blocks' own heights (estimated until shown): the Column may not be
        // laid out yet, or not at all while the page is hidden.
        let y = root.y + column.y + blockColumn.mapToItem(column, 0, 0).y
        const top = view ? view.contentY - revealMargin : -Infinity
        const bottom = view ? view.contentY + view.height + revealMargin : Infinity
        for (let i = 0; i < blockRepeater.count && y <= bottom; ++i) {
            const item = blockRepeater.itemAt(i)
            if (item === null) continue
            const h = item.implicitHeight
            if (!item.shown && y + h >= top) item.shown = true
            y += h + blockColumn.spacing
        }
    }
    Connections {
        target: root.ListView.view
        enabled: blockColumn.lazy
        function onContentYChanged() { Qt.callLater(root.revealBlocks) }
        function onHeightChanged() { Qt.callLater(root.revealBlocks) }
    }

    implicitHeight: column.implicitHeight + 20
    width: ListView.view ? ListView.view.width : 600

    HoverHandler { id: hover }

    function saveEdit() {
        if (editArea.text.trim().length === 0) return
        if (isUser) chat.editAndResend(messageId, editArea.text)
        else chat.editMessage(messageId, editArea.text)
        editing = false
    }
    function startEdit() {
        editArea.text = content
        editing = true
        editArea.forceActiveFocus()
    }

    ColumnLayout {
        id: column
        anchors.horizontalCenter: parent.horizontalCenter
        width: root.maxWidth
        y: 10
        spacing: 6

        // Images of a user message.
        Flow {
            visible: root.attachments.length > 0
            Layout.alignment: root.isUser ? Qt.AlignRight : Qt.AlignLeft
            Layout.maximumWidth: root.maxWidth * 0.8
            spacing: 8
            layoutDirection: root.isUser ? Qt.RightToLeft : Qt.LeftToRight
            Repeater {
                model: root.attachments
                delegate: Rectangle {
                    required property var modelData
                    width: 132
                    height: 132
                    radius: 12
                    color: Theme.surfaceAlt
                    border.color: Theme.border
                    clip: true
                    Image {
                        anchors.fill: parent
                        anchors.margins: 1
                        source: parent.modelData.source
                        sourceSize.width: 264
                        sourceSize.height: 264
                        fillMode: Image.PreserveAspectCrop
                        asynchronous: true
                        Accessible.name: parent.modelData.name
                    }
                    MouseArea {
                        anchors.fill: parent
                        cursorShape: Qt.PointingHandCursor
                        onClicked: root.openImage(parent.modelData.source, parent.modelData.name)
                    }
                }
            }
        }

        // Documents of a user message.
        Flow {
            visible: root.documents.length > 0
            Layout.alignment: root.isUser ? Qt.AlignRight : Qt.AlignLeft
            Layout.maximumWidth: root.maxWidth * 0.8
            spacing: 8
            layoutDirection: root.isUser ? Qt.RightToLeft : Qt.LeftToRight
            Repeater {
                model: root.documents
                delegate: DocumentChip {
                    required property var modelData
                    document: modelData
                    onOpenClicked: root.chat.openDocument(modelData.sha256, modelData.name, 0, 0)
                }
            }
        }

        // The user's bubble.
        Rectangle {
            visible: root.isUser && !root.editing && root.content.length > 0
            Layout.alignment: Qt.AlignRight
            Layout.maximumWidth: root.maxWidth * 0.8
            implicitWidth: Math.min(userText.implicitWidth + 32, root.maxWidth * 0.8)
            implicitHeight: userText.implicitHeight + 22
            radius: Theme.radiusLarge
            color: Theme.userBubble
            TextEdit {
                id: userText
                x: 16
                y: 11
                width: parent.width - 32
                // Only a user message: a reply's text would be laid out again on every streamed
                // chunk in this hidden item.
                text: root.isUser ? root.content : ""
                textFormat: TextEdit.PlainText
                wrapMode: Text.Wrap
                readOnly: true
                selectByMouse: true
                color: Theme.text
                font.pixelSize: Theme.fontBody + 1
                selectionColor: Theme.accent
                selectedTextColor: Theme.onAccent
                Accessible.name: qsTr("Your message")
            }
        }

        // Editing: a user message is resent as a new branch; a reply is saved as edited.
        Rectangle {
            visible: root.editing
            Layout.fillWidth: true
            implicitHeight: editColumn.implicitHeight + 20
            radius: Theme.radiusLarge
            color: Theme.surface
            border.color: Theme.accent
            ColumnLayout {
                id: editColumn
                anchors.fill: parent
                anchors.margins: 10
                TextArea {
                    id: editArea
                    objectName: "editArea"
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    color: Theme.text
                    font.pixelSize: Theme.fontBody + 1
                    background: null
                    Accessible.name: qsTr("Edit message")
                    Keys.onReturnPressed: (event) => {
                        if (event.modifiers & Qt.ShiftModifier) { event.accepted = false; return }
                        root.saveEdit()
                    }
                    Keys.onEscapePressed: root.editing = false
                }
                RowLayout {
                    Layout.alignment: Qt.AlignRight
                    spacing: 8
                    PillButton { text: qsTr("Cancel"); onClicked: root.editing = false }
                    PillButton {
                        objectName: "saveEditButton"
                        text: root.isUser ? qsTr("Send as new branch") : qsTr("Save")
                        primary: true
                        enabled: editArea.text.trim().length > 0
                        onClicked: root.saveEdit()
                    }
                }
            }
        }

        // A reply: reasoning, then the answer.
        RowLayout {
            id: replyRow
            visible: !root.isUser
            Layout.fillWidth: true
            spacing: 14
            Rectangle {
                Layout.alignment: Qt.AlignTop
                implicitWidth: 30
                implicitHeight: 30
                radius: 15
                color: Theme.accentSoft
                Image {
                    anchors.centerIn: parent
                    source: "qrc:/qt/qml/Day0/Ui/icons/day0.svg"
                    sourceSize.width: 20
                    sourceSize.height: 20
                    Accessible.ignored: true
                }
            }
            ColumnLayout {
                id: answerColumn
                Layout.fillWidth: true
                spacing: 8

                // Collapsible reasoning.
                Rectangle {
                    visible: root.reasoning.length > 0
                    Layout.fillWidth: true
                    implicitHeight: reasoningColumn.implicitHeight + 16
                    radius: Theme.radius
                    color: Theme.surfaceAlt
                    ColumnLayout {
                        id: reasoningColumn
                        x: 12
                        y: 8
                        width: parent.width - 24
                        spacing: 6
                        AbstractButton {
                            id: reasoningToggle
                            Layout.fillWidth: true
                            implicitHeight: 24
                            Accessible.name: root.reasoningOpen ? qsTr("Hide reasoning") : qsTr("Show reasoning")
                            onClicked: root.reasoningOpen = !root.reasoningOpen
                            contentItem: RowLayout {
                                spacing: 6
                                Icon { iconName: "brain"; iconSize: 15 }
                                Label {
                                    text: root.streaming && root.content.length === 0 ? qsTr("Thinking…") : qsTr("Reasoning")
                                    color: Theme.textMuted
                                    font.pixelSize: 13
                                    font.weight: Font.DemiBold
                                }
                                Icon {
                                    iconName: "chevron-down"
                                    iconSize: 14
                                    rotation: root.reasoningOpen ? 180 : 0
                                    Behavior on rotation { NumberAnimation { duration: 120 } }
                                }
                                Item { Layout.fillWidth: true }
                            }
                        }
                        TextEdit {
                            visible: root.reasoningOpen
                            Layout.fillWidth: true
                            text: root.reasoningOpen ? root.reasoning : ""  // hidden: not laid out per chunk
                            textFormat: TextEdit.PlainText
                            wrapMode: Text.Wrap
                            readOnly: true
                            selectByMouse: true
                            color: Theme.textMuted
                            font.pixelSize: 13
                            Accessible.name: qsTr("Reasoning")
                        }
                    }
                }

                // The answer, block by block (see ReplyBlock). A long reply renders the blocks
                // near the view first and the others as they come near: opening a conversation
                // that holds a huge reply costs what is on screen, not the whole reply.
                Column {
                    id: blockColumn
                    objectName: "replyBlocks"
                    Layout.fillWidth: true
                    spacing: 8
                    readonly property bool lazy: root.content.length > root.lazyThreshold
                    Repeater {
                        id: blockRepeater
                        model: root.isUser ? null : root.blocks
                        delegate: ReplyBlock {
                            width: blockColumn.width
                            blocks: root.blocks
                            chat: root.chat
                            eager: !blockColumn.lazy
                        }
                        onItemAdded: Qt.callLater(root.relayout)
                        onItemRemoved: Qt.callLater(root.relayout)
                    }
                }
                // Streaming, before any answer text (with how far a long prompt has been read).
                Row {
                    visible: root.streaming && root.content.length === 0 && root.reasoning.length === 0
                    spacing: 5
                    Label {
                        objectName: "prefillProgress"
                        visible: text.length > 0
                        text: root.chat ? root.chat.prefillText : ""
                        color: Theme.textFaint
                        font.pixelSize: Theme.fontSmall
                        rightPadding: 4
                    }
                    Repeater {
                        model: 3
                        Rectangle {
                            required property int index
                            width: 7; height: 7; radius: 3.5
                            color: Theme.textFaint
                            SequentialAnimation on opacity {
                                running: root.streaming
                                loops: Animation.Infinite
                                PauseAnimation { duration: index * 150 }
                                NumberAnimation { from: 0.25; to: 1; duration: 350 }
                                NumberAnimation { from: 1; to: 0.25; duration: 350 }
                                PauseAnimation { duration: (2 - index) * 150 }
                            }
                        }
                    }
                }

                Label {
                    visible: !root.streaming && root.messageState === "incomplete"
                    text: qsTr("Stopped")
                    color: Theme.warning
                    font.pixelSize: Theme.fontSmall
                    font.weight: Font.DemiBold
                }
                Label {
                    visible: root.messageState === "error"
                    Layout.fillWidth: true
                    text: root.error.length > 0 ? root.error : qsTr("The reply failed.")
                    color: Theme.danger
                    wrapMode: Text.Wrap
                    font.pixelSize: 13
                }

                // The sources of the knowledge the answer was written from, as the model was
                // asked to cite them: one chip per file, with the line ranges of its passages.
                Flow {
                    objectName: "sourceChips"
                    visible: root.sources.length > 0 && !root.editing
                    Layout.preferredWidth: Math.min(answerColumn.width, sourcesWidth.implicitWidth)
                    spacing: 4
                    // The natural width: every source on one line.
                    Row {
                        id: sourcesWidth
                        visible: false
                        spacing: 4
                        Label { text: qsTr("Sources:"); font.pixelSize: 12; rightPadding: 2 }
                        Repeater {
                            model: root.sources
                            Label { required property var modelData; text: "[" + modelData.number + "] " + modelData.label; font.pixelSize: 12; rightPadding: 12 }
                        }
                    }
                    Label {
                        text: qsTr("Sources:")
                        height: 22
                        verticalAlignment: Text.AlignVCenter
                        color: Theme.textFaint
                        font.pixelSize: 12
                        rightPadding: 2
                    }
                    Repeater {
                        model: root.sources
                        delegate: AbstractButton {
                            id: sourceLink
                            required property var modelData
                            implicitHeight: 22
                            implicitWidth: sourceLabel.implicitWidth + 12
                            hoverEnabled: true
                            Accessible.name: qsTr("Source %1: %2. Open it").arg(modelData.number).arg(modelData.label)
                            ToolTip.visible: hovered
                            ToolTip.delay: 500
                            ToolTip.text: modelData.attachment ? qsTr("Open the attached %1").arg(modelData.path) : modelData.path
                            onClicked: {
                                if (!modelData.attachment)
                                    root.chat.openSource(modelData.path, modelData.line, modelData.page)
                                else if (modelData.sha256.length > 0)
                                    root.chat.openDocument(modelData.sha256, modelData.path, modelData.line, modelData.page)
                            }
                            background: Rectangle {
                                radius: 6
                                color: sourceLink.hovered ? Theme.accentSoft : Theme.surfaceAlt
                                border.color: sourceLink.hovered ? Theme.accent : Theme.border
                            }
                            contentItem: Label {
                                id: sourceLabel
                                text: "[" + sourceLink.modelData.number + "] " + sourceLink.modelData.label
                                color: sourceLink.hovered ? Theme.accent : Theme.textMuted
                                font.pixelSize: 12
                                horizontalAlignment: Text.AlignHCenter
                                verticalAlignment: Text.AlignVCenter
                            }
                        }
                    }
                }
            }
        }

        // Actions and branch navigation (on hover), and the reply's statistics.
        RowLayout {
            Layout.alignment: root.isUser ? Qt.AlignRight : Qt.AlignLeft
            Layout.leftMargin: root.isUser ? 0 : 44
            spacing: 2
            visible: !root.streaming && !root.editing
            Label {
                visible: !root.isUser && root.stats.length > 0
                text: root.stats
                color: Theme.textFaint
                font.pixelSize: 12
                rightPadding: 8
            }
          RowLayout {
            spacing: 2
            opacity: hover.hovered || root.branchCount > 1 ? 1 : 0
            Behavior on opacity { NumberAnimation { duration: 120 } }

            RowLayout {
                visible: root.branchCount > 1
                spacing: 0
                IconButton {
                    iconName: "chevron-left"
                    tip: qsTr("Previous version")
                    implicitWidth: 26; implicitHeight: 26; iconSize: 15
                    enabled: root.branchIndex > 1
                    onClicked: root.chat.switchBranch(root.messageId, -1)
                }
                Label {
                    text: root.branchIndex + " / " + root.branchCount
                    color: Theme.textMuted
                    font.pixelSize: Theme.fontSmall
                    Accessible.name: qsTr("Version %1 of %2").arg(root.branchIndex).arg(root.branchCount)
                }
                IconButton {
                    iconName: "chevron-right"
                    tip: qsTr("Next version")
                    implicitWidth: 26; implicitHeight: 26; iconSize: 15
                    enabled: root.branchIndex < root.branchCount
                    onClicked: root.chat.switchBranch(root.messageId, 1)
                }
            }
            IconButton {
                iconName: "copy"
                tip: qsTr("Copy")
                implicitWidth: 28; implicitHeight: 28; iconSize: 15
                onClicked: root.chat.copyText(root.content)
            }
            IconButton {
                objectName: "editMessageButton"
                iconName: "edit"
                tip: root.isUser ? qsTr("Edit and resend") : qsTr("Edit this reply")
                implicitWidth: 28; implicitHeight: 28; iconSize: 15
                enabled: !root.chat.generating
                onClicked: root.startEdit()
            }
            IconButton {
                visible: !root.isUser || root.attachments.length > 0 || root.documents.length > 0
                iconName: "regenerate"
                tip: root.isUser ? qsTr("Reply to this message") : qsTr("Regenerate")
                implicitWidth: 28; implicitHeight: 28; iconSize: 15
                enabled: !root.chat.generating
                onClicked: root.chat.regenerate(root.messageId)
            }
            IconButton {
                objectName: "deleteMessageButton"
                iconName: "trash"
                tip: qsTr("Delete this message and the replies after it")
                implicitWidth: 28; implicitHeight: 28; iconSize: 15
                enabled: !root.chat.generating
                onClicked: root.chat.deleteMessage(root.messageId)
            }
          }
        }
    }
}
