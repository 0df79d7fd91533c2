import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ApplicationWindow {
    id: window
    required property QtObject controller

    width: 1100
    height: 720
    minimumWidth: 640
    minimumHeight: 420
    visible: true
    title: qsTr("Day0")
    // Light or dark follows the system palette (Fusion style); brand colours stay fixed.
    readonly property color brand: "#3f51b5"

    header: ToolBar {
        background: Rectangle { color: window.brand }
        RowLayout {
            anchors.fill: parent
            anchors.leftMargin: 12
            anchors.rightMargin: 12
            spacing: 10
            Image {
                source: "qrc:/qt/qml/Day0/Ui/icons/day0.svg"
                sourceSize.width: 28
                sourceSize.height: 28
            }
            Label {
                text: qsTr("Day0")
                font.pixelSize: 20
                font.bold: true
                color: "white"
            }
            Label {
                text: qsTr("local chat with open-weight MoE models")
                color: "#dde3ff"
                Layout.fillWidth: true
                elide: Text.ElideRight
            }
            Label {
                text: "v" + window.controller.version
                color: "#dde3ff"
            }
        }
    }

    ModelPanel {
        anchors.fill: parent
        anchors.margins: 20
        controller: window.controller
    }

    footer: DeviceBar {
        controller: window.controller
    }
}
