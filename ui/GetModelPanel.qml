import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// Get a model from the Hugging Face Hub: a repository (owner/name[@revision]) and a folder; Check
// reads config.json and the index alone and shows what Day0 knows before any large byte moves;
// Download fetches the files with progress, pause, resume and cancel; Open loads the folder.
Item {
    id: panel
    required property QtObject hub
    property int headerRightInset: 0
    // Open was pressed: the folder is loading in the model manager.
    signal opened()
    readonly property var plan: hub.plan
    readonly property bool hasPlan: plan.repo !== undefined
    readonly property string hubState: hub.state

    // Fills the repository field and checks it at once (a curated entry, the welcome card).
    function start(repo) {
        repoField.text = repo
        folderField.text = ""
        if (repo.length > 0) hub.planPull(repo, "")
    }

    component Fact: ColumnLayout {
        property string label
        property string value
        property color valueColor: Theme.text
        spacing: 2
        Layout.fillWidth: true
        Label { text: parent.label; color: Theme.textMuted; font.pixelSize: Theme.fontSmall }
        Label {
            text: parent.value
            color: parent.valueColor
            font.pixelSize: 13
            font.weight: Font.DemiBold
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 10

        ColumnLayout {
            Layout.fillWidth: true
            Layout.rightMargin: panel.headerRightInset
            spacing: 2
            Label {
                text: qsTr("Get a model")
                font.pixelSize: 20
                font.weight: Font.DemiBold
                color: Theme.text
            }
            Label {
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                color: Theme.textMuted
                font.pixelSize: Theme.fontSmall
                text: panel.hub.offline
                      ? qsTr("Offline mode (HF_HUB_OFFLINE) is on: Day0 does not reach the Hub.")
                      : qsTr("From the Hugging Face Hub: give a repository as owner/name, optionally @revision. Day0 reads its config first and says what it is and whether it fits before downloading anything large.")
            }
        }

        RowLayout {
            Layout.fillWidth: true
            spacing: 8
            TextField {
                id: repoField
                objectName: "hubRepoField"
                Layout.fillWidth: true
                placeholderText: "openai/gpt-oss-20b"
                selectByMouse: true
                color: Theme.text
                enabled: !panel.hub.busy
                Accessible.name: qsTr("Hugging Face repository")
                onAccepted: checkButton.clicked()
            }
            PillButton {
                id: checkButton
                objectName: "hubCheckButton"
                text: panel.hubState === "planning" ? qsTr("Checking…") : qsTr("Check")
                enabled: repoField.text.trim().length > 0 && !panel.hub.busy
                onClicked: panel.hub.planPull(repoField.text, folderField.text)
            }
        }
        PathField {
            id: folderField
            objectName: "hubFolderField"
            Layout.fillWidth: true
            folder: true
            showAction: false
            enabled: !panel.hub.busy
            title: qsTr("Choose where the model goes")
            placeholderText: repoField.text.trim().length > 0 ? panel.hub.defaultFolder(repoField.text) || qsTr("folder")
                                                              : qsTr("download folder (default: ~/.local/share/day0/models/OWNER/NAME)")
            onChosen: (urls) => text = decodeURIComponent(urls[0].toString().replace(/^file:\/\//, ""))
        }

        // Known to work, until a repository is checked.
        Flow {
            Layout.fillWidth: true
            spacing: 6
            visible: !panel.hasPlan && !panel.hub.busy
            Repeater {
                model: panel.hub.curated
                delegate: PillButton {
                    required property var modelData
                    text: modelData.name + "  ·  " + modelData.sizeText
                    onClicked: panel.start(modelData.repo)
                }
            }
        }

        Label {
            objectName: "hubError"
            Layout.fillWidth: true
            visible: text.length > 0
            wrapMode: Text.Wrap
            color: Theme.danger
            font.pixelSize: 13
            text: panel.hub.error + (panel.hub.error.indexOf("token") >= 0 && !panel.hub.hasToken
                                     ? qsTr(" A token goes in Settings (Ctrl+,), under Hugging Face.") : "")
        }
        BusyIndicator {
            Layout.alignment: Qt.AlignHCenter
            running: panel.hubState === "planning"
            visible: running
        }

        // What the plan says.
        Rectangle {
            Layout.fillWidth: true
            visible: panel.hasPlan
            implicitHeight: planGrid.implicitHeight + 24
            radius: 8
            color: Theme.surfaceAlt
            GridLayout {
                id: planGrid
                x: 12
                y: 12
                width: parent.width - 24
                columns: 2
                columnSpacing: 16
                rowSpacing: 8
                Fact {
                    label: qsTr("Architecture")
                    value: (panel.plan.architecture || "") + (panel.plan.supported ? qsTr(" · Day0 runs it") : qsTr(" · Day0 does not run it"))
                    valueColor: panel.plan.supported ? Theme.text : Theme.danger
                }
                Fact { label: qsTr("Parameters"); value: panel.plan.paramsText || "" }
                Fact { label: qsTr("Download"); value: qsTr("%1 in %2 files").arg(panel.plan.downloadText || "").arg(panel.plan.fileCount || 0) }
                Fact { label: qsTr("Experts"); value: panel.plan.expertsText || "" }
                Fact {
                    label: qsTr("Fits this machine")
                    value: panel.plan.fitText || ""
                    valueColor: panel.plan.fits ? Theme.success : Theme.warning
                }
                Fact {
                    label: qsTr("Disk")
                    value: panel.plan.diskText || ""
                    valueColor: panel.plan.diskOk ? Theme.text : Theme.danger
                }
                Fact {
                    Layout.columnSpan: 2
                    visible: (panel.plan.speedText || "").length > 0
                    label: qsTr("Speed")
                    value: panel.plan.speedText || ""
                }
            }
        }

        // The files and their progress.
        ListView {
            objectName: "hubFileList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            visible: panel.hasPlan
            clip: true
            spacing: 2
            model: panel.hub.files
            Accessible.name: qsTr("Files to download")
            delegate: RowLayout {
                required property var modelData
                width: ListView.view.width
                spacing: 8
                Label {
                    Layout.fillWidth: true
                    text: modelData.path
                    color: modelData.state === "failed" ? Theme.danger : Theme.text
                    font.pixelSize: 12
                    elide: Text.ElideMiddle
                    ToolTip.visible: modelData.error.length > 0 && hovered
                    ToolTip.text: modelData.error
                    readonly property bool hovered: fileHover.hovered
                    HoverHandler { id: fileHover }
                }
                ProgressBar {
                    Layout.preferredWidth: 120
                    value: modelData.fraction
                    Accessible.name: modelData.path
                }
                Label {
                    Layout.preferredWidth: 80
                    horizontalAlignment: Text.AlignRight
                    text: modelData.state === "done" ? qsTr("✓ ") + modelData.sizeText
                          : modelData.state === "failed" ? qsTr("failed")
                          : modelData.state === "verifying" ? qsTr("checking") : modelData.sizeText
                    color: modelData.state === "failed" ? Theme.danger : Theme.textMuted
                    font.pixelSize: 12
                }
            }
        }

        ColumnLayout {
            Layout.fillWidth: true
            spacing: 4
            visible: panel.hub.busy && panel.hubState !== "planning" || panel.hubState === "done"
            ProgressBar {
                objectName: "hubProgress"
                Layout.fillWidth: true
                value: panel.hub.progress
                Accessible.name: qsTr("Download progress")
            }
            Label {
                Layout.fillWidth: true
                text: panel.hubState === "done" ? qsTr("Downloaded to %1").arg(panel.hub.targetDir) : panel.hub.progressText
                color: Theme.textMuted
                font.pixelSize: Theme.fontSmall
                elide: Text.ElideMiddle
            }
        }

        RowLayout {
            Layout.fillWidth: true
            spacing: 8
            PillButton {
                objectName: "hubDownloadButton"
                primary: true
                visible: panel.hasPlan && !panel.hub.busy && panel.hubState !== "done"
                enabled: panel.plan.diskOk === true
                text: panel.hubState === "cancelled" || panel.hubState === "failed" ? qsTr("Resume download") : qsTr("Download %1").arg(panel.plan.downloadText || "")
                onClicked: panel.hub.startDownload()
            }
            PillButton {
                visible: panel.hubState === "downloading"
                text: qsTr("Pause")
                onClicked: panel.hub.pause()
            }
            PillButton {
                visible: panel.hubState === "paused"
                primary: true
                text: qsTr("Resume")
                onClicked: panel.hub.resume()
            }
            PillButton {
                visible: panel.hub.busy
                text: qsTr("Cancel")
                onClicked: panel.hub.cancel()
            }
            PillButton {
                objectName: "hubOpenButton"
                visible: panel.hubState === "done"
                primary: true
                text: qsTr("Open")
                onClicked: { panel.hub.openModel(); panel.opened() }
            }
            Item { Layout.fillWidth: true }
        }
        Item { Layout.fillHeight: true; visible: !panel.hasPlan }
    }
}
