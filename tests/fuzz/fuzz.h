/* tests/fuzz/fuzz.h: what the fuzz targets share.
 *
 * Each target defines LLVMFuzzerTestOneInput and is linked twice: with
 * libFuzzer (--enable-fuzzers, tests/fuzz/fuzz_<target>) and with
 * tests/fuzz/replay_main.c (every build, tests/fuzz_replay_<target>, run by
 * make check on tests/fuzz/corpus/<target>/). A target returns 0 for any
 * input accy handles correctly; a broken property aborts via FUZZ_CHECK, which
 * libFuzzer reports as a crash and the replay program as a failed test. */
#ifndef ACCY_TESTS_FUZZ_FUZZ_H
#define ACCY_TESTS_FUZZ_FUZZ_H

#include "src/internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Each target names itself once, ACCY_FUZZ_NAME(fuzz_<target>); the replay
 * program (replay_main.c, built once for every target) reads its corpus
 * from tests/fuzz/corpus/<that name>/. */
extern const char accy__fuzz_name[];
#define ACCY_FUZZ_NAME(name) const char accy__fuzz_name[] = #name

/* Aborts with the failed condition, a message and the current cause. */
#define FUZZ_CHECK(cond, ...)                                                       \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      fprintf(stderr, "%s:%d: fuzz check failed: %s\n  ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                                 \
      fprintf(stderr, "\n  last cause: %s\n", accy_session_last_cause(NULL));       \
      abort();                                                                      \
    }                                                                               \
  } while (0)

/* A failure status must come with a cause text. */
#define FUZZ_CHECK_CAUSE(status)                                                 \
  FUZZ_CHECK(accy_session_last_cause(NULL)[0] != '\0', "%s without a cause", \
             accy_status_name(status))

/* Clears the calling thread's cause, so that FUZZ_CHECK_CAUSE proves that
 * the call under test set one. */
static inline void fuzz_clear_cause(void) { accy__set_cause(""); }

/* Sanitizer settings of a target, compiled into it so that a crash
 * reproduces with a bare command line. Legitimate programs may ask accy for
 * gigabytes (a text constant "f32[1000,1000,1000] [0]" is one splat, a
 * parameter or an intermediate may be as large as the limits allow), which
 * libFuzzer would report as out-of-memory: instead, ASan refuses any single
 * allocation over 256 MiB with NULL, so accy takes its OUT_OF_MEMORY path,
 * which the targets accept. Expand once per target (in fuzz_<target>.c). */
#define FUZZ_SANITIZER_OPTIONS()                                                \
  const char *__asan_default_options(void);                                     \
  const char *__asan_default_options(void) {                                    \
    return "allocator_may_return_null=1:max_allocation_size_mb=256";            \
  }

/* True when ACCY_FUZZ_VERBOSE is set and not empty: the replay program then
 * names each file and fuzz_invoke counts the programs it ran. */
static inline bool fuzz_verbose(void) {
  const char *v = getenv("ACCY_FUZZ_VERBOSE");
  return v && v[0];
}

/* Little-endian u32 at |p|. */
static inline uint32_t fuzz_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif /* ACCY_TESTS_FUZZ_FUZZ_H */
