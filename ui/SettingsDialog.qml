import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// Settings: device, expert-cache budget (with a GPU), sampling defaults, system prompt, theme, the local
// OpenAI-compatible server, the Hugging Face token, data folder.
// Every control writes through to the stored settings at once.
Popup {
    id: dialog
    required property QtObject controller
    readonly property QtObject settings: controller.settings
    readonly property QtObject server: controller.server
    readonly property QtObject hub: controller.hub

    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(parent.width - 80, 640)
    height: Math.min(parent.height - 60, 720)
    modal: true
    focus: true
    padding: 0
    Overlay.modal: Rectangle { color: Qt.rgba(0, 0, 0, Theme.dark ? 0.55 : 0.3) }
    background: Rectangle { radius: 14; color: Theme.window; border.color: Theme.border }

    // A new data folder: move the history there, or use the one it already holds (confirmed).
    function askDataFolder(path) {
        if (path.length === 0 || path === dialog.settings.dataFolder) return
        const check = dialog.controller.checkDataFolder(path)
        if (check.state === "invalid") {
            dialog.controller.showError(check.message)
            dataFolderPath.text = dialog.settings.dataFolder
            return
        }
        if (check.state === "same") {
            dialog.controller.changeDataFolder(check.path, false)
            return
        }
        folderConfirm.target = check.path
        folderConfirm.hasHistory = check.state === "history"
        folderConfirm.open()
    }

    Dialog {
        id: folderConfirm
        objectName: "dataFolderConfirm"
        property string target
        property bool hasHistory: false
        parent: Overlay.overlay
        anchors.centerIn: parent
        width: Math.min(dialog.width - 40, 520)
        modal: true
        title: hasHistory ? qsTr("Use the history in %1?").arg(target) : qsTr("Move the history to %1?").arg(target)
        Label {
            width: parent.width
            wrapMode: Text.Wrap
            color: Theme.text
            text: folderConfirm.hasHistory
                  ? qsTr("%1 already holds a Day0 history. Day0 will use it from its next start; the current one stays in %2.").arg(folderConfirm.target).arg(dialog.settings.activeDataFolder)
                  : qsTr("Day0 moves the history (with its attachments, backups and the knowledge index) from %1 to %2 when it starts next. Start with an empty history there instead?").arg(dialog.settings.activeDataFolder).arg(folderConfirm.target)
        }
        footer: DialogButtonBox {
            Button {
                text: folderConfirm.hasHistory ? qsTr("Use it") : qsTr("Move the history")
                DialogButtonBox.buttonRole: DialogButtonBox.AcceptRole
            }
            Button {
                visible: !folderConfirm.hasHistory
                text: qsTr("Start empty")
                DialogButtonBox.buttonRole: DialogButtonBox.ApplyRole
            }
            Button {
                text: qsTr("Cancel")
                DialogButtonBox.buttonRole: DialogButtonBox.RejectRole
            }
            onApplied: { dialog.controller.changeDataFolder(folderConfirm.target, false); folderConfirm.close() }
        }
        onAccepted: dialog.controller.changeDataFolder(target, !hasHistory)
        onRejected: dataFolderPath.text = dialog.settings.dataFolder
    }

    component SectionTitle: Label {
        color: Theme.textFaint
        font.pixelSize: 11
        font.weight: Font.DemiBold
        font.letterSpacing: 0.6
        topPadding: 10
    }
    component Hint: Label {
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        color: Theme.textMuted
        font.pixelSize: 12
    }
    component SliderRow: RowLayout {
        id: sliderRow
        property string label
        property real from
        property real to
        property real step
        property real value
        property int decimals: 2
        signal moved(real v)
        Layout.fillWidth: true
        spacing: 12
        Label { text: sliderRow.label; color: Theme.text; Layout.preferredWidth: Math.max(150, implicitWidth); Layout.minimumWidth: implicitWidth }
        Slider {
            Layout.fillWidth: true
            from: sliderRow.from; to: sliderRow.to; stepSize: sliderRow.step
            value: sliderRow.value
            Accessible.name: sliderRow.label
            onMoved: sliderRow.moved(value)
        }
        Label { text: sliderRow.value.toFixed(sliderRow.decimals); color: Theme.textMuted; Layout.preferredWidth: Math.max(40, implicitWidth); Layout.minimumWidth: implicitWidth; horizontalAlignment: Text.AlignRight }
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 0
        RowLayout {
            Layout.fillWidth: true
            Layout.margins: 20
            Layout.bottomMargin: 8
            Label {
                text: qsTr("Settings")
                font.pixelSize: 20
                font.weight: Font.DemiBold
                color: Theme.text
                Layout.fillWidth: true
            }
            IconButton { iconName: "close"; tip: qsTr("Close"); onClicked: dialog.close() }
        }

        ScrollView {
            Layout.fillWidth: true
            Layout.fillHeight: true
            contentWidth: availableWidth
            clip: true
            ColumnLayout {
                x: 20
                width: dialog.width - 40
                spacing: 10

                SectionTitle { text: qsTr("DEVICE") }
                ComboBox {
                    id: deviceBox
                    Layout.fillWidth: true
                    model: dialog.controller.deviceChoices
                    textRole: "label"
                    valueRole: "id"
                    Accessible.name: qsTr("Device")
                    Component.onCompleted: currentIndex = Math.max(0, indexOfValue(dialog.settings.device))
                    onActivated: dialog.settings.device = currentValue
                }
                Hint {
                    text: dialog.controller.gpuAvailable
                          ? qsTr("Takes effect when a model is loaded. If the engine cannot use the GPU for a model, Day0 loads it on the CPU and says why.")
                          : qsTr("No GPU is usable: %1. Day0 runs on the CPU.").arg(dialog.controller.gpuProblem.replace(/[.\s]+$/, ""))
                }
                SliderRow {
                    objectName: "expertCacheRow"
                    visible: dialog.controller.gpuAvailable
                    label: qsTr("Expert cache (GiB)")
                    from: 1; to: 141; step: 1; decimals: 0
                    value: dialog.settings.expertCacheGiB
                    onMoved: (v) => dialog.settings.expertCacheGiB = v
                }
                Hint {
                    visible: dialog.controller.gpuAvailable
                    text: qsTr("GPU memory kept for MXFP4 experts streamed from disk; the rest of the GPU holds attention, caches and the FP8 workspace.")
                }

                RowLayout {
                    Layout.fillWidth: true
                    spacing: 12
                    Label { text: qsTr("Context length (0: the model's)"); color: Theme.text; Layout.preferredWidth: Math.max(150, implicitWidth); Layout.minimumWidth: implicitWidth }
                    SpinBox {
                        objectName: "contextLengthBox"
                        from: 0; to: 1048576; stepSize: 1024
                        value: dialog.settings.contextLength
                        editable: true
                        textFromValue: (v) => String(v)
                        valueFromText: (t) => parseInt(t)
                        Accessible.name: qsTr("Context length in tokens")
                        onValueModified: dialog.settings.contextLength = value
                    }
                    Item { Layout.fillWidth: true }
                }
                Hint { text: qsTr("Positions a loaded model can hold; takes effect at the next load. 0 takes the model's own, bounded by the memory.") }

                SectionTitle { text: qsTr("SAMPLING") }
                SliderRow {
                    label: qsTr("Temperature")
                    from: 0; to: 2; step: 0.05
                    value: dialog.settings.temperature
                    onMoved: (v) => dialog.settings.temperature = v
                }
                SliderRow {
                    label: qsTr("Top-p")
                    from: 0; to: 1; step: 0.01
                    value: dialog.settings.topP
                    onMoved: (v) => dialog.settings.topP = v
                }
                RowLayout {
                    Layout.fillWidth: true
                    spacing: 12
                    Label { text: qsTr("Top-k (0: off)"); color: Theme.text; Layout.preferredWidth: Math.max(150, implicitWidth); Layout.minimumWidth: implicitWidth }
                    SpinBox {
                        from: 0; to: 1000
                        value: dialog.settings.topK
                        editable: true
                        Accessible.name: qsTr("Top-k")
                        onValueModified: dialog.settings.topK = value
                    }
                    Item { Layout.fillWidth: true }
                }
                RowLayout {
                    Layout.fillWidth: true
                    spacing: 12
                    Label { text: qsTr("Longest reply (tokens)"); color: Theme.text; Layout.preferredWidth: Math.max(150, implicitWidth); Layout.minimumWidth: implicitWidth }
                    SpinBox {
                        from: 1; to: 131072; stepSize: 128
                        value: dialog.settings.maxNewTokens
                        editable: true
                        Accessible.name: qsTr("Longest reply in tokens")
                        onValueModified: dialog.settings.maxNewTokens = value
                    }
                    Item { Layout.fillWidth: true }
                }
                SliderRow {
                    label: qsTr("Min-p (0: off)")
                    from: 0; to: 1; step: 0.01
                    value: dialog.settings.minP
                    onMoved: (v) => dialog.settings.minP = v
                }
                SliderRow {
                    label: qsTr("Repetition penalty (1: off)")
                    from: 0.5; to: 2; step: 0.05
                    value: dialog.settings.repetitionPenalty
                    onMoved: (v) => dialog.settings.repetitionPenalty = v
                }
                RowLayout {
                    Layout.fillWidth: true
                    spacing: 12
                    Label { text: qsTr("Stop strings (one a line)"); color: Theme.text; Layout.preferredWidth: Math.max(150, implicitWidth); Layout.minimumWidth: implicitWidth }
                    TextArea {
                        objectName: "stopStringsField"
                        Layout.fillWidth: true
                        text: dialog.settings.stopStrings.join("\n")
                        color: Theme.text
                        placeholderText: qsTr("none")
                        Accessible.name: qsTr("Stop strings, one a line")
                        onEditingFinished: dialog.settings.stopStrings = text.split("\n")
                    }
                }
                RowLayout {
                    Layout.fillWidth: true
                    Hint { text: qsTr("Defaults for new chats; each chat can change them in its chat settings (Ctrl+Shift+S).") }
                    PillButton { text: qsTr("Defaults"); onClicked: dialog.settings.resetSampling() }
                }
                // A conversation longer than the model's context: the default, and this chat's own.
                RowLayout {
                    Layout.fillWidth: true
                    spacing: 12
                    Label { text: qsTr("Long conversations"); color: Theme.text; Layout.preferredWidth: Math.max(150, implicitWidth); Layout.minimumWidth: implicitWidth }
                    ComboBox {
                        objectName: "contextOverflowBox"
                        Layout.fillWidth: true
                        textRole: "label"
                        valueRole: "id"
                        model: [
                            { id: "truncate-middle", label: qsTr("Truncate the middle (keep the first turn)") },
                            { id: "rolling-window", label: qsTr("Rolling window (drop the oldest turns)") },
                            { id: "stop", label: qsTr("Stop at the context limit") }
                        ]
                        Accessible.name: qsTr("Long conversations, for every chat")
                        Component.onCompleted: currentIndex = Math.max(0, indexOfValue(dialog.settings.contextOverflow))
                        onActivated: dialog.settings.contextOverflow = currentValue
                    }
                }
                RowLayout {
                    Layout.fillWidth: true
                    spacing: 12
                    Label { text: qsTr("… in this chat"); color: Theme.text; Layout.preferredWidth: Math.max(150, implicitWidth); Layout.minimumWidth: implicitWidth }
                    ComboBox {
                        id: chatOverflowBox
                        objectName: "chatContextOverflowBox"
                        Layout.fillWidth: true
                        textRole: "label"
                        valueRole: "id"
                        model: [
                            { id: "", label: qsTr("As above") },
                            { id: "truncate-middle", label: qsTr("Truncate the middle") },
                            { id: "rolling-window", label: qsTr("Rolling window") },
                            { id: "stop", label: qsTr("Stop at the context limit") }
                        ]
                        Accessible.name: qsTr("Long conversations, in this chat")
                        Component.onCompleted: currentIndex = Math.max(0, indexOfValue(dialog.controller.chat.contextOverflow))
                        onActivated: dialog.controller.chat.contextOverflow = currentValue
                        Connections {
                            target: dialog.controller.chat
                            function onContextOverflowChanged() {
                                chatOverflowBox.currentIndex = Math.max(0, chatOverflowBox.indexOfValue(dialog.controller.chat.contextOverflow))
                            }
                        }
                    }
                }
                Hint {
                    text: qsTr("Earlier messages left out of the prompt stay in the history; the chat says how many.")
                }

                SectionTitle { text: qsTr("SYSTEM PROMPT") }
                Rectangle {
                    Layout.fillWidth: true
                    implicitHeight: 90
                    radius: 8
                    color: Theme.surface
                    border.color: systemPrompt.activeFocus ? Theme.accent : Theme.border
                    ScrollView {
                        anchors.fill: parent
                        anchors.margins: 2
                        TextArea {
                            id: systemPrompt
                            text: dialog.settings.systemPrompt
                            wrapMode: Text.Wrap
                            color: Theme.text
                            placeholderText: qsTr("Instructions every new conversation starts with (optional)")
                            placeholderTextColor: Theme.textFaint
                            background: null
                            Accessible.name: qsTr("System prompt")
                            onEditingFinished: dialog.settings.systemPrompt = text
                        }
                    }
                }

                SectionTitle { text: qsTr("APPEARANCE") }
                RowLayout {
                    spacing: 8
                    Repeater {
                        model: [{ id: "system", label: qsTr("System") }, { id: "light", label: qsTr("Light") }, { id: "dark", label: qsTr("Dark") }]
                        delegate: PillButton {
                            required property var modelData
                            text: modelData.label
                            primary: dialog.settings.theme === modelData.id
                            Accessible.name: qsTr("%1 theme").arg(modelData.label)
                            onClicked: dialog.settings.theme = modelData.id
                        }
                    }
                }

                SectionTitle { text: qsTr("LOCAL SERVER") }
                Switch {
                    text: qsTr("Serve the loaded model over the OpenAI API")
                    checked: dialog.settings.serverEnabled
                    Accessible.name: qsTr("Serve the loaded model")
                    onToggled: dialog.settings.serverEnabled = checked
                }
                RowLayout {
                    Layout.fillWidth: true
                    spacing: 12
                    Label { text: qsTr("Port"); color: Theme.text; Layout.preferredWidth: Math.max(150, implicitWidth); Layout.minimumWidth: implicitWidth }
                    SpinBox {
                        from: 1; to: 65535
                        value: dialog.settings.serverPort
                        editable: true
                        textFromValue: (v) => String(v)
                        valueFromText: (t) => parseInt(t)
                        Accessible.name: qsTr("Server port")
                        onValueModified: dialog.settings.serverPort = value
                    }
                    Item { Layout.fillWidth: true }
                }
                RowLayout {
                    Layout.fillWidth: true
                    spacing: 12
                    Label { text: qsTr("API key"); color: Theme.text; Layout.preferredWidth: Math.max(150, implicitWidth); Layout.minimumWidth: implicitWidth }
                    TextField {
                        Layout.fillWidth: true
                        text: dialog.settings.serverApiKey
                        echoMode: TextInput.Password
                        placeholderText: qsTr("none: any local program may use it")
                        color: Theme.text
                        selectByMouse: true
                        Accessible.name: qsTr("Server API key")
                        onEditingFinished: dialog.settings.serverApiKey = text
                    }
                }
                RowLayout {
                    Layout.fillWidth: true
                    spacing: 12
                    Label { text: qsTr("Allowed origins"); color: Theme.text; Layout.preferredWidth: Math.max(150, implicitWidth); Layout.minimumWidth: implicitWidth }
                    TextField {
                        objectName: "serverCorsOrigins"
                        Layout.fillWidth: true
                        text: dialog.settings.serverCorsOrigins
                        placeholderText: qsTr("none: web pages cannot call it (e.g. http://localhost:3000)")
                        color: Theme.text
                        selectByMouse: true
                        Accessible.name: qsTr("Origins of web pages that may call the server")
                        ToolTip.visible: hovered
                        ToolTip.delay: 600
                        ToolTip.text: qsTr("Browser front ends on these origins may use the API (CORS). Separate them with commas; * allows any page.")
                        onEditingFinished: dialog.settings.serverCorsOrigins = text
                    }
                }
                CheckBox {
                    text: qsTr("Let other machines connect (needs an API key)")
                    checked: dialog.settings.serverAllowNetwork
                    Accessible.name: qsTr("Let other machines connect")
                    onToggled: dialog.settings.serverAllowNetwork = checked
                }
                Hint {
                    text: dialog.server.statusText === qsTr("Off")
                          ? qsTr("Scripts and other apps can use the model through /v1/chat/completions, sharing this app's engine and memory.")
                          : dialog.server.statusText
                }

                SectionTitle { text: qsTr("HUGGING FACE") }
                RowLayout {
                    Layout.fillWidth: true
                    spacing: 12
                    Label { text: qsTr("Token"); color: Theme.text; Layout.preferredWidth: Math.max(150, implicitWidth); Layout.minimumWidth: implicitWidth }
                    TextField {
                        id: hubTokenField
                        objectName: "hubTokenField"
                        Layout.fillWidth: true
                        echoMode: TextInput.Password
                        placeholderText: dialog.hub.hasToken ? qsTr("a token is saved; type a new one to replace it")
                                                             : qsTr("hf_… for gated and private repositories")
                        color: Theme.text
                        selectByMouse: true
                        Accessible.name: qsTr("Hugging Face token")
                        onAccepted: if (dialog.hub.saveToken(text)) text = ""
                    }
                    PillButton {
                        text: qsTr("Save")
                        enabled: hubTokenField.text.trim().length > 0
                        onClicked: if (dialog.hub.saveToken(hubTokenField.text)) hubTokenField.text = ""
                    }
                    PillButton {
                        visible: dialog.hub.hasToken
                        text: qsTr("Forget")
                        onClicked: dialog.hub.saveToken("")
                    }
                }
                Hint {
                    text: qsTr("Gated repositories (accept their terms on the Hub first) need a token. It is kept in a file only you can read; HF_TOKEN, when set, comes first.")
                }

                SectionTitle { text: qsTr("DATA FOLDER") }
                PathField {
                    id: dataFolderPath
                    objectName: "dataFolderPath"
                    Layout.fillWidth: true
                    folder: true
                    showAction: false
                    title: qsTr("Choose the data folder")
                    text: dialog.settings.dataFolder
                    onSubmitted: (path) => dialog.askDataFolder(path)
                    onChosen: (urls) => dialog.askDataFolder(decodeURIComponent(urls[0].toString().replace(/^file:\/\//, "")))
                    Connections {
                        target: dataFolderPath.input
                        function onEditingFinished() { dialog.askDataFolder(dataFolderPath.input.text.trim()) }
                    }
                }
                Hint {
                    text: dialog.settings.dataFolder === dialog.settings.activeDataFolder
                          ? qsTr("The history (history.db, with attachments), its backups and the knowledge index live here; day0-cli uses the same folder.")
                          : qsTr("Day0 uses %1 until it restarts.").arg(dialog.settings.activeDataFolder)
                }
                Item { implicitHeight: 16 }
            }
        }
    }
}
