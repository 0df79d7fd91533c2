import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// Writing a message: multi-line text (Enter sends, Shift+Enter is a new line), images and
// documents (text, Markdown, code, PDF) by the paperclip, drag and drop or paste, the knowledge
// folders switched on for this conversation, and Send turning into Stop while a reply streams.
Rectangle {
    id: composer
    required property QtObject chat
    required property QtObject models
    required property QtObject knowledge
    property alias input: input
    readonly property bool canSend: !chat.generating && chat.readingDocuments === 0
                                    && (input.text.trim().length > 0 || chat.pendingAttachments.length > 0
                                        || chat.pendingDocuments.length > 0)
    signal openKnowledge()

    function send() {
        if (!canSend) return
        if (chat.send(input.text)) input.text = ""
    }

    implicitHeight: column.implicitHeight + 20
    radius: 18
    color: Theme.surface
    border.color: input.activeFocus ? Theme.borderStrong : Theme.border
    border.width: 1

    // The paperclip: choose files with the dialog, or type a path (which works even where no
    // dialog can open). A dialog that cannot load says so here; the draft stays as it is.
    Popup {
        id: attachPopup
        objectName: "attachPopup"
        y: -height - 8
        width: Math.min(composer.width, 520)
        padding: 12
        focus: true
        onOpened: attachPath.input.forceActiveFocus()
        background: Rectangle { radius: 12; color: Theme.window; border.color: Theme.border }
        contentItem: ColumnLayout {
            spacing: 8
            Label {
                text: qsTr("Attach images or documents")
                color: Theme.text
                font.pixelSize: 13
                font.weight: Font.DemiBold
            }
            PathField {
                id: attachPath
                objectName: "attachPath"
                Layout.fillWidth: true
                folder: false
                multiple: true
                title: qsTr("Attach images or documents")
                placeholderText: qsTr("Path of a file, e.g. ~/Pictures/photo.png")
                actionText: qsTr("Attach")
                nameFilters: [qsTr("Images and documents (*.png *.jpg *.jpeg *.webp *.gif *.bmp *.pdf *.txt *.md *.markdown *.rst "
                                   + "*.c *.h *.cc *.cpp *.hpp *.cu *.py *.js *.ts *.rs *.go *.java *.kt *.cs *.rb *.php *.sh "
                                   + "*.json *.yaml *.yml *.toml *.xml *.html *.css *.sql *.cmake)"),
                              qsTr("Images (*.png *.jpg *.jpeg *.webp *.gif *.bmp)"),
                              qsTr("Documents (*.pdf *.txt *.md *.markdown *.rst)"),
                              qsTr("All files (*)")]
                onSubmitted: (path) => {
                    // Kept for a correction when refused (the banner says why); large documents
                    // are read in the background.
                    if (composer.chat.attachUrls([path]) > 0 || composer.chat.readingDocuments > 0) {
                        text = ""
                        attachPopup.close()
                    }
                }
                onChosen: (urls) => {
                    attachPopup.close()
                    composer.chat.attachUrls(urls)
                }
            }
        }
    }

    ColumnLayout {
        id: column
        anchors.left: parent.left
        anchors.right: parent.right
        anchors.top: parent.top
        anchors.margins: 10
        spacing: 6

        // Pending images and documents.
        Flow {
            visible: composer.chat.pendingAttachments.length > 0 || composer.chat.pendingDocuments.length > 0
            Layout.fillWidth: true
            Layout.leftMargin: 4
            spacing: 8
            Repeater {
                model: composer.chat.pendingAttachments
                delegate: Rectangle {
                    required property var modelData
                    required property int index
                    width: 64
                    height: 64
                    radius: 10
                    color: Theme.surfaceAlt
                    border.color: Theme.border
                    Image {
                        anchors.fill: parent
                        anchors.margins: 1
                        source: parent.modelData.source
                        sourceSize.width: 128
                        sourceSize.height: 128
                        fillMode: Image.PreserveAspectCrop
                        asynchronous: true
                        ToolTip.visible: thumbHover.hovered
                        ToolTip.text: parent.modelData.name + " — " + parent.modelData.sizeText
                        HoverHandler { id: thumbHover }
                    }
                    IconButton {
                        anchors.right: parent.right
                        anchors.top: parent.top
                        anchors.margins: -6
                        implicitWidth: 22
                        implicitHeight: 22
                        iconSize: 12
                        iconName: "close"
                        tip: qsTr("Remove %1").arg(parent.modelData.name)
                        filled: true
                        fillColor: Theme.dark ? "#5a5d68" : "#2b2d33"
                        onClicked: composer.chat.removeAttachment(parent.index)
                    }
                }
            }
            Repeater {
                model: composer.chat.pendingDocuments
                delegate: DocumentChip {
                    required property var modelData
                    required property int index
                    document: modelData
                    removable: true
                    onRemoveClicked: composer.chat.removeDocument(index)
                }
            }
        }

        // Knowledge folders for this conversation: one toggle each, and whether a folder goes
        // in whole when it fits.
        Flow {
            visible: composer.knowledge.folders.length > 0
            Layout.fillWidth: true
            Layout.leftMargin: 4
            spacing: 6
            Repeater {
                model: composer.knowledge.folders
                delegate: AbstractButton {
                    id: folderToggle
                    required property var modelData
                    readonly property bool on: composer.chat.knowledgeFolders.indexOf(modelData.id) >= 0
                    implicitHeight: 26
                    implicitWidth: toggleRow.implicitWidth + 18
                    hoverEnabled: true
                    checkable: true
                    checked: on
                    Accessible.name: qsTr("Use the folder %1").arg(modelData.name)
                    Accessible.role: Accessible.CheckBox
                    ToolTip.visible: hovered
                    ToolTip.delay: 600
                    ToolTip.text: modelData.path + " — " + (on ? qsTr("on: questions bring its passages")
                                                              : qsTr("off"))
                    onClicked: composer.chat.setFolderEnabled(modelData.id, !on)
                    background: Rectangle {
                        radius: 13
                        color: folderToggle.on ? Theme.accentSoft : (folderToggle.hovered ? Theme.hover : "transparent")
                        border.color: folderToggle.on ? Theme.accent : Theme.border
                    }
                    contentItem: Item {
                        Row {
                            id: toggleRow
                            anchors.centerIn: parent
                            spacing: 5
                            Icon {
                                anchors.verticalCenter: parent.verticalCenter
                                iconName: folderToggle.on ? "check" : "folder"
                                iconSize: 13
                                color: folderToggle.on ? Theme.accent : Theme.textMuted
                            }
                            Label {
                                anchors.verticalCenter: parent.verticalCenter
                                text: folderToggle.modelData.name
                                color: folderToggle.on ? Theme.accent : Theme.textMuted
                                font.pixelSize: 12
                            }
                        }
                    }
                }
            }
            CheckBox {
                visible: composer.chat.knowledgeFolders.length > 0
                implicitHeight: 26
                text: qsTr("whole folder when it fits")
                font.pixelSize: 12
                checked: composer.chat.wholeFolders
                onToggled: composer.chat.wholeFolders = checked
                ToolTip.visible: hovered
                ToolTip.delay: 600
                ToolTip.text: qsTr("Put every file of a folder into the prompt when all of it fits the model's context; otherwise only the passages that best match the question")
            }
        }

        ScrollView {
            Layout.fillWidth: true
            Layout.preferredHeight: Math.min(Math.max(input.implicitHeight, 28), 220)
            ScrollBar.horizontal.policy: ScrollBar.AlwaysOff
            TextArea {
                id: input
                objectName: "composerInput"
                wrapMode: Text.Wrap
                placeholderText: composer.models.loaded ? qsTr("Message %1…").arg(composer.models.loadedName)
                                                        : qsTr("Message Day0…")
                placeholderTextColor: Theme.textFaint
                color: Theme.text
                font.pixelSize: Theme.fontBody + 1
                selectByMouse: true
                selectionColor: Theme.accent
                selectedTextColor: Theme.onAccent
                background: null
                leftPadding: 6
                rightPadding: 6
                Accessible.name: qsTr("Message")
                Accessible.description: qsTr("Enter sends, Shift+Enter starts a new line")
                Keys.onPressed: (event) => {
                    if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter) && !(event.modifiers & Qt.ShiftModifier)) {
                        composer.send()
                        event.accepted = true
                    } else if (event.matches(StandardKey.Paste) && composer.chat.pasteImage()) {
                        event.accepted = true
                    }
                }
            }
        }

        RowLayout {
            Layout.fillWidth: true
            spacing: 4
            IconButton {
                objectName: "attachButton"
                iconName: "attach"
                tip: qsTr("Attach images or documents")
                onClicked: attachPopup.opened ? attachPopup.close() : attachPopup.open()
            }
            IconButton {
                objectName: "knowledgeButton"
                iconName: "book"
                tip: qsTr("Knowledge folders")
                onClicked: composer.openKnowledge()
            }
            Label {
                Layout.fillWidth: true
                text: composer.chat.generating && composer.chat.prefillTotal > 0 ? qsTr("Reading the prompt… Esc stops")
                      : composer.chat.generating ? qsTr("Writing… Esc stops")
                      : composer.chat.readingDocuments > 0 ? qsTr("Reading the attached documents…")
                      : qsTr("Enter to send · Shift+Enter for a new line")
                color: Theme.textFaint
                font.pixelSize: 12
                elide: Text.ElideRight
                leftPadding: 4
            }
            IconButton {
                id: sendButton
                filled: true
                iconName: composer.chat.generating ? "stop" : "send"
                iconSize: composer.chat.generating ? 14 : 18
                implicitWidth: 34
                implicitHeight: 34
                fillColor: composer.chat.generating ? Theme.text : Theme.accent
                enabled: composer.chat.generating || composer.canSend
                tip: composer.chat.generating ? qsTr("Stop (Esc)") : qsTr("Send (Enter)")
                onClicked: composer.chat.generating ? composer.chat.stop() : composer.send()
            }
        }
    }
}
