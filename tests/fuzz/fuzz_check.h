#pragma once

// FUZZ_CHECK(cond, what): an invariant of a fuzz target. On failure it prints the condition and
// aborts, which libFuzzer reports as a crash and saves the input (crash-<sha1>).

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond, what)                                                                     \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      std::fprintf(stderr, "%s:%d: invariant failed: %s (%s)\n", __FILE__, __LINE__, #cond, what); \
      std::abort();                                                                                \
    }                                                                                              \
  } while (false)
