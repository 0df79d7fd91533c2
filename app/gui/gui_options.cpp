#include "gui/gui_options.h"

#include <cstdlib>
#include <filesystem>

namespace day0::app {

namespace {

// day0-cli beside this executable (build/bin in a build tree, /usr/bin when installed), so the
// hint names the one that exists.
std::string cli_beside_this_program() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "day0-cli";
  const std::filesystem::path cli = exe.parent_path() / "day0-cli";
  return std::filesystem::exists(cli, ec) ? cli.string() : "day0-cli";
}

}  // namespace

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
    } else if (a == "--model" || a == "--data-dir" || a == "--theme" || a == "--page") {
      if (i + 1 >= args.size()) {
        options.error =
            a + (a == "--theme"  ? " needs light, dark or system"
                 : a == "--page" ? " needs chat, models, remote, hub, settings, knowledge, knowledge-panel or rendering"
                                 : " needs a folder");
        return options;
      }
      std::string& target = a == "--model"      ? options.model
                            : a == "--data-dir" ? options.data_dir
                            : a == "--theme"    ? options.theme
                                                : options.page;
      target = args[++i];
    } else if (a.rfind("-platform", 0) == 0 || a.rfind("-style", 0) == 0 || a.rfind("-qmljsdebugger", 0) == 0) {
      // Qt's own options; QGuiApplication consumes them.
      if (a.find('=') == std::string::npos && i + 1 < args.size()) ++i;
    } else {
      options.error = "unknown option " + a;
      return options;
    }
  }
  if (!options.screenshot.empty() && !options.selftest) options.error = "--screenshot needs --selftest";
  if (!options.theme.empty() && options.theme != "light" && options.theme != "dark" && options.theme != "system")
    options.error = "--theme must be light, dark or system";
  if (!options.page.empty() && options.page != "chat" && options.page != "models" && options.page != "remote" &&
      options.page != "hub" && options.page != "settings" && options.page != "knowledge" &&
      options.page != "knowledge-panel" && options.page != "rendering")
    options.error = "--page must be chat, models, remote, hub, settings, knowledge, knowledge-panel or rendering";
  if (!options.page.empty() && !options.selftest) options.error = "--page needs --selftest";
  return options;
}

std::string gui_usage() {
  return "usage: day0 [--model DIR] [--data-dir DIR] [--theme light|dark|system] [--version]\n"
         "            [--selftest [--screenshot FILE.png] [--page P]]\n"
         "  --model DIR     open this model folder at start\n"
         "  --data-dir DIR  keep the history (history.db) and settings (day0.ini) in DIR\n"
         "  --theme T       set the theme: light, dark or system\n"
         "  --version       print the version, build type, CUDA on/off and the devices found\n"
         "  --selftest      start the app (offscreen without a display), open the demo model (or --model),\n"
         "                  send a message, wait for the streamed reply, and exit 0 only if all of that\n"
         "                  worked; it uses a temporary data folder unless --data-dir is given\n"
         "  --screenshot F  with --selftest, save the window as a PNG once the reply is in\n"
         "  --page P        with --selftest, show the chat, the model manager, its server form, Get a model\n"
         "                  (hub), the settings, a chat that asks a small indexed folder and shows the\n"
         "                  sources (knowledge), the knowledge folders (knowledge-panel), or a canned reply\n"
         "                  with code, a table and math (rendering: no model is needed)\n";
}

std::optional<std::string> missing_display_reason() {
  const auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0';
  };
  if (set("DISPLAY") || set("WAYLAND_DISPLAY") || set("QT_QPA_PLATFORM")) return std::nullopt;
  const std::string cli = cli_beside_this_program();
  std::string text =
      "Day0 cannot open a window: no display was found (DISPLAY and WAYLAND_DISPLAY are unset).\n"
      "Run it from a desktop session, or use the headless command-line interface instead:\n";
  for (const char* use : {" --help", " chat --model /path/to/model-folder",
                          " make-demo-model DIR   (a small demo model to try)"})
    text += "  " + cli + use + "\n";
  return text;
}

}  // namespace day0::app
