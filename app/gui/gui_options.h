#pragma once
// Command-line handling of the `day0` GUI, kept out of main() so tests can reach it.
#include <optional>
#include <string>
#include <vector>

namespace day0::app {

struct GuiOptions {
  bool version = false;
  bool help = false;
  bool selftest = false;   // open the demo model, chat once, render a frame, exit
  std::string screenshot;  // with --selftest: save the rendered frame here (PNG)
  std::string model;       // a model folder to open at start
  std::string data_dir;    // history and settings here instead of the XDG folders
  std::string theme;       // light, dark or system (stored as the setting)
  std::string page;        // with --selftest: chat, models, remote, settings, knowledge, knowledge-panel or rendering
  std::string error;       // bad usage
};

GuiOptions parse_gui_options(const std::vector<std::string>& args);
std::string gui_usage();
// Why no window can open here, or nothing when a display (or a Qt platform) is set.
std::optional<std::string> missing_display_reason();

}  // namespace day0::app
