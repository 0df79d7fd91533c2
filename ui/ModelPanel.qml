import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts

// Opening a model folder: what Day0 knows about it before loading.
Item {
    id: panel
    required property QtObject controller
    readonly property var info: controller.modelInfo
    readonly property bool hasModel: info.modelType !== undefined

    function formatCount(n) {
        if (n >= 1e9) return (n / 1e9).toFixed(2) + " B"
        if (n >= 1e6) return (n / 1e6).toFixed(2) + " M"
        if (n >= 1e3) return (n / 1e3).toFixed(1) + " K"
        return String(n)
    }

    FolderDialog {
        id: folderDialog
        title: qsTr("Open a model folder (config.json, *.safetensors)")
        onAccepted: panel.controller.inspectFolder(selectedFolder)
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 16

        RowLayout {
            Layout.fillWidth: true
            spacing: 12
            Label {
                text: panel.hasModel ? qsTr("Model") : qsTr("Open a model to begin")
                font.pixelSize: 22
                Layout.fillWidth: true
            }
            BusyIndicator {
                running: panel.controller.busy
                visible: running
                implicitHeight: 36
                implicitWidth: 36
            }
            Button {
                text: qsTr("Open model folder…")
                highlighted: true
                enabled: !panel.controller.busy
                onClicked: folderDialog.open()
            }
        }

        Pane {
            visible: panel.controller.errorMessage.length > 0
            Layout.fillWidth: true
            background: Rectangle { color: "#fdecea"; radius: 4; border.color: "#f5c2c0" }
            RowLayout {
                anchors.fill: parent
                Label {
                    text: panel.controller.errorMessage
                    color: "#8a1c1c"
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                ToolButton {
                    text: qsTr("Dismiss")
                    onClicked: panel.controller.dismissError()
                }
            }
        }

        Label {
            visible: !panel.hasModel
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            opacity: 0.8
            text: qsTr("Day0 runs models straight from the checkpoint as released: pick a Hugging Face " +
                       "model folder holding config.json and its .safetensors files (or just config.json " +
                       "and model.safetensors.index.json to plan a download). Supported families: gpt-oss " +
                       "(MXFP4 experts) and GLM-5.3-Flash (glm5_next).")
        }

        Label {
            visible: panel.hasModel && panel.info.demo === true
            text: qsTr("Random-weight demo model: it runs end to end, but its replies are noise. Open a real checkpoint to chat for real.")
            color: "#8a5a00"
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }

        GridLayout {
            visible: panel.hasModel
            columns: 4
            columnSpacing: 24
            rowSpacing: 8
            Layout.fillWidth: true
            Label { text: qsTr("Architecture"); opacity: 0.7 }
            Label { text: panel.info.modelType || ""; font.bold: true }
            Label { text: qsTr("Family"); opacity: 0.7 }
            Label {
                text: panel.info.supported ? panel.info.family + qsTr(" — supported") : qsTr("not supported")
                color: panel.info.supported ? "#2e7d32" : "#c62828"
                font.bold: true
            }
            Label { text: qsTr("Parameters"); opacity: 0.7 }
            Label { text: panel.formatCount(panel.info.totalParams || 0) + qsTr(" total") }
            Label { text: qsTr("Active per token"); opacity: 0.7 }
            Label { text: panel.formatCount(panel.info.activeParams || 0) }
            Label { text: qsTr("Experts"); opacity: 0.7 }
            Label {
                text: (panel.info.routedExperts || 0) > 0
                      ? qsTr("%1 routed, top-%2").arg(panel.info.routedExperts).arg(panel.info.expertsPerToken)
                      : qsTr("dense")
            }
            Label { text: qsTr("Expert format"); opacity: 0.7 }
            Label { text: panel.info.expertFormat || "" }
        }

        Frame {
            visible: panel.hasModel
            Layout.fillWidth: true
            Layout.fillHeight: true
            ScrollView {
                anchors.fill: parent
                TextArea {
                    readOnly: true
                    selectByMouse: true
                    text: panel.controller.modelReport
                    font.family: "monospace"
                    font.pixelSize: 12
                    wrapMode: Text.NoWrap
                }
            }
        }

        Item {
            visible: !panel.hasModel
            Layout.fillHeight: true
        }
    }
}
