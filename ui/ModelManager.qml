import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// The model manager: open a folder, get one from the Hugging Face Hub, connect to a server,
// recent models, and the inspected model's details.
Popup {
    id: manager
    required property QtObject models
    required property QtObject hub
    // The right side shows the inspected folder, the form for a remote server, or Get a model.
    property bool remoteMode: false
    property bool hubMode: false

    // The server form, filled with the endpoint in use when the model is remote.
    function showRemote() {
        hubMode = false
        remoteMode = true
        remotePanel.show(models.loadedIsRemote ? models.remoteEndpoint(models.loadedDir) : {})
    }
    // Get a model; with a repository, checked at once.
    function showHub(repo) {
        remoteMode = false
        hubMode = true
        if (repo && repo.length > 0) hubPanel.start(repo)
    }

    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(parent.width - 80, 920)
    height: Math.min(parent.height - 80, 620)
    modal: true
    focus: true
    padding: 0
    Overlay.modal: Rectangle { color: Qt.rgba(0, 0, 0, Theme.dark ? 0.55 : 0.3) }
    background: Rectangle { radius: 14; color: Theme.window; border.color: Theme.border }

    function inspect(folder) {
        manager.remoteMode = false
        manager.hubMode = false
        manager.models.inspectFolder(folder)
    }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        // Left: open, demo, recent.
        Rectangle {
            Layout.fillHeight: true
            Layout.preferredWidth: 270
            color: Theme.sidebar
            radius: 14
            Rectangle { anchors.right: parent.right; width: 14; height: parent.height; color: parent.color }
            Rectangle { anchors.right: parent.right; width: 1; height: parent.height; color: Theme.border }
            ColumnLayout {
                anchors.fill: parent
                anchors.margins: 14
                spacing: 10
                Label {
                    text: qsTr("Models")
                    font.pixelSize: 20
                    font.weight: Font.DemiBold
                    color: Theme.text
                }
                PillButton {
                    Layout.fillWidth: true
                    primary: true
                    iconName: "folder"
                    text: qsTr("Open model folder…")
                    onClicked: modelFolderPath.browse()
                }
                PathField {
                    id: modelFolderPath
                    objectName: "modelFolderPath"
                    Layout.fillWidth: true
                    folder: true
                    showBrowse: false
                    title: qsTr("Open a model folder (config.json, *.safetensors)")
                    placeholderText: qsTr("or type its path")
                    actionText: qsTr("Open")
                    onSubmitted: (path) => manager.inspect(path)
                    onChosen: (urls) => manager.inspect(urls[0])
                }
                PillButton {
                    Layout.fillWidth: true
                    objectName: "getModelButton"
                    iconName: "plus"
                    text: qsTr("Get a model…")
                    Accessible.name: qsTr("Get a model from the Hugging Face Hub")
                    onClicked: manager.showHub("")
                }
                PillButton {
                    Layout.fillWidth: true
                    objectName: "connectServerButton"
                    iconName: "chip"
                    text: qsTr("Connect to a server…")
                    Accessible.name: qsTr("Connect to a server")
                    onClicked: manager.showRemote()
                }
                Label {
                    text: qsTr("RECENT")
                    color: Theme.textFaint
                    font.pixelSize: 11
                    font.weight: Font.DemiBold
                    font.letterSpacing: 0.6
                    topPadding: 8
                }
                ListView {
                    id: recent
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    clip: true
                    spacing: 2
                    model: {
                        const list = manager.models.recentModels.slice()
                        for (const demo of manager.models.demoModels)
                            if (!list.some(m => m.path === demo.path))
                                list.push({ path: demo.path, name: demo.name, exists: true })
                        return list
                    }
                    Accessible.name: qsTr("Recent models")
                    delegate: ItemDelegate {
                        id: recentRow
                        required property var modelData
                        readonly property bool selected: modelData.remote === true
                                                         ? manager.remoteMode && manager.models.loadedDir === modelData.path
                                                         : !manager.remoteMode && manager.models.info.dir === modelData.path
                        width: ListView.view.width
                        implicitHeight: 50
                        enabled: modelData.exists
                        Accessible.name: modelData.name
                        onClicked: {
                            manager.hubMode = false
                            manager.remoteMode = modelData.remote === true
                            if (manager.remoteMode)
                                remotePanel.show(manager.models.remoteEndpoint(modelData.path))
                            else
                                manager.models.inspectPath(modelData.path)
                        }
                        background: Rectangle {
                            radius: 8
                            color: recentRow.selected ? Theme.selected : recentRow.hovered ? Theme.hover : "transparent"
                        }
                        contentItem: RowLayout {
                            spacing: 8
                            ColumnLayout {
                                Layout.fillWidth: true
                                spacing: 1
                                Label {
                                    Layout.fillWidth: true
                                    text: recentRow.modelData.name
                                    color: Theme.text
                                    font.pixelSize: 13
                                    font.weight: Font.DemiBold
                                    elide: Text.ElideRight
                                }
                                Label {
                                    Layout.fillWidth: true
                                    text: recentRow.modelData.remote === true ? qsTr("remote: ") + recentRow.modelData.url
                                          : recentRow.modelData.exists ? recentRow.modelData.path : qsTr("missing: ") + recentRow.modelData.path
                                    color: Theme.textFaint
                                    font.pixelSize: 11
                                    elide: Text.ElideMiddle
                                }
                            }
                            Rectangle {
                                visible: manager.models.loaded && manager.models.loadedDir === recentRow.modelData.path
                                implicitWidth: 8; implicitHeight: 8; radius: 4
                                color: Theme.success
                            }
                        }
                    }
                }
            }
        }

        // Right: the inspected model.
        Item {
            Layout.fillWidth: true
            Layout.fillHeight: true
            ModelPanel {
                anchors.fill: parent
                anchors.margins: 24
                anchors.topMargin: 20
                headerRightInset: 28
                models: manager.models
                visible: !manager.remoteMode && !manager.hubMode
            }
            RemotePanel {
                id: remotePanel
                anchors.fill: parent
                anchors.margins: 24
                anchors.topMargin: 20
                headerRightInset: 28
                models: manager.models
                visible: manager.remoteMode && !manager.hubMode
            }
            GetModelPanel {
                id: hubPanel
                anchors.fill: parent
                anchors.margins: 24
                anchors.topMargin: 20
                headerRightInset: 28
                hub: manager.hub
                visible: manager.hubMode
                onOpened: manager.hubMode = false
            }
            IconButton {
                anchors.right: parent.right
                anchors.top: parent.top
                anchors.margins: 10
                iconName: "close"
                tip: qsTr("Close")
                onClicked: manager.close()
            }
        }
    }
}
