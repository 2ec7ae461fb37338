/* src/base/base.h: the bottom of accy's internal layers. Every other base
 * header includes it first; src/internal.h (the prelude of the modules that
 * know programs) and scheduler/ (which knows nothing of them) both build on
 * it.
 *
 * It brings in config.h, the fixed-width types, the public status numbers
 * (accy/status.h) and the compiler hints and debug assertions. Nothing in
 * src/base/ includes a header from outside src/base/ except the public
 * accy/status.h and accy/types.h. */
#ifndef ACCY_BASE_BASE_H
#define ACCY_BASE_BASE_H

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accy/status.h"

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

#endif /* ACCY_BASE_BASE_H */
