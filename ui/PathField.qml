import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Day0.Ui

// A file or folder path, typed (Enter or the action button takes it) or chosen with Browse…,
// which opens the desktop's dialog, or Qt's own when the desktop has none. Qt's own dialog is
// QML that needs further QML modules (Qt.labs.folderlistmodel among them); Qt 6.4 crashes when
// a file dialog's QML cannot load, so Browse first checks that it loads, and says here what is
// missing instead of opening it. Typing the path always works.
ColumnLayout {
    id: field
    property bool folder: true           // a folder, or files
    property bool multiple: false        // several files at once (files only)
    property bool saving: false          // a file to write (files only)
    property string browseText: qsTr("Browse…")
    property string title: ""
    property var nameFilters: []
    property string placeholderText: folder ? qsTr("/path/to/folder") : qsTr("/path/to/file")
    property string actionText: qsTr("Open")
    property bool showAction: true       // false: the owner reads `text` itself (Enter still submits)
    property bool showBrowse: true       // false: the owner has its own button calling browse()
    property alias text: input.text
    property alias input: input
    // Why the dialog did not open, shown under the field; empty when it did.
    property string problem: ""
    readonly property QtObject dialog: folder ? folderDialog : fileDialog

    // A path typed and confirmed (Enter or the action button); never empty.
    signal submitted(string path)
    // What the dialog returned: a list of file:// URLs (one for a folder).
    signal chosen(var urls)

    spacing: 4

    // Why the QML implementation Qt falls back to cannot load, as a message for this field.
    function dialogProblem() {
        const why = DialogSupport.problem(folder)
        if (why.length === 0) return ""
        const missing = /module "([^"]+)" is not installed/.exec(why)
        if (missing)
            return qsTr("The %1 dialog cannot open: the QML module %2 is not installed (Debian package %3). Type the path instead.")
                .arg(folder ? qsTr("folder") : qsTr("file"))
                .arg(missing[1])
                .arg("qml6-module-" + missing[1].toLowerCase().replace(/\./g, "-"))
        return qsTr("The %1 dialog cannot open (%2). Type the path instead.")
            .arg(folder ? qsTr("folder") : qsTr("file")).arg(why.trim().split("\n")[0])
    }

    // Opens the dialog; false (with `problem` set) when it cannot load.
    function browse() {
        problem = dialogProblem()
        if (problem.length > 0) {
            console.warn("Day0: " + problem)
            input.forceActiveFocus()
            return false
        }
        dialog.open()
        return true
    }

    function submit() {
        let path = input.text.trim()
        // A path pasted from a file manager or a shell may come quoted.
        if (path.length >= 2 && (path[0] === "'" || path[0] === '"') && path[path.length - 1] === path[0])
            path = path.slice(1, -1)
        if (path.length === 0) {
            problem = qsTr("Type a path first.")
            input.forceActiveFocus()
            return
        }
        problem = ""
        submitted(path)
    }

    FileDialog {
        id: fileDialog
        title: field.title
        fileMode: field.saving ? FileDialog.SaveFile : field.multiple ? FileDialog.OpenFiles : FileDialog.OpenFile
        nameFilters: field.nameFilters
        onAccepted: field.chosen(field.multiple && !field.saving ? selectedFiles : [selectedFile])
    }
    FolderDialog {
        id: folderDialog
        title: field.title
        onAccepted: field.chosen([selectedFolder])
    }

    RowLayout {
        Layout.fillWidth: true
        spacing: 8
        TextField {
            id: input
            Layout.fillWidth: true
            placeholderText: field.placeholderText
            placeholderTextColor: Theme.textFaint
            color: Theme.text
            selectByMouse: true
            Accessible.name: field.title
            onAccepted: field.submit()
            onTextEdited: field.problem = ""
        }
        PillButton {
            visible: field.showAction
            text: field.actionText
            onClicked: field.submit()
        }
        PillButton {
            objectName: "browseButton"
            visible: field.showBrowse
            text: field.browseText
            Accessible.name: qsTr("Browse for a %1").arg(field.folder ? qsTr("folder") : qsTr("file"))
            onClicked: field.browse()
        }
    }
    Label {
        objectName: "pathProblem"
        visible: field.problem.length > 0
        Layout.fillWidth: true
        text: field.problem
        wrapMode: Text.Wrap
        color: Theme.danger
        font.pixelSize: 12
    }
}
