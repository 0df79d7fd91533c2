import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// The open conversation's own settings, beside the chat: its system prompt, sampling and stop
// strings (a new chat starts from the Settings' defaults), and presets to reuse them. Every
// control writes through to the conversation at once.
Rectangle {
    id: panel
    required property QtObject chat
    readonly property var values: chat.chatSettings

    color: Theme.sidebar
    implicitWidth: 300

    component FieldLabel: Label {
        color: Theme.text
        Layout.fillWidth: true
        wrapMode: Text.Wrap
    }
    component NumberRow: RowLayout {
        id: numberRow
        property string label
        property string key
        property real from
        property real to
        property real step
        property int decimals: 2
        Layout.fillWidth: true
        spacing: 8
        FieldLabel { text: numberRow.label }
        SpinBox {
            id: spin
            objectName: "chatSetting_" + numberRow.key
            readonly property real factor: Math.pow(10, numberRow.decimals)
            from: Math.round(numberRow.from * factor)
            to: Math.round(numberRow.to * factor)
            stepSize: Math.max(1, Math.round(numberRow.step * factor))
            value: Math.round(Number(panel.values[numberRow.key]) * factor)
            editable: true
            Layout.preferredWidth: Math.max(implicitWidth, 120)
            textFromValue: (v, locale) => (v / factor).toFixed(numberRow.decimals)
            valueFromText: (t, locale) => Math.round(parseFloat(t) * factor)
            validator: DoubleValidator { bottom: numberRow.from; top: numberRow.to; decimals: numberRow.decimals }
            Accessible.name: numberRow.label
            onValueModified: panel.chat.setChatSetting(numberRow.key, value / factor)
        }
    }

    Rectangle { anchors.left: parent.left; width: 1; height: parent.height; color: Theme.border }

    ScrollView {
        anchors.fill: parent
        anchors.leftMargin: 1
        contentWidth: availableWidth
        clip: true
        ColumnLayout {
            x: 14
            width: panel.width - 29
            spacing: 8

            RowLayout {
                Layout.fillWidth: true
                Layout.topMargin: 12
                Label {
                    Layout.fillWidth: true
                    text: qsTr("Chat settings")
                    font.pixelSize: 16
                    font.weight: Font.DemiBold
                    color: Theme.text
                }
                IconButton { iconName: "close"; tip: qsTr("Hide the chat settings (Ctrl+Shift+S)"); onClicked: panel.visible = false }
            }
            Label {
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                color: Theme.textMuted
                font.pixelSize: 12
                text: panel.values.custom ? qsTr("This conversation's own settings.")
                                          : qsTr("The defaults from Settings; a change here applies to this conversation only.")
            }

            FieldLabel { text: qsTr("System prompt") }
            Rectangle {
                Layout.fillWidth: true
                implicitHeight: 100
                radius: 8
                color: Theme.surface
                border.color: chatSystemPrompt.activeFocus ? Theme.accent : Theme.border
                ScrollView {
                    anchors.fill: parent
                    anchors.margins: 2
                    TextArea {
                        id: chatSystemPrompt
                        objectName: "chatSystemPrompt"
                        text: panel.values.systemPrompt || ""
                        wrapMode: Text.Wrap
                        color: Theme.text
                        placeholderText: qsTr("Instructions for this conversation (optional)")
                        placeholderTextColor: Theme.textFaint
                        background: null
                        Accessible.name: qsTr("System prompt of this conversation")
                        onEditingFinished: panel.chat.setChatSetting("systemPrompt", text)
                    }
                }
            }

            NumberRow { label: qsTr("Temperature"); key: "temperature"; from: 0; to: 2; step: 0.05 }
            NumberRow { label: qsTr("Top-p"); key: "topP"; from: 0; to: 1; step: 0.01 }
            NumberRow { label: qsTr("Top-k (0: off)"); key: "topK"; from: 0; to: 1000; step: 1; decimals: 0 }
            NumberRow { label: qsTr("Min-p (0: off)"); key: "minP"; from: 0; to: 1; step: 0.01 }
            NumberRow { label: qsTr("Repetition penalty (1: off)"); key: "repetitionPenalty"; from: 0.5; to: 2; step: 0.05 }
            NumberRow { label: qsTr("Longest reply (tokens)"); key: "maxNewTokens"; from: 1; to: 131072; step: 128; decimals: 0 }

            FieldLabel { text: qsTr("Stop strings (one a line)") }
            TextArea {
                objectName: "chatStopStrings"
                Layout.fillWidth: true
                text: (panel.values.stopStrings || []).join("\n")
                wrapMode: Text.NoWrap
                color: Theme.text
                placeholderText: qsTr("none")
                Accessible.name: qsTr("Stop strings, one a line")
                onEditingFinished: panel.chat.setChatSetting("stopStrings", text)
            }
            PillButton {
                text: qsTr("Use the defaults from Settings")
                Layout.fillWidth: true
                onClicked: panel.chat.resetChatSettings()
            }

            Label {
                text: qsTr("PRESETS")
                color: Theme.textFaint
                font.pixelSize: 11
                font.weight: Font.DemiBold
                topPadding: 8
            }
            RowLayout {
                Layout.fillWidth: true
                spacing: 6
                ComboBox {
                    id: presetBox
                    objectName: "presetBox"
                    Layout.fillWidth: true
                    model: panel.chat.presets
                    enabled: count > 0
                    displayText: count > 0 ? currentText : qsTr("No presets yet")
                    Accessible.name: qsTr("Presets")
                }
                PillButton {
                    text: qsTr("Apply")
                    enabled: presetBox.count > 0
                    onClicked: panel.chat.applyPreset(presetBox.currentText)
                }
                IconButton {
                    iconName: "trash"
                    tip: qsTr("Delete the preset")
                    enabled: presetBox.count > 0
                    onClicked: panel.chat.deletePreset(presetBox.currentText)
                }
            }
            RowLayout {
                Layout.fillWidth: true
                spacing: 6
                TextField {
                    id: presetName
                    Layout.fillWidth: true
                    placeholderText: qsTr("Preset name")
                    color: Theme.text
                    Accessible.name: qsTr("Name of the new preset")
                    onAccepted: saveButton.clicked()
                }
                PillButton {
                    id: saveButton
                    text: qsTr("Save as preset")
                    enabled: presetName.text.trim().length > 0
                    onClicked: { panel.chat.savePreset(presetName.text); presetName.text = "" }
                }
            }
            Item { implicitHeight: 12 }
        }
    }
}
