#include "cli/model_args.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "day0/devices.h"

namespace day0::cli {

std::optional<std::int64_t> parse_integer(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0') return std::nullopt;
  return v;
}

std::optional<std::int64_t> integer_option(const Args& args, const char* command, const char* name, std::int64_t lo,
                                           std::int64_t hi, std::int64_t fallback) {
  const auto text = args.option(name);
  if (!text) return fallback;
  const auto v = parse_integer(*text);
  if (!v || *v < lo || *v > hi) {
    std::fprintf(stderr, "day0-cli %s: --%s must be an integer between %lld and %lld\n", command, name,
                 static_cast<long long>(lo), static_cast<long long>(hi));
    return std::nullopt;
  }
  return v;
}

std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

const std::vector<std::string>& sampling_option_names() {
  static const std::vector<std::string> names{"temperature",        "top-k",           "top-p", "min-p", "seed",
                                              "repetition-penalty", "presence-penalty"};
  return names;
}

bool read_sampling_options(const Args& args, const char* command, Sampling* sampling) {
  struct NumberOption {
    const char* name;
    double min, max;
    std::function<void(double)> set;
  };
  const NumberOption numbers[] = {
      {"temperature", 0, 100, [&](double v) { sampling->temperature = static_cast<float>(v); }},
      {"top-k", 0, 1 << 24, [&](double v) { sampling->top_k = static_cast<int>(v); }},
      {"top-p", 0, 1, [&](double v) { sampling->top_p = static_cast<float>(v); }},
      {"min-p", 0, 1, [&](double v) { sampling->min_p = static_cast<float>(v); }},
      {"seed", 0, 9.0e15, [&](double v) { sampling->seed = static_cast<std::uint64_t>(v); }},
      {"repetition-penalty", 0.01, 100, [&](double v) { sampling->repetition_penalty = static_cast<float>(v); }},
      {"presence-penalty", -100, 100, [&](double v) { sampling->presence_penalty = static_cast<float>(v); }},
  };
  for (const auto& n : numbers) {
    const auto text = args.option(n.name);
    if (!text) continue;
    const auto v = parse_number(*text);
    if (!v || *v < n.min || *v > n.max) {
      std::fprintf(stderr, "day0-cli %s: --%s must be a number between %g and %g\n", command, n.name, n.min, n.max);
      return false;
    }
    n.set(*v);
  }
  return true;
}

std::optional<std::vector<std::int32_t>> parse_token_list(const std::string& text, std::string* problem) {
  std::vector<std::int32_t> ids;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    const auto v = parse_integer(item);
    if (!v || *v < 0 || *v >= (1ll << 31)) {
      *problem = "'" + item + "' in the token list is not a token id";
      return std::nullopt;
    }
    ids.push_back(static_cast<std::int32_t>(*v));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (ids.empty()) {
    *problem = "the token list is empty";
    return std::nullopt;
  }
  return ids;
}

const std::set<std::string>& model_option_names() {
  static const std::set<std::string> names{"expert-cache"};
  return names;
}

const std::set<std::string>& model_flag_names() {
  static const std::set<std::string> names{"direct-io"};
  return names;
}

std::optional<std::uint64_t> parse_byte_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::string number = text;
  double scale = 1;
  switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K': scale = 1024.0; break;
    case 'M': scale = 1024.0 * 1024; break;
    case 'G': scale = 1024.0 * 1024 * 1024; break;
    case 'T': scale = 1024.0 * 1024 * 1024 * 1024; break;
    default: break;
  }
  if (scale > 1) number.pop_back();
  if (number.empty() || number.find_first_not_of("0123456789.") != std::string::npos) return std::nullopt;
  const auto value = parse_number(number);
  if (!value || *value <= 0 || *value * scale >= 1.8e19) return std::nullopt;
  const auto bytes = static_cast<std::uint64_t>(*value * scale);
  if (bytes == 0) return std::nullopt;
  return bytes;
}

std::optional<OpenedModel> open_model(const Args& args, const char* command, int* exit_code) {
  EngineOptions engine_options;
  if (const auto threads = args.option("threads")) {
    const auto n = parse_integer(*threads);
    if (!n || *n < 0 || *n > 4096) {
      std::fprintf(stderr, "day0-cli %s: --threads must be between 0 and 4096\n", command);
      *exit_code = 2;
      return std::nullopt;
    }
    engine_options.threads = static_cast<int>(*n);
  }
  OpenedModel opened;
  opened.engine = Engine::create(engine_options);
  ModelOptions model_options;
  model_options.device = args.option("device").value_or("cpu");
  // Asked for a GPU where none can run it: said once in the command's own words, then the CPU.
  if (model_options.device.rfind("cuda", 0) == 0) {
    const DeviceReport devices = discover_devices();
    if (devices.gpus.empty()) {
      std::fprintf(stderr, "day0-cli %s: --device %s: %s; running on the CPU\n", command, model_options.device.c_str(),
                   devices.gpu_problem.c_str());
      model_options.device = "cpu";
    }
  }
  if (const auto context = args.option("context")) {
    const auto n = parse_integer(*context);
    if (!n || *n < 1) {
      std::fprintf(stderr, "day0-cli %s: --context must be a positive number of tokens\n", command);
      *exit_code = 2;
      return std::nullopt;
    }
    model_options.max_context = *n;
  }
  if (const auto cache = args.option("expert-cache")) {
    const auto bytes = parse_byte_size(*cache);
    if (!bytes) {
      std::fprintf(stderr, "day0-cli %s: --expert-cache must be a size such as 24G or 512M\n", command);
      *exit_code = 2;
      return std::nullopt;
    }
    model_options.expert_cache_bytes = *bytes;
  }
  model_options.direct_expert_reads = args.flag("direct-io");
  auto model = opened.engine->load_model(args.option("model").value_or(""), model_options);
  if (!model) {
    std::fprintf(stderr, "day0-cli %s: %s\n", command, plain_message(model.status().message()).c_str());
    *exit_code = 1;
    return std::nullopt;
  }
  opened.model = *model;
  return opened;
}

}  // namespace day0::cli
