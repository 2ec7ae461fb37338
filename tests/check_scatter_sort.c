/* tests/check_scatter_sort.c: the scatter, sort and argsort kernels
 * (src/kernels/index.c and src/kernels/sort.c; ops added by wire 1.1).
 *
 * Each case builds a tiny program (parameters, then the op under test),
 * prepares the kernel, and runs it over the whole iteration space and over
 * random splits in shuffled order. Every run must equal a reference written
 * here from docs/ops.md: scatter applies the updates one by one in row-major
 * order with double arithmetic (exact for every dtype's single rounding),
 * sort and argsort use a stable merge sort with a comparator of their own.
 * Values must match byte for byte (sort moves bytes, so the order of -0 / +0
 * and of NaN payloads is checked too); scatter results compare NaNs as equal.
 * Result buffers start as garbage, so an element no tile writes shows up.
 * One test runs a program through a session (in the forked test body). */
#include "src/internal.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/base/alloc.h"
#include "src/ir/ir.h"
#include "src/kernels/kernels.h"
#include "src/wire/wire.h"
#include "tests/testutil.h"

static const int32_t ALL_DTYPES[] = {
    ACCY_DTYPE_F32, ACCY_DTYPE_F64, ACCY_DTYPE_F16, ACCY_DTYPE_BF16, ACCY_DTYPE_I8,
    ACCY_DTYPE_I16, ACCY_DTYPE_I32, ACCY_DTYPE_I64, ACCY_DTYPE_U8,  ACCY_DTYPE_U16,
    ACCY_DTYPE_U32, ACCY_DTYPE_U64, ACCY_DTYPE_BOOL};
static const int32_t INT_DTYPES[] = {ACCY_DTYPE_I8,  ACCY_DTYPE_I16, ACCY_DTYPE_I32,
                                     ACCY_DTYPE_I64, ACCY_DTYPE_U8,  ACCY_DTYPE_U16,
                                     ACCY_DTYPE_U32, ACCY_DTYPE_U64};
#define N_ALL ACCY_ARRAY_SIZE(ALL_DTYPES)
#define N_INT ACCY_ARRAY_SIZE(INT_DTYPES)

#define REQUIRE(expr, ...)                  \
  do {                                      \
    if (!(expr)) ck_abort_msg(__VA_ARGS__); \
  } while (0)

/* ---- program, buffers and runs --------------------------------------------- */

typedef struct tcase {
  accy__program p;
  uint32_t node;  /* the op under test */
  uint32_t n_ops; /* parameters so far: node i is operand i */
  void *bufs[8];  /* [0] result, [1 + i] operand i */
} tcase;

static void tc_init(tcase *t) {
  memset(t, 0, sizeof *t);
  accy__program_init(&t->p);
  t->node = UINT32_MAX;
}

static void tc_free(tcase *t) {
  for (uint32_t i = 0; i <= t->n_ops; i++) free(t->bufs[i]);
  accy__program_free(&t->p);
}

/* Adds a parameter with a buffer of random data (edge values included). */
static uint32_t tc_param(tcase *t, tu_rng *r, int32_t dtype, uint32_t rank, const int64_t *dims) {
  ck_assert_uint_lt(t->n_ops, 7);
  accy__type ty = tu_type(dtype, rank, dims);
  char name[16];
  snprintf(name, sizeof name, "p%u", t->n_ops);
  uint32_t idx;
  ck_assert_int_eq(accy__program_add_node(&t->p, ACCY_OP_PARAMETER, &ty, NULL, 0, NULL, 0, name,
                                          strlen(name), NULL, 0, &idx),
                   ACCY_STATUS_OK);
  uint64_t n = tu_elems(&ty);
  void *b = malloc(n * accy_dtype_size(dtype) + 1);
  ck_assert_ptr_nonnull(b);
  tu_fill_random(r, dtype, b, n, true, 0);
  t->bufs[1 + t->n_ops] = b;
  return t->n_ops++;
}

/* Adds the op under test over all parameters, in order. */
static void tc_op(tcase *t, uint16_t op, const accy__type *ty, const int64_t *attrs,
                  uint32_t n_attrs) {
  uint32_t ops[8];
  for (uint32_t i = 0; i < t->n_ops; i++) ops[i] = i;
  ck_assert_int_eq(accy__program_add_node(&t->p, op, ty, ops, t->n_ops, attrs, n_attrs, NULL, 0,
                                          NULL, 0, &t->node),
                   ACCY_STATUS_OK);
}

static const accy__node *op_node(const tcase *t) { return &t->p.nodes[t->node]; }


/* Compares the result with |want|: bytewise, or with any two NaNs equal. */
static void expect_result(const tcase *t, const void *got, const void *want, bool nan_equal,
                          const char *what) {
  const accy__type *ty = &op_node(t)->type;
  size_t es = accy_dtype_size(ty->dtype);
  uint64_t n = tu_elems(ty);
  size_t bad = SIZE_MAX;
  if (nan_equal) {
    bad = tu_first_difference(ty->dtype, got, want, (size_t)n);
  } else {
    for (uint64_t i = 0; i < n && bad == SIZE_MAX; i++)
      if (memcmp((const char *)got + i * es, (const char *)want + i * es, es) != 0)
        bad = (size_t)i;
  }
  if (bad == SIZE_MAX) return;
  uint64_t gv = 0, wv = 0;
  memcpy(&gv, (const char *)got + bad * es, es);
  memcpy(&wv, (const char *)want + bad * es, es);
  char buf[96];
  ck_abort_msg("%s (%s %s): element %zu of %llu is 0x%llx, expected 0x%llx", what,
               accy__op_name(op_node(t)->op), accy__type_format(ty, buf, sizeof buf), bad,
               (unsigned long long)n, (unsigned long long)gv, (unsigned long long)wv);
}

/* Prepares the kernel and checks whole-range and split runs against
 * |expect|; returns n_items. */
static uint64_t tc_check(tcase *t, const void *expect, bool nan_equal, tu_rng *r) {
  accy__arena arena;
  accy__arena_init(&arena);
  accy__kernel k;
  accy_status st = accy__kernel_prepare(&t->p, t->node, &arena, &k);
  ck_assert_msg(st == ACCY_STATUS_OK, "prepare: %s: %s", accy_status_name(st), accy__cause());
  const accy__type *ty = &op_node(t)->type;
  uint64_t bytes = accy__type_bytes(ty);
  ck_assert_ptr_nonnull(k.run);
  ck_assert_uint_ge(k.item_cost, 1);
  if (bytes == 0)
    ck_assert_uint_eq(k.n_items, 0);
  else
    ck_assert_uint_gt(k.n_items, 0);
  size_t nb = (size_t)bytes + 1;
  unsigned char *buf = malloc(nb);
  ck_assert_ptr_nonnull(buf);
  memset(buf, 0xCD, nb);
  t->bufs[0] = buf;
  k.run(&k, t->bufs, 0, k.n_items);
  expect_result(t, buf, expect, nan_equal, "whole range");
  ck_assert_uint_eq(buf[bytes], 0xCD); /* nothing written past the end */
  for (int mode = 0; mode < 3; mode++) {
    memset(buf, 0xA0 + mode, nb);
    tu_run_kernel_split(&k, t->bufs, r, mode);
    expect_result(t, buf, expect, nan_equal, mode == 0 ? "one item per tile" : "random tiles");
  }
  t->bufs[0] = NULL;
  free(buf);
  uint64_t n_items = k.n_items;
  accy__arena_free(&arena);
  return n_items;
}

/* ---- reference: scatter -------------------------------------------------------- */

static bool is_float(int32_t d) {
  return d == ACCY_DTYPE_F32 || d == ACCY_DTYPE_F64 || d == ACCY_DTYPE_F16 ||
         d == ACCY_DTYPE_BF16;
}

/* The mathematical value of an index element (u64 above INT64_MAX stays
 * above every extent). */
static __int128 ref_index(int32_t dtype, const void *buf, uint64_t i) {
  if (dtype == ACCY_DTYPE_U64) return (__int128)((const uint64_t *)buf)[i];
  return tu_get_i64(dtype, buf, i);
}

static double ref_fmax(double a, double b, bool is_max) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == b) return (signbit(a) != 0) == is_max ? b : a; /* max(-0,+0) = +0 */
  return is_max ? (a > b ? a : b) : (a < b ? a : b);
}

/* Combines element |j| of |src| into element |i| of |dst|. */
static void ref_combine(int32_t dt, int mode, void *dst, uint64_t i, const void *src,
                        uint64_t j) {
  size_t es = accy_dtype_size(dt);
  if (mode == ACCY_SCATTER_REPLACE) {
    memcpy((char *)dst + i * es, (const char *)src + j * es, es);
    return;
  }
  if (is_float(dt)) {
    double a = tu_get_f64(dt, dst, i), b = tu_get_f64(dt, src, j), v;
    switch (mode) {
      case ACCY_SCATTER_ADD: v = a + b; break;
      case ACCY_SCATTER_MULTIPLY: v = a * b; break;
      default: v = ref_fmax(a, b, mode == ACCY_SCATTER_MAX); break;
    }
    tu_set_f64(dt, dst, i, v);
    return;
  }
  int64_t a = tu_get_i64(dt, dst, i), b = tu_get_i64(dt, src, j), v;
  if (dt == ACCY_DTYPE_BOOL) {
    bool any = mode == ACCY_SCATTER_ADD || mode == ACCY_SCATTER_MAX;
    v = any ? (a || b) : (a && b);
  } else if (mode == ACCY_SCATTER_ADD) {
    v = (int64_t)((uint64_t)a + (uint64_t)b);
  } else if (mode == ACCY_SCATTER_MULTIPLY) {
    v = (int64_t)((uint64_t)a * (uint64_t)b);
  } else {
    bool a_bigger = dt == ACCY_DTYPE_U64 ? (uint64_t)a > (uint64_t)b : a > b;
    v = (a_bigger == (mode == ACCY_SCATTER_MAX)) ? a : b;
  }
  tu_set_i64(dt, dst, i, v);
}

/* want = data, then each update slice in row-major order: its index vector
 * (negatives wrap once) picks a data slice, or the update is dropped. */
static void *ref_scatter(const tcase *t) {
  const accy__node *nd = op_node(t);
  const accy__type *xt = &t->p.nodes[0].type, *it = &t->p.nodes[1].type;
  int32_t dt = xt->dtype;
  size_t es = accy_dtype_size(dt);
  uint64_t e = tu_elems(xt);
  char *want = malloc(e * es + 1);
  memcpy(want, t->bufs[1], e * es);
  uint32_t k = (uint32_t)it->dims[it->rank - 1];
  uint64_t n_upd = 1, inner = 1;
  for (uint32_t a = 0; a + 1 < it->rank; a++) n_upd *= (uint64_t)it->dims[a];
  for (uint32_t a = k; a < xt->rank; a++) inner *= (uint64_t)xt->dims[a];
  if (e == 0) return want;
  for (uint64_t u = 0; u < n_upd; u++) {
    uint64_t slice = 0;
    bool drop = false;
    for (uint32_t j = 0; j < k; j++) {
      __int128 c = ref_index(it->dtype, t->bufs[2], u * k + j);
      if (c < 0) c += xt->dims[j];
      if (c < 0 || c >= xt->dims[j]) drop = true;
      else slice = slice * (uint64_t)xt->dims[j] + (uint64_t)c;
    }
    if (drop) continue;
    for (uint64_t q = 0; q < inner; q++)
      ref_combine(dt, (int)nd->attrs[0], want, slice * inner + q, t->bufs[3], u * inner + q);
  }
  return want;
}

/* ---- reference: sort ------------------------------------------------------------ */

/* -1, 0, 1 in ascending op order: NaN above everything, -0 == +0. */
static int ref_cmp(int32_t dt, const void *x, uint64_t i, uint64_t j) {
  if (is_float(dt)) {
    double a = tu_get_f64(dt, x, i), b = tu_get_f64(dt, x, j);
    if (isnan(a) || isnan(b)) return (int)(isnan(a) != 0) - (int)(isnan(b) != 0);
    return a < b ? -1 : a > b;
  }
  int64_t a = tu_get_i64(dt, x, i), b = tu_get_i64(dt, x, j);
  if (dt == ACCY_DTYPE_U64) return (uint64_t)a < (uint64_t)b ? -1 : (uint64_t)a > (uint64_t)b;
  return a < b ? -1 : a > b;
}

typedef struct line_ref {
  int32_t dt;
  const void *x;
  uint64_t base, stride;
  bool desc;
} line_ref;

/* Stable merge sort of positions pos[0..n) by key. */
static void ref_merge_sort(const line_ref *l, uint64_t *pos, uint64_t *tmp, uint64_t n) {
  if (n < 2) return;
  uint64_t h = n / 2;
  ref_merge_sort(l, pos, tmp, h);
  ref_merge_sort(l, pos + h, tmp, n - h);
  uint64_t i = 0, j = h, o = 0;
  while (i < h && j < n) {
    int c = ref_cmp(l->dt, l->x, l->base + pos[j] * l->stride, l->base + pos[i] * l->stride);
    if (l->desc) c = -c;
    tmp[o++] = c < 0 ? pos[j++] : pos[i++]; /* ties take the left (earlier) one */
  }
  while (i < h) tmp[o++] = pos[i++];
  while (j < n) tmp[o++] = pos[j++];
  memcpy(pos, tmp, n * sizeof *pos);
}

/* Expected sort values (|values|) or argsort positions of dtype |rdt|. */
static void *ref_sort(const tcase *t, bool values, int32_t rdt) {
  const accy__type *xt = &t->p.nodes[0].type;
  const accy__node *nd = op_node(t);
  uint32_t axis = (uint32_t)nd->attrs[0];
  size_t es = accy_dtype_size(xt->dtype), rs = accy_dtype_size(rdt);
  uint64_t e = tu_elems(xt), n = (uint64_t)xt->dims[axis], inner = 1;
  for (uint32_t a = axis + 1; a < xt->rank; a++) inner *= (uint64_t)xt->dims[a];
  char *want = malloc(e * (values ? es : rs) + 1);
  if (e == 0) return want;
  uint64_t *pos = malloc(n * sizeof *pos), *tmp = malloc(n * sizeof *tmp);
  for (uint64_t line = 0; line < e / n; line++) {
    line_ref l = {xt->dtype, t->bufs[1], (line / inner) * n * inner + line % inner, inner,
                  nd->attrs[1] != 0};
    for (uint64_t j = 0; j < n; j++) pos[j] = j;
    ref_merge_sort(&l, pos, tmp, n);
    for (uint64_t j = 0; j < n; j++) {
      uint64_t at = l.base + j * inner;
      if (values)
        memcpy(want + at * es, (const char *)t->bufs[1] + (l.base + pos[j] * inner) * es, es);
      else
        tu_set_i64(rdt, want, at, (int64_t)pos[j]);
    }
  }
  free(pos);
  free(tmp);
  return want;
}

/* ---- scatter tests ----------------------------------------------------------------- */

/* One random scatter case: data rank 0..3, k 0..rank, 0..2 batch dims,
 * indices mostly in range with negatives, duplicates and drops. */
static void random_scatter(tu_rng *r, int32_t dt, int mode, uint64_t *out_items) {
  tcase t;
  tc_init(&t);
  uint32_t rank = (uint32_t)tu_rng_range(r, 0, 3);
  int64_t d[3];
  for (uint32_t a = 0; a < rank; a++) d[a] = tu_rng_range(r, tu_rng_range(r, 0, 9) ? 1 : 0, 6);
  uint32_t k = (uint32_t)tu_rng_range(r, 0, rank);
  uint32_t nb = (uint32_t)tu_rng_range(r, 0, 2);
  int64_t idims[3], udims[6];
  uint32_t ur = 0;
  for (uint32_t a = 0; a < nb; a++) idims[a] = udims[ur++] = tu_rng_range(r, 0, 5);
  idims[nb] = k;
  for (uint32_t a = k; a < rank; a++) udims[ur++] = d[a];
  int32_t idt = INT_DTYPES[tu_rng_range(r, 0, N_INT - 1)];
  tc_param(&t, r, dt, rank, d);
  uint32_t ip = tc_param(&t, r, idt, nb + 1, idims);
  tc_param(&t, r, dt, ur, udims);
  /* Index values: in range, wrapped negatives, just outside, or raw. */
  accy__type it = t.p.nodes[ip].type;
  uint64_t ni = tu_elems(&it);
  for (uint64_t i = 0; i < ni; i++) {
    int64_t ext = d[i % (k ? k : 1)];
    int64_t v;
    switch (tu_rng_range(r, 0, 9)) {
      case 0: v = ext; break;            /* one past the end: dropped */
      case 1: v = -ext - 1; break;       /* wraps to -1: dropped */
      case 2: continue;                  /* random bits, mostly dropped */
      case 3: case 4: v = tu_rng_range(r, -ext, -1); break;
      default: v = tu_rng_range(r, 0, ext ? ext - 1 : 0); break;
    }
    tu_set_i64(idt, t.bufs[2], i, v);
  }
  int64_t attrs[] = {mode};
  accy__type rt = tu_type(dt, rank, d);
  tc_op(&t, ACCY_OP_SCATTER, &rt, attrs, 1);
  void *want = ref_scatter(&t);
  *out_items = tc_check(&t, want, true, r);
  free(want);
  tc_free(&t);
}

START_TEST(test_scatter_random) {
  tu_rng r;
  tu_rng_seed(&r, 0x5ca7000u + (uint64_t)_i);
  int32_t dt = ALL_DTYPES[_i];
  /* Every mode is defined for every dtype (bool: add and max are or). */
  for (int mode = ACCY_SCATTER_REPLACE; mode <= ACCY_SCATTER_MIN; mode++) {
    for (int rep = 0; rep < 40; rep++) {
      uint64_t items;
      random_scatter(&r, dt, mode, &items);
    }
  }
}
END_TEST

/* Builds data f32[n], indices i64[m,1], updates f32[m] with given values. */
static void scatter_1d(tcase *t, tu_rng *r, int mode, const float *data, int64_t n,
                       const int64_t *idx, const float *upd, int64_t m) {
  tc_init(t);
  int64_t id[2] = {m, 1};
  tc_param(t, r, ACCY_DTYPE_F32, 1, &n);
  tc_param(t, r, ACCY_DTYPE_I64, 2, id);
  tc_param(t, r, ACCY_DTYPE_F32, 1, &m);
  memcpy(t->bufs[1], data, (size_t)n * 4);
  memcpy(t->bufs[2], idx, (size_t)m * 8);
  memcpy(t->bufs[3], upd, (size_t)m * 4);
  int64_t attrs[] = {mode};
  accy__type rt = tu_type(ACCY_DTYPE_F32, 1, &n);
  tc_op(t, ACCY_OP_SCATTER, &rt, attrs, 1);
}

/* Duplicates apply in row-major order of the updates: replace keeps the
 * last one, and float addition is not associative, so the sum shows the
 * order: ((0 + 1e8) + 1) - 1e8 = 0 in f32, but (0 + 1) + (1e8 - 1e8) = 1. */
START_TEST(test_scatter_duplicates_apply_in_order) {
  tu_rng r;
  tu_rng_seed(&r, 7);
  tcase t;
  static const float data[] = {0, 0, 0, 5};
  static const int64_t idx[] = {0, 1, 0, 1, 2, 0, 2, -4};
  static const float upd[] = {1e8f, 10, 1, 20, 7, -1e8f, 8, 99};
  static const float want_replace[] = {99, 20, 8, 5};
  static const float want_add[] = {99, 30, 15, 5};
  scatter_1d(&t, &r, ACCY_SCATTER_REPLACE, data, 4, idx, upd, 8);
  tc_check(&t, want_replace, false, &r);
  tc_free(&t);
  scatter_1d(&t, &r, ACCY_SCATTER_ADD, data, 4, idx, upd, 8);
  /* ((1e8 + 1) - 1e8) + 99 with f32 rounding = 0 + 99. */
  tc_check(&t, want_add, false, &r);
  tc_free(&t);
}
END_TEST

/* Out-of-range updates (after one wrap of negatives) are dropped whole;
 * indices of every int dtype, including u64 above INT64_MAX. */
START_TEST(test_scatter_out_of_range_is_dropped) {
  tu_rng r;
  tu_rng_seed(&r, 8);
  tcase t;
  static const float data[] = {1, 2, 3};
  static const int64_t idx[] = {3, -4, INT64_MIN, INT64_MAX, -1, -3};
  static const float upd[] = {100, 200, 300, 400, 9, 7};
  static const float want[] = {7, 2, 9};
  scatter_1d(&t, &r, ACCY_SCATTER_REPLACE, data, 3, idx, upd, 6);
  tc_check(&t, want, false, &r);
  tc_free(&t);

  /* u64 indices: 2^64 - 1 is not -1. */
  tc_init(&t);
  int64_t n = 3, m = 2, id[2] = {2, 1};
  tc_param(&t, &r, ACCY_DTYPE_I32, 1, &n);
  tc_param(&t, &r, ACCY_DTYPE_U64, 2, id);
  tc_param(&t, &r, ACCY_DTYPE_I32, 1, &m);
  static const int32_t d32[] = {1, 2, 3}, u32[] = {50, 60}, w32[] = {1, 62, 3};
  static const uint64_t iu[] = {UINT64_MAX, 1};
  memcpy(t.bufs[1], d32, sizeof d32);
  memcpy(t.bufs[2], iu, sizeof iu);
  memcpy(t.bufs[3], u32, sizeof u32);
  int64_t attrs[] = {ACCY_SCATTER_ADD};
  accy__type rt = tu_type(ACCY_DTYPE_I32, 1, &n);
  tc_op(&t, ACCY_OP_SCATTER, &rt, attrs, 1);
  tc_check(&t, w32, false, &r);
  tc_free(&t);
}
END_TEST

/* Edge values of each mode: float max/min follow maximum/minimum (NaN
 * propagates, max(-0, +0) = +0), integers wrap, bool add is or. */
START_TEST(test_scatter_mode_edges) {
  tu_rng r;
  tu_rng_seed(&r, 9);
  tcase t;
  static const int64_t idx[] = {0, 1, 2, 3};
  static const float data[] = {-0.0f, 0.0f, 1.0f, -1.0f};
  float upd[] = {0.0f, -0.0f, NAN, 2.0f};
  float want_max[] = {0.0f, 0.0f, NAN, 2.0f};
  float want_min[] = {-0.0f, -0.0f, NAN, -1.0f};
  scatter_1d(&t, &r, ACCY_SCATTER_MAX, data, 4, idx, upd, 4);
  tc_check(&t, want_max, true, &r);
  ck_assert(signbit(want_max[0]) == 0);
  tc_free(&t);
  scatter_1d(&t, &r, ACCY_SCATTER_MIN, data, 4, idx, upd, 4);
  tc_check(&t, want_min, true, &r);
  tc_free(&t);

  /* i8 wraps. add: [127, 16] with 1 at 0 and 16 at 1 gives [-128, 32];
   * multiply: 16 then 1 both at 1 gives 16 * 16 = 256 -> 0, then 0. */
  static const int8_t d8[] = {127, 16};
  static const int8_t i_add[] = {0, 1}, u_add[] = {1, 16}, w_add[] = {-128, 32};
  static const int8_t i_mul[] = {1, 1}, u_mul[] = {16, 1}, w_mul[] = {127, 0};
  for (int mode = ACCY_SCATTER_ADD; mode <= ACCY_SCATTER_MULTIPLY; mode++) {
    bool add = mode == ACCY_SCATTER_ADD;
    tc_init(&t);
    int64_t n = 2, id[2] = {2, 1};
    tc_param(&t, &r, ACCY_DTYPE_I8, 1, &n);
    tc_param(&t, &r, ACCY_DTYPE_I8, 2, id);
    tc_param(&t, &r, ACCY_DTYPE_I8, 1, &n);
    memcpy(t.bufs[1], d8, 2);
    memcpy(t.bufs[2], add ? i_add : i_mul, 2);
    memcpy(t.bufs[3], add ? u_add : u_mul, 2);
    int64_t attrs[] = {mode};
    accy__type rt = tu_type(ACCY_DTYPE_I8, 1, &n);
    tc_op(&t, ACCY_OP_SCATTER, &rt, attrs, 1);
    tc_check(&t, add ? w_add : w_mul, false, &r);
    tc_free(&t);
  }
}
END_TEST

/* The iteration space: a large result with few updates is cut into many
 * parts (parallel), many updates into a small result run as one item, and
 * both give the reference under every split. Empty cases run nothing. */
START_TEST(test_scatter_parts) {
  tu_rng r;
  tu_rng_seed(&r, 10);
  for (int c = 0; c < 4; c++) {
    tcase t;
    tc_init(&t);
    int64_t d[2] = {c < 2 ? 4096 : 8, 64};
    int64_t m = c < 2 ? 37 : 20000;
    int64_t id[2] = {m, 1}, ud[2] = {m, 64};
    tc_param(&t, &r, ACCY_DTYPE_F32, 2, d);
    tc_param(&t, &r, ACCY_DTYPE_I32, 2, id);
    tc_param(&t, &r, ACCY_DTYPE_F32, 2, ud);
    for (int64_t i = 0; i < m; i++)
      ((int32_t *)t.bufs[2])[i] = (int32_t)tu_rng_range(&r, -d[0], d[0] - 1);
    int64_t attrs[] = {c % 2 ? ACCY_SCATTER_ADD : ACCY_SCATTER_REPLACE};
    accy__type rt = tu_type(ACCY_DTYPE_F32, 2, d);
    tc_op(&t, ACCY_OP_SCATTER, &rt, attrs, 1);
    void *want = ref_scatter(&t);
    uint64_t items = tc_check(&t, want, true, &r);
    if (c < 2)
      ck_assert_uint_ge(items, 8); /* 256 K elements, 37 index reads: many parts */
    else
      ck_assert_uint_eq(items, 1); /* 512 elements, 20000 updates: one ordered pass */
    free(want);
    tc_free(&t);
  }
}
END_TEST

/* ---- sort tests ------------------------------------------------------------------------ */

/* Random lines with ties: some elements copy an earlier element's bytes,
 * and zeros of both signs and NaNs come from the edge values. */
static void add_ties(tu_rng *r, int32_t dt, void *buf, uint64_t n) {
  size_t es = accy_dtype_size(dt);
  for (uint64_t i = 1; i < n; i++)
    if (tu_rng_range(r, 0, 2) == 0) {
      uint64_t j = (uint64_t)tu_rng_range(r, 0, (int64_t)i - 1);
      memcpy((char *)buf + i * es, (char *)buf + j * es, es);
    }
}

static void random_sort(tu_rng *r, int32_t dt, uint16_t op, int32_t rdt) {
  tcase t;
  tc_init(&t);
  uint32_t rank = (uint32_t)tu_rng_range(r, 1, 3);
  int64_t d[3];
  for (uint32_t a = 0; a < rank; a++) d[a] = tu_rng_range(r, tu_rng_range(r, 0, 15) ? 1 : 0, 7);
  uint32_t axis = (uint32_t)tu_rng_range(r, 0, rank - 1);
  d[axis] = tu_rng_range(r, 0, 9) ? tu_rng_range(r, 1, 70) : tu_rng_range(r, 0, 1);
  tc_param(&t, r, dt, rank, d);
  add_ties(r, dt, t.bufs[1], tu_elems(&t.p.nodes[0].type));
  int64_t attrs[] = {axis, tu_rng_range(r, 0, 1)};
  accy__type rt = tu_type(op == ACCY_OP_SORT ? dt : rdt, rank, d);
  tc_op(&t, op, &rt, attrs, 2);
  void *want = ref_sort(&t, op == ACCY_OP_SORT, rt.dtype);
  tc_check(&t, want, false, r);
  free(want);
  tc_free(&t);
}

START_TEST(test_sort_random) {
  tu_rng r;
  tu_rng_seed(&r, 0x5047000u + (uint64_t)_i);
  int32_t dt = ALL_DTYPES[_i];
  for (int rep = 0; rep < 60; rep++) {
    random_sort(&r, dt, ACCY_OP_SORT, dt);
    random_sort(&r, dt, ACCY_OP_ARGSORT, ACCY_DTYPE_I32);
    random_sort(&r, dt, ACCY_OP_ARGSORT, ACCY_DTYPE_I64);
  }
}
END_TEST

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* Zeros of both signs and NaNs of several payloads keep their input order
 * (stability visible in the bytes); NaN is last ascending, first
 * descending; -0 and +0 are equal, so they stay interleaved as given. */
START_TEST(test_sort_zeros_and_nans_are_stable) {
  tu_rng r;
  tu_rng_seed(&r, 11);
  static const uint32_t in[] = {0x7fc00001u, 0x00000000u, 0x80000000u, 0xff800000u,
                                0x3f800000u, 0xffc00002u, 0x80000000u, 0x7f800000u,
                                0x00000000u, 0x7fc00003u, 0xbf800000u, 0x00000001u};
  /* Ascending: -inf, -1, then the zeros in input order (+0 -0 -0 +0), the
   * denormal, 1, inf, then the NaNs in input order. */
  static const uint32_t asc[] = {0xff800000u, 0xbf800000u, 0x00000000u, 0x80000000u,
                                 0x80000000u, 0x00000000u, 0x00000001u, 0x3f800000u,
                                 0x7f800000u, 0x7fc00001u, 0xffc00002u, 0x7fc00003u};
  static const uint32_t desc[] = {0x7fc00001u, 0xffc00002u, 0x7fc00003u, 0x7f800000u,
                                  0x3f800000u, 0x00000001u, 0x00000000u, 0x80000000u,
                                  0x80000000u, 0x00000000u, 0xbf800000u, 0xff800000u};
  static const int64_t pos_asc[] = {3, 10, 1, 2, 6, 8, 11, 4, 7, 0, 5, 9};
  static const int64_t pos_desc[] = {0, 5, 9, 7, 4, 11, 1, 2, 6, 8, 10, 3};
  for (int descending = 0; descending < 2; descending++) {
    for (int arg = 0; arg < 2; arg++) {
      tcase t;
      tc_init(&t);
      int64_t n = 12;
      tc_param(&t, &r, ACCY_DTYPE_F32, 1, &n);
      memcpy(t.bufs[1], in, sizeof in);
      int64_t attrs[] = {0, descending};
      accy__type rt = tu_type(arg ? ACCY_DTYPE_I64 : ACCY_DTYPE_F32, 1, &n);
      tc_op(&t, arg ? ACCY_OP_ARGSORT : ACCY_OP_SORT, &rt, attrs, 2);
      const void *want = arg ? (const void *)(descending ? pos_desc : pos_asc)
                             : (const void *)(descending ? desc : asc);
      tc_check(&t, want, false, &r);
      /* The reference agrees with the hand-written expectation. */
      void *ref = ref_sort(&t, !arg, rt.dtype);
      ck_assert(memcmp(ref, want, sizeof in * (arg ? 2 : 1)) == 0);
      free(ref);
      tc_free(&t);
    }
  }
  ck_assert_uint_eq(f32_bits(-0.0f), 0x80000000u);
}
END_TEST

/* Long lines in orders that trouble quicksorts (sorted, reversed, all
 * equal, organ pipe, few distinct values, sawtooth), along a strided axis
 * too. */
START_TEST(test_sort_long_lines) {
  tu_rng r;
  tu_rng_seed(&r, 12);
  const int64_t n = 5000;
  for (int pattern = 0; pattern < 6; pattern++) {
    for (int arg = 0; arg < 2; arg++) {
      tcase t;
      tc_init(&t);
      int64_t d[2] = {n, 2};
      tc_param(&t, &r, ACCY_DTYPE_I32, 2, d);
      int32_t *x = t.bufs[1];
      for (int64_t i = 0; i < n; i++) {
        int32_t v;
        switch (pattern) {
          case 0: v = (int32_t)i; break;
          case 1: v = (int32_t)(n - i); break;
          case 2: v = 7; break;
          case 3: v = (int32_t)(i < n / 2 ? i : n - i); break;
          case 4: v = (int32_t)tu_rng_range(&r, 0, 3); break;
          default: v = (int32_t)(i % 37); break;
        }
        x[2 * i] = v;
        x[2 * i + 1] = -v;
      }
      int64_t attrs[] = {0, pattern % 2};
      accy__type rt = tu_type(arg ? ACCY_DTYPE_I64 : ACCY_DTYPE_I32, 2, d);
      tc_op(&t, arg ? ACCY_OP_ARGSORT : ACCY_OP_SORT, &rt, attrs, 2);
      void *want = ref_sort(&t, !arg, rt.dtype);
      tc_check(&t, want, false, &r);
      free(want);
      tc_free(&t);
    }
  }
}
END_TEST

/* Argsort of equal keys keeps input order in both directions (TopK's rule:
 * the lower index first). */
START_TEST(test_argsort_ties_keep_input_order) {
  tu_rng r;
  tu_rng_seed(&r, 13);
  static const int16_t in[] = {3, 1, 3, 2, 1, 3};
  static const int32_t asc[] = {1, 4, 3, 0, 2, 5}, desc[] = {0, 2, 5, 3, 1, 4};
  for (int descending = 0; descending < 2; descending++) {
    tcase t;
    tc_init(&t);
    int64_t n = 6;
    tc_param(&t, &r, ACCY_DTYPE_I16, 1, &n);
    memcpy(t.bufs[1], in, sizeof in);
    int64_t attrs[] = {0, descending};
    accy__type rt = tu_type(ACCY_DTYPE_I32, 1, &n);
    tc_op(&t, ACCY_OP_ARGSORT, &rt, attrs, 2);
    tc_check(&t, descending ? desc : asc, false, &r);
    tc_free(&t);
  }
}
END_TEST

/* The kernel refuses what verify would (a hand-made IR): COMPILE_FAILED
 * with the op named, never a crash. */
START_TEST(test_prepare_refuses_unverified_ir) {
  tu_rng r;
  tu_rng_seed(&r, 14);
  tcase t;
  tc_init(&t);
  int64_t n = 4;
  tc_param(&t, &r, ACCY_DTYPE_F32, 1, &n);
  int64_t attrs[] = {0, 0};
  accy__type rt = tu_type(ACCY_DTYPE_U8, 1, &n);
  tc_op(&t, ACCY_OP_ARGSORT, &rt, attrs, 2);
  accy__arena arena;
  accy__arena_init(&arena);
  accy__kernel k;
  ck_assert_int_eq(accy__kernel_prepare(&t.p, t.node, &arena, &k), ACCY_STATUS_COMPILE_FAILED);
  ck_assert_msg(strstr(accy__cause(), "node 1 (argsort): no kernel for this result dtype"),
                "cause: %s", accy__cause());
  accy__arena_free(&arena);
  tc_free(&t);
}
END_TEST

/* ---- through a session ---------------------------------------------------------------- */

/* TopK-like use: values and positions of a row sorted descending, and a
 * scatter-add; the program encodes as wire 1.1 and runs on the pool. */
START_TEST(test_session_runs_wire_1_1_ops) {
  accy__program p;
  accy__program_init(&p);
  int64_t d23[2] = {2, 3}, d21[2] = {2, 1};
  accy__type tx = tu_type(ACCY_DTYPE_F32, 2, d23), ti = tu_type(ACCY_DTYPE_I64, 2, d21),
             tp = tu_type(ACCY_DTYPE_I64, 2, d23);
  uint32_t x, ix, s, a, sc;
  ck_assert_int_eq(accy__program_add_node(&p, ACCY_OP_PARAMETER, &tx, NULL, 0, NULL, 0, "x", 1,
                                          NULL, 0, &x), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__program_add_node(&p, ACCY_OP_PARAMETER, &ti, NULL, 0, NULL, 0, "i", 1,
                                          NULL, 0, &ix), ACCY_STATUS_OK);
  int64_t sort_attrs[] = {1, 1};
  ck_assert_int_eq(accy__program_add_node(&p, ACCY_OP_SORT, &tx, &x, 1, sort_attrs, 2, NULL, 0,
                                          NULL, 0, &s), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__program_add_node(&p, ACCY_OP_ARGSORT, &tp, &x, 1, sort_attrs, 2, NULL, 0,
                                          NULL, 0, &a), ACCY_STATUS_OK);
  /* Index vectors of one entry address rows, so the updates are [2] + [3]:
   * x itself. */
  uint32_t sc_ops[] = {x, ix, x};
  int64_t add_attrs[] = {ACCY_SCATTER_ADD};
  ck_assert_int_eq(accy__program_add_node(&p, ACCY_OP_SCATTER, &tx, sc_ops, 3, add_attrs, 1,
                                          NULL, 0, NULL, 0, &sc), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__program_add_output(&p, s, "values", 6), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__program_add_output(&p, a, "indices", 7), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__program_add_output(&p, sc, "scattered", 9), ACCY_STATUS_OK);
  void *bytes = NULL;
  size_t size = 0;
  ck_assert_int_eq(accy__wire_encode(&p, &bytes, &size), ACCY_STATUS_OK);
  ck_assert_uint_eq(((const uint8_t *)bytes)[6], 1); /* minor 1: the program uses 1.1 ops */
  accy__program_free(&p);

  accy_session *ses = NULL;
  ck_assert_int_eq(accy_session_create(NULL, &ses), ACCY_STATUS_OK);
  accy_handle h;
  accy_status st = accy_session_compile(ses, bytes, size, &h);
  ck_assert_msg(st == ACCY_STATUS_OK, "compile: %s", accy_session_last_cause(ses));
  accy__free(bytes);
  float xv[6] = {1, 3, 2, 5, 5, -1};
  int64_t iv[2] = {-1, -1}; /* both rows of x added onto row 1, in order */
  float values[6], scattered[6];
  int64_t indices[6];
  accy_input in[2] = {{xv, sizeof xv}, {iv, sizeof iv}};
  accy_output out[3] = {{values, sizeof values}, {indices, sizeof indices},
                        {scattered, sizeof scattered}};
  st = accy_session_invoke(ses, h, in, 2, out, 3);
  ck_assert_msg(st == ACCY_STATUS_OK, "invoke: %s", accy_session_last_cause(ses));
  static const float want_v[6] = {3, 2, 1, 5, 5, -1};
  static const int64_t want_i[6] = {1, 2, 0, 0, 1, 2};
  static const float want_s[6] = {1, 3, 2, 11, 13, 0};
  ck_assert(memcmp(values, want_v, sizeof want_v) == 0);
  ck_assert(memcmp(indices, want_i, sizeof want_i) == 0);
  ck_assert(memcmp(scattered, want_s, sizeof want_s) == 0);
  ck_assert_int_eq(accy_session_release(ses, h), ACCY_STATUS_OK);
  accy_session_destroy(ses);
}
END_TEST

static Suite *scatter_sort_suite(void) {
  Suite *s = suite_create("scatter_sort");
  TCase *tc = tcase_create("scatter");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_scatter_random, 0, (int)N_ALL);
  tcase_add_test(tc, test_scatter_duplicates_apply_in_order);
  tcase_add_test(tc, test_scatter_out_of_range_is_dropped);
  tcase_add_test(tc, test_scatter_mode_edges);
  tcase_add_test(tc, test_scatter_parts);
  suite_add_tcase(s, tc);
  tc = tcase_create("sort");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_sort_random, 0, (int)N_ALL);
  tcase_add_test(tc, test_sort_zeros_and_nans_are_stable);
  tcase_add_test(tc, test_sort_long_lines);
  tcase_add_test(tc, test_argsort_ties_keep_input_order);
  tcase_add_test(tc, test_prepare_refuses_unverified_ir);
  suite_add_tcase(s, tc);
  tc = tcase_create("session");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_session_runs_wire_1_1_ops);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(scatter_sort_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
