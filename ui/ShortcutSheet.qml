import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// The keyboard shortcuts, opened by F1 or Ctrl+/ (the Shortcut items of Main.qml and the
// composer's keys).
Popup {
    id: sheet
    objectName: "shortcutSheet"
    readonly property var shortcuts: [
        { keys: "Enter", action: qsTr("Send the message") },
        { keys: "Shift+Enter", action: qsTr("New line in the message") },
        { keys: "Esc", action: qsTr("Stop the reply (while it is written)") },
        { keys: "Ctrl+.", action: qsTr("Stop the reply") },
        { keys: "Ctrl+N", action: qsTr("New chat") },
        { keys: "Ctrl+K", action: qsTr("Search the conversations") },
        { keys: "Ctrl+L", action: qsTr("Go to the message box") },
        { keys: "Ctrl+M", action: qsTr("Models") },
        { keys: "Ctrl+,", action: qsTr("Settings") },
        { keys: "Ctrl+Shift+S", action: qsTr("Show or hide the chat settings") },
        { keys: "Ctrl+V", action: qsTr("Paste text, or attach a copied image or file") },
        { keys: "F1, Ctrl+/", action: qsTr("This list of shortcuts") }
    ]

    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(parent.width - 80, 520)
    modal: true
    focus: true
    padding: 22
    Overlay.modal: Rectangle { color: Qt.rgba(0, 0, 0, Theme.dark ? 0.55 : 0.3) }
    background: Rectangle { radius: 14; color: Theme.window; border.color: Theme.border }

    contentItem: ColumnLayout {
        spacing: 10
        RowLayout {
            Layout.fillWidth: true
            Label {
                Layout.fillWidth: true
                text: qsTr("Keyboard shortcuts")
                font.pixelSize: 20
                font.weight: Font.DemiBold
                color: Theme.text
            }
            IconButton { iconName: "close"; tip: qsTr("Close"); onClicked: sheet.close() }
        }
        GridLayout {
            objectName: "shortcutList"
            Layout.fillWidth: true
            columns: 2
            columnSpacing: 18
            rowSpacing: 8
            Repeater {
                model: sheet.shortcuts
                delegate: Label {
                    required property var modelData
                    text: modelData.keys
                    color: Theme.text
                    font.family: Theme.monoFamily
                    font.pixelSize: 13
                    padding: 3
                    leftPadding: 7
                    rightPadding: 7
                    background: Rectangle { radius: 5; color: Theme.surfaceAlt; border.color: Theme.border }
                    Layout.row: index
                    Layout.column: 0
                    required property int index
                }
            }
            Repeater {
                model: sheet.shortcuts
                delegate: Label {
                    required property var modelData
                    required property int index
                    Layout.row: index
                    Layout.column: 1
                    Layout.fillWidth: true
                    text: modelData.action
                    color: Theme.textMuted
                    font.pixelSize: 13
                    wrapMode: Text.Wrap
                }
            }
        }
    }
}
