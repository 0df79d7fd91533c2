import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// The Day0 window: conversations on the left, the chat in the middle, the status bar below;
// the model manager, the settings and the image viewer open over it.
ApplicationWindow {
    id: window
    required property QtObject controller
    readonly property QtObject chat: controller.chat
    readonly property QtObject models: controller.models
    readonly property QtObject settings: controller.settings

    width: 1200
    height: 800
    minimumWidth: 720
    minimumHeight: 480
    visible: true
    title: chat.currentTitle.length > 0 ? chat.currentTitle + " — Day0" : "Day0"
    color: Theme.window

    SystemPalette { id: systemPalette }
    readonly property bool systemDark: systemPalette.window.hslLightness < 0.5
    Binding {
        target: Theme
        property: "dark"
        value: window.settings.theme === "dark" || (window.settings.theme === "system" && window.systemDark)
    }

    // Fusion draws its controls from the palette: give it the theme's colours.
    palette.window: Theme.window
    palette.windowText: Theme.text
    palette.base: Theme.surface
    palette.alternateBase: Theme.surfaceAlt
    palette.text: Theme.text
    palette.button: Theme.surfaceAlt
    palette.buttonText: Theme.text
    palette.brightText: Theme.onAccent
    palette.highlight: Theme.accent
    palette.highlightedText: Theme.onAccent
    palette.placeholderText: Theme.textFaint
    palette.toolTipBase: Theme.dark ? "#33353d" : "#2b2d33"
    palette.toolTipText: "#f2f3f5"
    palette.light: Theme.dark ? "#3a3c45" : "#ffffff"
    palette.midlight: Theme.dark ? "#32343c" : "#eceef2"
    palette.mid: Theme.borderStrong
    palette.dark: Theme.dark ? "#101114" : "#a9adb7"
    palette.shadow: Theme.dark ? "#000000" : "#7a7f8a"
    palette.link: Theme.link

    // For the self-test's screenshots and the shortcuts.
    function openPage(name) {
        if (name === "models") openModels()
        else if (name === "remote") { modelManager.showRemote(); modelManager.open() }
        else if (name === "hub") getModel("")
        else if (name === "settings") settingsDialog.open()
        else if (name === "knowledge-panel") knowledgePanel.open()
        else if (name === "shortcuts") shortcutSheet.open()
        else if (name === "export") exportDialog.show("json")
    }
    // Get a model (Models → Get a model); a repository is checked at once.
    function getModel(repo) {
        modelManager.showHub(repo)
        modelManager.open()
    }
    function openModels() {
        if (window.models.info.dir === undefined && window.models.loaded) window.models.inspectPath(window.models.loadedDir)
        modelManager.open()
    }

    Shortcut { sequence: "Ctrl+N"; onActivated: { window.chat.newConversation(); composer.input.forceActiveFocus() } }
    Shortcut { sequences: ["Ctrl+K", StandardKey.Find]; onActivated: sidebar.searchField.forceActiveFocus() }
    Shortcut { sequence: "Esc"; enabled: window.chat.generating; onActivated: window.chat.stop() }
    Shortcut { sequence: "Ctrl+."; onActivated: window.chat.stop() }
    Shortcut { sequence: "Ctrl+L"; onActivated: composer.input.forceActiveFocus() }
    Shortcut { sequence: "Ctrl+M"; onActivated: window.openModels() }
    Shortcut { sequence: "Ctrl+,"; onActivated: settingsDialog.open() }
    Shortcut { sequences: ["F1", "Ctrl+/"]; onActivated: shortcutSheet.open() }
    Shortcut { sequence: "Ctrl+Shift+S"; onActivated: chatSettingsPanel.visible = !chatSettingsPanel.visible }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        Sidebar {
            id: sidebar
            Layout.fillHeight: true
            Layout.preferredWidth: 280
            controller: window.controller
            onOpenModels: window.openModels()
            onOpenSettings: settingsDialog.open()
            onOpenKnowledge: knowledgePanel.open()
        }
        Rectangle { Layout.fillHeight: true; implicitWidth: 1; color: Theme.border }

        ColumnLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: 0

            // Header: the conversation's title and the model.
            Item {
                Layout.fillWidth: true
                implicitHeight: 56
                RowLayout {
                    anchors.fill: parent
                    anchors.leftMargin: 24
                    anchors.rightMargin: 16
                    spacing: 12
                    Label {
                        Layout.fillWidth: true
                        text: window.chat.currentTitle.length > 0 ? window.chat.currentTitle : qsTr("New chat")
                        font.pixelSize: Theme.fontTitle
                        font.weight: Font.DemiBold
                        color: Theme.text
                        elide: Text.ElideRight
                    }
                    IconButton {
                        id: conversationMenuButton
                        objectName: "conversationMenuButton"
                        visible: window.chat.currentConversationId !== 0
                        iconName: "more"
                        tip: qsTr("Conversation: export, duplicate")
                        onClicked: conversationMenu.popup(conversationMenuButton, 0, conversationMenuButton.height)
                        Menu {
                            id: conversationMenu
                            MenuItem {
                                text: qsTr("Export as JSON…")
                                onTriggered: exportDialog.show("json")
                            }
                            MenuItem {
                                text: qsTr("Export as Markdown…")
                                onTriggered: exportDialog.show("markdown")
                            }
                            MenuItem {
                                text: qsTr("Duplicate")
                                onTriggered: window.chat.duplicateConversation(window.chat.currentConversationId)
                            }
                        }
                    }
                    IconButton {
                        objectName: "chatSettingsButton"
                        iconName: "settings"
                        tip: qsTr("Chat settings: system prompt, sampling, presets (Ctrl+Shift+S)")
                        filled: chatSettingsPanel.visible
                        iconColor: chatSettingsPanel.visible ? Theme.onAccent : Theme.textMuted
                        onClicked: chatSettingsPanel.visible = !chatSettingsPanel.visible
                    }
                    AbstractButton {
                        id: modelChip
                        implicitHeight: 32
                        implicitWidth: chipRow.implicitWidth + 24
                        hoverEnabled: true
                        Accessible.name: qsTr("Model: %1. Open the model manager").arg(window.models.loadedName)
                        onClicked: window.openModels()
                        background: Rectangle {
                            radius: 16
                            color: modelChip.hovered ? Theme.hover : Theme.surface
                            border.color: Theme.border
                        }
                        contentItem: Item {
                            RowLayout {
                                id: chipRow
                                anchors.centerIn: parent
                                spacing: 8
                                Rectangle {
                                    implicitWidth: 7; implicitHeight: 7; radius: 3.5
                                    color: window.models.loaded ? Theme.success : window.models.loading ? Theme.warning : Theme.textFaint
                                }
                                Label {
                                    text: window.models.loaded ? window.models.loadedName
                                          : window.models.loading ? qsTr("Loading…") : qsTr("Choose a model")
                                    color: Theme.text
                                    font.pixelSize: 13
                                }
                                Rectangle {
                                    visible: window.models.loaded && window.models.loadedIsDemo
                                    implicitWidth: demoBadge.implicitWidth + 12
                                    implicitHeight: 18
                                    radius: 9
                                    color: Theme.warningSoft
                                    Label {
                                        id: demoBadge
                                        anchors.centerIn: parent
                                        text: qsTr("tiny demo")
                                        color: Theme.warning
                                        font.pixelSize: 11
                                    }
                                }
                                Icon { iconName: "chevron-down"; iconSize: 14 }
                            }
                        }
                    }
                }
                Rectangle { anchors.bottom: parent.bottom; width: parent.width; height: 1; color: Theme.border }
            }

            Banner {
                Layout.fillWidth: true
                Layout.leftMargin: 24
                Layout.rightMargin: 24
                Layout.topMargin: visible ? 12 : 0
                text: window.controller.errorMessage
                error: true
                onDismissed: window.controller.dismissError()
            }
            Banner {
                Layout.fillWidth: true
                Layout.leftMargin: 24
                Layout.rightMargin: 24
                Layout.topMargin: visible ? 12 : 0
                text: window.controller.noticeMessage
                error: false
                onDismissed: window.controller.dismissNotice()
            }

            Item {
                Layout.fillWidth: true
                Layout.fillHeight: true
                ChatView {
                    id: chatView
                    anchors.fill: parent
                    chat: window.chat
                    visible: count > 0
                    onOpenImage: (source, name) => imageViewer.show(source, name)
                }
                WelcomeView {
                    anchors.fill: parent
                    visible: chatView.count === 0
                    controller: window.controller
                    onOpenModels: window.openModels()
                    onGetModel: (repo) => window.getModel(repo)
                    onConnectServer: window.openPage("remote")
                }
            }

            Composer {
                id: composer
                Layout.fillWidth: true
                Layout.maximumWidth: 808
                Layout.alignment: Qt.AlignHCenter
                Layout.leftMargin: 24
                Layout.rightMargin: 24
                Layout.bottomMargin: 18
                chat: window.chat
                models: window.models
                knowledge: window.controller.knowledge
                onOpenKnowledge: knowledgePanel.open()
            }
        }

        ChatSettingsPanel {
            id: chatSettingsPanel
            objectName: "chatSettingsPanel"
            Layout.fillHeight: true
            Layout.preferredWidth: 300
            visible: false
            chat: window.chat
        }
    }

    // Images and documents dropped anywhere on the window go to the composer.
    DropArea {
        anchors.fill: parent
        keys: ["text/uri-list"]
        onDropped: (drop) => { if (drop.hasUrls) { window.chat.attachUrls(drop.urls); drop.accept() } }
        Rectangle {
            anchors.fill: parent
            anchors.margins: 8
            visible: parent.containsDrag
            radius: 16
            color: Qt.rgba(Theme.accent.r, Theme.accent.g, Theme.accent.b, 0.08)
            border.color: Theme.accent
            border.width: 2
            Label {
                anchors.centerIn: parent
                text: qsTr("Drop images or documents to attach them")
                color: Theme.accent
                font.pixelSize: 18
                font.weight: Font.DemiBold
            }
        }
    }

    footer: StatusBar { controller: window.controller }

    ModelManager { id: modelManager; models: window.models; hub: window.controller.hub }
    SettingsDialog { id: settingsDialog; objectName: "settingsDialog"; controller: window.controller }
    KnowledgePanel { id: knowledgePanel; knowledge: window.controller.knowledge; chat: window.chat }
    ImageViewer { id: imageViewer }
    ShortcutSheet { id: shortcutSheet }
    ExportDialog { id: exportDialog; chat: window.chat }

    Component.onCompleted: composer.input.forceActiveFocus()
}
