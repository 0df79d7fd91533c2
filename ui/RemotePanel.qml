import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// A remote engine as the model: any OpenAI-compatible endpoint (vLLM, SGLang, a llama.cpp
// server, another Day0). Address, key and model name; the model list is read from the server.
// Conversations with it are stored in the local history like any other.
Item {
    id: panel
    required property QtObject models
    property int headerRightInset: 0
    readonly property bool connectedHere: models.loadedIsRemote && models.remoteUrl === urlField.text.trim()

    // Fills the form from a remembered endpoint (a recent entry).
    function show(endpoint) {
        urlField.text = endpoint.url || ""
        keyField.text = endpoint.apiKey || ""
        modelField.editText = endpoint.model || ""
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 12

        ColumnLayout {
            Layout.fillWidth: true
            Layout.rightMargin: panel.headerRightInset
            spacing: 2
            Label {
                text: qsTr("Connect to a server")
                font.pixelSize: 20
                font.weight: Font.DemiBold
                color: Theme.text
            }
            Label {
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                color: Theme.textMuted
                font.pixelSize: Theme.fontSmall
                text: qsTr("Any OpenAI-compatible endpoint: vLLM, SGLang, a llama.cpp server or another Day0. Replies stream into this app and the conversation is kept in your local history.")
            }
        }

        Label { text: qsTr("Address"); color: Theme.textMuted; font.pixelSize: Theme.fontSmall }
        TextField {
            id: urlField
            objectName: "remoteUrlField"
            Layout.fillWidth: true
            placeholderText: "http://127.0.0.1:8000/v1"
            selectByMouse: true
            color: Theme.text
            Accessible.name: qsTr("Server address")
            onEditingFinished: if (text.trim().length > 0) panel.models.listRemoteModels(text, keyField.text)
        }
        Label { text: qsTr("API key (optional)"); color: Theme.textMuted; font.pixelSize: Theme.fontSmall }
        TextField {
            id: keyField
            Layout.fillWidth: true
            echoMode: TextInput.Password
            placeholderText: qsTr("sent as a bearer token")
            selectByMouse: true
            color: Theme.text
            Accessible.name: qsTr("API key")
        }
        Label { text: qsTr("Model"); color: Theme.textMuted; font.pixelSize: Theme.fontSmall }
        RowLayout {
            Layout.fillWidth: true
            spacing: 8
            ComboBox {
                id: modelField
                Layout.fillWidth: true
                editable: true
                model: panel.models.remoteModelNames
                Accessible.name: qsTr("Model name")
            }
            PillButton {
                text: panel.models.listingRemote ? qsTr("Asking…") : qsTr("List models")
                enabled: urlField.text.trim().length > 0 && !panel.models.listingRemote
                onClicked: panel.models.listRemoteModels(urlField.text, keyField.text)
            }
        }
        Label {
            Layout.fillWidth: true
            visible: text.length > 0
            wrapMode: Text.Wrap
            color: Theme.danger
            font.pixelSize: Theme.fontSmall
            text: panel.models.remoteListError
        }

        ColumnLayout {
            Layout.fillWidth: true
            spacing: 6
            visible: panel.models.loading || panel.connectedHere
            ProgressBar {
                Layout.fillWidth: true
                visible: panel.models.loading
                indeterminate: true
                Accessible.name: qsTr("Connecting")
            }
            Label {
                Layout.fillWidth: true
                text: panel.models.progressText
                color: Theme.textMuted
                font.pixelSize: Theme.fontSmall
                elide: Text.ElideRight
            }
        }

        RowLayout {
            Layout.fillWidth: true
            spacing: 8
            PillButton {
                objectName: "remoteConnectButton"
                primary: true
                visible: !panel.models.loading
                text: panel.connectedHere ? qsTr("Reconnect") : qsTr("Connect")
                enabled: urlField.text.trim().length > 0
                onClicked: panel.models.connectRemote(urlField.text, keyField.text, modelField.editText)
            }
            PillButton {
                visible: panel.models.loading
                text: qsTr("Cancel")
                onClicked: panel.models.cancelLoad()
            }
            PillButton {
                visible: panel.connectedHere && !panel.models.loading
                text: qsTr("Disconnect")
                onClicked: panel.models.unload()
            }
            Item { Layout.fillWidth: true }
        }
        Item { Layout.fillHeight: true }
    }
}
