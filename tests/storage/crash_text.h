#pragma once
// The text the crash writer streams, so that the test can check every committed prefix:
// deterministic in (run, k), with ASCII, CJK, accents, emoji and newlines (multi-byte
// characters are cut between appends on purpose).
#include <random>
#include <string>

namespace day0::test {

inline std::string crash_user_text(int run, int k) {
  return "question " + std::to_string(run) + "/" + std::to_string(k) +
         ": \xe5\xa4\xa9\xe6\xb0\x97\xe3\x81\xaf? \xf0\x9f\x8c\xa7";
}

inline std::string crash_reply_text(int run, int k) {
  static const char* pieces[] = {"word ",
                                 "\xe6\x9d\xb1\xe4\xba\xac",
                                 "\xe6\x99\xb4\xe3\x82\x8c ",
                                 "\xf0\x9f\x98\x80",
                                 "caf\xc3\xa9 ",
                                 "\n",
                                 "data-",
                                 "\xed\x95\x9c\xea\xb5\xad\xec\x96\xb4 ",
                                 "42 "};
  std::mt19937 rng(static_cast<unsigned>(run * 7919 + k));
  std::string text = "answer " + std::to_string(run) + "/" + std::to_string(k) + ": ";
  while (text.size() < 300) text += pieces[rng() % (sizeof pieces / sizeof *pieces)];
  return text;
}

}  // namespace day0::test
