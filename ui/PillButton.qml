import QtQuick
import QtQuick.Controls
import QtQuick.Controls.impl

// A text button in the app's style: `primary` is filled with the accent colour.
AbstractButton {
    id: control
    property bool primary: false
    property bool danger: false
    property string iconName: ""

    implicitHeight: 34
    implicitWidth: Math.max(72, row.implicitWidth + 28)
    hoverEnabled: true
    Accessible.name: text
    Accessible.role: Accessible.Button
    font.pixelSize: Theme.fontBody

    background: Rectangle {
        radius: 8
        color: control.primary ? (!control.enabled ? Theme.borderStrong : control.hovered ? Theme.accentHover : Theme.accent)
                               : (control.down ? Theme.selected : control.hovered ? Theme.hover : Theme.surface)
        border.width: control.primary ? 0 : 1
        border.color: control.visualFocus ? Theme.accent : Theme.border
    }
    contentItem: Item {
        implicitWidth: row.implicitWidth
        implicitHeight: row.implicitHeight
        Row {
            id: row
            anchors.centerIn: parent
            spacing: 6
            IconImage {
                visible: control.iconName.length > 0
                anchors.verticalCenter: parent.verticalCenter
                source: visible ? "qrc:/qt/qml/Day0/Ui/icons/" + control.iconName + ".svg" : ""
                sourceSize.width: 16
                sourceSize.height: 16
                color: label.color
            }
            Text {
                id: label
                anchors.verticalCenter: parent.verticalCenter
                text: control.text
                font: control.font
                color: control.primary ? Theme.onAccent : control.danger ? Theme.danger : (control.enabled ? Theme.text : Theme.textFaint)
            }
        }
    }
}
