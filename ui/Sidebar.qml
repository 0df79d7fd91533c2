import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// The conversation list: new chat, full-text search, pinned and recent conversations with
// rename / pin / delete (undo for a few seconds), and the doors to the model manager, the
// knowledge folders and the settings.
Rectangle {
    id: sidebar
    required property QtObject controller
    readonly property QtObject chat: controller.chat
    readonly property QtObject models: controller.models
    signal openModels()
    signal openSettings()
    signal openKnowledge()
    property alias searchField: search

    color: Theme.sidebar

    ColumnLayout {
        anchors.fill: parent
        anchors.topMargin: 14
        anchors.bottomMargin: 12
        spacing: 10

        RowLayout {
            Layout.fillWidth: true
            Layout.leftMargin: 16
            Layout.rightMargin: 10
            spacing: 10
            Image {
                source: "qrc:/qt/qml/Day0/Ui/icons/day0.svg"
                sourceSize.width: 26
                sourceSize.height: 26
                Accessible.ignored: true
            }
            Label {
                text: "Day0"
                font.pixelSize: 18
                font.weight: Font.DemiBold
                color: Theme.text
                Layout.fillWidth: true
            }
            IconButton {
                iconName: "new-chat"
                tip: qsTr("New chat (Ctrl+N)")
                iconColor: Theme.text
                onClicked: sidebar.chat.newConversation()
            }
        }

        // Search: the history's full-text index, titles and messages.
        Rectangle {
            Layout.fillWidth: true
            Layout.leftMargin: 12
            Layout.rightMargin: 12
            implicitHeight: 36
            radius: 9
            color: Theme.surface
            border.color: search.activeFocus ? Theme.accent : Theme.border
            RowLayout {
                anchors.fill: parent
                anchors.leftMargin: 10
                anchors.rightMargin: 4
                spacing: 6
                Icon { iconName: "search"; iconSize: 16 }
                TextField {
                    id: search
                    Layout.fillWidth: true
                    placeholderText: qsTr("Search chats")
                    placeholderTextColor: Theme.textFaint
                    color: Theme.text
                    font.pixelSize: Theme.fontBody
                    background: null
                    leftPadding: 2
                    Accessible.name: qsTr("Search chats")
                    onTextChanged: searchDelay.restart()
                    Keys.onEscapePressed: text = ""
                }
                IconButton {
                    visible: search.text.length > 0
                    iconName: "close"
                    iconSize: 14
                    implicitWidth: 26
                    implicitHeight: 26
                    tip: qsTr("Clear search")
                    onClicked: search.text = ""
                }
            }
            Timer {
                id: searchDelay
                interval: 180
                onTriggered: sidebar.chat.searchQuery = search.text
            }
        }

        ListView {
            id: list
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: sidebar.chat.conversations
            spacing: 2
            boundsBehavior: Flickable.StopAtBounds
            ScrollBar.vertical: ScrollBar { policy: ScrollBar.AsNeeded }
            Accessible.name: qsTr("Conversations")
            Accessible.role: Accessible.List

            section.property: "section"
            section.delegate: Label {
                required property string section
                width: ListView.view.width
                text: section
                leftPadding: 20
                topPadding: 12
                bottomPadding: 4
                font.pixelSize: Theme.fontSmall
                font.weight: Font.DemiBold
                color: Theme.textFaint
            }

            delegate: ConversationRow {
                width: ListView.view.width
                chat: sidebar.chat
            }

            Label {
                anchors.centerIn: parent
                width: parent.width - 40
                visible: list.count === 0
                horizontalAlignment: Text.AlignHCenter
                wrapMode: Text.Wrap
                color: Theme.textFaint
                text: sidebar.chat.searchQuery.length > 0 ? qsTr("No chat mentions “%1”.").arg(sidebar.chat.searchQuery)
                                                          : qsTr("Your conversations will appear here.")
            }
        }

        // Undo for a deleted conversation.
        Rectangle {
            visible: sidebar.chat.undoText.length > 0
            Layout.fillWidth: true
            Layout.leftMargin: 12
            Layout.rightMargin: 12
            implicitHeight: 40
            radius: 9
            color: Theme.dark ? "#34363f" : "#2b2d33"
            RowLayout {
                anchors.fill: parent
                anchors.leftMargin: 12
                anchors.rightMargin: 6
                Label {
                    text: sidebar.chat.undoText
                    color: "#f2f3f5"
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                    font.pixelSize: 13
                }
                Button {
                    text: qsTr("Undo")
                    flat: true
                    Accessible.name: qsTr("Undo delete")
                    contentItem: Label { text: parent.text; color: "#aab3ff"; font.weight: Font.DemiBold }
                    background: null
                    onClicked: sidebar.chat.undoDelete()
                }
            }
        }

        Rectangle {
            Layout.fillWidth: true
            implicitHeight: 1
            color: Theme.border
        }

        // The model in use: opens the model manager.
        ItemDelegate {
            id: modelButton
            Layout.fillWidth: true
            Layout.leftMargin: 8
            Layout.rightMargin: 8
            implicitHeight: 52
            Accessible.name: qsTr("Model manager")
            onClicked: sidebar.openModels()
            background: Rectangle {
                radius: 9
                color: modelButton.hovered ? Theme.hover : "transparent"
            }
            contentItem: RowLayout {
                spacing: 10
                Rectangle {
                    implicitWidth: 32
                    implicitHeight: 32
                    radius: 8
                    color: Theme.accentSoft
                    Icon { anchors.centerIn: parent; iconName: "chip"; iconSize: 18; color: Theme.accent }
                }
                ColumnLayout {
                    spacing: 1
                    Layout.fillWidth: true
                    Label {
                        Layout.fillWidth: true
                        elide: Text.ElideMiddle
                        font.pixelSize: 13
                        font.weight: Font.DemiBold
                        color: Theme.text
                        text: sidebar.models.loaded ? sidebar.models.loadedName
                              : sidebar.models.loading ? qsTr("Loading…") : qsTr("No model loaded")
                    }
                    Label {
                        Layout.fillWidth: true
                        elide: Text.ElideRight
                        font.pixelSize: 11
                        color: Theme.textMuted
                        text: sidebar.models.loaded ? sidebar.models.loadedType + " · " + (sidebar.models.device === "cpu" ? qsTr("CPU") : sidebar.models.device)
                              : qsTr("Open the model manager")
                    }
                }
                Rectangle {
                    implicitWidth: 8
                    implicitHeight: 8
                    radius: 4
                    color: sidebar.models.loaded ? Theme.success : sidebar.models.loading ? Theme.warning : Theme.textFaint
                }
            }
        }
        ItemDelegate {
            id: knowledgeButton
            Layout.fillWidth: true
            Layout.leftMargin: 8
            Layout.rightMargin: 8
            implicitHeight: 38
            Accessible.name: qsTr("Knowledge folders")
            onClicked: sidebar.openKnowledge()
            background: Rectangle {
                radius: 9
                color: knowledgeButton.hovered ? Theme.hover : "transparent"
            }
            contentItem: RowLayout {
                spacing: 12
                Item {
                    implicitWidth: 32
                    implicitHeight: 20
                    Icon { anchors.centerIn: parent; iconName: "book"; iconSize: 18 }
                }
                Label { text: qsTr("Knowledge"); color: Theme.text; font.pixelSize: 13; Layout.fillWidth: true }
                Label {
                    visible: sidebar.controller.knowledge.folders.length > 0 || sidebar.controller.knowledge.indexing
                    text: sidebar.controller.knowledge.indexing ? qsTr("indexing…")
                          : sidebar.controller.knowledge.folders.length === 1 ? qsTr("1 folder")
                          : qsTr("%1 folders").arg(sidebar.controller.knowledge.folders.length)
                    color: Theme.textFaint
                    font.pixelSize: 11
                }
            }
        }
        ItemDelegate {
            id: settingsButton
            Layout.fillWidth: true
            Layout.leftMargin: 8
            Layout.rightMargin: 8
            implicitHeight: 38
            Accessible.name: qsTr("Settings")
            onClicked: sidebar.openSettings()
            background: Rectangle {
                radius: 9
                color: settingsButton.hovered ? Theme.hover : "transparent"
            }
            contentItem: RowLayout {
                spacing: 12
                Item {
                    implicitWidth: 32
                    implicitHeight: 20
                    Icon { anchors.centerIn: parent; iconName: "settings"; iconSize: 18 }
                }
                Label { text: qsTr("Settings"); color: Theme.text; font.pixelSize: 13; Layout.fillWidth: true }
                Label { text: "Ctrl+,"; color: Theme.textFaint; font.pixelSize: 11 }
            }
        }
    }
}
