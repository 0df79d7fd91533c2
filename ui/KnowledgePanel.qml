import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// Folders as knowledge: the folders Day0 has indexed (files, chunks, when), adding one,
// re-indexing and removing; indexing runs in the background with a progress bar. Each
// conversation switches folders on in the composer.
Popup {
    id: panel
    required property QtObject knowledge
    required property QtObject chat

    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(parent.width - 80, 720)
    height: Math.min(parent.height - 80, 560)
    modal: true
    focus: true
    padding: 0
    Overlay.modal: Rectangle { color: Qt.rgba(0, 0, 0, Theme.dark ? 0.55 : 0.3) }
    background: Rectangle { radius: 14; color: Theme.window; border.color: Theme.border }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 22
        spacing: 14

        RowLayout {
            Layout.fillWidth: true
            spacing: 10
            Icon { iconName: "book"; iconSize: 22; color: Theme.accent }
            Label {
                Layout.fillWidth: true
                text: qsTr("Knowledge")
                font.pixelSize: 20
                font.weight: Font.DemiBold
                color: Theme.text
            }
            PillButton {
                objectName: "addFolderButton"
                text: qsTr("Add folder…")
                iconName: "plus"
                primary: true
                onClicked: knowledgeFolderPath.browse()
            }
            IconButton { iconName: "close"; tip: qsTr("Close"); onClicked: panel.close() }
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.textMuted
            font.pixelSize: 13
            text: qsTr("Day0 reads the text, Markdown, code and PDF files of these folders into a local index (ignoring "
                       + "build folders and what .gitignore excludes). Switch a folder on under the message box and "
                       + "each question brings its best passages, with their sources, to the model.")
        }
        PathField {
            id: knowledgeFolderPath
            objectName: "knowledgeFolderPath"
            Layout.fillWidth: true
            folder: true
            showBrowse: false
            title: qsTr("Add a folder of documents or code")
            placeholderText: qsTr("or type a folder's path, e.g. ~/notes")
            actionText: qsTr("Add")
            onSubmitted: (path) => { panel.knowledge.addFolder(path); text = "" }
            onChosen: (urls) => panel.knowledge.addFolder(urls[0])
        }

        // Indexing in progress.
        Rectangle {
            visible: panel.knowledge.indexing
            Layout.fillWidth: true
            implicitHeight: progressColumn.implicitHeight + 20
            radius: Theme.radius
            color: Theme.infoSoft
            ColumnLayout {
                id: progressColumn
                x: 12
                y: 10
                width: parent.width - 24
                spacing: 6
                RowLayout {
                    Layout.fillWidth: true
                    Label {
                        Layout.fillWidth: true
                        text: panel.knowledge.progressText
                        color: Theme.text
                        font.pixelSize: 13
                        elide: Text.ElideMiddle
                    }
                    PillButton { text: qsTr("Stop"); implicitHeight: 28; onClicked: panel.knowledge.cancelIndexing() }
                }
                ProgressBar {
                    Layout.fillWidth: true
                    indeterminate: panel.knowledge.progress < 0
                    value: Math.max(0, panel.knowledge.progress)
                }
            }
        }

        ListView {
            id: folderList
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 8
            model: panel.knowledge.folders
            ScrollBar.vertical: ScrollBar { policy: ScrollBar.AsNeeded }
            Accessible.name: qsTr("Knowledge folders")
            delegate: Rectangle {
                id: folderRow
                required property var modelData
                width: ListView.view.width
                implicitHeight: rowLayout.implicitHeight + 20
                radius: Theme.radius
                color: Theme.surface
                border.color: Theme.border
                RowLayout {
                    id: rowLayout
                    x: 14
                    y: 10
                    width: parent.width - 28
                    spacing: 12
                    Rectangle {
                        implicitWidth: 34
                        implicitHeight: 34
                        radius: 8
                        color: Theme.accentSoft
                        Icon { anchors.centerIn: parent; iconName: "folder"; iconSize: 18; color: Theme.accent }
                    }
                    ColumnLayout {
                        Layout.fillWidth: true
                        spacing: 2
                        Label {
                            Layout.fillWidth: true
                            text: folderRow.modelData.name
                            color: Theme.text
                            font.pixelSize: 14
                            font.weight: Font.DemiBold
                            elide: Text.ElideRight
                        }
                        Label {
                            Layout.fillWidth: true
                            text: folderRow.modelData.path
                            color: Theme.textMuted
                            font.pixelSize: 12
                            elide: Text.ElideMiddle
                        }
                        Label {
                            Layout.fillWidth: true
                            text: folderRow.modelData.indexing ? qsTr("indexing…")
                                  : qsTr("%1 files · %2 chunks · %3 of text · %4").arg(folderRow.modelData.files)
                                        .arg(folderRow.modelData.chunks).arg(folderRow.modelData.sizeText)
                                        .arg(folderRow.modelData.indexedText)
                            color: Theme.textFaint
                            font.pixelSize: 12
                            elide: Text.ElideRight
                        }
                    }
                    IconButton {
                        iconName: "regenerate"
                        tip: qsTr("Index %1 again").arg(folderRow.modelData.name)
                        enabled: !folderRow.modelData.indexing
                        onClicked: panel.knowledge.reindex(folderRow.modelData.id)
                    }
                    IconButton {
                        iconName: "trash"
                        tip: qsTr("Remove %1 from Day0's knowledge (the files stay)").arg(folderRow.modelData.name)
                        onClicked: panel.knowledge.removeFolder(folderRow.modelData.id)
                    }
                }
            }
            Label {
                anchors.centerIn: parent
                width: parent.width - 40
                visible: folderList.count === 0
                horizontalAlignment: Text.AlignHCenter
                wrapMode: Text.Wrap
                color: Theme.textFaint
                text: qsTr("No folders yet. Add a project or a folder of notes to ask about it.")
            }
        }
    }
}
