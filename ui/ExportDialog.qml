import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// Exporting the open conversation: JSON (every branch and attachment; `day0-cli history import`
// reads it back) or Markdown (for reading). The file is typed or chosen with Save as….
Popup {
    id: dialog
    required property QtObject chat
    property string format: "json"

    function show(kind) {
        format = kind
        exportPath.text = chat.suggestedExportPath(kind)
        exportPath.problem = ""
        open()
    }

    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(parent.width - 80, 600)
    modal: true
    focus: true
    padding: 22
    Overlay.modal: Rectangle { color: Qt.rgba(0, 0, 0, Theme.dark ? 0.55 : 0.3) }
    background: Rectangle { radius: 14; color: Theme.window; border.color: Theme.border }
    onOpened: exportPath.input.forceActiveFocus()

    Connections {
        target: dialog.chat
        function onExported() { dialog.close() }
    }

    contentItem: ColumnLayout {
        spacing: 12
        RowLayout {
            Layout.fillWidth: true
            Label {
                Layout.fillWidth: true
                text: dialog.format === "markdown" ? qsTr("Export as Markdown") : qsTr("Export as JSON")
                font.pixelSize: 20
                font.weight: Font.DemiBold
                color: Theme.text
            }
            IconButton { iconName: "close"; tip: qsTr("Close"); onClicked: dialog.close() }
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.textMuted
            font.pixelSize: 13
            text: dialog.format === "markdown"
                  ? qsTr("Every branch of “%1”, for reading; attachments by name.").arg(dialog.chat.currentTitle)
                  : qsTr("Every branch of “%1” with its attachments; `day0-cli history import` reads it back.").arg(dialog.chat.currentTitle)
        }
        PathField {
            id: exportPath
            objectName: "exportPath"
            Layout.fillWidth: true
            folder: false
            saving: true
            title: qsTr("Export the conversation")
            nameFilters: dialog.format === "markdown" ? [qsTr("Markdown (*.md)")] : [qsTr("JSON (*.json)")]
            actionText: qsTr("Export")
            browseText: qsTr("Save as…")
            onSubmitted: (path) => dialog.chat.exportConversation(path, dialog.format)
            onChosen: (urls) => dialog.chat.exportConversation(urls[0], dialog.format)
        }
    }
}
