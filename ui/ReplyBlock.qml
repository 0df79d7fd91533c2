import QtQuick
import QtQuick.Controls

// One block of a reply (a row of the message's blocks model): prose, a quote, display math or a
// code box (or a later part of one). Its rich text is made in C++ when the block is shown, and
// again only when the block changes (a streaming reply changes only its last blocks). Until it
// is shown (a long reply shows the blocks near the view first), it holds an estimated height.
Item {
    id: block
    required property QtObject blocks
    required property QtObject chat
    required property int index
    required property string kind
    required property int revision
    required property string language
    required property bool closed
    required property int part
    required property bool lastPart
    required property int chars
    required property int lines
    // Rendered now (a short reply), or once shown (a long one: see MessageDelegate.revealBlocks).
    // Once shown, a block stays shown, also when its reply grows past the threshold.
    property bool eager: true
    property bool shown: false
    onEagerChanged: if (eager) shown = true
    Component.onCompleted: if (eager) shown = true
    readonly property int pixelSize: Theme.fontBody + 1

    readonly property real estimatedHeight: kind === "code"
        ? lines * 18 + (part === 0 ? 58 : 24)
        : Math.max(lines, Math.ceil(chars * 7.5 / Math.max(200, width))) * 22

    // The rich text for the theme; `revision` makes it follow the block's changes.
    function richText() {
        return block.revision >= 0 ? block.blocks.html(block.index, Theme.dark, block.pixelSize) : ""
    }
    function openLink(link) {
        if (/^(https?:|mailto:)/i.test(link)) Qt.openUrlExternally(link)
    }

    implicitHeight: loader.item ? loader.item.implicitHeight : estimatedHeight

    Loader {
        id: loader
        width: parent.width
        active: block.shown
        sourceComponent: block.kind === "code" ? codeComponent
                       : block.kind === "math" ? mathComponent
                       : block.kind === "quote" ? quoteComponent : proseComponent
    }

    Component {
        id: proseComponent
        TextEdit {
            id: prose
            objectName: "replyText"
            // The block's Markdown (for tests and accessibility); the item shows `text`.
            readonly property string source: block.revision >= 0 ? block.blocks.source(block.index) : ""
            text: block.richText()
            textFormat: TextEdit.RichText
            wrapMode: Text.Wrap
            readOnly: true
            selectByMouse: true
            color: Theme.text
            font.pixelSize: block.pixelSize
            selectionColor: Theme.accent
            selectedTextColor: Theme.onAccent
            Accessible.name: qsTr("Reply")
            onLinkActivated: (link) => block.openLink(link)
            onTextChanged: block.chat.styleLinks(textDocument, Theme.link)
            Component.onCompleted: block.chat.styleLinks(textDocument, Theme.link)
            HoverHandler { enabled: parent.hoveredLink.length > 0; cursorShape: Qt.PointingHandCursor }
        }
    }

    Component {
        id: quoteComponent
        Item {
            implicitHeight: quoteText.implicitHeight + 8
            Rectangle {
                width: 3
                height: parent.height
                radius: 1.5
                color: Theme.borderStrong
            }
            TextEdit {
                id: quoteText
                objectName: "replyText"
                readonly property string source: block.revision >= 0 ? block.blocks.source(block.index) : ""
                x: 14
                y: 4
                width: parent.width - 14
                text: block.richText()
                textFormat: TextEdit.RichText
                wrapMode: Text.Wrap
                readOnly: true
                selectByMouse: true
                color: Theme.textMuted
                font.pixelSize: block.pixelSize
                selectionColor: Theme.accent
                selectedTextColor: Theme.onAccent
                Accessible.name: qsTr("Quote")
                onLinkActivated: (link) => block.openLink(link)
            }
        }
    }

    Component {
        id: mathComponent
        TextEdit {
            objectName: "replyMath"
            readonly property string source: block.revision >= 0 ? block.blocks.source(block.index) : ""
            text: block.richText()
            textFormat: TextEdit.RichText
            wrapMode: Text.Wrap
            readOnly: true
            selectByMouse: true
            color: Theme.text
            font.pixelSize: block.pixelSize
            topPadding: 4
            bottomPadding: 4
            selectionColor: Theme.accent
            selectedTextColor: Theme.onAccent
            Accessible.name: qsTr("Formula: %1").arg(source)
        }
    }

    Component {
        id: codeComponent
        CodeBlock {
            html: block.richText()
            language: block.language
            showHeader: block.part === 0
            chat: block.chat
            onCopyRequested: block.chat.copyText(block.blocks.code(block.index))
        }
    }
}
