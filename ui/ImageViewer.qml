import QtQuick
import QtQuick.Controls

// An attached image, large, over a dimmed window. Click or Esc closes it.
Popup {
    id: viewer
    property string source: ""
    property string name: ""
    function show(src, title) { source = src; name = title; open() }

    parent: Overlay.overlay
    anchors.centerIn: parent
    width: parent ? parent.width * 0.9 : 800
    height: parent ? parent.height * 0.9 : 600
    modal: true
    focus: true
    padding: 0
    background: null
    Overlay.modal: Rectangle { color: Qt.rgba(0, 0, 0, 0.75) }

    Image {
        anchors.fill: parent
        anchors.bottomMargin: 30
        source: viewer.source
        fillMode: Image.PreserveAspectFit
        asynchronous: true
        Accessible.name: viewer.name
    }
    Label {
        anchors.bottom: parent.bottom
        anchors.horizontalCenter: parent.horizontalCenter
        text: viewer.name
        color: "#f0f0f0"
    }
    MouseArea { anchors.fill: parent; onClicked: viewer.close() }
}
