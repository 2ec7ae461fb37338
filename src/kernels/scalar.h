/* src/kernels/scalar.h: element rules of docs/ops.md that more than one
 * kernel applies, written once. Every kernel (and every future vector
 * variant of one) that applies one of these rules calls it or must match it
 * bit for bit.
 *
 * Pure static inline functions; no IR, no allocation. */
#ifndef ACCY_KERNELS_SCALAR_H
#define ACCY_KERNELS_SCALAR_H

#include <math.h>
#include <stdint.h>

#include "accy/types.h"

/* ---- maximum and minimum of floats -------------------------------------------
 * docs/ops.md: NaN if either is NaN; max(-0, +0) = +0, min(-0, +0) = -0.
 * The ordering of two numbers is one rule (the _ordered functions); which
 * NaN comes out is a policy of the caller, and two are in use:
 *  - the maximum/minimum ops and scatter's max/min combine two values into a
 *    new one: a + b, a quiet NaN (accy__max_f32, accy__min_f32);
 *  - reduce and reduce_window fold a stream into an accumulator: the NaN
 *    element itself, so a NaN sticks and a later one replaces an earlier one
 *    (accy__fold_max_f32, accy__fold_min_f32).
 * Both are deterministic and both propagate NaN; they differ only in the
 * NaN's payload and quietness. */

#define ACCY__FLOAT_MINMAX(SUF, T)                                                \
  /* Two numbers (no NaN): the larger / smaller; of two equal zeros, max is    \
   * +0 and min is -0. */                                                      \
  static inline T accy__max_ordered_##SUF(T a, T b) {                          \
    if (a == b) return signbit(a) ? b : a;                                      \
    return a > b ? a : b;                                                       \
  }                                                                             \
  static inline T accy__min_ordered_##SUF(T a, T b) {                          \
    if (a == b) return signbit(a) ? a : b;                                      \
    return a < b ? a : b;                                                       \
  }                                                                             \
  /* The maximum / minimum ops: a NaN operand gives a quiet NaN (a + b). */    \
  static inline T accy__max_##SUF(T a, T b) {                                  \
    if (a != a || b != b) return a + b;                                         \
    return accy__max_ordered_##SUF(a, b);                                       \
  }                                                                             \
  static inline T accy__min_##SUF(T a, T b) {                                  \
    if (a != a || b != b) return a + b;                                         \
    return accy__min_ordered_##SUF(a, b);                                       \
  }                                                                             \
  /* A reduction step acc <- max(acc, x): a NaN x replaces acc, a NaN acc      \
   * stays. */                                                                  \
  static inline T accy__fold_max_##SUF(T acc, T x) {                           \
    if (x != x) return x;                                                       \
    if (acc != acc) return acc;                                                 \
    return accy__max_ordered_##SUF(acc, x);                                     \
  }                                                                             \
  static inline T accy__fold_min_##SUF(T acc, T x) {                           \
    if (x != x) return x;                                                       \
    if (acc != acc) return acc;                                                 \
    return accy__min_ordered_##SUF(acc, x);                                     \
  }
ACCY__FLOAT_MINMAX(f32, float)
ACCY__FLOAT_MINMAX(f64, double)
#undef ACCY__FLOAT_MINMAX

/* One step of an f32 reduction of |kind| (accy_reduce_kind sum..min): the
 * combine the reduce kernels apply, for the kernels that take the kind at
 * run time (pooling taps, fold8). */
static inline float accy__fold_kind_f32(float acc, float x, int kind) {
  switch (kind) {
    case ACCY_REDUCE_SUM: return acc + x;
    case ACCY_REDUCE_PRODUCT: return acc * x;
    case ACCY_REDUCE_MAX: return accy__fold_max_f32(acc, x);
    default: return accy__fold_min_f32(acc, x);
  }
}

/* ---- NaN results of float sums and products --------------------------------
 * When two NaNs meet in a + b, which payload survives is the operand order
 * the compiler picked, and a reduction computes an output in more than one
 * code path (blocks of outputs side by side, or one at a time, as tiles
 * fall). A float sum or product that is NaN is therefore stored as the
 * default quiet NaN (docs/ops.md), so every path and every split gives the
 * same bits. */
/* f32 power: C powf, except for the exponents 2 and 3 (the squares and
 * cubes models write, the tanh form of GELU among them), which are the
 * product in double rounded once to f32: x * x is exact there, x * x * x
 * rounds once to double first, so both are within powf's own error bound
 * (docs/ops.md) and cost a multiply instead of a libm call. The
 * elementwise kernels of every level use it (a vector level computes the
 * same products). */
static inline float accy__pow_f32(float a, float b) {
  if (b == 2.0f) return (float)((double)a * (double)a);
  if (b == 3.0f) return (float)((double)a * (double)a * (double)a);
  return powf(a, b);
}

static inline float accy__canon_nan_f32(float x) { return x != x ? __builtin_nanf("") : x; }
static inline double accy__canon_nan_f64(double x) { return x != x ? __builtin_nan("") : x; }

/* ---- integer operands of any dtype ------------------------------------------------ */

/* A u64 operand as int64: values above INT64_MAX become INT64_MAX, which is
 * beyond every extent (so callers clamp or drop it like any other large
 * value). */
static inline int64_t accy__int64_of_u64(uint64_t u) {
  return u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
}

/* Element |i| of an integer buffer of |dtype| as int64: the index operands of
 * scatter, the starts of dynamic_slice and dynamic_update_slice (gather reads
 * its indices in batches with the same widening). u64 values go through
 * accy__int64_of_u64. Other dtypes read as 0; prepare admits integer dtypes
 * only. */
static inline int64_t accy__read_int64(const void *buf, int32_t dtype, uint64_t i) {
  switch (dtype) {
    case ACCY_DTYPE_I8: return ((const int8_t *)buf)[i];
    case ACCY_DTYPE_I16: return ((const int16_t *)buf)[i];
    case ACCY_DTYPE_I32: return ((const int32_t *)buf)[i];
    case ACCY_DTYPE_I64: return ((const int64_t *)buf)[i];
    case ACCY_DTYPE_U8: return ((const uint8_t *)buf)[i];
    case ACCY_DTYPE_U16: return ((const uint16_t *)buf)[i];
    case ACCY_DTYPE_U32: return ((const uint32_t *)buf)[i];
    case ACCY_DTYPE_U64: return accy__int64_of_u64(((const uint64_t *)buf)[i]);
    default: return 0;
  }
}

#endif /* ACCY_KERNELS_SCALAR_H */
