/* tests/check_elementwise.c: the elementwise kernels (src/kernels/elementwise.c).
 *
 * Each kernel is built from a one-op IR program and run without a session:
 * over the whole range, then over several random splits into tiles run in
 * shuffled order, which must give bit-identical results. The whole-range
 * result is compared with a per-element reference written here from
 * docs/ops.md in double / long double / int64 arithmetic: exactly where the
 * result is exactly defined, within a few ULPs for transcendental functions.
 * Fixed vectors pin the edge cases the docs define. */
#include "src/internal.h"

#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/ir/ir.h"
#include "src/base/half.h"
#include "src/kernels/kernels.h"
#include "src/base/alloc.h"
#include "tests/testutil.h"

/* ---- dtype helpers -------------------------------------------------------- */

static const int32_t all_dtypes[] = {
    ACCY_DTYPE_F32, ACCY_DTYPE_F64, ACCY_DTYPE_F16, ACCY_DTYPE_BF16, ACCY_DTYPE_I8,
    ACCY_DTYPE_I16, ACCY_DTYPE_I32, ACCY_DTYPE_I64, ACCY_DTYPE_U8,  ACCY_DTYPE_U16,
    ACCY_DTYPE_U32, ACCY_DTYPE_U64, ACCY_DTYPE_BOOL};
#define N_DTYPES ((int)(sizeof all_dtypes / sizeof all_dtypes[0]))

enum { C_FLT = 1, C_SINT = 2, C_UINT = 4, C_BOOL = 8 };
#define C_INT (C_SINT | C_UINT)
#define C_NUM (C_FLT | C_INT)
#define C_ANY (C_NUM | C_BOOL)

static unsigned dtype_class(int32_t dt) {
  switch (dt) {
    case ACCY_DTYPE_F32: case ACCY_DTYPE_F64: case ACCY_DTYPE_F16: case ACCY_DTYPE_BF16:
      return C_FLT;
    case ACCY_DTYPE_I8: case ACCY_DTYPE_I16: case ACCY_DTYPE_I32: case ACCY_DTYPE_I64:
      return C_SINT;
    case ACCY_DTYPE_BOOL:
      return C_BOOL;
    default:
      return C_UINT;
  }
}
static bool is_float(int32_t dt) { return dtype_class(dt) == C_FLT; }
static int dtype_bits(int32_t dt) { return (int)accy_dtype_size(dt) * 8; }

/* Smallest and largest value of an integer dtype. */
static int64_t int_min(int32_t dt) {
  if (dtype_class(dt) != C_SINT) return 0;
  return dtype_bits(dt) == 64 ? INT64_MIN : -(INT64_C(1) << (dtype_bits(dt) - 1));
}
static uint64_t int_max(int32_t dt) {
  int bits = dtype_bits(dt);
  if (dtype_class(dt) == C_SINT) return (UINT64_C(1) << (bits - 1)) - 1;
  return bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

/* Unsigned value of an integer element, reduced to its width. */
static uint64_t get_u(int32_t dt, const void *buf, size_t i) {
  uint64_t v = (uint64_t)tu_get_i64(dt, buf, i);
  int bits = dtype_bits(dt);
  return bits == 64 ? v : v & ((UINT64_C(1) << bits) - 1);
}

/* Monotonic integer image of a float element, for ULP distances; +0 and
 * -0 map to the same value. */
static int64_t float_order(int32_t dt, const void *buf, size_t i) {
  uint64_t u, sign;
  switch (dt) {
    case ACCY_DTYPE_F32: {
      uint32_t b;
      memcpy(&b, (const char *)buf + 4 * i, 4);
      u = b;
      sign = UINT64_C(1) << 31;
      break;
    }
    case ACCY_DTYPE_F64:
      memcpy(&u, (const char *)buf + 8 * i, 8);
      sign = UINT64_C(1) << 63;
      break;
    default: {
      uint16_t b;
      memcpy(&b, (const char *)buf + 2 * i, 2);
      u = b;
      sign = 0x8000u;
      break;
    }
  }
  return (u & sign) ? -(int64_t)(u & ~sign) : (int64_t)u;
}

/* Puts ~1/8 of the elements on the extremes of an integer type (the shared
 * filler's edges are 64-bit, so narrow types would miss their own MIN/MAX). */
static void inject_int_edges(tu_rng *r, int32_t dt, void *buf, size_t n) {
  if (!(dtype_class(dt) & C_INT)) return;
  for (size_t i = 0; i < n; i++) {
    if (tu_rng_next(r) % 8 != 0) continue;
    int64_t v;
    switch (tu_rng_next(r) % 5) {
      case 0: v = int_min(dt); break;
      case 1: v = (int64_t)int_max(dt); break;
      case 2: v = int_min(dt) + 1; break;
      case 3: v = (int64_t)(int_max(dt) - 1); break;
      default: v = -1; break;
    }
    tu_set_i64(dt, buf, i, v);
  }
}

/* ---- building and running ------------------------------------------------- */

typedef struct ew_case {
  accy__program prog;
  accy__arena arena;
  accy__kernel k;
  uint32_t node;
} ew_case;

static accy__type make_type(int32_t dt, uint32_t rank, const int64_t *dims) {
  accy__type t;
  memset(&t, 0, sizeof t);
  t.dtype = dt;
  t.rank = rank;
  for (uint32_t i = 0; i < rank; i++) t.dims[i] = dims[i];
  return t;
}

/* Builds parameters of types |ot| and one |op| node of type |rt|, then asks
 * for its kernel. The case must be freed with case_free whatever returns. */
static accy_status case_prepare(ew_case *c, uint16_t op, const accy__type *rt,
                                const accy__type *ot, uint32_t nops, const int64_t *attrs,
                                uint32_t nattrs) {
  uint32_t ids[3];
  accy__program_init(&c->prog);
  accy__arena_init(&c->arena);
  memset(&c->k, 0, sizeof c->k);
  for (uint32_t i = 0; i < nops; i++) {
    char name[16];
    snprintf(name, sizeof name, "p%u", i);
    ck_assert_int_eq(accy__program_add_node(&c->prog, ACCY_OP_PARAMETER, &ot[i], NULL, 0, NULL, 0,
                                            name, strlen(name), NULL, 0, &ids[i]),
                     ACCY_STATUS_OK);
  }
  ck_assert_int_eq(accy__program_add_node(&c->prog, op, rt, ids, nops, attrs, nattrs, NULL, 0,
                                          NULL, 0, &c->node),
                   ACCY_STATUS_OK);
  return accy__kernel_prepare(&c->prog, c->node, &c->arena, &c->k);
}

static void case_free(ew_case *c) {
  accy__arena_free(&c->arena);
  accy__program_free(&c->prog);
}

/* Runs the kernel over [0, n_items) into bufs[0], then over several random
 * splits (tiles in shuffled order, empty tiles included) into fresh buffers
 * prefilled with garbage, and requires every run to match bytewise. */
static void run_all_splits(const accy__kernel *k, void **bufs, size_t out_bytes, tu_rng *r) {
  memset(bufs[0], 0xa5, out_bytes);
  k->run(k, (void *const *)bufs, 0, k->n_items);
  if (k->n_items == 0) return;
  unsigned char *alt = malloc(out_bytes);
  ck_assert_ptr_nonnull(alt);
  void *abufs[4] = {alt, bufs[1], bufs[2], bufs[3]};
  for (int s = 0; s < 5; s++) {
    uint64_t n = k->n_items;
    uint64_t cuts[18];
    int nt = s == 0 && n <= 16 ? (int)n : (int)tu_rng_range(r, 1, n < 16 ? (int64_t)n : 16);
    /* Tile t is [cuts[t], cuts[t + 1]). */
    cuts[0] = 0;
    cuts[nt] = n;
    for (int t = 1; t < nt; t++)
      cuts[t] = s == 0 && n <= 16 ? (uint64_t)t : (uint64_t)tu_rng_range(r, 0, (int64_t)n);
    for (int t = 1; t < nt; t++) /* insertion sort */
      for (int u = t; u > 1 && cuts[u - 1] > cuts[u]; u--) {
        uint64_t tmp = cuts[u];
        cuts[u] = cuts[u - 1];
        cuts[u - 1] = tmp;
      }
    int order[17];
    for (int t = 0; t < nt; t++) order[t] = t;
    for (int t = nt - 1; t > 0; t--) {
      int j = (int)tu_rng_range(r, 0, t);
      int tmp = order[t];
      order[t] = order[j];
      order[j] = tmp;
    }
    memset(alt, 0x5a + s, out_bytes);
    for (int t = 0; t < nt; t++)
      k->run(k, (void *const *)abufs, cuts[order[t]], cuts[order[t] + 1]);
    ck_assert_msg(memcmp(alt, bufs[0], out_bytes) == 0,
                  "split %d into %d tiles differs from the whole-range run", s, nt);
  }
  free(alt);
}

/* Compares |n| elements of |got| with |want|: floats bitwise (any NaNs equal)
 * when ulps is 0, else within |ulps| units in the last place; other types
 * bytewise. */
static void expect_close(int32_t dt, const void *got, const void *want, size_t n, int ulps,
                         const char *what) {
  size_t es = accy_dtype_size(dt);
  for (size_t i = 0; i < n; i++) {
    const char *g = (const char *)got + i * es, *w = (const char *)want + i * es;
    if (memcmp(g, w, es) == 0) continue;
    if (is_float(dt)) {
      double gv = tu_get_f64(dt, got, i), wv = tu_get_f64(dt, want, i);
      if (isnan(gv) && isnan(wv)) continue;
      if (ulps > 0 && !isnan(gv) && !isnan(wv)) {
        int64_t d = float_order(dt, got, i) - float_order(dt, want, i);
        if (d >= -ulps && d <= ulps) continue;
      }
      ck_abort_msg("%s: element %zu: got %.17g, want %.17g", what, i, gv, wv);
    }
    ck_abort_msg("%s: element %zu: got %lld, want %lld", what, i,
                 (long long)tu_get_i64(dt, got, i), (long long)tu_get_i64(dt, want, i));
  }
}

/* ---- the reference ----------------------------------------------------------- */

static double ref_max(double a, double b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == 0 && b == 0) return (signbit(a) && signbit(b)) ? -0.0 : 0.0;
  return a > b ? a : b;
}
static double ref_min(double a, double b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == 0 && b == 0) return (signbit(a) || signbit(b)) ? -0.0 : 0.0;
  return a < b ? a : b;
}

static bool ref_compare(int64_t dir, int c /* -1, 0, 1 */, bool unordered) {
  if (unordered) return dir == ACCY_COMPARE_NE;
  switch (dir) {
    case ACCY_COMPARE_EQ: return c == 0;
    case ACCY_COMPARE_NE: return c != 0;
    case ACCY_COMPARE_LT: return c < 0;
    case ACCY_COMPARE_LE: return c <= 0;
    case ACCY_COMPARE_GT: return c > 0;
    default: return c >= 0;
  }
}

/* Is the float op's result rounded by a library function (so compared with
 * a tolerance) rather than exactly defined? */
static bool op_is_transcendental(uint16_t op) {
  switch (op) {
    case ACCY_OP_RSQRT: case ACCY_OP_EXP: case ACCY_OP_EXPM1: case ACCY_OP_LOG:
    case ACCY_OP_LOG1P: case ACCY_OP_LOGISTIC: case ACCY_OP_TANH: case ACCY_OP_ERF:
    case ACCY_OP_SIN: case ACCY_OP_COS: case ACCY_OP_TAN: case ACCY_OP_POWER:
    case ACCY_OP_ATAN2:
      return true;
    default:
      return false;
  }
}

static long double ref_transcendental(uint16_t op, long double a, long double b) {
  switch (op) {
    case ACCY_OP_RSQRT: return 1.0L / sqrtl(a);
    case ACCY_OP_EXP: return expl(a);
    case ACCY_OP_EXPM1: return expm1l(a);
    case ACCY_OP_LOG: return logl(a);
    case ACCY_OP_LOG1P: return log1pl(a);
    case ACCY_OP_LOGISTIC: return 1.0L / (1.0L + expl(-a));
    case ACCY_OP_TANH: return tanhl(a);
    case ACCY_OP_ERF: return erfl(a);
    case ACCY_OP_SIN: return sinl(a);
    case ACCY_OP_COS: return cosl(a);
    case ACCY_OP_TAN: return tanl(a);
    case ACCY_OP_POWER: return powl(a, b);
    default: return atan2l(a, b);
  }
}

/* Float element op (exactly defined ones in double: +-x/ and sqrt of f32
 * values are exact or rounded once more harmlessly, since 53 >= 2 * 24 + 2,
 * and f16/bf16 are defined as f32 computation). Stores into |out| at i. */
static void ref_float(uint16_t op, int64_t dir, int32_t dt, int32_t rdt, double a, double b,
                      void *out, size_t i) {
  double r;
  switch (op) {
    case ACCY_OP_ABS: r = fabs(a); break;
    case ACCY_OP_NEGATE: r = -a; break;
    case ACCY_OP_SIGN: r = isnan(a) ? a : a > 0 ? 1.0 : a < 0 ? -1.0 : a; break;
    case ACCY_OP_FLOOR: r = floor(a); break;
    case ACCY_OP_CEIL: r = ceil(a); break;
    case ACCY_OP_ROUND_NEAREST_EVEN: r = nearbyint(a); break; /* default mode: ties even */
    case ACCY_OP_SQRT: r = sqrt(a); break;
    case ACCY_OP_IS_FINITE: ((uint8_t *)out)[i] = !isnan(a) && !isinf(a); return;
    case ACCY_OP_ADD: r = a + b; break;
    case ACCY_OP_SUBTRACT: r = a - b; break;
    case ACCY_OP_MULTIPLY: r = a * b; break;
    case ACCY_OP_DIVIDE: r = a / b; break;
    case ACCY_OP_REMAINDER: r = fmod(a, b); break; /* exact */
    case ACCY_OP_MAXIMUM: r = ref_max(a, b); break;
    case ACCY_OP_MINIMUM: r = ref_min(a, b); break;
    case ACCY_OP_COMPARE:
      ((uint8_t *)out)[i] = ref_compare(dir, a < b ? -1 : a > b ? 1 : 0, isnan(a) || isnan(b));
      return;
    default:
      if (dt == ACCY_DTYPE_F64) {
        r = (double)ref_transcendental(op, a, b);
      } else {
        /* Round through float so that f16/bf16 see what the f32 function
         * would give (the tolerance covers the rest). */
        r = (float)ref_transcendental(op, a, b);
      }
      break;
  }
  tu_set_f64(rdt, out, i, r);
}

static uint64_t ref_ipow(uint64_t base, uint64_t e) {
  /* Left-to-right binary powering, wrapping mod 2^64. */
  uint64_t r = 1;
  for (int bit = 63; bit >= 0; bit--) {
    r *= r;
    if ((e >> bit) & 1u) r *= base;
  }
  return r;
}

/* Integer and bool element op, in int64 / uint64; the store wraps. */
static void ref_int(uint16_t op, int64_t dir, int32_t dt, const void *ba, const void *bb,
                    size_t i, void *out) {
  const bool sgn = dtype_class(dt) == C_SINT, boolean = dt == ACCY_DTYPE_BOOL;
  const int bits = dtype_bits(dt);
  const int64_t a = tu_get_i64(dt, ba, i), b = bb ? tu_get_i64(dt, bb, i) : 0;
  const uint64_t ua = get_u(dt, ba, i), ub = bb ? get_u(dt, bb, i) : 0;
  const uint64_t amount = ub; /* shift amounts are read as unsigned */
  /* The value of a as a signed number of its width (unsigned types too). */
  const int64_t sa = bits == 64 ? (int64_t)ua
                                : (int64_t)(ua << (64 - bits)) >> (64 - bits);
  uint64_t r;
  switch (op) {
    case ACCY_OP_ABS: r = sgn && a < 0 ? 0 - (uint64_t)a : (uint64_t)a; break;
    case ACCY_OP_NEGATE: r = 0 - (uint64_t)a; break;
    case ACCY_OP_SIGN: r = sgn ? (uint64_t)(int64_t)((a > 0) - (a < 0)) : ua != 0; break;
    case ACCY_OP_NOT: r = boolean ? !a : ~(uint64_t)a; break;
    case ACCY_OP_ADD: r = boolean ? (uint64_t)(a | b) : (uint64_t)a + (uint64_t)b; break;
    case ACCY_OP_SUBTRACT: r = (uint64_t)a - (uint64_t)b; break;
    case ACCY_OP_MULTIPLY: r = boolean ? (uint64_t)(a & b) : (uint64_t)a * (uint64_t)b; break;
    case ACCY_OP_DIVIDE:
      if (sgn) {
        if (b == 0) r = (uint64_t)-1;
        else if (b == -1) r = 0 - (uint64_t)a;
        else r = (uint64_t)(a / b);
      } else {
        r = ub == 0 ? int_max(dt) : ua / ub;
      }
      break;
    case ACCY_OP_REMAINDER:
      if (sgn) r = b == 0 ? (uint64_t)a : b == -1 ? 0 : (uint64_t)(a % b);
      else r = ub == 0 ? ua : ua % ub;
      break;
    case ACCY_OP_POWER:
      if (sgn && b < 0) r = a == 1 ? 1 : a == -1 ? ((b & 1) ? (uint64_t)-1 : 1) : 0;
      else r = ref_ipow((uint64_t)a, sgn ? (uint64_t)b : ub);
      break;
    case ACCY_OP_MAXIMUM:
      r = sgn ? (uint64_t)(a > b ? a : b) : (ua > ub ? ua : ub);
      break;
    case ACCY_OP_MINIMUM:
      r = sgn ? (uint64_t)(a < b ? a : b) : (ua < ub ? ua : ub);
      break;
    case ACCY_OP_AND: r = (uint64_t)a & (uint64_t)b; break;
    case ACCY_OP_OR: r = (uint64_t)a | (uint64_t)b; break;
    case ACCY_OP_XOR: r = (uint64_t)a ^ (uint64_t)b; break;
    case ACCY_OP_SHIFT_LEFT: r = amount >= (uint64_t)bits ? 0 : ua << amount; break;
    case ACCY_OP_SHIFT_RIGHT_LOGICAL: r = amount >= (uint64_t)bits ? 0 : ua >> amount; break;
    case ACCY_OP_SHIFT_RIGHT_ARITHMETIC:
      if (amount >= (uint64_t)bits) r = sa < 0 ? (uint64_t)-1 : 0;
      else r = (uint64_t)(sa >> amount); /* gcc: arithmetic */
      break;
    case ACCY_OP_COMPARE: {
      int c = sgn ? (a < b ? -1 : a > b) : (ua < ub ? -1 : ua > ub);
      ((uint8_t *)out)[i] = ref_compare(dir, c, false);
      return;
    }
    default:
      ck_abort_msg("no reference for op %u", op);
      return;
  }
  tu_set_i64(dt, out, i, (int64_t)r);
}

/* Correct rounding of |v| to a binary format of |p| significant bits,
 * smallest normal exponent |emin| and largest finite |maxf|, nearest even.
 * long double holds every int64/uint64 exactly on x86-64. */
static long double ref_round(long double v, int p, int emin, long double maxf) {
  if (isnan(v) || isinf(v) || v == 0) return v;
  int e;
  frexpl(v, &e); /* |v| in [2^(e-1), 2^e) */
  int q = (e - 1 < emin ? emin : e - 1) - (p - 1); /* exponent of one ulp */
  long double r = ldexpl(nearbyintl(ldexpl(v, -q)), q);
  if (fabsl(r) > maxf) return copysignl(INFINITY, v);
  return r;
}

static void ref_convert(int32_t sdt, int32_t ddt, const void *src, size_t i, void *out) {
  long double v;
  bool vnan = false;
  if (is_float(sdt)) {
    double d = tu_get_f64(sdt, src, i);
    vnan = isnan(d);
    v = d;
  } else if (dtype_class(sdt) == C_SINT) {
    v = (long double)tu_get_i64(sdt, src, i);
  } else {
    v = (long double)get_u(sdt, src, i);
  }
  if (ddt == ACCY_DTYPE_BOOL) {
    ((uint8_t *)out)[i] = vnan || v != 0;
    return;
  }
  if (is_float(ddt)) {
    long double r;
    switch (ddt) {
      case ACCY_DTYPE_F32: r = ref_round(v, 24, -126, FLT_MAX); break;
      case ACCY_DTYPE_F64: r = ref_round(v, 53, -1022, DBL_MAX); break;
      case ACCY_DTYPE_F16: r = ref_round(v, 11, -14, 65504.0L); break;
      default: r = ref_round(v, 8, -126, 0x1.fep127L); break;
    }
    tu_set_f64(ddt, out, i, (double)r); /* exact: r is representable */
    return;
  }
  if (is_float(sdt)) { /* float -> int: truncate, NaN 0, saturate */
    long double lo = (long double)int_min(ddt), hi = (long double)int_max(ddt);
    long double t = vnan ? 0 : truncl(v);
    if (t < lo) t = lo;
    if (t > hi) t = hi;
    tu_set_i64(ddt, out, i, t < 0 ? (int64_t)t : (int64_t)(uint64_t)t);
    return;
  }
  /* int -> int wraps */
  tu_set_i64(ddt, out, i, dtype_class(sdt) == C_SINT ? tu_get_i64(sdt, src, i)
                                                     : (int64_t)get_u(sdt, src, i));
}

/* ---- the op table --------------------------------------------------------------- */

typedef struct op_info {
  uint16_t op;
  unsigned classes; /* dtypes docs/ops.md allows */
  int64_t dir;      /* compare direction, else -1 */
} op_info;

static const op_info unary_binary_ops[] = {
    {ACCY_OP_ABS, C_NUM, -1},        {ACCY_OP_NEGATE, C_NUM, -1},
    {ACCY_OP_SIGN, C_NUM, -1},       {ACCY_OP_FLOOR, C_FLT, -1},
    {ACCY_OP_CEIL, C_FLT, -1},       {ACCY_OP_ROUND_NEAREST_EVEN, C_FLT, -1},
    {ACCY_OP_SQRT, C_FLT, -1},       {ACCY_OP_RSQRT, C_FLT, -1},
    {ACCY_OP_EXP, C_FLT, -1},        {ACCY_OP_EXPM1, C_FLT, -1},
    {ACCY_OP_LOG, C_FLT, -1},        {ACCY_OP_LOG1P, C_FLT, -1},
    {ACCY_OP_LOGISTIC, C_FLT, -1},   {ACCY_OP_TANH, C_FLT, -1},
    {ACCY_OP_ERF, C_FLT, -1},        {ACCY_OP_SIN, C_FLT, -1},
    {ACCY_OP_COS, C_FLT, -1},        {ACCY_OP_TAN, C_FLT, -1},
    {ACCY_OP_NOT, C_INT | C_BOOL, -1}, {ACCY_OP_IS_FINITE, C_FLT, -1},
    {ACCY_OP_ADD, C_ANY, -1},        {ACCY_OP_SUBTRACT, C_NUM, -1},
    {ACCY_OP_MULTIPLY, C_ANY, -1},   {ACCY_OP_DIVIDE, C_NUM, -1},
    {ACCY_OP_REMAINDER, C_NUM, -1},  {ACCY_OP_POWER, C_NUM, -1},
    {ACCY_OP_MAXIMUM, C_ANY, -1},    {ACCY_OP_MINIMUM, C_ANY, -1},
    {ACCY_OP_ATAN2, C_FLT, -1},      {ACCY_OP_AND, C_INT | C_BOOL, -1},
    {ACCY_OP_OR, C_INT | C_BOOL, -1}, {ACCY_OP_XOR, C_INT | C_BOOL, -1},
    {ACCY_OP_SHIFT_LEFT, C_INT, -1}, {ACCY_OP_SHIFT_RIGHT_ARITHMETIC, C_INT, -1},
    {ACCY_OP_SHIFT_RIGHT_LOGICAL, C_INT, -1},
    {ACCY_OP_COMPARE, C_ANY, ACCY_COMPARE_EQ}, {ACCY_OP_COMPARE, C_ANY, ACCY_COMPARE_NE},
    {ACCY_OP_COMPARE, C_ANY, ACCY_COMPARE_LT}, {ACCY_OP_COMPARE, C_ANY, ACCY_COMPARE_LE},
    {ACCY_OP_COMPARE, C_ANY, ACCY_COMPARE_GT}, {ACCY_OP_COMPARE, C_ANY, ACCY_COMPARE_GE},
};
#define N_OPS ((int)(sizeof unary_binary_ops / sizeof unary_binary_ops[0]))

static int n_operands(uint16_t op) {
  int lo, hi;
  ck_assert(accy__op_arity(op, &lo, &hi));
  return lo;
}

/* Random dims by variant: 0 rank 0; 1 some rank with a zero extent; 2 rank 1
 * long enough for the vector loop and a tail; 3 rank 2..8, small extents. */
static uint32_t random_shape(tu_rng *r, int variant, int64_t dims[ACCY_MAX_RANK]) {
  uint32_t rank;
  switch (variant) {
    case 0:
      return 0;
    case 1:
      rank = (uint32_t)tu_rng_range(r, 1, ACCY_MAX_RANK);
      for (uint32_t i = 0; i < rank; i++) dims[i] = tu_rng_range(r, 1, 3);
      dims[tu_rng_range(r, 0, rank - 1)] = 0;
      return rank;
    case 2:
      dims[0] = tu_rng_range(r, 1, 300);
      return 1;
    default:
      rank = (uint32_t)tu_rng_range(r, 2, ACCY_MAX_RANK);
      for (uint32_t i = 0; i < rank; i++) dims[i] = tu_rng_range(r, 1, rank <= 3 ? 9 : 3);
      return rank;
  }
}

static size_t elements_of(uint32_t rank, const int64_t *dims) {
  size_t n = 1;
  for (uint32_t i = 0; i < rank; i++) n *= (size_t)dims[i];
  return n;
}

/* ---- random tests against the reference ------------------------------------------ */

START_TEST(test_op_random) {
  const op_info *oi = &unary_binary_ops[_i];
  const char *opname = accy__op_name(oi->op);
  const int nops = n_operands(oi->op);
  tu_rng rng;
  tu_rng_seed(&rng, 0x5eed0000u + (uint64_t)_i);
  for (int di = 0; di < N_DTYPES; di++) {
    const int32_t dt = all_dtypes[di];
    if (!(oi->classes & dtype_class(dt))) continue;
    const int32_t rdt =
        oi->op == ACCY_OP_COMPARE || oi->op == ACCY_OP_IS_FINITE ? ACCY_DTYPE_BOOL : dt;
    for (int variant = 0; variant < 6; variant++) {
      int64_t dims[ACCY_MAX_RANK];
      uint32_t rank = random_shape(&rng, variant % 4, dims);
      size_t n = elements_of(rank, dims);
      accy__type ot[2] = {make_type(dt, rank, dims), make_type(dt, rank, dims)};
      accy__type rt = make_type(rdt, rank, dims);
      ew_case c;
      accy_status st = case_prepare(&c, oi->op, &rt, ot, (uint32_t)nops, &oi->dir,
                                    oi->dir >= 0 ? 1u : 0u);
      ck_assert_msg(st == ACCY_STATUS_OK, "%s %s: %s", opname, accy__dtype_name(dt),
                    accy__cause());
      ck_assert_uint_eq(c.k.n_items, n);
      ck_assert_uint_ge(c.k.item_cost, 1);
      ck_assert_ptr_nonnull(c.k.run);

      size_t ib = (n ? n : 1) * accy_dtype_size(dt), ob = (n ? n : 1) * accy_dtype_size(rdt);
      void *in0 = calloc(1, ib), *in1 = calloc(1, ib), *out = calloc(1, ob),
           *want = calloc(1, ob);
      ck_assert(in0 && in1 && out && want);
      /* Float ranges: a wide one now and then so that exp/pow overflow. */
      double range = variant >= 4 ? 100.0 : 0;
      tu_fill_random(&rng, dt, in0, n, true, range);
      tu_fill_random(&rng, dt, in1, n, true, range);
      inject_int_edges(&rng, dt, in0, n);
      inject_int_edges(&rng, dt, in1, n);
      if (oi->op == ACCY_OP_SHIFT_LEFT || oi->op == ACCY_OP_SHIFT_RIGHT_ARITHMETIC ||
          oi->op == ACCY_OP_SHIFT_RIGHT_LOGICAL) {
        /* Mostly in-range amounts, the width itself and just past it. */
        for (size_t i = 0; i < n; i++)
          if (tu_rng_next(&rng) % 4 != 0)
            tu_set_i64(dt, in1, i, tu_rng_range(&rng, 0, dtype_bits(dt) + 1));
      }
      if (oi->op == ACCY_OP_POWER && !is_float(dt)) {
        for (size_t i = 0; i < n; i++)
          if (tu_rng_next(&rng) % 2) tu_set_i64(dt, in1, i, tu_rng_range(&rng, -3, 70));
      }
      void *bufs[4] = {out, in0, in1, NULL};
      run_all_splits(&c.k, bufs, ob, &rng);

      for (size_t i = 0; i < n; i++) {
        if (is_float(dt))
          ref_float(oi->op, oi->dir, dt, rdt, tu_get_f64(dt, in0, i),
                    nops > 1 ? tu_get_f64(dt, in1, i) : 0.0, want, i);
        else
          ref_int(oi->op, oi->dir, dt, in0, nops > 1 ? in1 : NULL, i, want);
      }
      int ulps = 0;
      if (is_float(dt) && op_is_transcendental(oi->op))
        ulps = dt == ACCY_DTYPE_F32 || dt == ACCY_DTYPE_F64 ? 4 : 1;
      char what[96];
      snprintf(what, sizeof what, "%s(dir %lld) %s n=%zu", opname, (long long)oi->dir,
               accy__dtype_name(dt), n);
      expect_close(rdt, out, want, n, ulps, what);
      free(in0);
      free(in1);
      free(out);
      free(want);
      case_free(&c);
    }
  }
}
END_TEST

/* Every dtype docs/ops.md does not allow is refused at prepare. */
START_TEST(test_op_disallowed_dtypes) {
  const op_info *oi = &unary_binary_ops[_i];
  const int nops = n_operands(oi->op);
  int refused = 0;
  for (int di = 0; di < N_DTYPES; di++) {
    const int32_t dt = all_dtypes[di];
    if (oi->classes & dtype_class(dt)) continue;
    int64_t dims[1] = {5};
    accy__type ot[2] = {make_type(dt, 1, dims), make_type(dt, 1, dims)};
    int32_t rdt = oi->op == ACCY_OP_COMPARE || oi->op == ACCY_OP_IS_FINITE ? ACCY_DTYPE_BOOL : dt;
    accy__type rt = make_type(rdt, 1, dims);
    ew_case c;
    accy_status st =
        case_prepare(&c, oi->op, &rt, ot, (uint32_t)nops, &oi->dir, oi->dir >= 0 ? 1u : 0u);
    ck_assert_int_eq(st, ACCY_STATUS_COMPILE_FAILED);
    char expect[64];
    snprintf(expect, sizeof expect, "node %d (%s): no kernel for %s", nops,
             accy__op_name(oi->op), accy__dtype_name(dt));
    ck_assert_msg(strstr(accy__cause(), expect) != NULL, "cause '%s' lacks '%s'", accy__cause(),
                  expect);
    case_free(&c);
    refused++;
  }
  /* An op that does not take every dtype refused at least one. */
  if (oi->classes != C_ANY) ck_assert_int_gt(refused, 0);
}
END_TEST

/* ---- convert ---------------------------------------------------------------------- */

START_TEST(test_convert_random) {
  const int32_t sdt = all_dtypes[_i];
  tu_rng rng;
  tu_rng_seed(&rng, 0xc0417e00u + (uint64_t)_i);
  static const double ranges[] = {8, 300, 7e4, 5e9, 3e19, 1e300};
  for (int di = 0; di < N_DTYPES; di++) {
    const int32_t ddt = all_dtypes[di];
    if (LDBL_MANT_DIG < 64 && !is_float(sdt) && dtype_bits(sdt) == 64 && is_float(ddt))
      continue; /* the reference needs 64-bit integers exact in long double */
    for (int variant = 0; variant < 8; variant++) {
      int64_t dims[ACCY_MAX_RANK];
      uint32_t rank = random_shape(&rng, variant % 4, dims);
      size_t n = elements_of(rank, dims);
      accy__type ot = make_type(sdt, rank, dims), rt = make_type(ddt, rank, dims);
      ew_case c;
      accy_status st = case_prepare(&c, ACCY_OP_CONVERT, &rt, &ot, 1, NULL, 0);
      ck_assert_msg(st == ACCY_STATUS_OK, "%s", accy__cause());
      ck_assert_uint_eq(c.k.n_items, n);
      size_t ib = (n ? n : 1) * accy_dtype_size(sdt), ob = (n ? n : 1) * accy_dtype_size(ddt);
      void *in = calloc(1, ib), *out = calloc(1, ob), *want = calloc(1, ob);
      ck_assert(in && out && want);
      tu_fill_random(&rng, sdt, in, n, true, ranges[variant % 6]);
      inject_int_edges(&rng, sdt, in, n);
      if (is_float(sdt) && dtype_class(ddt) != C_FLT && ddt != ACCY_DTYPE_BOOL) {
        /* Values around the destination's limits. */
        for (size_t i = 0; i < n; i++) {
          if (tu_rng_next(&rng) % 3) continue;
          double lim = tu_rng_next(&rng) % 2 ? (double)int_max(ddt) : (double)int_min(ddt);
          double step = fmax(1.0, fabs(lim) * 0x1p-23);
          tu_set_f64(sdt, in, i, lim + (double)tu_rng_range(&rng, -3, 3) * step);
        }
      }
      void *bufs[4] = {out, in, NULL, NULL};
      run_all_splits(&c.k, bufs, ob, &rng);
      for (size_t i = 0; i < n; i++) ref_convert(sdt, ddt, in, i, want);
      char what[64];
      snprintf(what, sizeof what, "convert %s -> %s n=%zu", accy__dtype_name(sdt),
               accy__dtype_name(ddt), n);
      expect_close(ddt, out, want, n, 0, what);
      free(in);
      free(out);
      free(want);
      case_free(&c);
    }
  }
}
END_TEST

/* ---- select and clamp --------------------------------------------------------------- */

START_TEST(test_select_random) {
  const int32_t dt = all_dtypes[_i];
  tu_rng rng;
  tu_rng_seed(&rng, 0x5e1ec700u + (uint64_t)_i);
  for (int variant = 0; variant < 8; variant++) {
    int64_t dims[ACCY_MAX_RANK];
    uint32_t rank = random_shape(&rng, variant % 4, dims);
    size_t n = elements_of(rank, dims);
    bool scalar_pred = variant >= 4;
    accy__type ot[3] = {make_type(ACCY_DTYPE_BOOL, scalar_pred ? 0 : rank, dims),
                        make_type(dt, rank, dims), make_type(dt, rank, dims)};
    accy__type rt = make_type(dt, rank, dims);
    ew_case c;
    ck_assert_msg(case_prepare(&c, ACCY_OP_SELECT, &rt, ot, 3, NULL, 0) == ACCY_STATUS_OK, "%s",
                  accy__cause());
    ck_assert_uint_eq(c.k.n_items, n);
    size_t es = accy_dtype_size(dt), m = n ? n : 1;
    uint8_t *pred = calloc(1, m);
    void *t = calloc(m, es), *f = calloc(m, es), *out = calloc(m, es), *want = calloc(m, es);
    ck_assert(pred && t && f && out && want);
    tu_fill_random(&rng, ACCY_DTYPE_BOOL, pred, scalar_pred ? 1 : n, false, 0);
    if (scalar_pred) pred[0] = (uint8_t)(variant & 1);
    tu_fill_random(&rng, dt, t, n, true, 0);
    tu_fill_random(&rng, dt, f, n, true, 0);
    void *bufs[4] = {out, pred, t, f};
    run_all_splits(&c.k, bufs, m * es, &rng);
    for (size_t i = 0; i < n; i++) {
      bool p = pred[scalar_pred ? 0 : i] != 0;
      memcpy((char *)want + i * es, (char *)(p ? t : f) + i * es, es);
    }
    ck_assert_msg(memcmp(out, want, n * es) == 0, "select %s n=%zu scalar=%d",
                  accy__dtype_name(dt), n, scalar_pred);
    free(pred);
    free(t);
    free(f);
    free(out);
    free(want);
    case_free(&c);
  }
}
END_TEST

START_TEST(test_clamp_random) {
  const int32_t dt = all_dtypes[_i];
  tu_rng rng;
  tu_rng_seed(&rng, 0xc1a3b000u + (uint64_t)_i);
  if (dt == ACCY_DTYPE_BOOL) { /* not numeric: refused */
    int64_t dims[1] = {3};
    accy__type ot[3] = {make_type(dt, 1, dims), make_type(dt, 1, dims), make_type(dt, 1, dims)};
    ew_case c;
    ck_assert_int_eq(case_prepare(&c, ACCY_OP_CLAMP, &ot[0], ot, 3, NULL, 0),
                     ACCY_STATUS_COMPILE_FAILED);
    ck_assert_ptr_nonnull(strstr(accy__cause(), "(clamp): no kernel for bool"));
    case_free(&c);
    return;
  }
  for (int variant = 0; variant < 16; variant++) {
    int64_t dims[ACCY_MAX_RANK];
    uint32_t rank = random_shape(&rng, variant % 4, dims);
    size_t n = elements_of(rank, dims), m = n ? n : 1;
    bool lo_s = (variant >> 2) & 1, hi_s = (variant >> 3) & 1;
    accy__type ot[3] = {make_type(dt, lo_s ? 0 : rank, dims), make_type(dt, rank, dims),
                        make_type(dt, hi_s ? 0 : rank, dims)};
    accy__type rt = make_type(dt, rank, dims);
    ew_case c;
    ck_assert_msg(case_prepare(&c, ACCY_OP_CLAMP, &rt, ot, 3, NULL, 0) == ACCY_STATUS_OK, "%s",
                  accy__cause());
    size_t es = accy_dtype_size(dt);
    void *lo = calloc(m, es), *x = calloc(m, es), *hi = calloc(m, es), *out = calloc(m, es),
         *want = calloc(m, es);
    ck_assert(lo && x && hi && out && want);
    tu_fill_random(&rng, dt, lo, lo_s ? 1 : n, true, 0);
    tu_fill_random(&rng, dt, x, n, true, 0);
    tu_fill_random(&rng, dt, hi, hi_s ? 1 : n, true, 0);
    inject_int_edges(&rng, dt, x, n);
    void *bufs[4] = {out, lo, x, hi};
    run_all_splits(&c.k, bufs, m * es, &rng);
    for (size_t i = 0; i < n; i++) {
      size_t il = lo_s ? 0 : i, ih = hi_s ? 0 : i;
      if (is_float(dt)) {
        double r = ref_min(ref_max(tu_get_f64(dt, x, i), tu_get_f64(dt, lo, il)),
                           tu_get_f64(dt, hi, ih));
        tu_set_f64(dt, want, i, r);
      } else if (dtype_class(dt) == C_SINT) {
        int64_t v = tu_get_i64(dt, x, i), l = tu_get_i64(dt, lo, il), h = tu_get_i64(dt, hi, ih);
        v = v < l ? l : v;
        tu_set_i64(dt, want, i, v > h ? h : v);
      } else {
        uint64_t v = get_u(dt, x, i), l = get_u(dt, lo, il), h = get_u(dt, hi, ih);
        v = v < l ? l : v;
        tu_set_i64(dt, want, i, (int64_t)(v > h ? h : v));
      }
    }
    char what[64];
    snprintf(what, sizeof what, "clamp %s n=%zu lo_s=%d hi_s=%d", accy__dtype_name(dt), n, lo_s,
             hi_s);
    expect_close(dt, out, want, n, 0, what);
    free(lo);
    free(x);
    free(hi);
    free(out);
    free(want);
    case_free(&c);
  }
}
END_TEST

/* ---- fixed vectors for the edge cases docs/ops.md defines ------------------------ */

/* Runs |op| on rank-1 operands of |n| elements (rank 0 where ranks[i] is 0)
 * and writes the result to |out|. */
static void run_fixed(uint16_t op, int64_t dir, int32_t rdt, uint32_t nops, const int32_t *dts,
                      const uint32_t *ranks, size_t n, const void *const *ins, void *out) {
  int64_t dims[1] = {(int64_t)n};
  accy__type ot[3], rt = make_type(rdt, 1, dims);
  for (uint32_t i = 0; i < nops; i++) ot[i] = make_type(dts[i], ranks ? ranks[i] : 1, dims);
  ew_case c;
  accy_status st = case_prepare(&c, op, &rt, ot, nops, &dir, dir >= 0 ? 1u : 0u);
  ck_assert_msg(st == ACCY_STATUS_OK, "%s", accy__cause());
  void *bufs[4] = {out, NULL, NULL, NULL};
  for (uint32_t i = 0; i < nops; i++) bufs[1 + i] = (void *)ins[i];
  c.k.run(&c.k, (void *const *)bufs, 0, c.k.n_items);
  case_free(&c);
}

static void run_binary(uint16_t op, int32_t dt, size_t n, const void *a, const void *b,
                       void *out) {
  int32_t dts[2] = {dt, dt};
  const void *ins[2] = {a, b};
  run_fixed(op, -1, dt, 2, dts, NULL, n, ins, out);
}

START_TEST(test_int_division_edges) {
  const int32_t a[] = {7, -7, INT32_MIN, INT32_MIN, 5, 0, -5, 7};
  const int32_t b[] = {2, 2, -1, 0, 0, 0, -1, -2};
  const int32_t quo[] = {3, -3, INT32_MIN, -1, -1, -1, 5, -3};
  const int32_t rem[] = {1, -1, 0, INT32_MIN, 5, 0, 0, 1};
  int32_t out[8];
  run_binary(ACCY_OP_DIVIDE, ACCY_DTYPE_I32, 8, a, b, out);
  ck_assert_mem_eq(out, quo, sizeof quo);
  run_binary(ACCY_OP_REMAINDER, ACCY_DTYPE_I32, 8, a, b, out);
  ck_assert_mem_eq(out, rem, sizeof rem);

  const int8_t a8[] = {INT8_MIN, INT8_MIN, INT8_MIN, 100};
  const int8_t b8[] = {-1, 0, 3, -100};
  const int8_t quo8[] = {INT8_MIN, -1, -42, -1}, rem8[] = {0, INT8_MIN, -2, 0};
  int8_t out8[4];
  run_binary(ACCY_OP_DIVIDE, ACCY_DTYPE_I8, 4, a8, b8, out8);
  ck_assert_mem_eq(out8, quo8, sizeof quo8);
  run_binary(ACCY_OP_REMAINDER, ACCY_DTYPE_I8, 4, a8, b8, out8);
  ck_assert_mem_eq(out8, rem8, sizeof rem8);

  const uint64_t ua[] = {9, UINT64_MAX, 0}, ub[] = {0, 2, 0};
  const uint64_t uquo[] = {UINT64_MAX, UINT64_MAX / 2, UINT64_MAX}, urem[] = {9, 1, 0};
  uint64_t uout[3];
  run_binary(ACCY_OP_DIVIDE, ACCY_DTYPE_U64, 3, ua, ub, uout);
  ck_assert_mem_eq(uout, uquo, sizeof uquo);
  run_binary(ACCY_OP_REMAINDER, ACCY_DTYPE_U64, 3, ua, ub, uout);
  ck_assert_mem_eq(uout, urem, sizeof urem);
}
END_TEST

START_TEST(test_int_power_and_wrap_edges) {
  const int32_t a[] = {2, 2, 2, -1, -1, 1, 3, 0, 0, -2, 7, -3};
  const int32_t b[] = {10, 31, 32, -3, -4, -5, -1, 0, -1, 3, 0, INT32_MIN};
  const int32_t want[] = {1024, INT32_MIN, 0, -1, 1, 1, 0, 1, 0, -8, 1, 0};
  int32_t out[12];
  run_binary(ACCY_OP_POWER, ACCY_DTYPE_I32, 12, a, b, out);
  ck_assert_mem_eq(out, want, sizeof want);

  /* 3^5 = 243 wraps to -13 in i8; u8 255^2 = 65025 = 1 mod 256. */
  const int8_t a8[] = {3, INT8_MIN}, b8[] = {5, 2};
  const int8_t want8[] = {-13, 0};
  int8_t out8[2];
  run_binary(ACCY_OP_POWER, ACCY_DTYPE_I8, 2, a8, b8, out8);
  ck_assert_mem_eq(out8, want8, sizeof want8);
  const uint8_t ua[] = {255, 2}, ub[] = {2, 200};
  const uint8_t uwant[] = {1, 0};
  uint8_t uout[2];
  run_binary(ACCY_OP_POWER, ACCY_DTYPE_U8, 2, ua, ub, uout);
  ck_assert_mem_eq(uout, uwant, sizeof uwant);

  /* abs / negate of INT_MIN wrap; u16 multiply must not overflow int. */
  const int8_t m8[] = {INT8_MIN, -5, 5};
  int8_t o8[3];
  int32_t d8 = ACCY_DTYPE_I8;
  const void *ins[1] = {m8};
  run_fixed(ACCY_OP_ABS, -1, ACCY_DTYPE_I8, 1, &d8, NULL, 3, ins, o8);
  ck_assert_int_eq(o8[0], INT8_MIN);
  ck_assert_int_eq(o8[1], 5);
  run_fixed(ACCY_OP_NEGATE, -1, ACCY_DTYPE_I8, 1, &d8, NULL, 3, ins, o8);
  ck_assert_int_eq(o8[0], INT8_MIN);
  ck_assert_int_eq(o8[2], -5);
  const uint16_t x16[] = {65535}, y16[] = {65535};
  uint16_t o16[1];
  run_binary(ACCY_OP_MULTIPLY, ACCY_DTYPE_U16, 1, x16, y16, o16);
  ck_assert_uint_eq(o16[0], 1);
}
END_TEST

START_TEST(test_shift_edges) {
  const int8_t a[] = {INT8_MIN, INT8_MIN, 64, 1, 1, -1, -1, 1};
  const int8_t b[] = {7, 8, 100, 7, 8, 4, -1, -1};
  int8_t out[8];
  const int8_t sra[] = {-1, -1, 0, 0, 0, -1, -1, 0};
  run_binary(ACCY_OP_SHIFT_RIGHT_ARITHMETIC, ACCY_DTYPE_I8, 8, a, b, out);
  ck_assert_mem_eq(out, sra, sizeof sra);
  const int8_t shl[] = {0, 0, 0, INT8_MIN, 0, -16, 0, 0};
  run_binary(ACCY_OP_SHIFT_LEFT, ACCY_DTYPE_I8, 8, a, b, out);
  ck_assert_mem_eq(out, shl, sizeof shl);
  const int8_t srl[] = {1, 0, 0, 0, 0, 0x0f, 0, 0};
  run_binary(ACCY_OP_SHIFT_RIGHT_LOGICAL, ACCY_DTYPE_I8, 8, a, b, out);
  ck_assert_mem_eq(out, srl, sizeof srl);

  /* Unsigned arithmetic shift: the top bit is the sign. */
  const uint8_t ua[] = {0x80, 0x80, 0x40, 0x81}, ub[] = {3, 9, 200, 1};
  const uint8_t usra[] = {0xf0, 0xff, 0x00, 0xc0};
  uint8_t uout[4];
  run_binary(ACCY_OP_SHIFT_RIGHT_ARITHMETIC, ACCY_DTYPE_U8, 4, ua, ub, uout);
  ck_assert_mem_eq(uout, usra, sizeof usra);
  const uint64_t wa[] = {UINT64_C(1) << 63, 1, 5}, wb[] = {63, 64, UINT64_MAX};
  const uint64_t wsra[] = {UINT64_MAX, 0, 0}, wshl[] = {0, 0, 0};
  uint64_t wout[3];
  run_binary(ACCY_OP_SHIFT_RIGHT_ARITHMETIC, ACCY_DTYPE_U64, 3, wa, wb, wout);
  ck_assert_mem_eq(wout, wsra, sizeof wsra);
  run_binary(ACCY_OP_SHIFT_LEFT, ACCY_DTYPE_U64, 3, wa, wb, wout);
  ck_assert_mem_eq(wout, wshl, sizeof wshl);
}
END_TEST

START_TEST(test_float_max_min_compare_edges) {
  const float a[] = {-0.0f, 0.0f, NAN, 1.0f, -INFINITY, 2.0f};
  const float b[] = {0.0f, -0.0f, 1.0f, NAN, 3.0f, 2.0f};
  float out[6];
  run_binary(ACCY_OP_MAXIMUM, ACCY_DTYPE_F32, 6, a, b, out);
  ck_assert(out[0] == 0 && !signbit(out[0]));
  ck_assert(out[1] == 0 && !signbit(out[1]));
  ck_assert(isnan(out[2]) && isnan(out[3]));
  ck_assert(out[4] == 3.0f && out[5] == 2.0f);
  run_binary(ACCY_OP_MINIMUM, ACCY_DTYPE_F32, 6, a, b, out);
  ck_assert(out[0] == 0 && signbit(out[0]));
  ck_assert(out[1] == 0 && signbit(out[1]));
  ck_assert(isnan(out[2]) && isnan(out[3]));
  ck_assert(out[4] == -INFINITY);

  int32_t dts[2] = {ACCY_DTYPE_F32, ACCY_DTYPE_F32};
  const void *ins[2] = {a, b};
  uint8_t c[6];
  run_fixed(ACCY_OP_COMPARE, ACCY_COMPARE_EQ, ACCY_DTYPE_BOOL, 2, dts, NULL, 6, ins, c);
  const uint8_t eq[] = {1, 1, 0, 0, 0, 1};
  ck_assert_mem_eq(c, eq, sizeof eq);
  run_fixed(ACCY_OP_COMPARE, ACCY_COMPARE_NE, ACCY_DTYPE_BOOL, 2, dts, NULL, 6, ins, c);
  const uint8_t ne[] = {0, 0, 1, 1, 1, 0};
  ck_assert_mem_eq(c, ne, sizeof ne);
  run_fixed(ACCY_OP_COMPARE, ACCY_COMPARE_GE, ACCY_DTYPE_BOOL, 2, dts, NULL, 6, ins, c);
  const uint8_t ge[] = {1, 1, 0, 0, 0, 1};
  ck_assert_mem_eq(c, ge, sizeof ge);

  /* Bool compare: false < true. */
  const uint8_t ba[] = {0, 1, 1, 0}, bb[] = {1, 0, 1, 0};
  int32_t bd[2] = {ACCY_DTYPE_BOOL, ACCY_DTYPE_BOOL};
  const void *bins[2] = {ba, bb};
  run_fixed(ACCY_OP_COMPARE, ACCY_COMPARE_LT, ACCY_DTYPE_BOOL, 2, bd, NULL, 4, bins, c);
  const uint8_t lt[] = {1, 0, 0, 0};
  ck_assert_mem_eq(c, lt, sizeof lt);
}
END_TEST

START_TEST(test_float_unary_edges) {
  const float x[] = {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 2.4f, -0.0f, NAN};
  float out[8];
  int32_t d = ACCY_DTYPE_F32;
  const void *ins[1] = {x};
  run_fixed(ACCY_OP_ROUND_NEAREST_EVEN, -1, d, 1, &d, NULL, 8, ins, out);
  const float rne[] = {0.0f, 2.0f, 2.0f, -0.0f, -2.0f, 2.0f, -0.0f};
  ck_assert_mem_eq(out, rne, sizeof rne);
  ck_assert(isnan(out[7]));
  run_fixed(ACCY_OP_SIGN, -1, d, 1, &d, NULL, 8, ins, out);
  ck_assert(out[0] == 1.0f && out[3] == -1.0f);
  ck_assert(out[6] == 0 && signbit(out[6]));
  ck_assert(isnan(out[7]));

  const float y[] = {0.0f, -1.0f, -100.0f, 100.0f, -INFINITY, INFINITY};
  const void *yin[1] = {y};
  run_fixed(ACCY_OP_RSQRT, -1, d, 1, &d, NULL, 6, yin, out);
  ck_assert(out[0] == INFINITY && isnan(out[1]));
  run_fixed(ACCY_OP_LOG, -1, d, 1, &d, NULL, 6, yin, out);
  ck_assert(out[0] == -INFINITY && isnan(out[1]));
  run_fixed(ACCY_OP_LOGISTIC, -1, d, 1, &d, NULL, 6, yin, out);
  /* 1 / (1 + e^100) is about 3.7e-44, a subnormal float, not 0. */
  ck_assert(out[2] > 3.0e-44f && out[2] < 4.5e-44f);
  ck_assert(out[3] == 1.0f && out[4] == 0.0f && out[5] == 1.0f);

  const float z[] = {1.0f, INFINITY, -INFINITY, NAN, FLT_MAX, 0x1p-149f};
  const void *zin[1] = {z};
  uint8_t fin[6];
  run_fixed(ACCY_OP_IS_FINITE, -1, ACCY_DTYPE_BOOL, 1, &d, NULL, 6, zin, fin);
  const uint8_t fin_want[] = {1, 0, 0, 0, 1, 1};
  ck_assert_mem_eq(fin, fin_want, sizeof fin_want);

  /* f16 computes in f32 and rounds once: 1 + 2^-11 is exact in f32 and a
   * tie in f16. */
  const uint16_t h1[] = {0x3c00, 0x7bff}, h2[] = {0x1000, 0x7bff};
  uint16_t hout[2];
  run_binary(ACCY_OP_ADD, ACCY_DTYPE_F16, 2, h1, h2, hout);
  ck_assert_uint_eq(hout[0], 0x3c00); /* 1 + 2^-11: a tie, to even */
  ck_assert_uint_eq(hout[1], 0x7c00); /* 65504 + 65504 overflows */
}
END_TEST

START_TEST(test_convert_edges) {
  int32_t sd = ACCY_DTYPE_F32;
  const float f[] = {NAN, INFINITY, -INFINITY, 2147483648.0f, -2147483904.0f, 2147483520.0f,
                     -1.9f, 1.9f, -0.0f};
  const int32_t fi[] = {0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 2147483520, -1, 1, 0};
  int32_t oi[9];
  const void *fin[1] = {f};
  run_fixed(ACCY_OP_CONVERT, -1, ACCY_DTYPE_I32, 1, &sd, NULL, 9, fin, oi);
  ck_assert_mem_eq(oi, fi, sizeof fi);

  const float g[] = {-0.5f, 255.9f, 256.0f, -300.0f, NAN};
  const uint8_t gu[] = {0, 255, 255, 0, 0};
  uint8_t ou[5];
  const void *gin[1] = {g};
  run_fixed(ACCY_OP_CONVERT, -1, ACCY_DTYPE_U8, 1, &sd, NULL, 5, gin, ou);
  ck_assert_mem_eq(ou, gu, sizeof gu);
  const uint8_t gb[] = {1, 1, 1, 1, 1};
  run_fixed(ACCY_OP_CONVERT, -1, ACCY_DTYPE_BOOL, 1, &sd, NULL, 5, gin, ou);
  ck_assert_mem_eq(ou, gb, sizeof gb); /* NaN -> true */

  int32_t dd = ACCY_DTYPE_F64;
  const double d[] = {1.8446744073709552e19, -1.0, 9223372036854774784.0, 1e300};
  const uint64_t du[] = {UINT64_MAX, 0, UINT64_C(9223372036854774784), UINT64_MAX};
  uint64_t odu[4];
  const void *din[1] = {d};
  run_fixed(ACCY_OP_CONVERT, -1, ACCY_DTYPE_U64, 1, &dd, NULL, 4, din, odu);
  ck_assert_mem_eq(odu, du, sizeof du);
  const int64_t di[] = {INT64_MAX, -1, INT64_C(9223372036854774784), INT64_MAX};
  int64_t odi[4];
  run_fixed(ACCY_OP_CONVERT, -1, ACCY_DTYPE_I64, 1, &dd, NULL, 4, din, odi);
  ck_assert_mem_eq(odi, di, sizeof di);

  /* Double rounding: 1 + 2^-11 + 2^-40 is above the f16 midpoint between 1
   * and 1 + 2^-10, but rounds to that midpoint as an f32 first. */
  const double h[] = {1.0 + 0x1p-11 + 0x1p-40, 65519.0, 65520.0, 0x1p-25 + 0x1p-60};
  uint16_t oh[4];
  const void *hin[1] = {h};
  run_fixed(ACCY_OP_CONVERT, -1, ACCY_DTYPE_F16, 1, &dd, NULL, 4, hin, oh);
  ck_assert_uint_eq(oh[0], 0x3c01);
  ck_assert_uint_eq(oh[1], 0x7bff);
  ck_assert_uint_eq(oh[2], 0x7c00);
  ck_assert_uint_eq(oh[3], 0x0001); /* just above half the smallest subnormal */

  int32_t id = ACCY_DTYPE_I64;
  const int64_t iv[] = {(INT64_C(1) << 24) + (INT64_C(1) << 16) + 1, INT64_MIN, -3};
  uint16_t ob[3];
  const void *iin[1] = {iv};
  run_fixed(ACCY_OP_CONVERT, -1, ACCY_DTYPE_BF16, 1, &id, NULL, 3, iin, ob);
  ck_assert_uint_eq(ob[0], 0x4b81); /* 2^24 + 2^17, not the f32 tie's even 2^24 */
  ck_assert_uint_eq(ob[1], 0xdf00); /* -2^63 */
  ck_assert_uint_eq(ob[2], 0xc040); /* -3 */

  int32_t ud = ACCY_DTYPE_U64;
  const uint64_t uv[] = {UINT64_MAX, (UINT64_C(1) << 63) + 1};
  float of[2];
  const void *uin[1] = {uv};
  run_fixed(ACCY_OP_CONVERT, -1, ACCY_DTYPE_F32, 1, &ud, NULL, 2, uin, of);
  ck_assert(of[0] == 0x1p64f && of[1] == 0x1p63f);

  /* int -> int wraps; bool -> float is 0/1. */
  int32_t i32d = ACCY_DTYPE_I32;
  const int32_t w[] = {300, -1, 128};
  int8_t ow[3];
  const void *win[1] = {w};
  run_fixed(ACCY_OP_CONVERT, -1, ACCY_DTYPE_I8, 1, &i32d, NULL, 3, win, ow);
  ck_assert(ow[0] == 44 && ow[1] == -1 && ow[2] == -128);
  int32_t bd = ACCY_DTYPE_BOOL;
  const uint8_t bv[] = {0, 1};
  double obd[2];
  const void *bin[1] = {bv};
  run_fixed(ACCY_OP_CONVERT, -1, ACCY_DTYPE_F64, 1, &bd, NULL, 2, bin, obd);
  ck_assert(obd[0] == 0.0 && obd[1] == 1.0);
}
END_TEST

START_TEST(test_select_clamp_scalars) {
  /* Scalar bounds with NaN propagating through clamp. */
  const float lo[] = {-1.0f}, hi[] = {1.0f};
  const float x[] = {-5.0f, 0.25f, 5.0f, NAN, -0.0f};
  int32_t dts[3] = {ACCY_DTYPE_F32, ACCY_DTYPE_F32, ACCY_DTYPE_F32};
  uint32_t ranks[3] = {0, 1, 0};
  const void *ins[3] = {lo, x, hi};
  float out[5];
  run_fixed(ACCY_OP_CLAMP, -1, ACCY_DTYPE_F32, 3, dts, ranks, 5, ins, out);
  ck_assert(out[0] == -1.0f && out[1] == 0.25f && out[2] == 1.0f && isnan(out[3]));
  ck_assert(out[4] == 0 && signbit(out[4]));
  const float nan_lo[] = {NAN};
  const void *ins2[3] = {nan_lo, x, hi};
  run_fixed(ACCY_OP_CLAMP, -1, ACCY_DTYPE_F32, 3, dts, ranks, 5, ins2, out);
  for (int i = 0; i < 5; i++) ck_assert(isnan(out[i]));

  /* Scalar pred picks a whole operand. */
  const uint8_t pt[] = {1}, pf[] = {0};
  const int64_t t[] = {1, 2, 3}, f[] = {-1, -2, -3};
  int32_t sd[3] = {ACCY_DTYPE_BOOL, ACCY_DTYPE_I64, ACCY_DTYPE_I64};
  uint32_t sr[3] = {0, 1, 1};
  int64_t o[3];
  const void *s1[3] = {pt, t, f}, *s2[3] = {pf, t, f};
  run_fixed(ACCY_OP_SELECT, -1, ACCY_DTYPE_I64, 3, sd, sr, 3, s1, o);
  ck_assert_mem_eq(o, t, sizeof t);
  run_fixed(ACCY_OP_SELECT, -1, ACCY_DTYPE_I64, 3, sd, sr, 3, s2, o);
  ck_assert_mem_eq(o, f, sizeof f);
}
END_TEST

/* ---- prepare refusals ----------------------------------------------------------------- */

START_TEST(test_prepare_refusals) {
  int64_t dims[1] = {4}, dims3[1] = {3};
  accy__type f4 = make_type(ACCY_DTYPE_F32, 1, dims), f3 = make_type(ACCY_DTYPE_F32, 1, dims3);
  accy__type i4 = make_type(ACCY_DTYPE_I32, 1, dims), b4 = make_type(ACCY_DTYPE_BOOL, 1, dims);
  ew_case c;

  /* compare with a direction out of range */
  accy__type ops[3] = {f4, f4, f4};
  int64_t dir = 6;
  ck_assert_int_eq(case_prepare(&c, ACCY_OP_COMPARE, &b4, ops, 2, &dir, 1),
                   ACCY_STATUS_COMPILE_FAILED);
  ck_assert_ptr_nonnull(strstr(accy__cause(), "bad direction 6"));
  case_free(&c);

  /* operands that disagree in dtype or element count */
  accy__type mixed[2] = {f4, i4};
  ck_assert_int_eq(case_prepare(&c, ACCY_OP_ADD, &f4, mixed, 2, NULL, 0),
                   ACCY_STATUS_COMPILE_FAILED);
  ck_assert_ptr_nonnull(strstr(accy__cause(), "operand 1 has dtype i32, expected f32"));
  case_free(&c);
  accy__type short_op[2] = {f4, f3};
  ck_assert_int_eq(case_prepare(&c, ACCY_OP_MULTIPLY, &f4, short_op, 2, NULL, 0),
                   ACCY_STATUS_COMPILE_FAILED);
  ck_assert_ptr_nonnull(strstr(accy__cause(), "operand 1 has 3 elements, result has 4"));
  case_free(&c);

  /* a non-scalar bound of the wrong size, and a result of the wrong dtype */
  accy__type clampops[3] = {f3, f4, f4};
  ck_assert_int_eq(case_prepare(&c, ACCY_OP_CLAMP, &f4, clampops, 3, NULL, 0),
                   ACCY_STATUS_COMPILE_FAILED);
  ck_assert_ptr_nonnull(strstr(accy__cause(), "(clamp): operand 0 has 3 elements"));
  case_free(&c);
  ck_assert_int_eq(case_prepare(&c, ACCY_OP_IS_FINITE, &f4, ops, 1, NULL, 0),
                   ACCY_STATUS_COMPILE_FAILED);
  ck_assert_ptr_nonnull(strstr(accy__cause(), "(is_finite): result dtype f32, expected bool"));
  case_free(&c);

  /* select's pred must be bool */
  accy__type selops[3] = {i4, f4, f4};
  ck_assert_int_eq(case_prepare(&c, ACCY_OP_SELECT, &f4, selops, 3, NULL, 0),
                   ACCY_STATUS_COMPILE_FAILED);
  ck_assert_ptr_nonnull(strstr(accy__cause(), "operand 0 has dtype i32, expected bool"));
  case_free(&c);

  /* an invalid dtype number */
  accy__type bad = make_type(0, 1, dims);
  ck_assert_int_eq(case_prepare(&c, ACCY_OP_CONVERT, &f4, &bad, 1, NULL, 0),
                   ACCY_STATUS_COMPILE_FAILED);
  ck_assert_ptr_nonnull(strstr(accy__cause(), "(convert): no kernel for dtype 0 to 1"));
  case_free(&c);
}
END_TEST

static Suite *elementwise_suite(void) {
  Suite *s = suite_create("elementwise");
  TCase *tc = tcase_create("random");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_op_random, 0, N_OPS);
  tcase_add_loop_test(tc, test_op_disallowed_dtypes, 0, N_OPS);
  tcase_add_loop_test(tc, test_convert_random, 0, N_DTYPES);
  tcase_add_loop_test(tc, test_select_random, 0, N_DTYPES);
  tcase_add_loop_test(tc, test_clamp_random, 0, N_DTYPES);
  suite_add_tcase(s, tc);
  TCase *fx = tcase_create("edges");
  tcase_add_test(fx, test_int_division_edges);
  tcase_add_test(fx, test_int_power_and_wrap_edges);
  tcase_add_test(fx, test_shift_edges);
  tcase_add_test(fx, test_float_max_min_compare_edges);
  tcase_add_test(fx, test_float_unary_edges);
  tcase_add_test(fx, test_convert_edges);
  tcase_add_test(fx, test_select_clamp_scalars);
  tcase_add_test(fx, test_prepare_refusals);
  suite_add_tcase(s, fx);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(elementwise_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
