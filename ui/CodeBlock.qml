import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// A fenced code block: language label, Copy button, highlighted monospace text (rich text made
// in C++) that scrolls sideways. A long block is several of these: the later parts have no header.
Rectangle {
    id: block
    required property string html
    required property string language
    required property QtObject chat
    property bool showHeader: true
    property bool copied: false
    signal copyRequested()

    implicitHeight: column.implicitHeight
    radius: 10
    color: Theme.codeBackground
    border.color: Theme.border
    clip: true

    ColumnLayout {
        id: column
        width: parent.width
        spacing: 0
        Rectangle {
            visible: block.showHeader
            Layout.fillWidth: true
            implicitHeight: 34
            color: Theme.codeHeader
            radius: 10
            Rectangle { anchors.bottom: parent.bottom; width: parent.width; height: 10; color: parent.color }
            RowLayout {
                anchors.fill: parent
                anchors.leftMargin: 14
                anchors.rightMargin: 6
                Label {
                    text: block.language.length > 0 ? block.language : qsTr("code")
                    color: Theme.textMuted
                    font.pixelSize: Theme.fontSmall
                    font.family: Theme.monoFamily
                    Layout.fillWidth: true
                }
                PillButton {
                    implicitHeight: 26
                    implicitWidth: 78
                    iconName: block.copied ? "check" : "copy"
                    text: block.copied ? qsTr("Copied") : qsTr("Copy")
                    font.pixelSize: Theme.fontSmall
                    Accessible.name: qsTr("Copy code")
                    background: Rectangle { radius: 6; color: parent.hovered ? Theme.hover : "transparent" }
                    onClicked: { block.copyRequested(); block.copied = true; copiedTimer.restart() }
                }
            }
        }
        Flickable {
            Layout.fillWidth: true
            implicitHeight: codeText.implicitHeight + 24
            contentWidth: codeText.implicitWidth + 28
            flickableDirection: Flickable.HorizontalFlick
            boundsBehavior: Flickable.StopAtBounds
            clip: true
            ScrollBar.horizontal: ScrollBar { policy: ScrollBar.AsNeeded }
            TextEdit {
                id: codeText
                objectName: "codeText"
                x: 14
                y: 12
                text: block.html
                textFormat: TextEdit.RichText
                readOnly: true
                selectByMouse: true
                font.family: Theme.monoFamily
                font.pixelSize: 13
                color: Theme.codeText
                selectionColor: Theme.accent
                selectedTextColor: Theme.onAccent
                Accessible.name: qsTr("Code")
            }
        }
    }
    Timer { id: copiedTimer; interval: 1500; onTriggered: block.copied = false }
}
