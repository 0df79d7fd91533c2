import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// Status bar: the build and the devices the engine found (or why it runs on the CPU).
ToolBar {
    id: bar
    required property QtObject controller
    implicitHeight: 30

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 12
        anchors.rightMargin: 12
        spacing: 16
        Label {
            text: bar.controller.gpuAvailable ? qsTr("GPU") : qsTr("CPU")
            font.bold: true
        }
        Label {
            text: bar.controller.devices.join("   ·   ")
            elide: Text.ElideRight
            Layout.fillWidth: true
            font.pixelSize: 12
        }
        Label {
            text: bar.controller.buildSummary
            font.pixelSize: 12
            opacity: 0.7
        }
    }
}
