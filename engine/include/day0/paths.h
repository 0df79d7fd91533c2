#pragma once
// Per-user folders, following the XDG base directory specification.
#include <filesystem>

namespace day0 {

// $XDG_DATA_HOME/day0, else $HOME/.local/share/day0 (history, logs).
std::filesystem::path user_data_dir();
// $XDG_CONFIG_HOME/day0, else $HOME/.config/day0.
std::filesystem::path user_config_dir();

}  // namespace day0
