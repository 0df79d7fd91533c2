import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// A dismissible message across the top of the chat: an error (the engine's or the history's
// own words) or a notice.
Rectangle {
    id: banner
    property string text: ""
    property bool error: true
    signal dismissed()

    visible: text.length > 0
    implicitHeight: visible ? row.implicitHeight + 20 : 0
    radius: Theme.radius
    color: error ? Theme.dangerSoft : Theme.infoSoft
    border.color: error ? Qt.rgba(Theme.danger.r, Theme.danger.g, Theme.danger.b, 0.35) : Qt.rgba(Theme.accent.r, Theme.accent.g, Theme.accent.b, 0.3)
    Accessible.role: Accessible.AlertMessage
    Accessible.name: text

    RowLayout {
        id: row
        anchors.fill: parent
        anchors.leftMargin: 14
        anchors.rightMargin: 6
        spacing: 10
        Icon {
            Layout.alignment: Qt.AlignTop
            Layout.topMargin: 11
            iconName: banner.error ? "alert" : "info"
            iconSize: 18
            color: banner.error ? Theme.danger : Theme.accent
        }
        Label {
            Layout.fillWidth: true
            Layout.topMargin: 10
            Layout.bottomMargin: 10
            text: banner.text
            wrapMode: Text.Wrap
            color: banner.error ? Theme.danger : Theme.text
            font.pixelSize: 13
        }
        IconButton {
            Layout.alignment: Qt.AlignTop
            Layout.topMargin: 5
            iconName: "close"
            iconSize: 15
            tip: qsTr("Dismiss")
            onClicked: banner.dismissed()
        }
    }
}
