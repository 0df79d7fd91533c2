#include "gui/gui_options.h"

#include <cstdlib>

namespace day0::app {

GuiOptions parse_gui_options(const std::vector<std::string>& args) {
  GuiOptions options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--version") {
      options.version = true;
    } else if (a == "--help" || a == "-h") {
      options.help = true;
    } else if (a == "--selftest") {
      options.selftest = true;
    } else if (a == "--screenshot") {
      if (i + 1 >= args.size()) {
        options.error = "--screenshot needs a file name";
        return options;
      }
      options.screenshot = args[++i];
    } else if (a == "--model") {
      if (i + 1 >= args.size()) {
        options.error = "--model needs a folder";
        return options;
      }
      options.model = args[++i];
    } else if (a.rfind("-platform", 0) == 0 || a.rfind("-style", 0) == 0 || a.rfind("-qmljsdebugger", 0) == 0) {
      // Qt's own options; QGuiApplication consumes them.
      if (a.find('=') == std::string::npos && i + 1 < args.size()) ++i;
    } else {
      options.error = "unknown option " + a;
      return options;
    }
  }
  if (!options.screenshot.empty() && !options.selftest) options.error = "--screenshot needs --selftest";
  return options;
}

std::string gui_usage() {
  return "usage: day0 [--model DIR] [--version] [--selftest [--screenshot FILE.png]]\n"
         "  --model DIR   open this model folder at start\n"
         "  --version     print the version, build type, CUDA on/off and the devices found\n"
         "  --selftest    start the interface offscreen, render one frame and exit (0 on success)\n"
         "  --screenshot  with --selftest, save that frame as a PNG\n";
}

std::optional<std::string> missing_display_reason() {
  const auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0';
  };
  if (set("DISPLAY") || set("WAYLAND_DISPLAY") || set("QT_QPA_PLATFORM")) return std::nullopt;
  return std::string(
      "Day0 cannot open a window: no display was found (DISPLAY and WAYLAND_DISPLAY are unset).\n"
      "Run it from a desktop session, or use the headless command-line interface instead:\n"
      "  build/bin/day0-cli --help\n"
      "  build/bin/day0-cli chat --model /path/to/model-folder\n"
      "  build/bin/day0-cli make-demo-model DIR   (a small random-weight model to try)\n");
}

}  // namespace day0::app
