// The Jinja interpreter with the app's limits. The first input byte picks the mode:
//   even: the rest is a template, parsed and rendered with a fixed conversation;
//   odd:  the rest is the render context (JSON: messages, tools, add_generation_prompt, ...),
//         rendered with a real model template (byte >> 1 picks one of kTemplates).
// Either way the result is a rendering or an error with a message, within the budgets.
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "day0/chat_template.h"
#include "fuzz/fuzz_check.h"

namespace {

constexpr const char* kTemplates[] = {
    "openai-gpt-oss-120b.jinja",
    "GLM-4.7-Flash.jinja",
    "Qwen3-Coder.jinja",
    "meta-llama-Llama-3.1-8B-Instruct.jinja",
    "deepseek-ai-DeepSeek-V3.1.jinja",
    "Kimi-K2-Instruct.jinja",
    "google-gemma-2-2b-it.jinja",
    "Mistral-Small-3.2-24B-Instruct-2506.jinja",
};

constexpr std::string_view kContext =
    "{\"messages\": [{\"role\": \"system\", \"content\": \"You are helpful.\"},"
    "{\"role\": \"user\", \"content\": \"Hi <b>there</b> 東京\"},"
    "{\"role\": \"assistant\", \"content\": \"Hello!\", \"reasoning_content\": \"greet\", \"thinking\": \"greet\","
    "\"tool_calls\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": {\"x\": 1}}}]},"
    "{\"role\": \"tool\", \"content\": \"{\\\"ok\\\": true}\"},"
    "{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"and now?\"}, {\"type\": \"image\"}]}],"
    "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"description\": \"d\","
    "\"parameters\": {\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"integer\"}}}}}],"
    "\"add_generation_prompt\": true, \"bos_token\": \"<s>\", \"eos_token\": \"</s>\"}";

struct Fixture {
  std::vector<day0::ChatTemplate> templates;
  day0::ChatTemplateRenderOptions options;
};

Fixture& fixture() {
  static Fixture f = [] {
    Fixture out;
    const auto dir = std::filesystem::path(DAY0_TEST_DATA_DIR) / "chat_templates";
    for (const char* name : kTemplates) {
      std::ifstream in(dir / name, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      auto t = day0::ChatTemplate::parse(text.str(), name);
      DAY0_FUZZ_CHECK(t.is_ok(), std::string("cannot parse ") + name);
      out.templates.push_back(std::move(t).value());
    }
    std::tm now{};
    now.tm_year = 2025 - 1900;
    now.tm_mon = 2;
    now.tm_mday = 7;
    now.tm_wday = 5;
    now.tm_yday = 65;
    out.options.fixed_now = now;
    return out;
  }();
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fixture();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const Fixture& f = fixture();
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const day0::ChatTemplateLimits& limits = f.options.limits;
  if ((data[0] & 1) == 0) {
    auto t = day0::ChatTemplate::parse(rest, "fuzz");
    if (!t) {
      DAY0_FUZZ_CHECK(!t.status().message().empty(), "an error needs a message");
      return 0;
    }
    auto out = t->render_json(kContext, f.options);
    if (out)
      DAY0_FUZZ_CHECK(out->size() <= limits.max_output_bytes, "rendering past max_output_bytes");
    else
      DAY0_FUZZ_CHECK(!out.status().message().empty(), "an error needs a message");
  } else {
    const auto& t = f.templates[(data[0] >> 1) % f.templates.size()];
    auto out = t.render_json(rest, f.options);
    if (out)
      DAY0_FUZZ_CHECK(out->size() <= limits.max_output_bytes, "rendering past max_output_bytes");
    else
      DAY0_FUZZ_CHECK(!out.status().message().empty(), "an error needs a message");
  }
  return 0;
}
