import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// What an empty chat shows: what Day0 is, the model that is ready (the demo model explained),
// or how to get one: a folder, the Hugging Face Hub (with repositories known to work), a server.
Item {
    id: welcome
    required property QtObject controller
    readonly property QtObject models: controller.models
    readonly property QtObject hub: controller.hub
    signal openModels()
    signal getModel(string repo)
    signal connectServer()

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
                    text: (welcome.models.loadedDemoText.length > 0 ? welcome.models.loadedDemoText + " " : "")
                          + qsTr("Get a real model below (gpt-oss, GLM-5.3-Flash), or open a checkpoint in the model manager, to chat for real.")
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

        // Three ways to a model: a folder on disk, one from the Hugging Face Hub, a server.
        RowLayout {
            visible: !welcome.models.loaded && !welcome.models.loading
            Layout.alignment: Qt.AlignHCenter
            Layout.topMargin: 8
            spacing: 8
            PillButton {
                objectName: "welcomeGetModel"
                primary: true
                iconName: "plus"
                text: qsTr("Get a model")
                onClicked: welcome.getModel("")
            }
            PillButton {
                iconName: "folder"
                text: qsTr("Open a folder")
                onClicked: welcome.openModels()
            }
            PillButton {
                iconName: "chip"
                text: qsTr("Connect to a server")
                onClicked: welcome.connectServer()
            }
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

        // Repositories known to work, with their sizes: a click checks one in Get a model.
        ColumnLayout {
            visible: !welcome.models.loaded && !welcome.models.loading || welcome.models.loadedIsDemo
            Layout.fillWidth: true
            Layout.topMargin: 8
            spacing: 4
            Label {
                text: qsTr("KNOWN TO WORK")
                color: Theme.textFaint
                font.pixelSize: 11
                font.weight: Font.DemiBold
                font.letterSpacing: 0.6
            }
            Repeater {
                model: welcome.hub.curated
                delegate: ItemDelegate {
                    id: curatedRow
                    required property var modelData
                    Layout.fillWidth: true
                    implicitHeight: 48
                    Accessible.name: qsTr("Get %1 (%2)").arg(modelData.name).arg(modelData.sizeText)
                    onClicked: welcome.getModel(modelData.repo)
                    background: Rectangle {
                        radius: 8
                        color: curatedRow.hovered ? Theme.hover : Theme.surfaceAlt
                    }
                    contentItem: RowLayout {
                        spacing: 10
                        ColumnLayout {
                            Layout.fillWidth: true
                            spacing: 1
                            Label {
                                text: curatedRow.modelData.name
                                color: Theme.text
                                font.pixelSize: 13
                                font.weight: Font.DemiBold
                            }
                            Label {
                                Layout.fillWidth: true
                                text: curatedRow.modelData.repo + " · " + curatedRow.modelData.paramsText
                                color: Theme.textFaint
                                font.pixelSize: 11
                                elide: Text.ElideRight
                            }
                        }
                        Label {
                            text: curatedRow.modelData.sizeText
                            color: Theme.textMuted
                            font.pixelSize: 12
                        }
                    }
                }
            }
        }
    }
}
