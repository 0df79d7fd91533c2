// day0-cli tokenize: encode text with a model's tokenizer.json, decode ids, or measure encoding
// speed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "day0/tokenizer.h"

namespace day0::cli {

namespace {

constexpr const char* kUsage =
    "usage: day0-cli tokenize [--model] DIR (--text TEXT | --file FILE) [--ids] [--no-special]\n"
    "       day0-cli tokenize [--model] DIR --decode 1,2,3 [--skip-special]\n"
    "       day0-cli tokenize [--model] DIR --bench FILE [--seconds S]\n"
    "  Encodes text with the model folder's tokenizer.json (DIR may also be the file itself) and\n"
    "  prints one line per token (id and token string) then the ids, comma-separated; --ids prints\n"
    "  only that last line. --no-special leaves out the tokens the post-processor adds (BOS...).\n"
    "  --decode prints the text of the ids. --bench encodes FILE on one thread for at least S\n"
    "  seconds (default 2) and reports MB/s, first pass (cold word cache) and best warm pass.\n";

// JSON-style quoting, so control characters and spaces in tokens stay visible.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  return out + "\"";
}

bool parse_ids(const std::string& list, std::vector<std::uint32_t>& ids, std::string* problem) {
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 10) {
      *problem = "'" + item + "' is not a token id";
      return false;
    }
    const unsigned long long v = std::stoull(item);
    if (v > 0xFFFFFFFFull) {
      *problem = "'" + item + "' is not a token id";
      return false;
    }
    ids.push_back(static_cast<std::uint32_t>(v));
  }
  if (ids.empty()) *problem = "no ids given";
  return !ids.empty();
}

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return !in.bad();
}

int bench(const Tokenizer& tok, const std::string& text, double seconds) {
  using clock = std::chrono::steady_clock;
  auto pass = [&](std::size_t& tokens) -> double {
    const auto t0 = clock::now();
    const auto ids = tok.encode(text, false);
    const auto t1 = clock::now();
    tokens = ids ? ids->size() : 0;
    return std::chrono::duration<double>(t1 - t0).count();
  };
  std::size_t tokens = 0;
  const double cold = pass(tokens);
  double best = cold;
  double total = cold;
  int runs = 1;
  while (total < seconds) {
    const double t = pass(tokens);
    best = std::min(best, t);
    total += t;
    ++runs;
  }
  const double mb = static_cast<double>(text.size()) / 1e6;
  std::printf("encoded %zu bytes into %zu tokens (%.2f bytes/token), one thread\n", text.size(), tokens,
              tokens ? static_cast<double>(text.size()) / static_cast<double>(tokens) : 0.0);
  std::printf("first pass %.1f MB/s, best of %d passes %.1f MB/s\n", mb / cold, runs, mb / best);
  return 0;
}

int run_tokenize(const std::vector<std::string>& argv) {
  std::string problem;
  const auto args = Args::parse(argv, {"ids", "no-special", "skip-special", "help"},
                                {"model", "text", "file", "decode", "bench", "seconds"}, &problem);
  const int modes = args ? static_cast<int>(args->option("text").has_value()) +
                               static_cast<int>(args->option("file").has_value()) +
                               static_cast<int>(args->option("decode").has_value()) +
                               static_cast<int>(args->option("bench").has_value())
                         : 0;
  if (!args || args->flag("help") || !args->option("model") || modes != 1) {
    if (!problem.empty()) std::fprintf(stderr, "day0-cli tokenize: %s\n", problem.c_str());
    if (args && !args->flag("help") && args->option("model") && modes != 1)
      std::fprintf(stderr, "day0-cli tokenize: give exactly one of --text, --file, --decode, --bench\n");
    std::fputs(kUsage, args && args->flag("help") ? stdout : stderr);
    return args && args->flag("help") ? 0 : 2;
  }
  const auto tok = Tokenizer::load(*args->option("model"));
  if (!tok) {
    std::fprintf(stderr, "day0-cli tokenize: %s\n", plain_message(tok.status().message()).c_str());
    return 1;
  }
  if (const auto list = args->option("decode")) {
    std::vector<std::uint32_t> ids;
    if (!parse_ids(*list, ids, &problem)) {
      std::fprintf(stderr, "day0-cli tokenize: --decode: %s\n", problem.c_str());
      return 1;
    }
    for (std::uint32_t id : ids)
      if (id >= tok->vocab_size() || !tok->id_to_token(id))
        std::fprintf(stderr, "day0-cli tokenize: warning: id %u is not in the vocabulary and is skipped\n", id);
    const std::string text = tok->decode(ids, args->flag("skip-special"));
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
    return 0;
  }
  std::string text;
  if (const auto file = args->option("file").has_value() ? args->option("file") : args->option("bench")) {
    if (!read_file(*file, text)) {
      std::fprintf(stderr, "day0-cli tokenize: cannot read %s\n", file->c_str());
      return 1;
    }
  } else {
    text = *args->option("text");
  }
  if (args->option("bench")) {
    double seconds = 2.0;
    if (const auto s = args->option("seconds")) {
      try {
        seconds = std::stod(*s);
      } catch (const std::exception&) {
        std::fprintf(stderr, "day0-cli tokenize: --seconds: '%s' is not a number\n", s->c_str());
        return 1;
      }
    }
    return bench(*tok, text, seconds);
  }
  const auto ids = tok->encode(text, !args->flag("no-special"));
  if (!ids) {
    std::fprintf(stderr, "day0-cli tokenize: %s\n", plain_message(ids.status().message()).c_str());
    return 1;
  }
  if (!args->flag("ids")) {
    const auto strings = tok->id_strings(*ids);
    for (std::size_t i = 0; i < ids->size(); ++i) std::printf("%8u  %s\n", (*ids)[i], quoted(strings[i]).c_str());
  }
  std::string line;
  for (std::size_t i = 0; i < ids->size(); ++i) line += (i ? "," : "") + std::to_string((*ids)[i]);
  std::printf("%s\n", line.c_str());
  return 0;
}

const Registration kRegistration{"tokenize", &run_tokenize, "encode or decode text with a model's tokenizer"};

}  // namespace

}  // namespace day0::cli
