import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts

// Writing a message: multi-line text (Enter sends, Shift+Enter is a new line), images by the
// paperclip, drag and drop or paste, and Send turning into Stop while a reply streams.
Rectangle {
    id: composer
    required property QtObject chat
    required property QtObject models
    property alias input: input
    readonly property bool canSend: !chat.generating && (input.text.trim().length > 0 || chat.pendingAttachments.length > 0)

    function send() {
        if (!canSend) return
        if (chat.send(input.text)) input.text = ""
    }

    implicitHeight: column.implicitHeight + 20
    radius: 18
    color: Theme.surface
    border.color: input.activeFocus ? Theme.borderStrong : Theme.border
    border.width: 1

    FileDialog {
        id: fileDialog
        title: qsTr("Attach images")
        fileMode: FileDialog.OpenFiles
        nameFilters: [qsTr("Images (*.png *.jpg *.jpeg *.webp *.gif *.bmp)"), qsTr("All files (*)")]
        onAccepted: composer.chat.attachUrls(selectedFiles)
    }

    ColumnLayout {
        id: column
        anchors.left: parent.left
        anchors.right: parent.right
        anchors.top: parent.top
        anchors.margins: 10
        spacing: 6

        // Pending images.
        Flow {
            visible: composer.chat.pendingAttachments.length > 0
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
                iconName: "attach"
                tip: qsTr("Attach images")
                onClicked: fileDialog.open()
            }
            Label {
                Layout.fillWidth: true
                text: composer.chat.generating ? qsTr("Writing… Esc stops") : qsTr("Enter to send · Shift+Enter for a new line")
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
