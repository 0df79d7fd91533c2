import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// What Day0 knows about the inspected model folder before loading it: architecture, size,
// experts and their format, support, whether it fits; then Load (with progress) or Unload.
Item {
    id: panel
    required property QtObject models
    readonly property var info: models.info
    readonly property bool hasInfo: info.modelType !== undefined
    readonly property bool isLoaded: models.loaded && models.loadedDir === info.dir
    property bool showReport: true
    property int headerRightInset: 0

    function formatCount(n) {
        if (n >= 1e9) return (n / 1e9).toFixed(1) + " B"
        if (n >= 1e6) return (n / 1e6).toFixed(1) + " M"
        if (n >= 1e3) return (n / 1e3).toFixed(1) + " K"
        return String(n)
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
            font.pixelSize: Theme.fontBody
            font.weight: Font.DemiBold
            elide: Text.ElideRight
            Layout.fillWidth: true
        }
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 14
        visible: panel.hasInfo

        RowLayout {
            Layout.fillWidth: true
            Layout.rightMargin: panel.headerRightInset
            spacing: 12
            ColumnLayout {
                Layout.fillWidth: true
                spacing: 2
                Label {
                    text: panel.info.name || ""
                    font.pixelSize: 20
                    font.weight: Font.DemiBold
                    color: Theme.text
                    elide: Text.ElideMiddle
                    Layout.fillWidth: true
                }
                Label {
                    text: panel.info.dir || ""
                    color: Theme.textFaint
                    font.pixelSize: Theme.fontSmall
                    elide: Text.ElideMiddle
                    Layout.fillWidth: true
                }
            }
            Rectangle {
                radius: 11
                implicitHeight: 22
                implicitWidth: supportLabel.implicitWidth + 18
                color: panel.info.supported ? Qt.rgba(Theme.success.r, Theme.success.g, Theme.success.b, 0.14)
                                            : Theme.dangerSoft
                Label {
                    id: supportLabel
                    anchors.centerIn: parent
                    text: panel.info.supported ? qsTr("Supported") : qsTr("Not supported")
                    color: panel.info.supported ? Theme.success : Theme.danger
                    font.pixelSize: Theme.fontSmall
                    font.weight: Font.DemiBold
                }
            }
        }

        Label {
            visible: (panel.info.supportNote || "").length > 0
            Layout.fillWidth: true
            text: panel.info.supportNote || ""
            wrapMode: Text.Wrap
            color: panel.info.supported ? Theme.textMuted : Theme.danger
            font.pixelSize: 13
        }

        GridLayout {
            Layout.fillWidth: true
            columns: 3
            columnSpacing: 18
            rowSpacing: 14
            Fact { label: qsTr("Architecture"); value: (panel.info.modelType || "") + (panel.info.family ? "  ·  " + panel.info.family : "") }
            Fact { label: qsTr("Parameters"); value: panel.formatCount(panel.info.totalParams || 0) + qsTr(" total, ") + panel.formatCount(panel.info.activeParams || 0) + qsTr(" active") }
            Fact { label: qsTr("Size on disk"); value: panel.info.sizeText || "" }
            Fact {
                label: qsTr("Experts")
                value: (panel.info.routedExperts || 0) > 0 ? qsTr("%1 routed, top-%2").arg(panel.info.routedExperts).arg(panel.info.expertsPerToken) : qsTr("dense")
            }
            Fact { label: qsTr("Expert format"); value: panel.info.expertFormat || "" }
            Fact { label: qsTr("Layers"); value: String(panel.info.layers || 0) + (panel.info.hasVision ? qsTr(" · vision tower") : "") }
        }

        Rectangle {
            Layout.fillWidth: true
            implicitHeight: fitRow.implicitHeight + 16
            radius: 8
            color: panel.info.fits ? Theme.surfaceAlt : Theme.warningSoft
            RowLayout {
                id: fitRow
                x: 12
                y: 8
                width: parent.width - 24
                Icon { iconName: panel.info.fits ? "check" : "info"; iconSize: 16; color: panel.info.fits ? Theme.success : Theme.warning }
                Label {
                    Layout.fillWidth: true
                    text: panel.info.fitText || ""
                    wrapMode: Text.Wrap
                    color: Theme.text
                    font.pixelSize: 13
                }
            }
        }

        // Loading.
        ColumnLayout {
            Layout.fillWidth: true
            spacing: 6
            visible: panel.models.loading || (panel.isLoaded && panel.models.progressText.length > 0)
            ProgressBar {
                Layout.fillWidth: true
                visible: panel.models.loading
                value: panel.models.progress
                indeterminate: panel.models.progress <= 0
                Accessible.name: qsTr("Loading progress")
            }
            Label {
                Layout.fillWidth: true
                text: panel.models.progressText
                color: Theme.textMuted
                font.pixelSize: Theme.fontSmall
                elide: Text.ElideRight
            }
        }

        // Where and how large: chosen before Load, kept as the settings for the next loads.
        GridLayout {
            Layout.fillWidth: true
            visible: !panel.isLoaded && !panel.models.loading
            columns: 2
            columnSpacing: 10
            rowSpacing: 6
            Label { text: qsTr("Device"); color: Theme.text }
            ComboBox {
                id: loadDevice
                objectName: "loadDeviceBox"
                Layout.fillWidth: true
                model: panel.models.deviceChoices
                textRole: "label"
                valueRole: "id"
                Accessible.name: qsTr("Device to load the model on")
                currentIndex: Math.max(0, indexOfValue(panel.models.settings.device))
                onActivated: panel.models.settings.device = currentValue
            }
            Label { text: qsTr("Context (tokens, 0: the model's)"); color: Theme.text }
            SpinBox {
                objectName: "loadContextBox"
                from: 0; to: 1048576; stepSize: 1024
                value: panel.models.settings.contextLength
                editable: true
                textFromValue: (v) => String(v)
                valueFromText: (t) => parseInt(t)
                Accessible.name: qsTr("Context length in tokens")
                onValueModified: panel.models.settings.contextLength = value
            }
        }

        RowLayout {
            Layout.fillWidth: true
            spacing: 8
            PillButton {
                visible: !panel.isLoaded && !panel.models.loading
                primary: true
                text: qsTr("Load model")
                enabled: panel.info.supported === true && panel.info.weightsPresent === true
                onClicked: panel.models.loadInspected()
            }
            PillButton {
                visible: panel.models.loading
                text: qsTr("Cancel")
                onClicked: panel.models.cancelLoad()
            }
            PillButton {
                visible: panel.isLoaded
                text: qsTr("Unload")
                onClicked: panel.models.unload()
            }
            Item { Layout.fillWidth: true }
            PillButton {
                text: panel.showReport ? qsTr("Hide details") : qsTr("Tensor details")
                onClicked: panel.showReport = !panel.showReport
            }
        }

        Rectangle {
            Layout.fillWidth: true
            Layout.fillHeight: true
            visible: panel.showReport
            radius: 8
            color: Theme.codeBackground
            border.color: Theme.border
            ScrollView {
                anchors.fill: parent
                anchors.margins: 1
                TextArea {
                    readOnly: true
                    selectByMouse: true
                    text: panel.models.report
                    font.family: Theme.monoFamily
                    font.pixelSize: 12
                    color: Theme.codeText
                    wrapMode: Text.NoWrap
                    background: null
                    Accessible.name: qsTr("Inspection report")
                }
            }
        }
        Item { Layout.fillHeight: true; visible: !panel.showReport }
    }

    ColumnLayout {
        anchors.centerIn: parent
        width: parent.width - 40
        visible: !panel.hasInfo
        spacing: 10
        BusyIndicator {
            Layout.alignment: Qt.AlignHCenter
            running: panel.models.inspecting
            visible: running
        }
        Label {
            Layout.fillWidth: true
            horizontalAlignment: Text.AlignHCenter
            wrapMode: Text.Wrap
            color: Theme.textMuted
            text: qsTr("Open a Hugging Face model folder (config.json, tokenizer.json and the .safetensors shards; config.json with model.safetensors.index.json is enough to plan a download). Day0 shows what it is and whether it fits before loading anything.")
        }
    }
}
