import QtQuick
import QtQuick.Controls.impl

// A monochrome icon from ui/icons, tinted.
IconImage {
    property string iconName: ""
    property int iconSize: 16
    source: iconName.length > 0 ? "qrc:/qt/qml/Day0/Ui/icons/" + iconName + ".svg" : ""
    sourceSize.width: iconSize
    sourceSize.height: iconSize
    color: Theme.textMuted
}
