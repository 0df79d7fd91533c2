import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// The status bar: model and device, speed of the last reply, context use, memory.
Rectangle {
    id: bar
    required property QtObject controller
    readonly property QtObject models: controller.models

    implicitHeight: 28
    color: Theme.sidebar
    Rectangle { width: parent.width; height: 1; color: Theme.border }

    component Item_: Label {
        color: Theme.textMuted
        font.pixelSize: 12
    }

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 14
        anchors.rightMargin: 14
        spacing: 18
        Rectangle {
            implicitWidth: 7
            implicitHeight: 7
            radius: 3.5
            color: bar.models.loaded ? Theme.success : bar.models.loading ? Theme.warning : Theme.textFaint
        }
        Item_ {
            Layout.leftMargin: -12
            text: bar.models.loaded ? bar.models.loadedName : bar.models.loading ? qsTr("Loading model…") : qsTr("No model")
            Accessible.name: qsTr("Model: %1").arg(text)
        }
        Item_ {
            text: bar.models.loaded ? (bar.models.loadedIsRemote ? qsTr("remote: %1").arg(bar.models.remoteUrl)
                                       : bar.models.device === "cpu" ? qsTr("CPU") : bar.models.device)
                                    : (bar.controller.gpuAvailable ? qsTr("GPU available") : qsTr("CPU"))
            Accessible.name: qsTr("Device: %1").arg(text)
        }
        Item { Layout.fillWidth: true }
        Item_ {
            visible: bar.controller.tokensPerSecond > 0
            text: qsTr("%1 tokens/s").arg(bar.controller.tokensPerSecond.toFixed(1))
        }
        Item_ {
            visible: bar.controller.timeToFirstTokenMs > 0
            text: qsTr("first token %1 ms").arg(Math.round(bar.controller.timeToFirstTokenMs))
        }
        Item_ {
            visible: bar.controller.expertText.length > 0
            text: bar.controller.expertText
            Accessible.name: qsTr("Streamed experts: %1").arg(text)
        }
        Item_ {
            visible: bar.controller.server.running
            text: qsTr("serving %1").arg(bar.controller.server.url)
            Accessible.name: qsTr("Local server: %1").arg(bar.controller.server.url)
        }
        Item_ {
            visible: bar.models.loaded && bar.controller.contextTotal > 0
            text: qsTr("context %1 / %2").arg(bar.controller.contextUsed.toLocaleString(Qt.locale(), "f", 0))
                                         .arg(bar.controller.contextTotal.toLocaleString(Qt.locale(), "f", 0))
        }
        Item_ {
            text: qsTr("memory %1").arg(bar.controller.memoryText)
        }
    }
}
