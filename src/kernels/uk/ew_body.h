/* src/kernels/uk/ew_body.h: the elementwise microkernels (semantics:
 * docs/ops.md), a template compiled once per ISA level: the level's
 * translation unit (uk/portable/ew.c, uk/avx2/ew.c) defines EW_EXPORT(name)
 * to give the four lookups its suffix and includes this file, so the same
 * loops are built with that level's flags. Every op here is exact (or the C
 * library's, for transcendentals), so every level gives the same bits; a
 * level may replace a span with a vector approximation by defining
 * EW_OVERRIDE_<name> before the include (documented error, see
 * docs/ops.md "Numeric contract").
 *
 * A microkernel computes n elements: o[i] = op(x0[i], x1[i]) (unary: x0 only;
 * clamp: lo x0 with stride s0, x x1, hi x2 with stride s2; select: pred x0,
 * true x1, false x2), pointers already at the first element. Each element is
 * computed alone, so any split is bit-identical. */
#include <math.h>
#include <string.h>

#include "src/base/half.h"
#include "src/kernels/scalar.h"
#include "src/kernels/uk/uk.h"

/* ---- loops ------------------------------------------------------------------
 * GCC's -O2 vectoriser (cost model "very cheap") only takes loops whose trip
 * count is a multiple of the vector length and that need no alias check, so
 * the body runs first over a multiple of EW_VEC elements, then over the tail,
 * and the pointers are restrict parameters of an inlined span function. */
#define EW_VEC 16
#define EW_LOOP(n, ...)                                 \
  do {                                                  \
    size_t i = 0, ew_nv = (n) & ~(size_t)(EW_VEC - 1);  \
    for (; i < ew_nv; i++) { __VA_ARGS__; }             \
    for (; i < (n); i++) { __VA_ARGS__; }               \
  } while (0)

/* ---- rounding helpers for conversions to f16 / bf16 ------------------------
 * Going f64 -> f32 -> f16 (or i64 -> f32 -> bf16) rounds twice and can land
 * on the wrong neighbour. Rounding the first step to odd (truncate, then set
 * the last bit when anything was dropped) keeps the sticky information, and
 * since f32 has at least two more bits than f16/bf16 at every magnitude the
 * second, nearest-even step then gives the correctly rounded result. */
static inline float f64_to_f32_odd(double d) {
  float f = (float)d;
  if ((double)f != d && d == d) {
    uint32_t u = accy__f32_bits(f);
    if ((u & 1u) == 0) {
      /* Step one unit toward d; bits of the same sign order by magnitude.
       * An overflow to Inf steps back to FLT_MAX, which is odd. */
      u = fabs((double)f) > fabs(d) ? u - 1u : u + 1u;
      f = accy__bits_f32(u);
    }
  }
  return f;
}

static inline float u64_to_f32_odd(uint64_t x) {
  if (x < (UINT64_C(1) << 24)) return (float)x; /* exact */
  int shift = 40 - __builtin_clzll(x);          /* bit length - 24, in 1..40 */
  uint64_t m = x >> shift;
  if (x & ((UINT64_C(1) << shift) - 1u)) m |= 1u;
  return (float)m * (float)(UINT64_C(1) << shift); /* both exact, product exact */
}

static inline float i64_to_f32_odd(int64_t x) {
  return x < 0 ? -u64_to_f32_odd(0u - (uint64_t)x) : u64_to_f32_odd((uint64_t)x);
}

/* ---- element functions: floats ------------------------------------------ */
/* Round half to even without depending on the host's rounding mode (rint
 * does) or on __builtin_roundeven (gcc 10+, not clang 14). |x| at or above
 * 2^(mantissa bits) is already an integer; NaN and infinities pass through;
 * the sign of zero is kept. */
#define EW_ROUNDEVEN(sfx, T, M, BIG)                                   \
  static inline T roundeven_##sfx(T x) {                               \
    if (!(fabs##M(x) < (T)(BIG))) return x;                            \
    T r = floor##M(x);                                                 \
    T diff = x - r;                                                    \
    if (diff > (T)0.5 || (diff == (T)0.5 && fmod##M(r, (T)2) != 0)) r += 1; \
    return copysign##M(r, x);                                          \
  }
EW_ROUNDEVEN(f32, float, f, 8388608.0f)
EW_ROUNDEVEN(f64, double, , 4503599627370496.0)

/* The bitwise AND / OR of two floats' representations. */
static inline float EW_BITS_AND_f32(float a, float b) {
  uint32_t x, y;
  memcpy(&x, &a, 4), memcpy(&y, &b, 4);
  x &= y;
  memcpy(&a, &x, 4);
  return a;
}
static inline float EW_BITS_OR_f32(float a, float b) {
  uint32_t x, y;
  memcpy(&x, &a, 4), memcpy(&y, &b, 4);
  x |= y;
  memcpy(&a, &x, 4);
  return a;
}
static inline double EW_BITS_AND_f64(double a, double b) {
  uint64_t x, y;
  memcpy(&x, &a, 8), memcpy(&y, &b, 8);
  x &= y;
  memcpy(&a, &x, 8);
  return a;
}
static inline double EW_BITS_OR_f64(double a, double b) {
  uint64_t x, y;
  memcpy(&x, &a, 8), memcpy(&y, &b, 8);
  x |= y;
  memcpy(&a, &x, 8);
  return a;
}

#define EW_POW_f32(a, b) accy__pow_f32(a, b) /* src/kernels/scalar.h */
#define EW_POW_f64(a, b) pow(a, b)

/* M is the libm suffix: f for float, empty for double. */
#define EW_FLOAT_SCALARS(sfx, T, M)                                                           \
  static inline T abs_##sfx(T x) { return fabs##M(x); }                                       \
  static inline T negate_##sfx(T x) { return -x; }                                            \
  static inline T sign_##sfx(T x) { return x > 0 ? (T)1 : x < 0 ? (T)-1 : x; }               \
  static inline T floor_##sfx(T x) { return floor##M(x); }                                    \
  static inline T ceil_##sfx(T x) { return ceil##M(x); }                                      \
  static inline T round_nearest_even_##sfx(T x) { return roundeven_##sfx(x); }                \
  static inline T sqrt_##sfx(T x) { return sqrt##M(x); }                                      \
  static inline T rsqrt_##sfx(T x) { return (T)1 / sqrt##M(x); }                              \
  static inline T exp_##sfx(T x) { return exp##M(x); }                                        \
  static inline T expm1_##sfx(T x) { return expm1##M(x); }                                    \
  static inline T log_##sfx(T x) { return log##M(x); }                                        \
  static inline T log1p_##sfx(T x) { return log1p##M(x); }                                    \
  /* For x < 0, 1 / (1 + exp(-x)) overflows exp long before the result  \
   * underflows; the equal form exp(x) / (1 + exp(x)) keeps it accurate. */ \
  static inline T logistic_##sfx(T x) {                                                       \
    if (x >= 0) return (T)1 / ((T)1 + exp##M(-x));                                            \
    T e = exp##M(x);                                                                          \
    return e / ((T)1 + e);                                                                    \
  }                                                                                           \
  static inline T tanh_##sfx(T x) { return tanh##M(x); }                                      \
  static inline T erf_##sfx(T x) { return erf##M(x); }                                        \
  static inline T sin_##sfx(T x) { return sin##M(x); }                                        \
  static inline T cos_##sfx(T x) { return cos##M(x); }                                        \
  static inline T tan_##sfx(T x) { return tan##M(x); }                                        \
  static inline uint8_t is_finite_##sfx(T x) { return (uint8_t)(isfinite(x) != 0); }         \
  static inline T add_##sfx(T a, T b) { return a + b; }                                       \
  static inline T subtract_##sfx(T a, T b) { return a - b; }                                  \
  static inline T multiply_##sfx(T a, T b) { return a * b; }                                  \
  static inline T divide_##sfx(T a, T b) { return a / b; }                                    \
  static inline T remainder_##sfx(T a, T b) { return fmod##M(a, b); }                         \
  static inline T power_##sfx(T a, T b) { return EW_POW_##sfx(a, b); }                        \
  static inline T atan2_##sfx(T a, T b) { return atan2##M(a, b); }                            \
  /* NaN wins (a + b makes it quiet); equal values can only differ as +-0, \
   * where the bits of +0 are the AND (max) and of -0 the OR (min) of the   \
   * two. Written without branches so that the loops vectorise. */         \
  static inline T maximum_##sfx(T a, T b) {                                                   \
    T r = a > b ? a : b;                                                                      \
    r = a == b ? EW_BITS_AND_##sfx(a, b) : r;                                                 \
    return ((a != a) | (b != b)) ? a + b : r;                                                 \
  }                                                                                           \
  static inline T minimum_##sfx(T a, T b) {                                                   \
    T r = a < b ? a : b;                                                                      \
    r = a == b ? EW_BITS_OR_##sfx(a, b) : r;                                                  \
    return ((a != a) | (b != b)) ? a + b : r;                                                 \
  }
EW_FLOAT_SCALARS(f32, float, f)
EW_FLOAT_SCALARS(f64, double, )

/* ---- element functions: integers -----------------------------------------
 * UT is the unsigned type of the same width, WT the unsigned type the
 * arithmetic runs in (never narrower than unsigned int, so that promotion
 * to int cannot overflow in a multiply). */
#define EW_INT_SCALARS(sfx, T, UT, WT, BITS)                                                  \
  static inline T negate_##sfx(T x) { return (T)(0u - (WT)x); }                               \
  static inline T not_##sfx(T x) { return (T)~x; }                                            \
  static inline T add_##sfx(T a, T b) { return (T)((WT)a + (WT)b); }                          \
  static inline T subtract_##sfx(T a, T b) { return (T)((WT)a - (WT)b); }                     \
  static inline T multiply_##sfx(T a, T b) { return (T)((WT)a * (WT)b); }                     \
  static inline T maximum_##sfx(T a, T b) { return a > b ? a : b; }                           \
  static inline T minimum_##sfx(T a, T b) { return a < b ? a : b; }                           \
  static inline T and_##sfx(T a, T b) { return (T)(a & b); }                                  \
  static inline T or_##sfx(T a, T b) { return (T)(a | b); }                                   \
  static inline T xor_##sfx(T a, T b) { return (T)(a ^ b); }                                  \
  static inline T shift_left_##sfx(T a, T b) {                                                \
    UT s = (UT)b;                                                                             \
    return s >= BITS ? (T)0 : (T)((WT)(UT)a << s);                                            \
  }                                                                                           \
  static inline T shift_right_logical_##sfx(T a, T b) {                                       \
    UT s = (UT)b;                                                                             \
    return s >= BITS ? (T)0 : (T)((UT)a >> s);                                                \
  }                                                                                           \
  /* Flip a negative value to non-negative, shift, flip back: an arithmetic \
   * shift in unsigned arithmetic. Amounts past the width act as BITS - 1, \
   * which leaves only the sign (0 or all ones). */ \
  static inline T shift_right_arithmetic_##sfx(T a, T b) {                                    \
    UT ua = (UT)a;                                                                            \
    UT mask = (UT)(0u - (WT)(ua >> (BITS - 1)));                                              \
    UT s = (UT)b;                                                                             \
    unsigned sh = s >= BITS ? (unsigned)(BITS - 1) : (unsigned)s;                             \
    return (T)(UT)(((UT)(ua ^ mask) >> sh) ^ mask);                                             \
  }                                                                                           \
  static inline uint8_t cmp_eq_##sfx(T a, T b) { return (uint8_t)(a == b); }                  \
  static inline uint8_t cmp_ne_##sfx(T a, T b) { return (uint8_t)(a != b); }                  \
  static inline uint8_t cmp_lt_##sfx(T a, T b) { return (uint8_t)(a < b); }                   \
  static inline uint8_t cmp_le_##sfx(T a, T b) { return (uint8_t)(a <= b); }                  \
  static inline uint8_t cmp_gt_##sfx(T a, T b) { return (uint8_t)(a > b); }                   \
  static inline uint8_t cmp_ge_##sfx(T a, T b) { return (uint8_t)(a >= b); }                  \
  /* Square-and-multiply; the wrapping product mod 2^BITS is what the docs \
   * ask for. At most BITS rounds. */ \
  static inline T power_nonneg_##sfx(T a, UT e) {                                             \
    WT r = 1, base = (WT)a;                                                                   \
    while (e) {                                                                               \
      if (e & 1u) r *= base;                                                                  \
      base *= base;                                                                           \
      e = (UT)(e >> 1);                                                                       \
    }                                                                                         \
    return (T)r;                                                                              \
  }

#define EW_SINT_SCALARS(sfx, T, UT, WT, BITS)                                                 \
  EW_INT_SCALARS(sfx, T, UT, WT, BITS)                                                        \
  static inline T abs_##sfx(T x) { return x < 0 ? (T)(0u - (WT)x) : x; }                      \
  static inline T sign_##sfx(T x) { return (T)((x > 0) - (x < 0)); }                          \
  static inline T divide_##sfx(T a, T b) {                                                    \
    if (b == 0) return (T)-1;                                                                 \
    if (b == -1) return (T)(0u - (WT)a); /* INT_MIN / -1 wraps to INT_MIN */                  \
    return (T)(a / b);                                                                        \
  }                                                                                           \
  static inline T remainder_##sfx(T a, T b) {                                                 \
    if (b == 0) return a;                                                                     \
    if (b == -1) return 0;                                                                    \
    return (T)(a % b);                                                                        \
  }                                                                                           \
  static inline T power_##sfx(T a, T b) {                                                     \
    if (b < 0) return a == 1 ? (T)1 : a == -1 ? ((b & 1) ? (T)-1 : (T)1) : (T)0;              \
    return power_nonneg_##sfx(a, (UT)b);                                                      \
  }

#define EW_UINT_SCALARS(sfx, T, WT, BITS, TMAX)                                               \
  EW_INT_SCALARS(sfx, T, T, WT, BITS)                                                         \
  static inline T abs_##sfx(T x) { return x; }                                                \
  static inline T sign_##sfx(T x) { return (T)(x != 0); }                                     \
  static inline T divide_##sfx(T a, T b) { return b == 0 ? (T)TMAX : (T)(a / b); }            \
  static inline T remainder_##sfx(T a, T b) { return b == 0 ? a : (T)(a % b); }               \
  static inline T power_##sfx(T a, T b) { return power_nonneg_##sfx(a, b); }

EW_SINT_SCALARS(i8, int8_t, uint8_t, uint32_t, 8)
EW_SINT_SCALARS(i16, int16_t, uint16_t, uint32_t, 16)
EW_SINT_SCALARS(i32, int32_t, uint32_t, uint32_t, 32)
EW_SINT_SCALARS(i64, int64_t, uint64_t, uint64_t, 64)
EW_UINT_SCALARS(u8, uint8_t, uint32_t, 8, UINT8_MAX)
EW_UINT_SCALARS(u16, uint16_t, uint32_t, 16, UINT16_MAX)
EW_UINT_SCALARS(u32, uint32_t, uint32_t, 32, UINT32_MAX)
EW_UINT_SCALARS(u64, uint64_t, uint64_t, 64, UINT64_MAX)

/* Float comparisons: C's operators are IEEE (NaN unordered, -0 == +0). */
#define EW_FLOAT_CMP(sfx, T)                                                     \
  static inline uint8_t cmp_eq_##sfx(T a, T b) { return (uint8_t)(a == b); }     \
  static inline uint8_t cmp_ne_##sfx(T a, T b) { return (uint8_t)(a != b); }     \
  static inline uint8_t cmp_lt_##sfx(T a, T b) { return (uint8_t)(a < b); }      \
  static inline uint8_t cmp_le_##sfx(T a, T b) { return (uint8_t)(a <= b); }     \
  static inline uint8_t cmp_gt_##sfx(T a, T b) { return (uint8_t)(a > b); }      \
  static inline uint8_t cmp_ge_##sfx(T a, T b) { return (uint8_t)(a >= b); }
EW_FLOAT_CMP(f32, float)
EW_FLOAT_CMP(f64, double)

/* Booleans: any nonzero byte reads as true; results are always 0 or 1. */
static inline uint8_t not_b(uint8_t x) { return (uint8_t)(x == 0); }
static inline uint8_t or_b(uint8_t a, uint8_t b) { return (uint8_t)((a | b) != 0); }
static inline uint8_t and_b(uint8_t a, uint8_t b) { return (uint8_t)((a != 0) & (b != 0)); }
static inline uint8_t xor_b(uint8_t a, uint8_t b) { return (uint8_t)((a != 0) ^ (b != 0)); }
static inline uint8_t add_b(uint8_t a, uint8_t b) { return or_b(a, b); }
static inline uint8_t multiply_b(uint8_t a, uint8_t b) { return and_b(a, b); }
static inline uint8_t maximum_b(uint8_t a, uint8_t b) { return or_b(a, b); }
static inline uint8_t minimum_b(uint8_t a, uint8_t b) { return and_b(a, b); }
static inline uint8_t cmp_eq_b(uint8_t a, uint8_t b) { return (uint8_t)((a != 0) == (b != 0)); }
static inline uint8_t cmp_ne_b(uint8_t a, uint8_t b) { return (uint8_t)((a != 0) != (b != 0)); }
static inline uint8_t cmp_lt_b(uint8_t a, uint8_t b) { return (uint8_t)((a != 0) < (b != 0)); }
static inline uint8_t cmp_le_b(uint8_t a, uint8_t b) { return (uint8_t)((a != 0) <= (b != 0)); }
static inline uint8_t cmp_gt_b(uint8_t a, uint8_t b) { return (uint8_t)((a != 0) > (b != 0)); }
static inline uint8_t cmp_ge_b(uint8_t a, uint8_t b) { return (uint8_t)((a != 0) >= (b != 0)); }

/* ---- dtype lists ------------------------------------------------------------
 * X(op, suffix, DTYPE, C type, KIND): KIND N computes in the element type
 * itself; F16 and BF16 widen to f32 and use the f32 element function. */
#define EW_FLT(X, op)                 \
  X(op, f32, F32, float, N)           \
  X(op, f64, F64, double, N)          \
  X(op, f16, F16, uint16_t, F16)      \
  X(op, bf16, BF16, uint16_t, BF16)
#define EW_SINT(X, op)                \
  X(op, i8, I8, int8_t, N)            \
  X(op, i16, I16, int16_t, N)         \
  X(op, i32, I32, int32_t, N)         \
  X(op, i64, I64, int64_t, N)
#define EW_UINT(X, op)                \
  X(op, u8, U8, uint8_t, N)           \
  X(op, u16, U16, uint16_t, N)        \
  X(op, u32, U32, uint32_t, N)        \
  X(op, u64, U64, uint64_t, N)
#define EW_BOOL(X, op) X(op, b, BOOL, uint8_t, N)
#define EW_INT(X, op) EW_SINT(X, op) EW_UINT(X, op)
#define EW_INTB(X, op) EW_INT(X, op) EW_BOOL(X, op)
#define EW_NUM(X, op) EW_FLT(X, op) EW_INT(X, op)
#define EW_NUMB(X, op) EW_NUM(X, op) EW_BOOL(X, op)

/* ---- op lists: (OP, element function, dtypes docs/ops.md allows) --------- */
#define EW_UNARY_OPS(X)                         \
  X(ABS, abs, EW_NUM)                           \
  X(NEGATE, negate, EW_NUM)                     \
  X(SIGN, sign, EW_NUM)                         \
  X(FLOOR, floor, EW_FLT)                       \
  X(CEIL, ceil, EW_FLT)                         \
  X(ROUND_NEAREST_EVEN, round_nearest_even, EW_FLT) \
  X(SQRT, sqrt, EW_FLT)                         \
  X(RSQRT, rsqrt, EW_FLT)                       \
  X(EXP, exp, EW_FLT)                           \
  X(EXPM1, expm1, EW_FLT)                       \
  X(LOG, log, EW_FLT)                           \
  X(LOG1P, log1p, EW_FLT)                       \
  X(LOGISTIC, logistic, EW_FLT)                 \
  X(TANH, tanh, EW_FLT)                         \
  X(ERF, erf, EW_FLT)                           \
  X(SIN, sin, EW_FLT)                           \
  X(COS, cos, EW_FLT)                           \
  X(TAN, tan, EW_FLT)                           \
  X(NOT, not, EW_INTB)
/* Unary ops with a bool result. */
#define EW_UPRED_OPS(X) X(IS_FINITE, is_finite, EW_FLT)
#define EW_BINARY_OPS(X)                        \
  X(ADD, add, EW_NUMB)                          \
  X(SUBTRACT, subtract, EW_NUM)                 \
  X(MULTIPLY, multiply, EW_NUMB)                \
  X(DIVIDE, divide, EW_NUM)                     \
  X(REMAINDER, remainder, EW_NUM)               \
  X(POWER, power, EW_NUM)                       \
  X(MAXIMUM, maximum, EW_NUMB)                  \
  X(MINIMUM, minimum, EW_NUMB)                  \
  X(ATAN2, atan2, EW_FLT)                       \
  X(AND, and, EW_INTB)                          \
  X(OR, or, EW_INTB)                            \
  X(XOR, xor, EW_INTB)                          \
  X(SHIFT_LEFT, shift_left, EW_INT)             \
  X(SHIFT_RIGHT_ARITHMETIC, shift_right_arithmetic, EW_INT) \
  X(SHIFT_RIGHT_LOGICAL, shift_right_logical, EW_INT)
/* compare, by direction (attrs[0]); any dtype, bool result. */
#define EW_CMP_OPS(X)                           \
  X(EQ, cmp_eq, EW_NUMB)                        \
  X(NE, cmp_ne, EW_NUMB)                        \
  X(LT, cmp_lt, EW_NUMB)                        \
  X(LE, cmp_le, EW_NUMB)                        \
  X(GT, cmp_gt, EW_NUMB)                        \
  X(GE, cmp_ge, EW_NUMB)

/* ---- tile templates ------------------------------------------------------ */
#define EW_ID(x) (x)
#define EW_LOAD_N(x) (x)
#define EW_STORE_N(x) (x)
#define EW_LOAD_F16(x) accy__f16_to_f32(x)
#define EW_STORE_F16(x) accy__f32_to_f16(x)
#define EW_LOAD_BF16(x) accy__bf16_to_f32(x)
#define EW_STORE_BF16(x) accy__f32_to_bf16(x)
#define EW_FN_N(op, sfx) op##_##sfx
#define EW_FN_F16(op, sfx) op##_f32
#define EW_FN_BF16(op, sfx) op##_f32

/* One operand: o[i] = STORE(fn(LOAD(a[i]))). */
#define EW_DEF_MAP1(name, fn, TO, TI, LOAD, STORE)                                       \
  static inline void span_##name(TO *restrict o, const TI *restrict a, size_t n) {       \
    EW_LOOP(n, o[i] = STORE(fn(LOAD(a[i]))));                                            \
  }                                                                                      \
  static void uk_##name(size_t n, void *o, const void *x0, const void *x1, const void *x2, \
                        size_t s0, size_t s2) {                                          \
    (void)x1, (void)x2, (void)s0, (void)s2;                                              \
    span_##name((TO *)o, (const TI *)x0, n);                                             \
  }

/* Two operands of equal dims: o[i] = STORE(fn(LOAD(a[i]), LOAD(b[i]))). */
#define EW_DEF_MAP2(name, fn, TO, TI, LOAD, STORE)                                       \
  static inline void span_##name(TO *restrict o, const TI *restrict a,                   \
                                 const TI *restrict b, size_t n) {                       \
    EW_LOOP(n, o[i] = STORE(fn(LOAD(a[i]), LOAD(b[i]))));                                \
  }                                                                                      \
  static void uk_##name(size_t n, void *o, const void *x0, const void *x1, const void *x2, \
                        size_t s0, size_t s2) {                                          \
    (void)x2, (void)s0, (void)s2;                                                        \
    span_##name((TO *)o, (const TI *)x0, (const TI *)x1, n);                             \
  }

#define EW_DEF_UNARY(op, sfx, DT, T, KIND) \
  EW_DEF_MAP1(op##_##sfx, EW_FN_##KIND(op, sfx), T, T, EW_LOAD_##KIND, EW_STORE_##KIND)
#define EW_DEF_UPRED(op, sfx, DT, T, KIND) \
  EW_DEF_MAP1(op##_##sfx, EW_FN_##KIND(op, sfx), uint8_t, T, EW_LOAD_##KIND, EW_ID)
#define EW_DEF_BINARY(op, sfx, DT, T, KIND) \
  EW_DEF_MAP2(op##_##sfx, EW_FN_##KIND(op, sfx), T, T, EW_LOAD_##KIND, EW_STORE_##KIND)
#define EW_DEF_BPRED(op, sfx, DT, T, KIND) \
  EW_DEF_MAP2(op##_##sfx, EW_FN_##KIND(op, sfx), uint8_t, T, EW_LOAD_##KIND, EW_ID)

#define EW_DEF_UNARY_OP(OPC, op, LIST) LIST(EW_DEF_UNARY, op)
#define EW_DEF_UPRED_OP(OPC, op, LIST) LIST(EW_DEF_UPRED, op)
#define EW_DEF_BINARY_OP(OPC, op, LIST) LIST(EW_DEF_BINARY, op)
#define EW_DEF_BPRED_OP(OPC, op, LIST) LIST(EW_DEF_BPRED, op)
EW_UNARY_OPS(EW_DEF_UNARY_OP)
EW_UPRED_OPS(EW_DEF_UPRED_OP)
EW_BINARY_OPS(EW_DEF_BINARY_OP)
EW_CMP_OPS(EW_DEF_BPRED_OP)

/* Binary float ops whose second operand is one value, x1[0] (a per-row
 * value in a row group): o[i] = op(x0[i], x1[0]), the same op per element
 * as the two-array kernel, so the same bits. */
#define EW_X1_OPS(X)                \
  X(ADD, add, EW_FLT)               \
  X(SUBTRACT, subtract, EW_FLT)     \
  X(MULTIPLY, multiply, EW_FLT)     \
  X(DIVIDE, divide, EW_FLT)         \
  X(MAXIMUM, maximum, EW_FLT)       \
  X(MINIMUM, minimum, EW_FLT)
#define EW_DEF_MAP2_X1(name, fn, T, LOAD, STORE)                                         \
  static inline void span_##name##_x1(T *restrict o, const T *restrict a, T b, size_t n) { \
    EW_LOOP(n, o[i] = STORE(fn(LOAD(a[i]), LOAD(b))));                                  \
  }                                                                                      \
  static void uk_##name##_x1(size_t n, void *o, const void *x0, const void *x1,          \
                             const void *x2, size_t s0, size_t s2) {                     \
    (void)x2, (void)s0, (void)s2;                                                        \
    span_##name##_x1((T *)o, (const T *)x0, *(const T *)x1, n);                          \
  }
#define EW_DEF_BINARY_X1(op, sfx, DT, T, KIND) \
  EW_DEF_MAP2_X1(op##_##sfx, EW_FN_##KIND(op, sfx), T, EW_LOAD_##KIND, EW_STORE_##KIND)
#define EW_DEF_BINARY_X1_OP(OPC, op, LIST) LIST(EW_DEF_BINARY_X1, op)
EW_X1_OPS(EW_DEF_BINARY_X1_OP)

/* clamp(lo, x, hi) = minimum(maximum(x, lo), hi); lo and hi may be scalars
 * (stride 0). */
#define EW_DEF_CLAMP(op, sfx, DT, T, KIND)                                                    \
  static inline void span_clamp_##sfx(T *restrict o, const T *restrict lo,                    \
                                      const T *restrict x, const T *restrict hi, size_t sl,   \
                                      size_t sh, size_t n) {                                  \
    EW_LOOP(n, o[i] = EW_STORE_##KIND(EW_FN_##KIND(minimum, sfx)(                             \
                   EW_FN_##KIND(maximum, sfx)(EW_LOAD_##KIND(x[i]), EW_LOAD_##KIND(lo[i * sl])), \
                   EW_LOAD_##KIND(hi[i * sh]))));                                             \
  }                                                                                           \
  static void uk_clamp_##sfx(size_t n, void *o, const void *x0, const void *x1,              \
                             const void *x2, size_t s0, size_t s2) {                          \
    span_clamp_##sfx((T *)o, (const T *)x0, (const T *)x1, (const T *)x2, s0, s2, n);         \
  }
EW_NUM(EW_DEF_CLAMP, clamp)

/* select moves elements without looking at them, so only the size matters.
 * A mask instead of ?: keeps the loop free of branches (and vectorisable). */
#define EW_DEF_SELECT(BYTES, UT)                                                              \
  static inline void span_select_##BYTES(UT *restrict o, const uint8_t *restrict p,           \
                                         const UT *restrict t, const UT *restrict f, size_t n) { \
    EW_LOOP(n, UT m = (UT)(0u - (UT)(p[i] != 0)); o[i] = (UT)((t[i] & m) | (f[i] & (UT)~m)));  \
  }                                                                                           \
  static void uk_select_##BYTES(size_t n, void *o, const void *x0, const void *x1,           \
                                const void *x2, size_t s0, size_t s2) {                       \
    (void)s0, (void)s2;                                                                       \
    span_select_##BYTES((UT *)o, (const uint8_t *)x0, (const UT *)x1, (const UT *)x2, n);     \
  }
EW_DEF_SELECT(1, uint8_t)
EW_DEF_SELECT(2, uint16_t)
EW_DEF_SELECT(4, uint32_t)
EW_DEF_SELECT(8, uint64_t)

/* ---- convert ------------------------------------------------------------------
 * A source element loads into one of four carriers (F float, D double,
 * S int64_t, U uint64_t; bool loads as U 0/1), and each destination has one
 * store per carrier, so the 169 pairs share 13 loads and 52 stores. */
static inline float ld_f32(float x) { return x; }
static inline double ld_f64(double x) { return x; }
static inline float ld_f16(uint16_t x) { return accy__f16_to_f32(x); }
static inline float ld_bf16(uint16_t x) { return accy__bf16_to_f32(x); }
static inline int64_t ld_i8(int8_t x) { return x; }
static inline int64_t ld_i16(int16_t x) { return x; }
static inline int64_t ld_i32(int32_t x) { return x; }
static inline int64_t ld_i64(int64_t x) { return x; }
static inline uint64_t ld_u8(uint8_t x) { return x; }
static inline uint64_t ld_u16(uint16_t x) { return x; }
static inline uint64_t ld_u32(uint32_t x) { return x; }
static inline uint64_t ld_u64(uint64_t x) { return x; }
static inline uint64_t ld_b(uint8_t x) { return x != 0; }

static inline float cv_f32_F(float x) { return x; }
static inline float cv_f32_D(double x) { return (float)x; }
static inline float cv_f32_S(int64_t x) { return (float)x; }
static inline float cv_f32_U(uint64_t x) { return (float)x; }
static inline double cv_f64_F(float x) { return x; }
static inline double cv_f64_D(double x) { return x; }
static inline double cv_f64_S(int64_t x) { return (double)x; }
static inline double cv_f64_U(uint64_t x) { return (double)x; }
#define EW_CV_HALF(sfx, STORE)                                                            \
  static inline uint16_t cv_##sfx##_F(float x) { return STORE(x); }                       \
  static inline uint16_t cv_##sfx##_D(double x) { return STORE(f64_to_f32_odd(x)); }      \
  static inline uint16_t cv_##sfx##_S(int64_t x) { return STORE(i64_to_f32_odd(x)); }    \
  static inline uint16_t cv_##sfx##_U(uint64_t x) { return STORE(u64_to_f32_odd(x)); }
EW_CV_HALF(f16, accy__f32_to_f16)
EW_CV_HALF(bf16, accy__f32_to_bf16)

/* Float -> integer: compare before casting (casting NaN or an out-of-range
 * value is undefined in C). TLIM is 2^(bits-1) or 2^bits, the first value
 * past TMAX, exact as a double; anything at or below TMIN saturates too
 * (values in (TMIN - 1, TMIN] truncate to TMIN anyway). */
#define EW_CV_INT(sfx, T, UT, TMIN, TMAX, TLIM)                                           \
  static inline T cv_##sfx##_D(double x) {                                                \
    if (x != x) return 0;                                                                 \
    if (x <= (double)(TMIN)) return TMIN;                                                 \
    if (x >= (TLIM)) return TMAX;                                                         \
    return (T)x;                                                                          \
  }                                                                                       \
  static inline T cv_##sfx##_F(float x) { return cv_##sfx##_D((double)x); }              \
  static inline T cv_##sfx##_S(int64_t x) { return (T)(UT)x; }                           \
  static inline T cv_##sfx##_U(uint64_t x) { return (T)(UT)x; }
EW_CV_INT(i8, int8_t, uint8_t, INT8_MIN, INT8_MAX, 0x1p7)
EW_CV_INT(i16, int16_t, uint16_t, INT16_MIN, INT16_MAX, 0x1p15)
EW_CV_INT(i32, int32_t, uint32_t, INT32_MIN, INT32_MAX, 0x1p31)
EW_CV_INT(i64, int64_t, uint64_t, INT64_MIN, INT64_MAX, 0x1p63)
EW_CV_INT(u8, uint8_t, uint8_t, 0, UINT8_MAX, 0x1p8)
EW_CV_INT(u16, uint16_t, uint16_t, 0, UINT16_MAX, 0x1p16)
EW_CV_INT(u32, uint32_t, uint32_t, 0, UINT32_MAX, 0x1p32)
EW_CV_INT(u64, uint64_t, uint64_t, 0, UINT64_MAX, 0x1p64)
/* Any -> bool is x != 0, so NaN gives true. */
static inline uint8_t cv_b_F(float x) { return (uint8_t)(x != 0); }
static inline uint8_t cv_b_D(double x) { return (uint8_t)(x != 0); }
static inline uint8_t cv_b_S(int64_t x) { return (uint8_t)(x != 0); }
static inline uint8_t cv_b_U(uint64_t x) { return (uint8_t)(x != 0); }

/* X(src suffix, SRC DTYPE, src type, carrier, dst suffix, DST DTYPE, dst type) */
#define EW_CONV_DST(X, s, SDT, ST, LC)                                        \
  X(s, SDT, ST, LC, f32, F32, float) X(s, SDT, ST, LC, f64, F64, double)      \
  X(s, SDT, ST, LC, f16, F16, uint16_t) X(s, SDT, ST, LC, bf16, BF16, uint16_t) \
  X(s, SDT, ST, LC, i8, I8, int8_t) X(s, SDT, ST, LC, i16, I16, int16_t)      \
  X(s, SDT, ST, LC, i32, I32, int32_t) X(s, SDT, ST, LC, i64, I64, int64_t)   \
  X(s, SDT, ST, LC, u8, U8, uint8_t) X(s, SDT, ST, LC, u16, U16, uint16_t)    \
  X(s, SDT, ST, LC, u32, U32, uint32_t) X(s, SDT, ST, LC, u64, U64, uint64_t) \
  X(s, SDT, ST, LC, b, BOOL, uint8_t)
#define EW_CONV_ALL(X)                                                        \
  EW_CONV_DST(X, f32, F32, float, F) EW_CONV_DST(X, f64, F64, double, D)      \
  EW_CONV_DST(X, f16, F16, uint16_t, F) EW_CONV_DST(X, bf16, BF16, uint16_t, F) \
  EW_CONV_DST(X, i8, I8, int8_t, S) EW_CONV_DST(X, i16, I16, int16_t, S)      \
  EW_CONV_DST(X, i32, I32, int32_t, S) EW_CONV_DST(X, i64, I64, int64_t, S)   \
  EW_CONV_DST(X, u8, U8, uint8_t, U) EW_CONV_DST(X, u16, U16, uint16_t, U)    \
  EW_CONV_DST(X, u32, U32, uint32_t, U) EW_CONV_DST(X, u64, U64, uint64_t, U) \
  EW_CONV_DST(X, b, BOOL, uint8_t, U)
#define EW_DEF_CONV(s, SDT, ST, LC, d, DDT, DTT) \
  EW_DEF_MAP1(conv_##s##_##d, cv_##d##_##LC, DTT, ST, ld_##s, EW_ID)
EW_CONV_ALL(EW_DEF_CONV)

/* ---- lookup ------------------------------------------------------------------ */
#define EW_CASE(op, sfx, DT, T, KIND) \
  case ACCY_DTYPE_##DT:               \
    return uk_##op##_##sfx;
#define EW_LOOKUP_OP(OPC, op, LIST) \
  case ACCY_OP_##OPC:               \
    switch (dt) {                   \
      LIST(EW_CASE, op)             \
      default:                      \
        return NULL;                \
    }                               \
    break;
#define EW_LOOKUP_CMP(DIR, op, LIST) \
  case ACCY_COMPARE_##DIR:           \
    switch (dt) {                    \
      LIST(EW_CASE, op)              \
      default:                       \
        return NULL;                 \
    }                                \
    break;
#define EW_CONV_CASE(s, SDT, ST, LC, d, DDT, DTT) \
  case ACCY_DTYPE_##SDT * 16 + ACCY_DTYPE_##DDT:  \
    return uk_conv_##s##_##d;

/* Tile function of a unary or binary op (not compare) on dtype |dt|, or NULL
 * when docs/ops.md does not allow the pair. */
/* A level's own vector spans, tried before the generic ones (the level's
 * translation unit defines EW_OVERRIDE_MAP(op, dt) to return one or NULL). */
#ifndef EW_OVERRIDE_MAP
#define EW_OVERRIDE_MAP(op, dt) ((accy__uk_ew_fn)NULL)
#endif

accy__uk_ew_fn EW_EXPORT(ew_map)(uint16_t op, int32_t dt) {
  accy__uk_ew_fn over = EW_OVERRIDE_MAP(op, dt);
  if (over) return over;
  switch (op) {
    EW_UNARY_OPS(EW_LOOKUP_OP)
    EW_UPRED_OPS(EW_LOOKUP_OP)
    EW_BINARY_OPS(EW_LOOKUP_OP)
    EW_LOOKUP_OP(CLAMP, clamp, EW_NUM)
    default:
      break;
  }
  return NULL;
}

#define EW_CASE_X1(op, sfx, DT, T, KIND) \
  case ACCY_DTYPE_##DT:                  \
    return uk_##op##_##sfx##_x1;
#define EW_LOOKUP_OP_X1(OPC, op, LIST) \
  case ACCY_OP_##OPC:                  \
    switch (dt) {                      \
      LIST(EW_CASE_X1, op)             \
      default:                         \
        return NULL;                   \
    }                                  \
    break;

/* A level's own spans of one-value ops, as EW_OVERRIDE_MAP. */
#ifndef EW_OVERRIDE_MAP_X1
#define EW_OVERRIDE_MAP_X1(op, dt) ((accy__uk_ew_fn)NULL)
#endif

accy__uk_ew_fn EW_EXPORT(ew_map_x1)(uint16_t op, int32_t dt) {
  accy__uk_ew_fn over = EW_OVERRIDE_MAP_X1(op, dt);
  if (over) return over;
  switch (op) {
    EW_X1_OPS(EW_LOOKUP_OP_X1)
    default:
      break;
  }
  return NULL;
}

accy__uk_ew_fn EW_EXPORT(ew_compare)(int64_t dir, int32_t dt) {
  switch (dir) {
    EW_CMP_OPS(EW_LOOKUP_CMP)
    default:
      break;
  }
  return NULL;
}

/* A level's own conversion spans, as EW_OVERRIDE_MAP. */
#ifndef EW_OVERRIDE_CONVERT
#define EW_OVERRIDE_CONVERT(src, dst) ((accy__uk_ew_fn)NULL)
#endif

accy__uk_ew_fn EW_EXPORT(ew_convert)(int32_t src, int32_t dst) {
  accy__uk_ew_fn over = EW_OVERRIDE_CONVERT(src, dst);
  if (over) return over;
  /* Both are valid dtypes (1..13) here, so src * 16 + dst is unique. */
  switch (src * 16 + dst) {
    EW_CONV_ALL(EW_CONV_CASE)
    default:
      break;
  }
  return NULL;
}

/* select by element size (1, 2, 4, 8). */
accy__uk_ew_fn EW_EXPORT(ew_select)(size_t elem_bytes) {
  switch (elem_bytes) {
    case 1: return uk_select_1;
    case 2: return uk_select_2;
    case 4: return uk_select_4;
    case 8: return uk_select_8;
    default: return NULL;
  }
}
