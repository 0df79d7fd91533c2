import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// What an empty chat shows: what Day0 is, the model that is ready (the demo model explained),
// or how to open one.
Item {
    id: welcome
    required property QtObject controller
    readonly property QtObject models: controller.models
    signal openModels()

    ColumnLayout {
        anchors.centerIn: parent
        width: Math.min(parent.width - 64, 560)
        spacing: 14

        Image {
            Layout.alignment: Qt.AlignHCenter
            source: "qrc:/qt/qml/Day0/Ui/icons/day0.svg"
            sourceSize.width: 56
            sourceSize.height: 56
            Accessible.ignored: true
        }
        Label {
            Layout.alignment: Qt.AlignHCenter
            text: welcome.models.loaded ? qsTr("What shall we talk about?") : qsTr("Welcome to Day0")
            font.pixelSize: Theme.fontHeading
            font.weight: Font.DemiBold
            color: Theme.text
        }
        Label {
            Layout.fillWidth: true
            horizontalAlignment: Text.AlignHCenter
            wrapMode: Text.Wrap
            color: Theme.textMuted
            font.pixelSize: Theme.fontBody
            text: qsTr("Chat with open-weight Mixture-of-Experts models on this machine, straight from the checkpoint as released. Nothing leaves your computer; every conversation is saved as it streams.")
        }

        // The demo model, explained.
        Rectangle {
            visible: welcome.models.loaded && welcome.models.loadedIsDemo
            Layout.fillWidth: true
            Layout.topMargin: 8
            implicitHeight: demoColumn.implicitHeight + 28
            radius: Theme.radius
            color: Theme.warningSoft
            ColumnLayout {
                id: demoColumn
                x: 16
                y: 14
                width: parent.width - 32
                spacing: 6
                Label {
                    text: qsTr("You are talking to the demo model")
                    font.weight: Font.DemiBold
                    color: Theme.warning
                }
                Label {
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    color: Theme.text
                    font.pixelSize: 13
                    text: qsTr("A tiny gpt-oss with random weights, a real tokenizer and chat template, shipped with Day0 so everything works end to end: its replies are noise. Open a real checkpoint (gpt-oss, GLM-5.3-Flash) in the model manager to chat for real.")
                }
            }
        }

        // Loading.
        ColumnLayout {
            visible: welcome.models.loading
            Layout.fillWidth: true
            Layout.topMargin: 8
            spacing: 6
            ProgressBar {
                Layout.fillWidth: true
                value: welcome.models.progress
                indeterminate: welcome.models.progress <= 0
                Accessible.name: qsTr("Loading the model")
            }
            Label {
                Layout.fillWidth: true
                text: welcome.models.progressText
                color: Theme.textMuted
                font.pixelSize: Theme.fontSmall
                elide: Text.ElideRight
            }
        }

        PillButton {
            visible: !welcome.models.loaded && !welcome.models.loading
            Layout.alignment: Qt.AlignHCenter
            Layout.topMargin: 8
            primary: true
            iconName: "folder"
            text: qsTr("Open a model folder")
            onClicked: welcome.openModels()
        }
        Label {
            visible: !welcome.models.loaded && !welcome.models.loading
            Layout.fillWidth: true
            horizontalAlignment: Text.AlignHCenter
            wrapMode: Text.Wrap
            color: Theme.textFaint
            font.pixelSize: Theme.fontSmall
            text: qsTr("A Hugging Face model folder: config.json, tokenizer.json and the .safetensors shards.")
        }
    }
}
