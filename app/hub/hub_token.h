#pragma once
// The Hugging Face token for gated and private repositories, in the order Day0 looks for it:
// HF_TOKEN; Day0's own token file ($XDG_CONFIG_HOME/day0/hf-token, written by the app's Settings
// or `day0-cli pull --save-token`, readable by its owner only); the file `huggingface-cli login`
// writes ($HF_TOKEN_PATH, else $HF_HOME/token, else ~/.cache/huggingface/token).
#include <filesystem>
#include <string>

#include "day0/status.h"

namespace day0::hub {

// The token, or empty when there is none.
std::string read_token();
// Day0's token file.
std::filesystem::path token_file();
// Writes `token` (trimmed) to token_file() with mode 0600, replacing it atomically; an empty
// token removes the file.
Status save_token(const std::string& token);
// Whether Day0's own token file holds a token (the app shows it, never the token).
bool has_saved_token();

}  // namespace day0::hub
