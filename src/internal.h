/* src/internal.h: the internal prelude every accy .c file includes first.
 *
 * It brings in config.h, the public headers, the failure macros that record
 * the calling thread's cause text, overflow-checked size arithmetic and the
 * branch hints. Nothing here allocates. */
#ifndef ACCY_INTERNAL_H
#define ACCY_INTERNAL_H

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accy/accy.h"
#include "accy/ops.h"

#define ACCY_LIKELY(x) __builtin_expect(!!(x), 1)
#define ACCY_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define ACCY_NODISCARD __attribute__((warn_unused_result))
#define ACCY_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define ACCY_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#ifdef ACCY_DEBUG
#include <stdio.h>
#include <stdlib.h>
#define ACCY_ASSERT(x)                                                      \
  do {                                                                      \
    if (!(x)) {                                                             \
      fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, #x); \
      abort();                                                              \
    }                                                                       \
  } while (0)
#else
#define ACCY_ASSERT(x) ((void)0)
#endif

/* Size of the per-thread cause buffer, terminating NUL included. */
#define ACCY_CAUSE_BYTES 512

/* Records the formatted message as the calling thread's cause text and
 * returns |code|. Never allocates, so it is safe on out-of-memory paths. */
ACCY_NODISCARD accy_status accy__fail(accy_status code, const char *fmt, ...) ACCY_PRINTF(2, 3);
#define ACCY_FAIL(code, ...) accy__fail((code), __VA_ARGS__)

/* Copies |text| (NUL-terminated) into the calling thread's cause buffer. */
void accy__set_cause(const char *text);
/* Prefixes the calling thread's current cause with the formatted text,
 * e.g. "node 12 (dot_general): " + cause. Never allocates. */
void accy__prefix_cause(const char *fmt, ...) ACCY_PRINTF(1, 2);
/* The calling thread's cause buffer (never NULL). */
const char *accy__cause(void);

#define ACCY_TRY(expr)                                              \
  do {                                                              \
    accy_status accy__s = (expr);                                   \
    if (ACCY_UNLIKELY(accy__s != ACCY_STATUS_OK)) return accy__s;   \
  } while (0)

/* Checked arithmetic: return false on overflow, leaving *out unspecified. */
static inline bool accy__mul_u64(uint64_t a, uint64_t b, uint64_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}
static inline bool accy__add_u64(uint64_t a, uint64_t b, uint64_t *out) {
  return !__builtin_add_overflow(a, b, out);
}

/* Aligns |x| up to |a| (a power of two). Callers keep x far from overflow. */
static inline uint64_t accy__align_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }

#endif /* ACCY_INTERNAL_H */
