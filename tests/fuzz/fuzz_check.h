#pragma once
// Shared by the harnesses: a broken invariant aborts with a message, which libFuzzer records as a
// crash and the replay build turns into a failing test.
#include <cstdio>
#include <cstdlib>
#include <string>

#define DAY0_FUZZ_CHECK(cond, msg)                                                            \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "fuzz check failed at %s:%d: %s: %s\n", __FILE__, __LINE__, #cond, \
                   std::string(msg).c_str());                                                 \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)
