pragma Singleton
import QtQuick

// The palette and type scale of the whole interface, for the light and the dark theme. Main
// sets `dark`; everything else binds to these names, never to literal colours.
QtObject {
    property bool dark: false

    readonly property color accent: dark ? "#8c97ff" : "#5563f0"
    readonly property color accentHover: dark ? "#a2abff" : "#4452e0"
    readonly property color accentSoft: dark ? "#2c3058" : "#eceefe"
    readonly property color onAccent: dark ? "#11131f" : "#ffffff"
    // Links in replies: at least 4.5:1 against the window, surfaces and bubbles (WCAG AA).
    readonly property color link: dark ? "#a2abff" : "#3b4ad8"
    readonly property color teal: dark ? "#4fd1b5" : "#1f9e88"

    readonly property color window: dark ? "#16171b" : "#ffffff"
    readonly property color sidebar: dark ? "#1d1e23" : "#f5f6f8"
    readonly property color surface: dark ? "#23252b" : "#ffffff"
    readonly property color surfaceAlt: dark ? "#2a2c33" : "#f2f3f6"
    readonly property color userBubble: dark ? "#2b2f45" : "#eef0fe"
    readonly property color border: dark ? "#33353d" : "#e3e5ea"
    readonly property color borderStrong: dark ? "#464954" : "#cdd1d9"
    readonly property color hover: dark ? "#292b32" : "#eceef2"
    readonly property color selected: dark ? "#2e3148" : "#e5e8fd"

    readonly property color text: dark ? "#e9eaee" : "#1c1e23"
    readonly property color textMuted: dark ? "#9b9ea9" : "#6a6f7c"
    readonly property color textFaint: dark ? "#6f727d" : "#9da1ab"

    readonly property color codeBackground: dark ? "#101114" : "#f6f7f9"
    readonly property color codeHeader: dark ? "#1a1b20" : "#eceef2"
    readonly property color codeText: dark ? "#d7dae0" : "#24292f"

    readonly property color danger: dark ? "#ff8c82" : "#c2352b"
    readonly property color dangerSoft: dark ? "#3a2024" : "#fdeceb"
    readonly property color warning: dark ? "#f3c969" : "#8a5a00"
    readonly property color warningSoft: dark ? "#3a311c" : "#fff6e0"
    readonly property color success: dark ? "#6fd49a" : "#23874f"
    readonly property color infoSoft: dark ? "#1f2a3a" : "#eaf2fe"

    readonly property int radius: 10
    readonly property int radiusLarge: 16
    readonly property int fontSmall: 12
    readonly property int fontBody: 14
    readonly property int fontTitle: 16
    readonly property int fontHeading: 24
    readonly property string monoFamily: "DejaVu Sans Mono"
}
