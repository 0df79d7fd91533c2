#include <cstdio>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "day0/chat_template.h"

namespace day0::cli {

namespace {

std::optional<std::string> read_file(const std::string& path, std::string* problem) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *problem = "cannot open " + path;
    return std::nullopt;
  }
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) {
    *problem = "cannot read " + path;
    return std::nullopt;
  }
  return s.str();
}

// "2025-03-07T09:04:05" (or with a space) as a broken-down time.
std::optional<std::tm> parse_time(const std::string& text) {
  std::tm t{};
  int year, month, day, hour = 0, minute = 0, second = 0;
  char sep = 'T';
  const int n = std::sscanf(text.c_str(), "%d-%d-%d%c%d:%d:%d", &year, &month, &day, &sep, &hour, &minute, &second);
  if (n != 3 && n != 7) return std::nullopt;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 ||
      second < 0 || second > 60)
    return std::nullopt;
  t.tm_year = year - 1900;
  t.tm_mon = month - 1;
  t.tm_mday = day;
  t.tm_hour = hour;
  t.tm_min = minute;
  t.tm_sec = second;
  const std::time_t normalized = timegm(&t);  // fills the weekday and day of the year
  gmtime_r(&normalized, &t);
  return t;
}

int usage(bool help) {
  std::fprintf(help ? stdout : stderr,
               "usage: day0-cli template (--template FILE.jinja | --model DIR) --context FILE.json [--now TIME]\n"
               "  Renders a chat template the way transformers' apply_chat_template does and prints the\n"
               "  result exactly. Every top-level key of the JSON object is a template variable (messages,\n"
               "  add_generation_prompt, bos_token, eos_token, tools, ...). With --model, the template is the\n"
               "  folder's chat_template.jinja, else tokenizer_config.json's chat_template. --now fixes what\n"
               "  strftime_now() sees (YYYY-MM-DDTHH:MM:SS); by default it is the current local time.\n");
  return help ? 0 : 2;
}

int run_template(const std::vector<std::string>& argv) {
  std::string problem;
  const auto args = Args::parse(argv, {"help"}, {"template", "model", "context", "now"}, &problem);
  if (!args || args->flag("help")) {
    if (!problem.empty()) std::fprintf(stderr, "day0-cli template: %s\n", problem.c_str());
    return usage(args && args->flag("help"));
  }
  if (!args->option("context") || (args->option("template").has_value() == args->option("model").has_value())) {
    std::fprintf(stderr, "day0-cli template: give --context and exactly one of --template or --model\n");
    return usage(false);
  }
  ChatTemplateRenderOptions options;
  if (const auto now = args->option("now")) {
    options.fixed_now = parse_time(*now);
    if (!options.fixed_now) {
      std::fprintf(stderr, "day0-cli template: --now %s is not a time like 2025-03-07T09:04:05\n", now->c_str());
      return 2;
    }
  }
  std::string source, name;
  if (const auto path = args->option("template")) {
    const auto text = read_file(*path, &problem);
    if (!text) {
      std::fprintf(stderr, "day0-cli template: %s\n", problem.c_str());
      return 1;
    }
    source = *text;
    name = *path;
  } else {
    const auto text = read_model_chat_template(*args->option("model"));
    if (!text) {
      std::fprintf(stderr, "day0-cli template: %s\n", plain_message(text.status().message()).c_str());
      return 1;
    }
    source = *text;
    name = *args->option("model") + " chat template";
  }
  const auto context = read_file(*args->option("context"), &problem);
  if (!context) {
    std::fprintf(stderr, "day0-cli template: %s\n", problem.c_str());
    return 1;
  }
  const auto parsed = ChatTemplate::parse(source, name);
  if (!parsed) {
    std::fprintf(stderr, "day0-cli template: %s\n", plain_message(parsed.status().message()).c_str());
    return 1;
  }
  const auto rendered = parsed->render_json(*context, options);
  if (!rendered) {
    std::fprintf(stderr, "day0-cli template: %s\n", plain_message(rendered.status().message()).c_str());
    return 1;
  }
  std::fwrite(rendered->data(), 1, rendered->size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

const Registration kRegistration{"template", &run_template, "render a chat template with a JSON context"};

}  // namespace

}  // namespace day0::cli
