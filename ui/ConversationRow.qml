import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// One conversation in the sidebar: click to open; the ⋯ menu renames (inline), pins or deletes.
ItemDelegate {
    id: row
    required property QtObject chat
    required property var conversationId
    required property string title
    required property bool pinned
    required property string snippet
    required property var matchMessageId
    readonly property bool current: chat.currentConversationId === conversationId
    property bool renaming: false

    implicitHeight: snippet.length > 0 ? 58 : 38
    leftPadding: 12
    rightPadding: 4
    Accessible.name: title
    Accessible.role: Accessible.ListItem
    onClicked: chat.openConversation(conversationId, matchMessageId)

    background: Rectangle {
        anchors.fill: parent
        anchors.leftMargin: 8
        anchors.rightMargin: 8
        radius: 8
        color: row.current ? Theme.selected : row.hovered ? Theme.hover : "transparent"
    }

    contentItem: RowLayout {
        spacing: 6
        anchors.leftMargin: 8
        Item { implicitWidth: 8 }
        ColumnLayout {
            Layout.fillWidth: true
            spacing: 2
            RowLayout {
                spacing: 6
                Layout.fillWidth: true
                Icon {
                    visible: row.pinned
                    iconName: "pin"
                    iconSize: 13
                    color: Theme.accent
                }
                Label {
                    visible: !row.renaming
                    Layout.fillWidth: true
                    text: row.title
                    elide: Text.ElideRight
                    color: Theme.text
                    font.pixelSize: 13
                    font.weight: row.current ? Font.DemiBold : Font.Normal
                }
                TextField {
                    id: renameField
                    visible: row.renaming
                    Layout.fillWidth: true
                    text: row.title
                    color: Theme.text
                    font.pixelSize: 13
                    selectByMouse: true
                    Accessible.name: qsTr("New title")
                    background: Rectangle { radius: 6; color: Theme.surface; border.color: Theme.accent }
                    onAccepted: { row.chat.renameConversation(row.conversationId, text); row.renaming = false }
                    Keys.onEscapePressed: row.renaming = false
                    onActiveFocusChanged: if (!activeFocus) row.renaming = false
                }
            }
            Label {
                visible: row.snippet.length > 0
                Layout.fillWidth: true
                text: row.snippet
                textFormat: Text.StyledText
                elide: Text.ElideRight
                maximumLineCount: 1
                color: Theme.textMuted
                font.pixelSize: 12
            }
        }
        IconButton {
            id: menuButton
            iconName: "more"
            tip: qsTr("Conversation actions")
            implicitWidth: 28
            implicitHeight: 28
            opacity: row.hovered || menu.opened || row.current ? 1 : 0
            onClicked: menu.popup(menuButton, 0, menuButton.height)
        }
        Item { implicitWidth: 6 }
    }

    Menu {
        id: menu
        MenuItem {
            text: qsTr("Rename")
            onTriggered: { row.renaming = true; renameField.forceActiveFocus(); renameField.selectAll() }
        }
        MenuItem {
            text: row.pinned ? qsTr("Unpin") : qsTr("Pin to top")
            onTriggered: row.chat.setPinned(row.conversationId, !row.pinned)
        }
        MenuItem {
            text: qsTr("Duplicate")
            onTriggered: row.chat.duplicateConversation(row.conversationId)
        }
        MenuSeparator {}
        MenuItem {
            text: qsTr("Delete")
            onTriggered: row.chat.deleteConversation(row.conversationId)
        }
    }
}
