#pragma once
// Options shared by the commands that run a model.
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "day0/engine.h"

namespace day0::cli {

class Args;

struct OpenedModel {
  std::unique_ptr<Engine> engine;
  std::shared_ptr<Model> model;
};

// Starts an engine (--threads) and loads --model on --device (default cpu), holding --context
// positions when given (default: the model's whole context, as memory allows). On failure prints
// "day0-cli <command>: <reason>" and sets *exit_code (2 bad usage, 1 failure).
std::optional<OpenedModel> open_model(const Args& args, const char* command, int* exit_code);

// The options open_model reads besides --model, --device, --threads and --context: --expert-cache
// SIZE streams a model's routed experts from disk through a cache of SIZE bytes (K, M, G, T
// suffixes, powers of 1024; otherwise the memory plan decides), and the flag --direct-io reads them
// with O_DIRECT.
const std::set<std::string>& model_option_names();
const std::set<std::string>& model_flag_names();
// "24G", "512M", "1.5G", "1048576" -> bytes; nullopt for anything else or zero.
std::optional<std::uint64_t> parse_byte_size(const std::string& text);

// "1,2,3" -> ids; an empty list, a non-number or a value outside [0, 2^31) is an error.
std::optional<std::vector<std::int32_t>> parse_token_list(const std::string& text, std::string* problem);
std::optional<double> parse_number(const std::string& text);
std::optional<std::int64_t> parse_integer(const std::string& text);
// The integer option --`name` (`fallback` when absent); a value outside [lo, hi] prints
// "day0-cli <command>: --name must be an integer between lo and hi" and gives nullopt.
std::optional<std::int64_t> integer_option(const Args& args, const char* command, const char* name, std::int64_t lo,
                                           std::int64_t hi, std::int64_t fallback);

// The sampling options of the commands that generate: --temperature, --top-k, --top-p, --min-p,
// --seed, --repetition-penalty, --presence-penalty.
const std::vector<std::string>& sampling_option_names();
// Reads those given into `sampling`; a value out of range prints "day0-cli <command>: --x must be
// a number between a and b" and returns false.
bool read_sampling_options(const Args& args, const char* command, Sampling* sampling);

}  // namespace day0::cli
