import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// An attached document as a chip: its name, kind and size, and a remove button in the
// composer (or a click that opens it, in the history).
Rectangle {
    id: chip
    required property var document
    property bool removable: false
    signal removeClicked()
    signal openClicked()

    implicitWidth: Math.min(chipRow.implicitWidth + 20, 280)
    implicitHeight: 48
    width: implicitWidth
    height: implicitHeight
    radius: 10
    color: chipHover.hovered && !chip.removable ? Theme.hover : Theme.surfaceAlt
    border.color: Theme.border
    Accessible.name: qsTr("Document %1, %2, %3").arg(document.name).arg(document.kind).arg(document.sizeText)
    HoverHandler { id: chipHover; cursorShape: chip.removable ? Qt.ArrowCursor : Qt.PointingHandCursor }
    TapHandler { enabled: !chip.removable; onTapped: chip.openClicked() }

    RowLayout {
        id: chipRow
        anchors.fill: parent
        anchors.leftMargin: 10
        anchors.rightMargin: 10
        spacing: 8
        Rectangle {
            implicitWidth: 28
            implicitHeight: 28
            radius: 7
            color: Theme.accentSoft
            Icon { anchors.centerIn: parent; iconName: "file"; iconSize: 16; color: Theme.accent }
        }
        ColumnLayout {
            spacing: 0
            Layout.fillWidth: true
            Label {
                Layout.fillWidth: true
                Layout.maximumWidth: 180
                text: chip.document.name
                color: Theme.text
                font.pixelSize: 13
                font.weight: Font.DemiBold
                elide: Text.ElideMiddle
            }
            Label {
                text: chip.document.kind + " · " + chip.document.sizeText
                color: Theme.textMuted
                font.pixelSize: 11
            }
        }
    }
    IconButton {
        visible: chip.removable
        anchors.right: parent.right
        anchors.top: parent.top
        anchors.margins: -6
        implicitWidth: 22
        implicitHeight: 22
        iconSize: 12
        iconName: "close"
        tip: qsTr("Remove %1").arg(chip.document.name)
        filled: true
        fillColor: Theme.dark ? "#5a5d68" : "#2b2d33"
        onClicked: chip.removeClicked()
    }
}
