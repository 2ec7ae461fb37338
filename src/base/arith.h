/* src/base/arith.h: overflow-checked size arithmetic and alignment. Pure
 * inline functions. */
#ifndef ACCY_BASE_ARITH_H
#define ACCY_BASE_ARITH_H

#include "src/base/base.h"

/* Checked arithmetic: return false on overflow, leaving *out unspecified. */
static inline bool accy__mul_u64(uint64_t a, uint64_t b, uint64_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}
static inline bool accy__add_u64(uint64_t a, uint64_t b, uint64_t *out) {
  return !__builtin_add_overflow(a, b, out);
}

/* Aligns |x| up to |a| (a power of two). Callers keep x far from overflow. */
static inline uint64_t accy__align_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }

#endif /* ACCY_BASE_ARITH_H */
