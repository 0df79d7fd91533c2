#pragma once
// The folder day0-cli keeps its history (history.db) and knowledge index in by default: the
// desktop app's data folder, so both see the same conversations. The app keeps its choice in
// its settings file, $XDG_CONFIG_HOME/day0/day0.ini (~/.config/day0/day0.ini), as
// `folder` under [data]; without one it is $XDG_DATA_HOME/day0 (~/.local/share/day0). While the
// app has a move of its history pending (`moveFrom`, done at its next start) and the new
// folder has no history yet, the old folder is the one in use. --db names another file.
#include <filesystem>
#include <string>
#include <string_view>

namespace day0::cli {

std::filesystem::path default_data_dir();
// `[section] key` of an INI file as Qt's QSettings writes it (quoting and backslash escapes
// undone); empty when absent or unreadable.
std::string read_ini_value(const std::filesystem::path& file, std::string_view section, std::string_view key);

}  // namespace day0::cli
