import QtQuick
import QtQuick.Controls
import QtQuick.Controls.impl

// A flat, round-cornered icon button with a tooltip; the tooltip is its accessible name.
AbstractButton {
    id: control
    property string iconName: ""
    property string tip: ""
    property color iconColor: Theme.textMuted
    property color hoverColor: Theme.hover
    property int iconSize: 18
    property bool filled: false
    property color fillColor: Theme.accent

    implicitWidth: 32
    implicitHeight: 32
    hoverEnabled: true
    focusPolicy: Qt.TabFocus
    Accessible.name: tip
    Accessible.role: Accessible.Button
    ToolTip.visible: hovered && tip.length > 0
    ToolTip.text: tip
    ToolTip.delay: 600

    background: Rectangle {
        radius: control.filled ? width / 2 : 8
        color: control.filled ? (control.enabled ? control.fillColor : Theme.borderStrong)
                              : (control.down ? Theme.selected : control.hovered ? control.hoverColor : "transparent")
        border.width: control.visualFocus ? 2 : 0
        border.color: Theme.accent
    }
    contentItem: Item {
        IconImage {
            anchors.centerIn: parent
            source: control.iconName.length > 0 ? "qrc:/qt/qml/Day0/Ui/icons/" + control.iconName + ".svg" : ""
            sourceSize.width: control.iconSize
            sourceSize.height: control.iconSize
            color: control.filled ? Theme.onAccent : (control.enabled ? control.iconColor : Theme.textFaint)
        }
    }
}
