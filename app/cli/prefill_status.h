#pragma once
// A status line on stderr while a long prompt is read ("Reading the prompt: 12,288 / 32,768
// tokens (37%)"), rewritten in place and cleared when the reply starts. Only when stderr is a
// terminal: piped output gets nothing.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace day0::cli {

// 32768 -> "32,768".
inline std::string with_commas(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

inline std::string prefill_text(std::int64_t done, std::int64_t total) {
  const int percent = total > 0 ? static_cast<int>(100 * done / total) : 100;
  return "Reading the prompt: " + with_commas(done) + " / " + with_commas(total) + " tokens (" +
         std::to_string(percent) + "%)";
}

class PrefillStatus {
 public:
  // Prompts shorter than this are read in one CPU step: no line for them.
  static constexpr std::int64_t kShowFrom = 256;
  PrefillStatus() : enabled_(isatty(STDERR_FILENO) != 0) {}
  void update(std::int64_t done, std::int64_t total) {
    if (!enabled_ || total <= kShowFrom) return;
    const std::string line = "\r" + prefill_text(done, total) + "\x1b[K";
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
    shown_ = true;
  }
  void clear() {
    if (!shown_) return;
    std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
};

}  // namespace day0::cli
