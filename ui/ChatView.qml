import QtQuick
import QtQuick.Controls

// The visible branch of the open conversation. Follows the stream while the reader is at the
// bottom; scrolling up stops following until they come back down.
ListView {
    id: view
    required property QtObject chat
    signal openImage(string source, string name)
    property bool follow: true

    clip: true
    model: chat.messages
    spacing: 4
    topMargin: 16
    bottomMargin: 24
    boundsBehavior: Flickable.StopAtBounds
    reuseItems: false
    cacheBuffer: 2000
    Accessible.name: qsTr("Messages")
    Accessible.role: Accessible.List
    ScrollBar.vertical: ScrollBar { policy: ScrollBar.AsNeeded }

    delegate: MessageDelegate {
        chat: view.chat
        onOpenImage: (source, name) => view.openImage(source, name)
    }

    onMovementEnded: follow = atYEnd
    onContentHeightChanged: if (follow) Qt.callLater(positionViewAtEnd)
    onCountChanged: { follow = true; Qt.callLater(positionViewAtEnd) }
}
