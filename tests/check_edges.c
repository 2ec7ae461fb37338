/* tests/check_edges.c: numerical edge cases end to end, through the public
 * API (builder -> compile -> invoke), at 1 and 2 threads. Every case has the
 * result docs/ops.md defines, and none may crash or trap (the ASan+UBSan CI
 * job runs this suite with -fno-sanitize-recover and float-cast-overflow):
 *  - integer divide and remainder by zero and INT_MIN / -1, every int dtype;
 *  - shifts by amounts >= the bit width (and "negative" amounts, read as
 *    unsigned);
 *  - float -> int conversion of NaN, +-Inf and out-of-range values, from
 *    every float dtype to every int dtype and bool;
 *  - gather, dynamic_slice and dynamic_update_slice indices out of range;
 *  - empty tensors everywhere, with NULL buffers of size 0;
 *  - the per-launch scratch limit (COMPILE_FAILED naming the limit).
 * Sessions are created in test bodies only (Check forks). */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accy/accy.h"
#include "src/base/limits.h"
#include "tests/testutil.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- helpers ---------------------------------------------------------------- */

#define OK(expr)                                                                        \
  do {                                                                                  \
    accy_status ok_s_ = (expr);                                                         \
    ck_assert_msg(ok_s_ == ACCY_STATUS_OK, "%s: %s: %s", #expr, accy_status_name(ok_s_), \
                  accy_session_last_cause(NULL));                                       \
  } while (0)

static accy_session *session(uint32_t threads) {
  accy_session_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.num_threads = threads;
  accy_session *s = NULL;
  OK(accy_session_create(&o, &s));
  return s;
}

static accy_builder *builder(void) {
  accy_builder *b = NULL;
  OK(accy_builder_create(&b));
  return b;
}

/* Finishes |b|, compiles it in |s| and destroys the builder. */
static accy_handle compile_builder(accy_session *s, accy_builder *b) {
  void *bytes = NULL;
  size_t size = 0;
  OK(accy_builder_finish(b, &bytes, &size));
  accy_builder_destroy(b);
  accy_handle h;
  OK(accy_session_compile(s, bytes, size, &h));
  accy_free(bytes);
  return h;
}

static accy_handle compile_builder_bytes_ok(accy_session *s, const void *bytes, size_t size) {
  accy_handle h;
  OK(accy_session_compile(s, bytes, size, &h));
  return h;
}

/* Allocates |n| bytes, 64-byte aligned; NULL when n is 0 (the API allows a
 * NULL buffer of size 0, and the empty-tensor tests rely on it). */
static void *buf(size_t n) {
  if (n == 0) return NULL;
  void *p = aligned_alloc(64, (n + 63) / 64 * 64);
  ck_assert_ptr_nonnull(p);
  memset(p, 0xA5, n);
  return p;
}

static uint32_t param(accy_builder *b, const char *name, int32_t dtype, uint32_t rank,
                      const int64_t *dims) {
  uint32_t id;
  OK(accy_builder_parameter(b, name, dtype, rank, dims, &id));
  return id;
}

static const int32_t kIntTypes[] = {ACCY_DTYPE_I8,  ACCY_DTYPE_I16, ACCY_DTYPE_I32, ACCY_DTYPE_I64,
                                    ACCY_DTYPE_U8,  ACCY_DTYPE_U16, ACCY_DTYPE_U32, ACCY_DTYPE_U64};
static const int32_t kFloatTypes[] = {ACCY_DTYPE_F32, ACCY_DTYPE_F64, ACCY_DTYPE_F16,
                                      ACCY_DTYPE_BF16};

static bool is_signed(int32_t dt) {
  return dt == ACCY_DTYPE_I8 || dt == ACCY_DTYPE_I16 || dt == ACCY_DTYPE_I32 ||
         dt == ACCY_DTYPE_I64;
}

static void assert_same(int32_t dtype, const void *got, const void *want, size_t n,
                        const char *what) {
  size_t at = tu_first_difference(dtype, got, want, n);
  ck_assert_msg(at == SIZE_MAX, "%s (%s): element %zu differs: got %lld, want %lld", what,
                accy_dtype_name(dtype), at, at == SIZE_MAX ? 0 : (long long)tu_get_i64(dtype, got, at),
                at == SIZE_MAX ? 0 : (long long)tu_get_i64(dtype, want, at));
}

/* ---- integer divide, remainder and shifts ------------------------------------------ */

/* Values every int dtype gets (wrapped to its width by tu_set_i64): zero,
 * ones, extremes of every width, and shift amounts around every width. */
static const int64_t kIntEdges[] = {
    0,   1,   -1,  2,   -2,  3,         -7,        7,         8,          15,
    16,  17,  31,  32,  33,  63,        64,        65,        127,        128,
    -128, 255, 256, -129, 32767, -32768, 65535,  INT32_MAX, INT32_MIN, UINT32_MAX,
    INT64_MAX, INT64_MIN, INT64_MIN + 1, 1000, -1000};
#define N_EDGES ARRAY_SIZE(kIntEdges)
/* Every pair, repeated so that the op is tiled and split across threads. */
#define INT_REPEAT 24
#define INT_N (N_EDGES * N_EDGES * INT_REPEAT)

static int64_t int_expect(accy_op op, int32_t dt, int64_t a, int64_t b) {
  unsigned w = 8u * (unsigned)accy_dtype_size(dt);
  uint64_t mask = w == 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1;
  uint64_t ua = (uint64_t)a & mask, ub = (uint64_t)b & mask;
  bool sgn = is_signed(dt);
  int64_t min = sgn ? (w == 64 ? INT64_MIN : -(INT64_C(1) << (w - 1))) : 0;
  uint64_t top = (ua >> (w - 1)) & 1;
  switch (op) {
    case ACCY_OP_DIVIDE:
      if (sgn) {
        if (b == 0) return -1;
        if (a == min && b == -1) return min;
        return a / b;
      }
      return ub == 0 ? (int64_t)mask : (int64_t)(ua / ub);
    case ACCY_OP_REMAINDER:
      if (sgn) {
        if (b == 0) return a;
        if (a == min && b == -1) return 0;
        return a % b;
      }
      return ub == 0 ? (int64_t)ua : (int64_t)(ua % ub);
    case ACCY_OP_SHIFT_LEFT: /* the amount is read as unsigned */
      return ub >= w ? 0 : (int64_t)(ua << ub);
    case ACCY_OP_SHIFT_RIGHT_LOGICAL:
      return ub >= w ? 0 : (int64_t)(ua >> ub);
    case ACCY_OP_SHIFT_RIGHT_ARITHMETIC:
      if (ub >= w) return top ? -1 : 0;
      if (ub == 0) return (int64_t)ua;
      return (int64_t)((ua >> ub) | (top ? (mask << (w - ub)) & mask : 0));
    default:
      ck_abort_msg("unexpected op %d", (int)op);
      return 0;
  }
}

static const accy_op kIntOps[] = {ACCY_OP_DIVIDE, ACCY_OP_REMAINDER, ACCY_OP_SHIFT_LEFT,
                                  ACCY_OP_SHIFT_RIGHT_LOGICAL, ACCY_OP_SHIFT_RIGHT_ARITHMETIC};
static const char *const kIntOpNames[] = {"divide", "remainder", "shift_left",
                                          "shift_right_logical", "shift_right_arithmetic"};

/* _i = dtype index * 2 + (threads - 1). One program per dtype computes all
 * five ops on every pair of edge values. */
START_TEST(test_integer_division_and_shifts) {
  int32_t dt = kIntTypes[_i / 2];
  accy_session *s = session((uint32_t)(_i % 2) + 1);
  accy_builder *b = builder();
  int64_t dims[1] = {(int64_t)INT_N};
  uint32_t x = param(b, "x", dt, 1, dims), y = param(b, "y", dt, 1, dims);
  for (size_t k = 0; k < ARRAY_SIZE(kIntOps); k++) {
    uint32_t r;
    OK(accy_builder_binary(b, kIntOps[k], x, y, &r));
    char name[16];
    snprintf(name, sizeof name, "r%zu", k);
    OK(accy_builder_output(b, r, name));
  }
  accy_handle h = compile_builder(s, b);

  size_t es = accy_dtype_size(dt), bytes = INT_N * es;
  void *xb = buf(bytes), *yb = buf(bytes), *want = buf(bytes);
  for (size_t i = 0; i < INT_N; i++) {
    size_t p = i % (N_EDGES * N_EDGES);
    tu_set_i64(dt, xb, i, kIntEdges[p / N_EDGES]);
    tu_set_i64(dt, yb, i, kIntEdges[p % N_EDGES]);
  }
  void *out[ARRAY_SIZE(kIntOps)];
  accy_output outs[ARRAY_SIZE(kIntOps)];
  for (size_t k = 0; k < ARRAY_SIZE(kIntOps); k++) {
    out[k] = buf(bytes);
    outs[k] = (accy_output){out[k], bytes};
  }
  accy_input ins[2] = {{xb, bytes}, {yb, bytes}};
  OK(accy_session_invoke(s, h, ins, 2, outs, ARRAY_SIZE(kIntOps)));
  for (size_t k = 0; k < ARRAY_SIZE(kIntOps); k++) {
    for (size_t i = 0; i < INT_N; i++)
      tu_set_i64(dt, want, i,
                 int_expect(kIntOps[k], dt, tu_get_i64(dt, xb, i), tu_get_i64(dt, yb, i)));
    assert_same(dt, out[k], want, INT_N, kIntOpNames[k]);
    free(out[k]);
  }
  free(xb);
  free(yb);
  free(want);
  accy_session_destroy(s);
}
END_TEST

/* ---- float -> int conversion --------------------------------------------------------- */

static const double kFloatEdges[] = {
    NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 0.5, -0.5, 0.999, -0.999, 1.9, -1.9,
    127.5, 128.0, -128.9, -129.0, 255.9, 256.0, 32767.9, 32768.0, -32769.0, 65535.5, 65536.0,
    2147483647.0, 2147483648.0, -2147483649.0, 4294967296.0, 9.2233720368547758e18,
    -9.2233720368547758e18, 1.8446744073709552e19, 3.0e19, -3.0e19, 1e30, -1e30, 3.4e38,
    -3.4e38, 1e300, -1e300, 1e-40, -1e-320};

/* What docs/ops.md defines: truncate toward zero, NaN -> 0, saturate. */
static void convert_expect(int32_t to, double v, void *dst, size_t i) {
  if (to == ACCY_DTYPE_BOOL) {
    ((uint8_t *)dst)[i] = v != 0 || isnan(v);
    return;
  }
  unsigned w = 8u * (unsigned)accy_dtype_size(to);
  if (isnan(v)) {
    tu_set_i64(to, dst, i, 0);
    return;
  }
  double t = trunc(v);
  if (is_signed(to)) {
    double lo = -ldexp(1.0, (int)w - 1), hi = ldexp(1.0, (int)w - 1); /* hi is max + 1 */
    int64_t r;
    if (t <= lo)
      r = w == 64 ? INT64_MIN : -(INT64_C(1) << (w - 1));
    else if (t >= hi)
      r = w == 64 ? INT64_MAX : (INT64_C(1) << (w - 1)) - 1;
    else
      r = (int64_t)t;
    tu_set_i64(to, dst, i, r);
  } else {
    double hi = ldexp(1.0, (int)w);
    uint64_t r;
    if (t <= 0)
      r = 0;
    else if (t >= hi)
      r = w == 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1;
    else
      r = (uint64_t)t;
    tu_set_i64(to, dst, i, (int64_t)r);
  }
}

#define CONV_REPEAT 256
#define CONV_N (ARRAY_SIZE(kFloatEdges) * CONV_REPEAT)

/* _i = float dtype index * 2 + (threads - 1); one program converts to every
 * int dtype and bool. */
START_TEST(test_float_to_int_conversion) {
  int32_t from = kFloatTypes[_i / 2];
  accy_session *s = session((uint32_t)(_i % 2) + 1);
  static const int32_t kTo[] = {ACCY_DTYPE_I8,  ACCY_DTYPE_I16, ACCY_DTYPE_I32,
                                ACCY_DTYPE_I64, ACCY_DTYPE_U8,  ACCY_DTYPE_U16,
                                ACCY_DTYPE_U32, ACCY_DTYPE_U64, ACCY_DTYPE_BOOL};
  accy_builder *b = builder();
  int64_t dims[1] = {(int64_t)CONV_N};
  uint32_t x = param(b, "x", from, 1, dims);
  for (size_t k = 0; k < ARRAY_SIZE(kTo); k++) {
    uint32_t r;
    OK(accy_builder_convert(b, x, kTo[k], &r));
    char name[16];
    snprintf(name, sizeof name, "to%zu", k);
    OK(accy_builder_output(b, r, name));
  }
  accy_handle h = compile_builder(s, b);

  void *xb = buf(CONV_N * accy_dtype_size(from));
  for (size_t i = 0; i < CONV_N; i++) tu_set_f64(from, xb, i, kFloatEdges[i % ARRAY_SIZE(kFloatEdges)]);
  accy_output outs[ARRAY_SIZE(kTo)];
  for (size_t k = 0; k < ARRAY_SIZE(kTo); k++) {
    size_t n = CONV_N * accy_dtype_size(kTo[k]);
    outs[k] = (accy_output){buf(n), n};
  }
  accy_input in = {xb, CONV_N * accy_dtype_size(from)};
  OK(accy_session_invoke(s, h, &in, 1, outs, ARRAY_SIZE(kTo)));
  for (size_t k = 0; k < ARRAY_SIZE(kTo); k++) {
    void *want = buf(outs[k].size);
    /* Expected from the value actually stored (f16/bf16 round the edges). */
    for (size_t i = 0; i < CONV_N; i++) convert_expect(kTo[k], tu_get_f64(from, xb, i), want, i);
    char what[48];
    snprintf(what, sizeof what, "convert %s ->", accy_dtype_name(from));
    assert_same(kTo[k], outs[k].data, want, CONV_N, what);
    free(want);
    free(outs[k].data);
  }
  free(xb);
  accy_session_destroy(s);
}
END_TEST

/* IEEE float division by zero and NaN propagation (never a trap). */
START_TEST(test_float_division_and_nan) {
  accy_session *s = session((uint32_t)_i + 1);
  accy_builder *b = builder();
  int64_t dims[1] = {6};
  uint32_t x = param(b, "x", ACCY_DTYPE_F32, 1, dims), y = param(b, "y", ACCY_DTYPE_F32, 1, dims);
  uint32_t q, m, c;
  OK(accy_builder_binary(b, ACCY_OP_DIVIDE, x, y, &q));
  OK(accy_builder_binary(b, ACCY_OP_MAXIMUM, x, y, &m));
  OK(accy_builder_compare(b, ACCY_COMPARE_NE, x, y, &c));
  OK(accy_builder_output(b, q, "q"));
  OK(accy_builder_output(b, m, "m"));
  OK(accy_builder_output(b, c, "c"));
  accy_handle h = compile_builder(s, b);
  float xv[6] = {1.0f, -1.0f, 0.0f, NAN, INFINITY, 2.0f};
  float yv[6] = {0.0f, 0.0f, 0.0f, 1.0f, INFINITY, NAN};
  float qv[6], mv[6];
  uint8_t cv[6];
  accy_input ins[2] = {{xv, sizeof xv}, {yv, sizeof yv}};
  accy_output outs[3] = {{qv, sizeof qv}, {mv, sizeof mv}, {cv, sizeof cv}};
  OK(accy_session_invoke(s, h, ins, 2, outs, 3));
  ck_assert(isinf(qv[0]) && qv[0] > 0);
  ck_assert(isinf(qv[1]) && qv[1] < 0);
  ck_assert(isnan(qv[2]) && isnan(qv[3]) && isnan(qv[4]) && isnan(qv[5]));
  ck_assert(isnan(mv[3]) && isnan(mv[5])); /* NaN if either is NaN */
  ck_assert_float_eq(mv[0], 1.0f);
  ck_assert(isinf(mv[4]));
  static const uint8_t kNe[6] = {1, 1, 0, 1, 0, 1}; /* NE with NaN is true */
  ck_assert_mem_eq(cv, kNe, 6);
  accy_session_destroy(s);
}
END_TEST

/* ---- indices out of range ------------------------------------------------------------ */

/* gather data f32[5,3] on axis 0 with indices of several dtypes: negative
 * indices add 5, then everything is clamped into [0, 4]. */
START_TEST(test_gather_indices_out_of_range) {
  accy_session *s = session((uint32_t)_i + 1);
  static const int32_t kIdxTypes[] = {ACCY_DTYPE_I32, ACCY_DTYPE_I64, ACCY_DTYPE_U8,
                                      ACCY_DTYPE_U64, ACCY_DTYPE_I8};
  static const int64_t kIdx[] = {-100, -6, -5, -1, 0, 4, 5, 6, 1000, INT32_MIN, INT32_MAX,
                                 INT64_MIN, INT64_MAX, -11, 200};
  enum { K = ARRAY_SIZE(kIdx) };
  float data[15];
  for (int i = 0; i < 15; i++) data[i] = (float)(i + 1);
  for (size_t t = 0; t < ARRAY_SIZE(kIdxTypes); t++) {
    int32_t it = kIdxTypes[t];
    accy_builder *b = builder();
    int64_t dd[2] = {5, 3}, kd[1] = {K};
    uint32_t ops[2] = {param(b, "data", ACCY_DTYPE_F32, 2, dd), param(b, "idx", it, 1, kd)};
    uint32_t g;
    int64_t axis = 0;
    OK(accy_builder_op(b, ACCY_OP_GATHER, ops, 2, &axis, 1, NULL, &g));
    OK(accy_builder_output(b, g, "g"));
    accy_handle h = compile_builder(s, b);
    void *ib = buf(K * accy_dtype_size(it));
    for (size_t i = 0; i < K; i++) tu_set_i64(it, ib, i, kIdx[i]);
    float out[K * 3];
    accy_input ins[2] = {{data, sizeof data}, {ib, K * accy_dtype_size(it)}};
    accy_output o = {out, sizeof out};
    OK(accy_session_invoke(s, h, ins, 2, &o, 1));
    for (size_t i = 0; i < K; i++) {
      int64_t v = tu_get_i64(it, ib, i); /* the index as stored */
      int64_t row;
      if (it == ACCY_DTYPE_U64 && v < 0) {
        row = 4; /* an unsigned index above INT64_MAX is far past the end */
      } else {
        row = v < 0 ? v + 5 : v;
        row = row < 0 ? 0 : row > 4 ? 4 : row;
      }
      for (int c = 0; c < 3; c++)
        ck_assert_msg(out[i * 3 + c] == data[row * 3 + c],
                      "gather %s index %lld: column %d is %g, want row %lld",
                      accy_dtype_name(it), (long long)v, c, out[i * 3 + c], (long long)row);
    }
    free(ib);
    ck_assert_int_eq(accy_session_release(s, h), ACCY_STATUS_OK);
  }
  accy_session_destroy(s);
}
END_TEST

static int64_t clamp_start(int32_t dt, int64_t v, int64_t hi) {
  if (dt == ACCY_DTYPE_U64 && v < 0) return hi; /* above INT64_MAX */
  return v < 0 ? 0 : v > hi ? hi : v;
}

/* dynamic_slice of x i32[6,4] by sizes [3,2] and dynamic_update_slice of a
 * [3,2] window, starts of two different dtypes, every pair of start values:
 * each start is clamped into [0, d - size]. */
START_TEST(test_dynamic_slice_starts_out_of_range) {
  accy_session *s = session((uint32_t)_i + 1);
  static const int32_t kStartTypes[][2] = {{ACCY_DTYPE_I32, ACCY_DTYPE_I64},
                                           {ACCY_DTYPE_U64, ACCY_DTYPE_I8},
                                           {ACCY_DTYPE_U8, ACCY_DTYPE_U32}};
  static const int64_t kStarts[] = {-5, -1, 0, 1, 2, 3, 4, 100, INT32_MIN, INT32_MAX,
                                    INT64_MIN, INT64_MAX};
  int32_t x[24], u[6];
  for (int i = 0; i < 24; i++) x[i] = 100 + i;
  for (int i = 0; i < 6; i++) u[i] = -1 - i;
  for (size_t t = 0; t < ARRAY_SIZE(kStartTypes); t++) {
    int32_t t0 = kStartTypes[t][0], t1 = kStartTypes[t][1];
    accy_builder *b = builder();
    int64_t xd[2] = {6, 4}, ud[2] = {3, 2};
    uint32_t xp = param(b, "x", ACCY_DTYPE_I32, 2, xd), up = param(b, "u", ACCY_DTYPE_I32, 2, ud);
    uint32_t s0 = param(b, "s0", t0, 0, NULL), s1 = param(b, "s1", t1, 0, NULL);
    uint32_t ds, dus;
    uint32_t dops[3] = {xp, s0, s1};
    int64_t sizes[2] = {3, 2};
    OK(accy_builder_op(b, ACCY_OP_DYNAMIC_SLICE, dops, 3, sizes, 2, NULL, &ds));
    uint32_t uops[4] = {xp, up, s0, s1};
    OK(accy_builder_op(b, ACCY_OP_DYNAMIC_UPDATE_SLICE, uops, 4, NULL, 0, NULL, &dus));
    OK(accy_builder_output(b, ds, "slice"));
    OK(accy_builder_output(b, dus, "updated"));
    accy_handle h = compile_builder(s, b);
    for (size_t a = 0; a < ARRAY_SIZE(kStarts); a++) {
      for (size_t c = 0; c < ARRAY_SIZE(kStarts); c++) {
        _Alignas(8) unsigned char sb0[8], sb1[8];
        tu_set_i64(t0, sb0, 0, kStarts[a]);
        tu_set_i64(t1, sb1, 0, kStarts[c]);
        int32_t sl[6], up_out[24];
        accy_input ins[4] = {{x, sizeof x},
                             {u, sizeof u},
                             {sb0, accy_dtype_size(t0)},
                             {sb1, accy_dtype_size(t1)}};
        accy_output outs[2] = {{sl, sizeof sl}, {up_out, sizeof up_out}};
        OK(accy_session_invoke(s, h, ins, 4, outs, 2));
        int64_t r0 = clamp_start(t0, tu_get_i64(t0, sb0, 0), 3);
        int64_t r1 = clamp_start(t1, tu_get_i64(t1, sb1, 0), 2);
        for (int i = 0; i < 3; i++)
          for (int j = 0; j < 2; j++)
            ck_assert_msg(sl[i * 2 + j] == x[(r0 + i) * 4 + r1 + j],
                          "dynamic_slice %s/%s starts %lld,%lld", accy_dtype_name(t0),
                          accy_dtype_name(t1), (long long)kStarts[a], (long long)kStarts[c]);
        for (int i = 0; i < 6; i++)
          for (int j = 0; j < 4; j++) {
            bool in_win = i >= r0 && i < r0 + 3 && j >= r1 && j < r1 + 2;
            int32_t want = in_win ? u[(i - r0) * 2 + (j - r1)] : x[i * 4 + j];
            ck_assert_msg(up_out[i * 4 + j] == want, "dynamic_update_slice starts %lld,%lld",
                          (long long)kStarts[a], (long long)kStarts[c]);
          }
      }
    }
    ck_assert_int_eq(accy_session_release(s, h), ACCY_STATUS_OK);
  }
  for (int i = 0; i < 24; i++) ck_assert_int_eq(x[i], 100 + i); /* inputs never change */
  accy_session_destroy(s);
}
END_TEST

/* ---- empty tensors ----------------------------------------------------------------- */

/* Empty inputs and outputs through elementwise, convert, reduce (identity),
 * argmax (0), dot_general (zeros), concatenate, gather, dynamic_slice of
 * size 0 and pad: empty buffers are passed as NULL with size 0. */
START_TEST(test_empty_tensors_everywhere) {
  accy_session *s = session((uint32_t)_i + 1);
  accy_builder *b = builder();
  int64_t e03[2] = {0, 3}, e20[2] = {2, 0}, e30[2] = {3, 0}, d23[2] = {2, 3}, e0[1] = {0};
  uint32_t a = param(b, "a", ACCY_DTYPE_F32, 2, e03);     /* f32[0,3] */
  uint32_t l = param(b, "l", ACCY_DTYPE_F32, 2, e20);     /* f32[2,0] */
  uint32_t r = param(b, "r", ACCY_DTYPE_F32, 2, e03);     /* f32[0,3] */
  uint32_t m = param(b, "m", ACCY_DTYPE_I32, 2, e30);     /* i32[3,0] */
  uint32_t full = param(b, "full", ACCY_DTYPE_F32, 2, d23); /* f32[2,3] */
  uint32_t idx = param(b, "idx", ACCY_DTYPE_I64, 1, e0);  /* i64[0] */
  uint32_t sum, neg, conv, red, red_max, amax, dot, cat, gat, dsl, st, pad_v, padded, dsl2;
  OK(accy_builder_binary(b, ACCY_OP_ADD, a, a, &sum));
  OK(accy_builder_unary(b, ACCY_OP_NEGATE, m, &neg));
  OK(accy_builder_convert(b, a, ACCY_DTYPE_I8, &conv));
  int64_t rsum[2] = {ACCY_REDUCE_SUM, 0}, rmax[2] = {ACCY_REDUCE_MAX, 1};
  OK(accy_builder_op(b, ACCY_OP_REDUCE, &a, 1, rsum, 2, NULL, &red));         /* f32[3] = 0 */
  OK(accy_builder_op(b, ACCY_OP_REDUCE, &m, 1, rmax, 2, NULL, &red_max));     /* i32[3] = MIN */
  int64_t axis1 = 1;
  accy_type i32t = {ACCY_DTYPE_I32, 0, {0}};
  OK(accy_builder_op(b, ACCY_OP_ARGMAX, &m, 1, &axis1, 1, &i32t, &amax));     /* i32[3] = 0 */
  uint32_t lr[2] = {l, r};
  int64_t dattrs[4] = {0, 1, 1, 0};
  OK(accy_builder_op(b, ACCY_OP_DOT_GENERAL, lr, 2, dattrs, 4, NULL, &dot));  /* f32[2,3] = 0 */
  uint32_t cops[3] = {a, full, r};
  int64_t axis0 = 0;
  OK(accy_builder_op(b, ACCY_OP_CONCATENATE, cops, 3, &axis0, 1, NULL, &cat)); /* = full */
  uint32_t gops[2] = {full, idx};
  OK(accy_builder_op(b, ACCY_OP_GATHER, gops, 2, &axis0, 1, NULL, &gat));     /* f32[0,3] */
  int64_t zero = 0;
  OK(accy_builder_constant(b, "zero", ACCY_DTYPE_I64, 0, NULL, &zero, sizeof zero, &st));
  uint32_t dops[3] = {full, st, st};
  int64_t sizes[2] = {0, 3};
  OK(accy_builder_op(b, ACCY_OP_DYNAMIC_SLICE, dops, 3, sizes, 2, NULL, &dsl)); /* f32[0,3] */
  uint32_t dops2[3] = {a, st, st};
  OK(accy_builder_op(b, ACCY_OP_DYNAMIC_SLICE, dops2, 3, sizes, 2, NULL, &dsl2));
  float pv = 7.0f;
  OK(accy_builder_constant(b, "pv", ACCY_DTYPE_F32, 0, NULL, &pv, sizeof pv, &pad_v));
  uint32_t pops[2] = {a, pad_v};
  int64_t pattrs[6] = {1, 0, 1, 0, 0, 0};                                     /* f32[2,3] = 7 */
  OK(accy_builder_op(b, ACCY_OP_PAD, pops, 2, pattrs, 6, NULL, &padded));
  const uint32_t outs_id[] = {sum, neg, conv, red, red_max, amax, dot, cat, gat, dsl, dsl2, padded};
  for (size_t k = 0; k < ARRAY_SIZE(outs_id); k++) {
    char name[16];
    snprintf(name, sizeof name, "o%zu", k);
    OK(accy_builder_output(b, outs_id[k], name));
  }
  accy_handle h = compile_builder(s, b);

  const accy_descriptor *in_d, *out_d;
  size_t n_in, n_out;
  OK(accy_session_inputs(s, h, &in_d, &n_in));
  OK(accy_session_outputs(s, h, &out_d, &n_out));
  ck_assert_uint_eq(n_in, 6);
  ck_assert_uint_eq(n_out, ARRAY_SIZE(outs_id));
  float full_v[6] = {1, 2, 3, 4, 5, 6};
  accy_input ins[6];
  for (size_t i = 0; i < n_in; i++) ins[i] = (accy_input){NULL, 0};
  ck_assert_uint_eq(in_d[4].byte_size, sizeof full_v);
  ins[4] = (accy_input){full_v, sizeof full_v};
  accy_output outs[ARRAY_SIZE(outs_id)];
  for (size_t k = 0; k < n_out; k++)
    outs[k] = (accy_output){buf((size_t)out_d[k].byte_size), (size_t)out_d[k].byte_size};
  for (int rep = 0; rep < 2; rep++) {
    OK(accy_session_invoke(s, h, ins, n_in, outs, n_out));
    const size_t kEmpty[] = {0, 1, 2, 8, 9, 10};
    for (size_t k = 0; k < ARRAY_SIZE(kEmpty); k++) {
      ck_assert_uint_eq(out_d[kEmpty[k]].byte_size, 0);
      ck_assert_ptr_null(outs[kEmpty[k]].data);
    }
    const float *redv = outs[3].data, *dotv = outs[6].data, *catv = outs[7].data,
                *padv = outs[11].data;
    const int32_t *maxv = outs[4].data, *amaxv = outs[5].data;
    for (int i = 0; i < 3; i++) {
      ck_assert(redv[i] == 0.0f && !signbit(redv[i]));
      ck_assert_int_eq(maxv[i], INT32_MIN);
      ck_assert_int_eq(amaxv[i], 0);
    }
    for (int i = 0; i < 6; i++) {
      ck_assert(dotv[i] == 0.0f);
      ck_assert_float_eq(catv[i], full_v[i]);
      ck_assert_float_eq(padv[i], 7.0f);
    }
    /* Empty with a non-NULL (aligned) pointer is fine too. */
    ins[0].data = full_v;
    outs[0].data = NULL;
  }
  /* A non-empty buffer may not be NULL. */
  ins[4] = (accy_input){NULL, sizeof full_v};
  ck_assert_int_eq(accy_session_invoke(s, h, ins, n_in, outs, n_out), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_ptr_nonnull(strstr(accy_session_last_cause(s), "input 4 'full': data is NULL"));
  for (size_t k = 0; k < n_out; k++) free(outs[k].data);
  accy_session_destroy(s);
}
END_TEST

/* A program whose every input and output is empty, invoked with NULL
 * arrays as well. */
START_TEST(test_all_empty_program) {
  accy_session *s = session((uint32_t)_i + 1);
  accy_builder *b = builder();
  int64_t d[3] = {4, 0, 2};
  uint32_t x = param(b, "x", ACCY_DTYPE_F64, 3, d), y;
  OK(accy_builder_unary(b, ACCY_OP_EXP, x, &y));
  OK(accy_builder_output(b, y, "y"));
  accy_handle h = compile_builder(s, b);
  accy_input in = {NULL, 0};
  accy_output out = {NULL, 0};
  OK(accy_session_invoke(s, h, &in, 1, &out, 1));
  ck_assert_int_eq(accy_session_invoke(s, h, NULL, 1, &out, 1), ACCY_STATUS_INVALID_BUFFER);
  accy_session_destroy(s);
}
END_TEST

/* ---- NULL and bogus arguments ------------------------------------------------------- */

/* Every public call given a NULL session, NULL pointers or a handle that
 * was never issued returns its documented status; nothing crashes. */
START_TEST(test_null_and_bogus_arguments) {
  accy_session *s = session(1);
  accy_builder *b = builder();
  int64_t d[1] = {2};
  uint32_t x = param(b, "x", ACCY_DTYPE_F32, 1, d), y;
  OK(accy_builder_unary(b, ACCY_OP_ABS, x, &y));
  OK(accy_builder_output(b, y, "y"));
  void *bytes;
  size_t size;
  OK(accy_builder_finish(b, &bytes, &size));
  accy_builder_destroy(b);
  accy_handle h = {5, 5};
  const accy_descriptor *dd;
  size_t n;

  ck_assert_int_eq(accy_session_compile(NULL, bytes, size, &h), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_uint_eq(h.index, 0); /* *out cleared even so */
  ck_assert_int_eq(accy_session_compile(s, bytes, size, NULL), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_int_eq(accy_session_compile(s, NULL, 16, &h), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_ptr_nonnull(strstr(accy_session_last_cause(s), "bytes is NULL with size 16"));
  ck_assert_int_eq(accy_session_compile(s, NULL, 0, &h), ACCY_STATUS_INVALID_PROGRAM);
  /* Handles that were never issued, and a NULL session. */
  accy_handle never = {3, 0};
  ck_assert_int_eq(accy_session_inputs(s, never, &dd, &n), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_int_eq(accy_session_invoke(s, never, NULL, 0, NULL, 0), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_int_eq(accy_session_release(s, never), ACCY_STATUS_INVALID_HANDLE);
  h = compile_builder_bytes_ok(s, bytes, size);
  ck_assert_int_eq(accy_session_inputs(NULL, h, &dd, &n), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_int_eq(accy_session_outputs(NULL, h, &dd, &n), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_int_eq(accy_session_invoke(NULL, h, NULL, 0, NULL, 0), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_int_eq(accy_session_release(NULL, h), ACCY_STATUS_INVALID_HANDLE);
  /* NULL out pointers of inputs/outputs are allowed (nothing is stored). */
  ck_assert_int_eq(accy_session_inputs(s, h, NULL, NULL), ACCY_STATUS_OK);
  /* NULL buffer arrays with non-zero counts, and wrong counts. */
  float xv[2] = {-1, 2}, yv[2];
  accy_input in = {xv, sizeof xv};
  accy_output out = {yv, sizeof yv};
  ck_assert_int_eq(accy_session_invoke(s, h, NULL, 1, &out, 1), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_int_eq(accy_session_invoke(s, h, &in, 1, NULL, 1), ACCY_STATUS_INVALID_BUFFER);
  ck_assert_int_eq(accy_session_invoke(s, h, &in, 1, &out, 0), ACCY_STATUS_INVALID_BUFFER);
  OK(accy_session_invoke(s, h, &in, 1, &out, 1));
  ck_assert_float_eq(yv[0], 1.0f);
  /* After release: every call with the handle is refused; release again too. */
  OK(accy_session_release(s, h));
  ck_assert_int_eq(accy_session_invoke(s, h, &in, 1, &out, 1), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_int_eq(accy_session_outputs(s, h, &dd, &n), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_int_eq(accy_session_release(s, h), ACCY_STATUS_INVALID_HANDLE);
  ck_assert_ptr_nonnull(accy_session_last_cause(NULL));
  accy_free(bytes);
  accy_free(NULL);
  accy_session_destroy(s);
  accy_session_destroy(NULL);
  accy_builder_destroy(NULL);
}
END_TEST

/* ---- limits -------------------------------------------------------------------------- */

/* An intermediate of just over ACCY_MAX_SCRATCH_BYTES: a valid program
 * (every tensor within ACCY_MAX_TENSOR_BYTES) that cannot be compiled. */
START_TEST(test_scratch_limit_is_compile_failed) {
  accy_session *s = session(1);
  accy_builder *b = builder();
  int64_t d[1] = {(int64_t)(ACCY_MAX_SCRATCH_BYTES / 4) + 16};
  uint32_t x = param(b, "x", ACCY_DTYPE_F32, 1, d), t, y;
  OK(accy_builder_unary(b, ACCY_OP_NEGATE, x, &t)); /* lives in scratch */
  const int64_t axis0[1] = {0};                      /* the reverse reads it whole */
  OK(accy_builder_op(b, ACCY_OP_REVERSE, &t, 1, axis0, 1, NULL, &y));
  OK(accy_builder_output(b, y, "y"));
  void *bytes;
  size_t size;
  OK(accy_builder_finish(b, &bytes, &size));
  accy_builder_destroy(b);
  accy_handle h;
  ck_assert_int_eq(accy_session_compile(s, bytes, size, &h), ACCY_STATUS_COMPILE_FAILED);
  const char *cause = accy_session_last_cause(s);
  ck_assert_msg(strstr(cause, "ACCY_MAX_SCRATCH_BYTES 1099511627776") != NULL, "cause: %s", cause);
  ck_assert_msg(strstr(cause, "1099511627840") != NULL, "cause names the value: %s", cause);
  accy_free(bytes);
  /* The session still works. */
  b = builder();
  int64_t d1[1] = {4};
  x = param(b, "x", ACCY_DTYPE_F32, 1, d1);
  OK(accy_builder_unary(b, ACCY_OP_NEGATE, x, &t));
  OK(accy_builder_output(b, t, "t"));
  h = compile_builder(s, b);
  float xv[4] = {1, 2, 3, 4}, tv[4];
  accy_input in = {xv, sizeof xv};
  accy_output out = {tv, sizeof tv};
  OK(accy_session_invoke(s, h, &in, 1, &out, 1));
  ck_assert_float_eq(tv[3], -4.0f);
  accy_session_destroy(s);
}
END_TEST

static Suite *edges_suite(void) {
  Suite *s = suite_create("edges");
  TCase *tc = tcase_create("integers");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_integer_division_and_shifts, 0, 2 * (int)ARRAY_SIZE(kIntTypes));
  suite_add_tcase(s, tc);
  tc = tcase_create("floats");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_float_to_int_conversion, 0, 2 * (int)ARRAY_SIZE(kFloatTypes));
  tcase_add_loop_test(tc, test_float_division_and_nan, 0, 2);
  suite_add_tcase(s, tc);
  tc = tcase_create("indices");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_gather_indices_out_of_range, 0, 2);
  tcase_add_loop_test(tc, test_dynamic_slice_starts_out_of_range, 0, 2);
  suite_add_tcase(s, tc);
  tc = tcase_create("empty");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_empty_tensors_everywhere, 0, 2);
  tcase_add_loop_test(tc, test_all_empty_program, 0, 2);
  suite_add_tcase(s, tc);
  tc = tcase_create("arguments");
  tcase_add_test(tc, test_null_and_bogus_arguments);
  suite_add_tcase(s, tc);
  tc = tcase_create("limits");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_scratch_limit_is_compile_failed);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(edges_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
