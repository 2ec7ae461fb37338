/* tests/check_data.c: the data-movement kernels (src/kernels/data.c).
 *
 * Each case builds a tiny program (parameters, then the op under test),
 * prepares the kernel, fills the operands with random data including edge
 * values, and runs the tile function over the whole iteration space and over
 * several random splits run in shuffled order. Every run must equal a
 * per-element reference written here from docs/ops.md, byte for byte (these
 * ops move bytes, so NaN payloads must survive too; iota is exactly defined).
 * Result buffers start filled with different garbage per run, so an element
 * no tile writes shows up as a difference. No session, no threads. */
#include "src/internal.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/base/alloc.h"
#include "src/ir/ir.h"
#include "src/kernels/kernels.h"
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

/* ---- program and buffers -------------------------------------------------- */

#define MAX_OPS 1100

typedef struct tcase {
  accy__program p;
  uint32_t node;  /* the op under test */
  uint32_t n_ops; /* parameters added so far: node i is operand i */
  void **bufs;    /* [0] result, [1 + i] operand i */
} tcase;

static void tc_init(tcase *t) {
  accy__program_init(&t->p);
  t->node = UINT32_MAX;
  t->n_ops = 0;
  t->bufs = calloc(MAX_OPS + 1, sizeof(void *));
  ck_assert_ptr_nonnull(t->bufs);
}

static void tc_free(tcase *t) {
  for (uint32_t i = 0; i <= t->n_ops; i++) free(t->bufs[i]);
  free(t->bufs);
  accy__program_free(&t->p);
}

static const accy__type *op_type(const tcase *t, uint32_t i) { return &t->p.nodes[i].type; }
static const accy__node *op_node(const tcase *t) { return &t->p.nodes[t->node]; }

/* Adds a parameter with a buffer of random data (edge values included). */
static uint32_t tc_param(tcase *t, tu_rng *r, int32_t dtype, uint32_t rank, const int64_t *dims) {
  ck_assert_uint_lt(t->n_ops, MAX_OPS);
  accy__type ty = tu_type(dtype, rank, dims);
  char name[16];
  snprintf(name, sizeof name, "p%u", t->n_ops);
  uint32_t idx;
  ck_assert_int_eq(accy__program_add_node(&t->p, ACCY_OP_PARAMETER, &ty, NULL, 0, NULL, 0, name,
                                          strlen(name), NULL, 0, &idx),
                   ACCY_STATUS_OK);
  ck_assert_uint_eq(idx, t->n_ops);
  uint64_t n = tu_elems(&ty);
  void *b = malloc(n * accy_dtype_size(dtype) + 1);
  ck_assert_ptr_nonnull(b);
  tu_fill_random(r, dtype, b, n, true, 0);
  t->bufs[1 + t->n_ops] = b;
  return t->n_ops++;
}

/* A scalar int parameter holding |v| (converted as C does). */
static uint32_t tc_scalar(tcase *t, tu_rng *r, int32_t dtype, int64_t v) {
  uint32_t i = tc_param(t, r, dtype, 0, NULL);
  tu_set_i64(dtype, t->bufs[1 + i], 0, v);
  return i;
}

/* Adds the op under test; its operands are all parameters, in order. */
static void tc_op(tcase *t, uint16_t op, int32_t dtype, uint32_t rank, const int64_t *dims,
                  const int64_t *attrs, uint32_t n_attrs) {
  accy__type ty = tu_type(dtype, rank, dims);
  uint32_t ops[MAX_OPS];
  for (uint32_t i = 0; i < t->n_ops; i++) ops[i] = i;
  ck_assert_int_eq(accy__program_add_node(&t->p, op, &ty, ops, t->n_ops, attrs, n_attrs, NULL, 0,
                                          NULL, 0, &t->node),
                   ACCY_STATUS_OK);
}

/* ---- running kernels ------------------------------------------------------ */


static void expect_bytes(const tcase *t, const void *got, const void *want, const char *what) {
  const accy__type *ty = &op_node(t)->type;
  size_t es = accy_dtype_size(ty->dtype);
  uint64_t n = tu_elems(ty);
  for (uint64_t i = 0; i < n; i++) {
    const unsigned char *g = (const unsigned char *)got + i * es;
    const unsigned char *w = (const unsigned char *)want + i * es;
    if (memcmp(g, w, es) != 0) {
      uint64_t gv = 0, wv = 0;
      memcpy(&gv, g, es);
      memcpy(&wv, w, es);
      char buf[96];
      ck_abort_msg("%s (%s %s): element %llu of %llu is 0x%llx, expected 0x%llx", what,
                   accy__op_name(op_node(t)->op), accy__type_format(ty, buf, sizeof buf),
                   (unsigned long long)i, (unsigned long long)n, (unsigned long long)gv,
                   (unsigned long long)wv);
    }
  }
}

/* Prepares the kernel and checks whole-range and split runs against
 * |expect|. With |in_place| (dynamic_update_slice) also runs with the
 * result buffer equal to operand 0's, holding a copy of x. */
static void tc_check(tcase *t, const void *expect, tu_rng *r, bool in_place) {
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
  size_t nb = bytes + 1;
  unsigned char *full = malloc(nb), *part = malloc(nb);
  memset(full, 0xCD, nb);
  t->bufs[0] = full;
  k.run(&k, t->bufs, 0, k.n_items);
  expect_bytes(t, full, expect, "whole range");
  for (int mode = 0; mode < 3; mode++) {
    memset(part, 0xA0 + mode, nb);
    t->bufs[0] = part;
    tu_run_kernel_split(&k, t->bufs, r, mode);
    expect_bytes(t, part, expect, mode == 0 ? "one item per tile" : "random tiles");
  }
  if (in_place) {
    void **b2 = malloc((t->n_ops + 1) * sizeof *b2);
    memcpy(b2, t->bufs, (t->n_ops + 1) * sizeof *b2);
    for (int mode = 0; mode < 2; mode++) {
      memcpy(part, t->bufs[1], bytes);
      b2[0] = b2[1] = part;
      tu_run_kernel_split(&k, b2, r, mode + 1);
      expect_bytes(t, part, expect, "in place");
    }
    free(b2);
  }
  t->bufs[0] = NULL;
  free(full);
  free(part);
  accy__arena_free(&arena);
}

static void tc_expect_fail(tcase *t, const char *needle) {
  accy__arena arena;
  accy__arena_init(&arena);
  accy__kernel k;
  accy_status st = accy__kernel_prepare(&t->p, t->node, &arena, &k);
  ck_assert_msg(st == ACCY_STATUS_COMPILE_FAILED, "got %s, expected COMPILE_FAILED",
                accy_status_name(st));
  ck_assert_msg(strstr(accy__cause(), needle) != NULL, "cause '%s' lacks '%s'", accy__cause(),
                needle);
  accy__arena_free(&arena);
}

/* ---- the reference -------------------------------------------------------- */

static void unravel(uint64_t f, const accy__type *t, int64_t *idx) {
  for (int a = (int)t->rank - 1; a >= 0; a--) {
    idx[a] = (int64_t)(f % (uint64_t)t->dims[a]);
    f /= (uint64_t)t->dims[a];
  }
}

static uint64_t ravel(const accy__type *t, const int64_t *idx) {
  uint64_t f = 0;
  for (uint32_t a = 0; a < t->rank; a++) f = f * (uint64_t)t->dims[a] + (uint64_t)idx[a];
  return f;
}

/* An int operand's element as a mathematical integer. */
static __int128 ref_int(int32_t dtype, const void *buf, uint64_t i) {
  if (dtype == ACCY_DTYPE_U64) return (__int128)((const uint64_t *)buf)[i];
  return tu_get_i64(dtype, buf, i);
}

static int64_t clamp128(__int128 v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : (int64_t)v;
}

/* Where a result element comes from: element |elem| of operand |op|. */
typedef struct src_ref {
  uint32_t op;
  uint64_t elem;
} src_ref;
typedef src_ref (*map_fn)(const tcase *t, const int64_t *o);

static void *ref_map(const tcase *t, map_fn fn) {
  const accy__type *ty = &op_node(t)->type;
  size_t es = accy_dtype_size(ty->dtype);
  uint64_t n = tu_elems(ty);
  unsigned char *out = malloc(n * es + 1);
  int64_t o[ACCY_MAX_RANK];
  for (uint64_t f = 0; f < n; f++) {
    unravel(f, ty, o);
    src_ref s = fn(t, o);
    memcpy(out + f * es, (const unsigned char *)t->bufs[1 + s.op] + s.elem * es, es);
  }
  return out;
}

static src_ref map_reshape(const tcase *t, const int64_t *o) {
  return (src_ref){0, ravel(&op_node(t)->type, o)};
}

static src_ref map_broadcast(const tcase *t, const int64_t *o) {
  const accy__type *x = op_type(t, 0);
  int64_t xi[ACCY_MAX_RANK];
  for (uint32_t i = 0; i < x->rank; i++) xi[i] = x->dims[i] == 1 ? 0 : o[op_node(t)->attrs[i]];
  return (src_ref){0, ravel(x, xi)};
}

static src_ref map_transpose(const tcase *t, const int64_t *o) {
  const accy__type *x = op_type(t, 0);
  int64_t xi[ACCY_MAX_RANK];
  for (uint32_t i = 0; i < x->rank; i++) xi[op_node(t)->attrs[i]] = o[i];
  return (src_ref){0, ravel(x, xi)};
}

static src_ref map_slice(const tcase *t, const int64_t *o) {
  const accy__type *x = op_type(t, 0);
  const int64_t *at = op_node(t)->attrs;
  int64_t xi[ACCY_MAX_RANK];
  for (uint32_t i = 0; i < x->rank; i++) xi[i] = at[i] + o[i] * at[2 * x->rank + i];
  return (src_ref){0, ravel(x, xi)};
}

static src_ref map_reverse(const tcase *t, const int64_t *o) {
  const accy__type *x = op_type(t, 0);
  const accy__node *nd = op_node(t);
  int64_t xi[ACCY_MAX_RANK];
  for (uint32_t i = 0; i < x->rank; i++) xi[i] = o[i];
  for (uint32_t j = 0; j < nd->n_attrs; j++) {
    int64_t a = nd->attrs[j];
    xi[a] = x->dims[a] - 1 - o[a];
  }
  return (src_ref){0, ravel(x, xi)};
}

static src_ref map_pad(const tcase *t, const int64_t *o) {
  const accy__type *x = op_type(t, 0);
  const int64_t *at = op_node(t)->attrs;
  const uint32_t r = x->rank;
  int64_t xi[ACCY_MAX_RANK];
  for (uint32_t i = 0; i < r; i++) {
    __int128 pos = (__int128)o[i] - at[i], step = (__int128)at[2 * r + i] + 1;
    if (pos < 0 || pos % step != 0 || pos / step >= x->dims[i]) return (src_ref){1, 0};
    xi[i] = (int64_t)(pos / step);
  }
  return (src_ref){0, ravel(x, xi)};
}

static src_ref map_concat(const tcase *t, const int64_t *o) {
  const uint32_t c = (uint32_t)op_node(t)->attrs[0];
  int64_t off = o[c], xi[ACCY_MAX_RANK];
  for (uint32_t i = 0; i < t->n_ops; i++) {
    const accy__type *x = op_type(t, i);
    if (off < x->dims[c]) {
      memcpy(xi, o, sizeof xi);
      xi[c] = off;
      return (src_ref){i, ravel(x, xi)};
    }
    off -= x->dims[c];
  }
  ck_abort_msg("concat reference: column out of range");
  return (src_ref){0, 0};
}

static src_ref map_gather(const tcase *t, const int64_t *o) {
  const accy__type *d = op_type(t, 0), *it = op_type(t, 1);
  const uint32_t axis = (uint32_t)op_node(t)->attrs[0];
  __int128 v = ref_int(it->dtype, t->bufs[2], ravel(it, o + axis));
  if (v < 0) v += d->dims[axis];
  int64_t xi[ACCY_MAX_RANK];
  for (uint32_t a = 0; a < axis; a++) xi[a] = o[a];
  xi[axis] = clamp128(v, 0, d->dims[axis] - 1);
  for (uint32_t a = axis + 1; a < d->rank; a++) xi[a] = o[a - 1 + it->rank];
  return (src_ref){0, ravel(d, xi)};
}

static src_ref map_dslice(const tcase *t, const int64_t *o) {
  const accy__type *x = op_type(t, 0);
  const int64_t *sizes = op_node(t)->attrs;
  int64_t xi[ACCY_MAX_RANK];
  for (uint32_t i = 0; i < x->rank; i++) {
    __int128 s = ref_int(op_type(t, 1 + i)->dtype, t->bufs[2 + i], 0);
    xi[i] = clamp128(s, 0, x->dims[i] - sizes[i]) + o[i];
  }
  return (src_ref){0, ravel(x, xi)};
}

static src_ref map_dus(const tcase *t, const int64_t *o) {
  const accy__type *x = op_type(t, 0), *u = op_type(t, 1);
  int64_t ui[ACCY_MAX_RANK];
  bool inside = true;
  for (uint32_t i = 0; i < x->rank; i++) {
    __int128 s = ref_int(op_type(t, 2 + i)->dtype, t->bufs[3 + i], 0);
    ui[i] = o[i] - clamp128(s, 0, x->dims[i] - u->dims[i]);
    if (ui[i] < 0 || ui[i] >= u->dims[i]) inside = false;
  }
  return inside ? (src_ref){1, ravel(u, ui)} : (src_ref){0, ravel(x, o)};
}

static void *ref_iota(const tcase *t) {
  const accy__type *ty = &op_node(t)->type;
  const uint32_t axis = (uint32_t)op_node(t)->attrs[0];
  uint64_t n = tu_elems(ty);
  void *out = malloc(n * accy_dtype_size(ty->dtype) + 1);
  int64_t o[ACCY_MAX_RANK];
  for (uint64_t f = 0; f < n; f++) {
    unravel(f, ty, o);
    /* Indices here stay below 2^24, so the f32 step of tu_set_f64 is exact
     * and f16/bf16 get one correct rounding. */
    if (ty->dtype == ACCY_DTYPE_F32 || ty->dtype == ACCY_DTYPE_F64 ||
        ty->dtype == ACCY_DTYPE_F16 || ty->dtype == ACCY_DTYPE_BF16)
      tu_set_f64(ty->dtype, out, f, (double)o[axis]);
    else
      tu_set_i64(ty->dtype, out, f, o[axis]);
  }
  return out;
}

/* Runs the reference for the op under test and checks the kernel. */
static void check_map(tcase *t, map_fn fn, tu_rng *r) {
  void *want = ref_map(t, fn);
  tc_check(t, want, r, op_node(t)->op == ACCY_OP_DYNAMIC_UPDATE_SLICE);
  free(want);
}

/* ---- random shapes -------------------------------------------------------- */

/* Dims small enough that rank 8 stays cheap; with |zeros|, now and then 0. */
static void rand_dims(tu_rng *r, uint32_t rank, int64_t *dims, bool zeros) {
  int64_t maxd = rank <= 2 ? 9 : rank <= 4 ? 5 : 3;
  for (uint32_t i = 0; i < rank; i++) {
    dims[i] = tu_rng_range(r, 1, maxd);
    if (zeros && tu_rng_next(r) % 16 == 0) dims[i] = 0;
  }
}

static void rand_perm(tu_rng *r, uint32_t n, int64_t *perm) {
  for (uint32_t i = 0; i < n; i++) perm[i] = i;
  for (uint32_t i = n; i > 1; i--) {
    uint32_t j = (uint32_t)(tu_rng_next(r) % i);
    int64_t x = perm[i - 1];
    perm[i - 1] = perm[j];
    perm[j] = x;
  }
}

static int32_t rand_dtype(tu_rng *r) { return ALL_DTYPES[tu_rng_next(r) % N_ALL]; }

/* A start or index value: mostly near the valid range, sometimes extreme
 * (stored with C conversion, so -1 in a u64 is 2^64 - 1). */
static int64_t rand_index(tu_rng *r, int64_t extent) {
  static const int64_t extremes[] = {INT64_MIN, INT64_MAX, INT64_MIN + 1, -1, 255, 256, -129,
                                     INT64_C(1) << 62, 65535, 65536, 4294967295};
  if (tu_rng_next(r) % 4 == 0) return extremes[tu_rng_next(r) % ACCY_ARRAY_SIZE(extremes)];
  return tu_rng_range(r, -extent - 2, extent + 2);
}

/* ---- reshape -------------------------------------------------------------- */

static void reshape_case(tu_rng *r, int32_t dt, uint32_t xr, const int64_t *xd, uint32_t rr,
                         const int64_t *rd) {
  tcase t;
  tc_init(&t);
  tc_param(&t, r, dt, xr, xd);
  tc_op(&t, ACCY_OP_RESHAPE, dt, rr, rd, NULL, 0);
  check_map(&t, map_reshape, r);
  tc_free(&t);
}

START_TEST(test_reshape) {
  tu_rng r;
  tu_rng_seed(&r, 101);
  for (size_t di = 0; di < N_ALL; di++) {
    for (int c = 0; c < 10; c++) {
      uint32_t xr = (uint32_t)tu_rng_range(&r, 0, 8);
      int64_t xd[8], rd[8], perm[8];
      rand_dims(&r, xr, xd, true);
      /* Same elements: the dims shuffled, with 1s inserted. */
      rand_perm(&r, xr, perm);
      uint32_t rr = 0;
      for (uint32_t i = 0; i < xr; i++) {
        if (rr < 8 - (xr - i) && tu_rng_next(&r) % 4 == 0) rd[rr++] = 1;
        rd[rr++] = xd[perm[i]];
      }
      reshape_case(&r, ALL_DTYPES[di], xr, xd, rr, rd);
    }
  }
  /* Long runs split into many chunks, and zero elements into rank 1. */
  int64_t a[2] = {300, 401}, b[1] = {120300}, z[3] = {5, 0, 3}, z1[1] = {0};
  reshape_case(&r, ACCY_DTYPE_U16, 2, a, 1, b);
  reshape_case(&r, ACCY_DTYPE_F64, 1, b, 2, a);
  reshape_case(&r, ACCY_DTYPE_I8, 3, z, 1, z1);
}
END_TEST

/* ---- broadcast_in_dim ----------------------------------------------------- */

START_TEST(test_broadcast) {
  tu_rng r;
  tu_rng_seed(&r, 202);
  for (size_t di = 0; di < N_ALL; di++) {
    for (int c = 0; c < 12; c++) {
      uint32_t xr = (uint32_t)tu_rng_range(&r, 0, 4);
      uint32_t rr = xr + (uint32_t)tu_rng_range(&r, 0, 8 - xr > 3 ? 3 : 8 - xr);
      int64_t rd[8], xd[8], axes[8];
      rand_dims(&r, rr, rd, true);
      /* Any distinct axes, not necessarily increasing. */
      rand_perm(&r, rr, axes);
      for (uint32_t i = 0; i < xr; i++) xd[i] = tu_rng_next(&r) % 3 == 0 ? 1 : rd[axes[i]];
      tcase t;
      tc_init(&t);
      tc_param(&t, &r, ALL_DTYPES[di], xr, xd);
      tc_op(&t, ACCY_OP_BROADCAST_IN_DIM, ALL_DTYPES[di], rr, rd, axes, xr);
      check_map(&t, map_broadcast, &r);
      tc_free(&t);
    }
  }
  /* A scalar into one long row, and a column into long rows. */
  int64_t big[2] = {3, 9000}, col[1] = {3}, zero_axes[1] = {0};
  tcase t;
  tc_init(&t);
  tc_param(&t, &r, ACCY_DTYPE_F32, 0, NULL);
  tc_op(&t, ACCY_OP_BROADCAST_IN_DIM, ACCY_DTYPE_F32, 2, big, NULL, 0);
  check_map(&t, map_broadcast, &r);
  tc_free(&t);
  tc_init(&t);
  tc_param(&t, &r, ACCY_DTYPE_U16, 1, col);
  tc_op(&t, ACCY_OP_BROADCAST_IN_DIM, ACCY_DTYPE_U16, 2, big, zero_axes, 1);
  check_map(&t, map_broadcast, &r);
  tc_free(&t);
}
END_TEST

/* ---- transpose ------------------------------------------------------------ */

static void transpose_case(tu_rng *r, int32_t dt, uint32_t rank, const int64_t *xd,
                           const int64_t *perm) {
  int64_t rd[8];
  for (uint32_t i = 0; i < rank; i++) rd[i] = xd[perm[i]];
  tcase t;
  tc_init(&t);
  tc_param(&t, r, dt, rank, xd);
  tc_op(&t, ACCY_OP_TRANSPOSE, dt, rank, rd, perm, rank);
  check_map(&t, map_transpose, r);
  tc_free(&t);
}

START_TEST(test_transpose) {
  tu_rng r;
  tu_rng_seed(&r, 303);
  for (size_t di = 0; di < N_ALL; di++) {
    for (int c = 0; c < 14; c++) {
      uint32_t rank = (uint32_t)tu_rng_range(&r, 0, 8);
      int64_t xd[8], perm[8];
      rand_dims(&r, rank, xd, true);
      rand_perm(&r, rank, perm);
      transpose_case(&r, ALL_DTYPES[di], rank, xd, perm);
    }
  }
}
END_TEST

/* Large transposes take the blocked path, with ragged edge blocks. */
START_TEST(test_transpose_large) {
  tu_rng r;
  tu_rng_seed(&r, 304);
  int64_t p2[2] = {1, 0}, p3[3] = {2, 0, 1}, p3b[3] = {1, 2, 0}, p4[4] = {3, 1, 2, 0};
  int64_t d2[2] = {300, 517}, d2b[2] = {2, 20000}, d3[3] = {37, 50, 67}, d4[4] = {7, 5, 3, 130};
  transpose_case(&r, ACCY_DTYPE_F32, 2, d2, p2);
  transpose_case(&r, ACCY_DTYPE_U8, 2, d2, p2);
  transpose_case(&r, ACCY_DTYPE_F64, 2, d2b, p2);
  transpose_case(&r, ACCY_DTYPE_BF16, 3, d3, p3);
  transpose_case(&r, ACCY_DTYPE_I32, 3, d3, p3b);
  transpose_case(&r, ACCY_DTYPE_I64, 4, d4, p4);
  /* Not pathologically slow: 1024 x 1024 f32 takes milliseconds. */
  int64_t dm[2] = {1024, 1024};
  transpose_case(&r, ACCY_DTYPE_F32, 2, dm, p2);
}
END_TEST

/* ---- slice ---------------------------------------------------------------- */

START_TEST(test_slice) {
  tu_rng r;
  tu_rng_seed(&r, 404);
  for (size_t di = 0; di < N_ALL; di++) {
    for (int c = 0; c < 14; c++) {
      uint32_t rank = (uint32_t)tu_rng_range(&r, 0, 7);
      int64_t xd[8], rd[8], at[24];
      rand_dims(&r, rank, xd, true);
      for (uint32_t i = 0; i < rank; i++) {
        int64_t start = tu_rng_range(&r, 0, xd[i]);
        int64_t limit = tu_rng_range(&r, start, xd[i]);
        /* A huge stride keeps at most one element. */
        int64_t stride = tu_rng_next(&r) % 8 == 0 ? INT64_MAX : tu_rng_range(&r, 1, 4);
        at[i] = start;
        at[rank + i] = limit;
        at[2 * rank + i] = stride;
        rd[i] = limit == start ? 0 : (limit - start - 1) / stride + 1;
      }
      tcase t;
      tc_init(&t);
      tc_param(&t, &r, ALL_DTYPES[di], rank, xd);
      tc_op(&t, ACCY_OP_SLICE, ALL_DTYPES[di], rank, rd, at, 3 * rank);
      check_map(&t, map_slice, &r);
      tc_free(&t);
    }
  }
  /* Long strided rows. */
  int64_t xd[2] = {4, 30000}, rd[2] = {2, 9999}, at[6] = {1, 3, 3, 30000, 2, 3};
  tcase t;
  tc_init(&t);
  tc_param(&t, &r, ACCY_DTYPE_I16, 2, xd);
  tc_op(&t, ACCY_OP_SLICE, ACCY_DTYPE_I16, 2, rd, at, 6);
  check_map(&t, map_slice, &r);
  tc_free(&t);
}
END_TEST

/* ---- pad ------------------------------------------------------------------ */

static void pad_case(tu_rng *r, int32_t dt, uint32_t rank, const int64_t *xd, const int64_t *at) {
  int64_t rd[8];
  for (uint32_t i = 0; i < rank; i++) {
    __int128 d = xd[i], in = at[2 * rank + i];
    __int128 len = (__int128)at[i] + at[rank + i] + d + (d > 0 ? (d - 1) * in : 0);
    ck_assert(len >= 0 && len < 1000000);
    rd[i] = (int64_t)len;
  }
  tcase t;
  tc_init(&t);
  tc_param(&t, r, dt, rank, xd);
  tc_param(&t, r, dt, 0, NULL);
  tc_op(&t, ACCY_OP_PAD, dt, rank, rd, at, 3 * rank);
  check_map(&t, map_pad, r);
  tc_free(&t);
}

START_TEST(test_pad) {
  tu_rng r;
  tu_rng_seed(&r, 505);
  for (size_t di = 0; di < N_ALL; di++) {
    for (int c = 0; c < 16; c++) {
      uint32_t rank = (uint32_t)tu_rng_range(&r, 0, 6);
      int64_t xd[8], at[24];
      rand_dims(&r, rank, xd, true);
      for (uint32_t i = 0; i < rank; i++) {
        int64_t in = tu_rng_range(&r, 0, 3);
        int64_t low = tu_rng_range(&r, -6, 6);
        int64_t base = low + xd[i] + (xd[i] > 0 ? (xd[i] - 1) * in : 0);
        int64_t len = tu_rng_range(&r, 0, rank > 3 ? 4 : 12);
        at[i] = low;
        at[rank + i] = len - base; /* any sign */
        at[2 * rank + i] = in;
      }
      pad_case(&r, ALL_DTYPES[di], rank, xd, at);
    }
  }
}
END_TEST

/* Rows longer than an item (chunks cut inside rows, between interior
 * holes) and attributes far outside the result. */
START_TEST(test_pad_edges) {
  tu_rng r;
  tu_rng_seed(&r, 506);
  {
    int64_t xd[2] = {3, 5000};
    int64_t at[6] = {1, -3, 1, 7, 2, 1}; /* low, high, interior */
    pad_case(&r, ACCY_DTYPE_F32, 2, xd, at);
    int64_t at2[6] = {-1, 5, 0, -4000, 0, 2}; /* rows cropped by 4000 at the end */
    pad_case(&r, ACCY_DTYPE_U8, 2, xd, at2);
    int64_t at3[6] = {0, 1, 0, 0, 0, 0}; /* plain copy of long rows */
    pad_case(&r, ACCY_DTYPE_F64, 2, xd, at3);
  }
  {
    /* Everything cropped away from below: all padding. */
    int64_t xd[1] = {10};
    int64_t at[3] = {INT64_MIN + 1, INT64_MAX - 5, 0}; /* result extent 5 */
    pad_case(&r, ACCY_DTYPE_I32, 1, xd, at);
    /* Axis 0: everything pushed past the end. Axis 1: one element, huge
     * interior (ignored). Axis 2: two elements 2^61 apart, the first one
     * cropped, the second at position 1. */
    int64_t big = INT64_C(1) << 61;
    int64_t xd3[3] = {3, 1, 2};
    int64_t at3[9] = {INT64_MAX - 3, 1, -big, 4 - 3 - (INT64_MAX - 3), 0, 0, 0, big, big};
    pad_case(&r, ACCY_DTYPE_I32, 3, xd3, at3);
    /* The same with axis 0 kept, to see the data land. */
    int64_t at4[9] = {0, 1, -big, 0, 0, 0, 0, big, big};
    pad_case(&r, ACCY_DTYPE_U16, 3, xd3, at4);
  }
  {
    /* Scalar. */
    pad_case(&r, ACCY_DTYPE_BF16, 0, NULL, NULL);
    /* Zero-size input padded into a non-empty result. */
    int64_t xd[2] = {0, 3}, at[6] = {2, 1, 1, 1, 3, 5};
    pad_case(&r, ACCY_DTYPE_I64, 2, xd, at);
  }
}
END_TEST

/* ---- concatenate ---------------------------------------------------------- */

START_TEST(test_concatenate) {
  tu_rng r;
  tu_rng_seed(&r, 606);
  for (size_t di = 0; di < N_ALL; di++) {
    for (int c = 0; c < 12; c++) {
      uint32_t rank = (uint32_t)tu_rng_range(&r, 1, 6);
      int64_t rd[8];
      rand_dims(&r, rank, rd, true);
      int64_t axis = tu_rng_range(&r, 0, rank - 1);
      uint32_t n = (uint32_t)tu_rng_range(&r, 1, 6);
      tcase t;
      tc_init(&t);
      rd[axis] = 0;
      for (uint32_t i = 0; i < n; i++) {
        int64_t xd[8];
        memcpy(xd, rd, sizeof xd);
        xd[axis] = tu_rng_next(&r) % 4 == 0 ? 0 : tu_rng_range(&r, 1, 4);
        rd[axis] += xd[axis];
        tc_param(&t, &r, ALL_DTYPES[di], rank, xd);
      }
      tc_op(&t, ACCY_OP_CONCATENATE, ALL_DTYPES[di], rank, rd, &axis, 1);
      check_map(&t, map_concat, &r);
      tc_free(&t);
    }
  }
  /* Many one-column operands; and rows longer than an item. */
  {
    tcase t;
    tc_init(&t);
    int64_t xd[2] = {7, 1}, rd[2] = {7, 0}, axis = 1;
    for (int i = 0; i < 1000; i++) {
      xd[1] = i % 10 == 3 ? 0 : 1;
      rd[1] += xd[1];
      tc_param(&t, &r, ACCY_DTYPE_U32, 2, xd);
    }
    tc_op(&t, ACCY_OP_CONCATENATE, ACCY_DTYPE_U32, 2, rd, &axis, 1);
    check_map(&t, map_concat, &r);
    tc_free(&t);
  }
  {
    tcase t;
    tc_init(&t);
    int64_t a[2] = {3, 5000}, b[2] = {3, 0}, c[2] = {3, 7000}, rd[2] = {3, 12000}, axis = 1;
    tc_param(&t, &r, ACCY_DTYPE_F16, 2, a);
    tc_param(&t, &r, ACCY_DTYPE_F16, 2, b);
    tc_param(&t, &r, ACCY_DTYPE_F16, 2, c);
    tc_op(&t, ACCY_OP_CONCATENATE, ACCY_DTYPE_F16, 2, rd, &axis, 1);
    check_map(&t, map_concat, &r);
    tc_free(&t);
  }
}
END_TEST

/* ---- reverse -------------------------------------------------------------- */

START_TEST(test_reverse) {
  tu_rng r;
  tu_rng_seed(&r, 707);
  for (size_t di = 0; di < N_ALL; di++) {
    for (int c = 0; c < 14; c++) {
      uint32_t rank = (uint32_t)tu_rng_range(&r, 0, 8);
      int64_t xd[8], axes[8];
      rand_dims(&r, rank, xd, true);
      rand_perm(&r, rank, axes); /* any order */
      uint32_t n = rank ? (uint32_t)tu_rng_range(&r, 0, rank) : 0;
      tcase t;
      tc_init(&t);
      tc_param(&t, &r, ALL_DTYPES[di], rank, xd);
      tc_op(&t, ACCY_OP_REVERSE, ALL_DTYPES[di], rank, xd, axes, n);
      check_map(&t, map_reverse, &r);
      tc_free(&t);
    }
  }
  int64_t xd[2] = {3, 10000}, axes[2] = {1, 0};
  tcase t;
  tc_init(&t);
  tc_param(&t, &r, ACCY_DTYPE_I64, 2, xd);
  tc_op(&t, ACCY_OP_REVERSE, ACCY_DTYPE_I64, 2, xd, axes, 2);
  check_map(&t, map_reverse, &r);
  tc_free(&t);
}
END_TEST

/* ---- iota ----------------------------------------------------------------- */

static void iota_case(tu_rng *r, int32_t dt, uint32_t rank, const int64_t *dims, int64_t axis) {
  tcase t;
  tc_init(&t);
  tc_op(&t, ACCY_OP_IOTA, dt, rank, dims, &axis, 1);
  void *want = ref_iota(&t);
  tc_check(&t, want, r, false);
  free(want);
  tc_free(&t);
}

START_TEST(test_iota) {
  tu_rng r;
  tu_rng_seed(&r, 808);
  for (size_t di = 0; di + 1 < N_ALL; di++) { /* every numeric dtype (bool last) */
    for (int c = 0; c < 12; c++) {
      uint32_t rank = (uint32_t)tu_rng_range(&r, 1, 8);
      int64_t dims[8];
      rand_dims(&r, rank, dims, true);
      iota_case(&r, ALL_DTYPES[di], rank, dims, tu_rng_range(&r, 0, rank - 1));
    }
  }
  /* Rounding: bf16 keeps 8 significant bits, f16 11 and overflows past
   * 65519; small ints wrap; long rows and long runs of one value. */
  int64_t d1[1] = {70000}, d2[2] = {600, 9}, d3[2] = {5, 9000};
  iota_case(&r, ACCY_DTYPE_F16, 1, d1, 0);
  iota_case(&r, ACCY_DTYPE_BF16, 1, d1, 0);
  iota_case(&r, ACCY_DTYPE_BF16, 2, d2, 0);
  iota_case(&r, ACCY_DTYPE_I8, 2, d2, 0);
  iota_case(&r, ACCY_DTYPE_U8, 2, d2, 0);
  iota_case(&r, ACCY_DTYPE_I16, 1, d1, 0);
  iota_case(&r, ACCY_DTYPE_F32, 2, d3, 1);
  iota_case(&r, ACCY_DTYPE_U64, 2, d3, 0);
}
END_TEST

/* ---- gather --------------------------------------------------------------- */

static void gather_case(tu_rng *r, int32_t dt, int32_t it, uint32_t dr, const int64_t *dd,
                        int64_t axis, uint32_t ir, const int64_t *id) {
  int64_t rd[16];
  uint32_t rr = 0;
  for (int64_t a = 0; a < axis; a++) rd[rr++] = dd[a];
  for (uint32_t a = 0; a < ir; a++) rd[rr++] = id[a];
  for (uint32_t a = (uint32_t)axis + 1; a < dr; a++) rd[rr++] = dd[a];
  ck_assert_uint_le(rr, 8);
  tcase t;
  tc_init(&t);
  tc_param(&t, r, dt, dr, dd);
  uint32_t ii = tc_param(&t, r, it, ir, id);
  accy__type ity = tu_type(it, ir, id);
  for (uint64_t j = 0; j < tu_elems(&ity); j++)
    tu_set_i64(it, t.bufs[1 + ii], j, rand_index(r, dd[axis]));
  tc_op(&t, ACCY_OP_GATHER, dt, rr, rd, &axis, 1);
  check_map(&t, map_gather, r);
  tc_free(&t);
}

START_TEST(test_gather) {
  tu_rng r;
  tu_rng_seed(&r, 909);
  for (size_t ii = 0; ii < N_INT; ii++) {
    for (int c = 0; c < 24; c++) {
      uint32_t dr = (uint32_t)tu_rng_range(&r, 1, 4), ir = (uint32_t)tu_rng_range(&r, 0, 3);
      int64_t dd[8], id[8];
      rand_dims(&r, dr, dd, false);
      rand_dims(&r, ir, id, true);
      int64_t axis = tu_rng_range(&r, 0, dr - 1);
      if (tu_rng_next(&r) % 10 == 0) { /* an empty axis needs an empty result */
        dd[axis] = 0;
        if (ir == 0) ir = 1;
        id[0] = 0;
      }
      gather_case(&r, rand_dtype(&r), INT_DTYPES[ii], dr, dd, axis, ir, id);
    }
  }
  /* Every data dtype; single-element rows over many index batches; rows
   * longer than an item. */
  for (size_t di = 0; di < N_ALL; di++) {
    int64_t dd[2] = {3, 17}, id[1] = {2000};
    gather_case(&r, ALL_DTYPES[di], ACCY_DTYPE_I32, 2, dd, 1, 1, id);
  }
  int64_t dd[2] = {9, 5000}, id[2] = {3, 2};
  gather_case(&r, ACCY_DTYPE_F64, ACCY_DTYPE_U64, 2, dd, 0, 2, id);
}
END_TEST

/* ---- dynamic_slice -------------------------------------------------------- */

START_TEST(test_dynamic_slice) {
  tu_rng r;
  tu_rng_seed(&r, 1010);
  for (size_t di = 0; di < N_ALL; di++) {
    for (int c = 0; c < 14; c++) {
      uint32_t rank = (uint32_t)tu_rng_range(&r, 0, 6);
      int64_t xd[8], sizes[8];
      rand_dims(&r, rank, xd, true);
      for (uint32_t i = 0; i < rank; i++) sizes[i] = tu_rng_range(&r, 0, xd[i]);
      tcase t;
      tc_init(&t);
      tc_param(&t, &r, ALL_DTYPES[di], rank, xd);
      for (uint32_t i = 0; i < rank; i++)
        tc_scalar(&t, &r, INT_DTYPES[tu_rng_next(&r) % N_INT], rand_index(&r, xd[i]));
      tc_op(&t, ACCY_OP_DYNAMIC_SLICE, ALL_DTYPES[di], rank, sizes, sizes, rank);
      check_map(&t, map_dslice, &r);
      tc_free(&t);
    }
  }
  /* A transposing-free window of long rows, starts beyond both ends. */
  int64_t xd[2] = {6, 20000}, sizes[2] = {3, 12345};
  tcase t;
  tc_init(&t);
  tc_param(&t, &r, ACCY_DTYPE_U16, 2, xd);
  tc_scalar(&t, &r, ACCY_DTYPE_U64, -1); /* 2^64 - 1: clamps high */
  tc_scalar(&t, &r, ACCY_DTYPE_I8, -100);
  tc_op(&t, ACCY_OP_DYNAMIC_SLICE, ACCY_DTYPE_U16, 2, sizes, sizes, 2);
  check_map(&t, map_dslice, &r);
  tc_free(&t);
}
END_TEST

/* ---- dynamic_update_slice ------------------------------------------------- */

START_TEST(test_dynamic_update_slice) {
  tu_rng r;
  tu_rng_seed(&r, 1111);
  for (size_t di = 0; di < N_ALL; di++) {
    for (int c = 0; c < 14; c++) {
      uint32_t rank = (uint32_t)tu_rng_range(&r, 0, 6);
      int64_t xd[8], ud[8];
      rand_dims(&r, rank, xd, true);
      for (uint32_t i = 0; i < rank; i++) ud[i] = tu_rng_range(&r, 0, xd[i]);
      tcase t;
      tc_init(&t);
      tc_param(&t, &r, ALL_DTYPES[di], rank, xd);
      tc_param(&t, &r, ALL_DTYPES[di], rank, ud);
      for (uint32_t i = 0; i < rank; i++)
        tc_scalar(&t, &r, INT_DTYPES[tu_rng_next(&r) % N_INT], rand_index(&r, xd[i]));
      tc_op(&t, ACCY_OP_DYNAMIC_UPDATE_SLICE, ALL_DTYPES[di], rank, xd, NULL, 0);
      check_map(&t, map_dus, &r);
      tc_free(&t);
    }
  }
  /* Long rows with a window cut by item boundaries. */
  int64_t xd[2] = {5, 20000}, ud[2] = {2, 9000};
  tcase t;
  tc_init(&t);
  tc_param(&t, &r, ACCY_DTYPE_F32, 2, xd);
  tc_param(&t, &r, ACCY_DTYPE_F32, 2, ud);
  tc_scalar(&t, &r, ACCY_DTYPE_I64, 2);
  tc_scalar(&t, &r, ACCY_DTYPE_U32, 3001);
  tc_op(&t, ACCY_OP_DYNAMIC_UPDATE_SLICE, ACCY_DTYPE_F32, 2, xd, NULL, 0);
  check_map(&t, map_dus, &r);
  tc_free(&t);
}
END_TEST

/* In place, only the window may be written: run with a result buffer that
 * is operand 0's and holds a marker outside the window instead of x. */
START_TEST(test_dus_in_place_window_only) {
  tu_rng r;
  tu_rng_seed(&r, 1112);
  int64_t xd[3] = {4, 5, 6}, ud[3] = {2, 1, 3};
  tcase t;
  tc_init(&t);
  tc_param(&t, &r, ACCY_DTYPE_I16, 3, xd);
  tc_param(&t, &r, ACCY_DTYPE_I16, 3, ud);
  tc_scalar(&t, &r, ACCY_DTYPE_I8, 1);
  tc_scalar(&t, &r, ACCY_DTYPE_U8, 200); /* clamps to 4 */
  tc_scalar(&t, &r, ACCY_DTYPE_I32, 2);
  tc_op(&t, ACCY_OP_DYNAMIC_UPDATE_SLICE, ACCY_DTYPE_I16, 3, xd, NULL, 0);
  accy__arena arena;
  accy__arena_init(&arena);
  accy__kernel k;
  ck_assert_int_eq(accy__kernel_prepare(&t.p, t.node, &arena, &k), ACCY_STATUS_OK);
  int16_t buf[120];
  for (int i = 0; i < 120; i++) buf[i] = 0x7777;
  void *b2[6] = {buf, buf, t.bufs[2], t.bufs[3], t.bufs[4], t.bufs[5]};
  tu_run_kernel_split(&k, b2, &r, 1);
  const int16_t *u = t.bufs[2];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 5; j++)
      for (int l = 0; l < 6; l++) {
        bool in = i >= 1 && i < 3 && j == 4 && l >= 2 && l < 5;
        int16_t want = in ? u[(i - 1) * 3 + (l - 2)] : 0x7777;
        ck_assert_int_eq(buf[(i * 5 + j) * 6 + l], want);
      }
  accy__arena_free(&arena);
  tc_free(&t);
}
END_TEST

/* The same, enforced by the MMU: rows outside the window live on read-only
 * pages, so even rewriting a byte with its own value there faults (and
 * Check reports the signal). */
START_TEST(test_dus_in_place_pages) {
  tu_rng r;
  tu_rng_seed(&r, 1113);
  long page = sysconf(_SC_PAGESIZE);
  ck_assert_int_gt(page, 0);
  int64_t xd[2] = {3, page}, ud[2] = {1, page - 5};
  tcase t;
  tc_init(&t);
  tc_param(&t, &r, ACCY_DTYPE_U8, 2, xd);
  tc_param(&t, &r, ACCY_DTYPE_U8, 2, ud);
  tc_scalar(&t, &r, ACCY_DTYPE_I16, 1);
  tc_scalar(&t, &r, ACCY_DTYPE_U64, -1); /* clamps to 5 */
  tc_op(&t, ACCY_OP_DYNAMIC_UPDATE_SLICE, ACCY_DTYPE_U8, 2, xd, NULL, 0);
  accy__arena arena;
  accy__arena_init(&arena);
  accy__kernel k;
  ck_assert_int_eq(accy__kernel_prepare(&t.p, t.node, &arena, &k), ACCY_STATUS_OK);
  unsigned char *buf = mmap(NULL, (size_t)(3 * page), PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert(buf != MAP_FAILED);
  memcpy(buf, t.bufs[1], (size_t)(3 * page));
  ck_assert_int_eq(mprotect(buf, (size_t)page, PROT_READ), 0);
  ck_assert_int_eq(mprotect(buf + 2 * page, (size_t)page, PROT_READ), 0);
  void *b2[5] = {buf, buf, t.bufs[2], t.bufs[3], t.bufs[4]};
  tu_run_kernel_split(&k, b2, &r, 1);
  const unsigned char *x = t.bufs[1], *u = t.bufs[2];
  ck_assert_int_eq(memcmp(buf, x, (size_t)page + 5), 0);
  ck_assert_int_eq(memcmp(buf + page + 5, u, (size_t)page - 5), 0);
  ck_assert_int_eq(memcmp(buf + 2 * page, x + 2 * page, (size_t)page), 0);
  munmap(buf, (size_t)(3 * page));
  accy__arena_free(&arena);
  tc_free(&t);
}
END_TEST

/* v rounded to |bits| significant bits, ties to even, computed in double
 * (exact for these magnitudes), independently of the kernel's integer
 * rounding. */
static double round_sig(int64_t v, int bits) {
  int e;
  frexp((double)v, &e); /* v = m * 2^e, 0.5 <= m < 1 */
  double ulp = ldexp(1.0, e - bits);
  return ulp < 1 ? (double)v : nearbyint((double)v / ulp) * ulp;
}

/* iota values above 2^24: f32 and bf16 must round once, f16 overflows.
 * Only the last items run (tiles are independent), so the untouched bulk
 * of the big result buffer is never even paged in. */
START_TEST(test_iota_large_values) {
  const int64_t n = (INT64_C(1) << 24) + (INT64_C(1) << 17);
  const int32_t dts[3] = {ACCY_DTYPE_F32, ACCY_DTYPE_BF16, ACCY_DTYPE_F16};
  for (int c = 0; c < 3; c++) {
    tcase t;
    tc_init(&t);
    int64_t axis = 0;
    tc_op(&t, ACCY_OP_IOTA, dts[c], 1, &n, &axis, 1);
    accy__arena arena;
    accy__arena_init(&arena);
    accy__kernel k;
    ck_assert_int_eq(accy__kernel_prepare(&t.p, t.node, &arena, &k), ACCY_STATUS_OK);
    size_t es = accy_dtype_size(dts[c]);
    unsigned char *out = malloc((size_t)n * es);
    ck_assert_ptr_nonnull(out);
    /* Run items from the last one back until the element at |probe| is
     * written (a NaN marker there is replaced). */
    const int64_t probe = (INT64_C(1) << 24) - 4096;
    memset(out + (size_t)probe * es, 0xff, (size_t)(n - probe) * es);
    const unsigned char marker[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    void *bufs[1] = {out};
    for (uint64_t item = k.n_items; item > 0;) {
      item--;
      k.run(&k, bufs, item, item + 1);
      if (memcmp(out + (size_t)probe * es, marker, es) != 0) break;
    }
    for (int64_t v = probe; v < n; v++) {
      double got = tu_get_f64(dts[c], out, (size_t)v);
      double want = dts[c] == ACCY_DTYPE_F16 ? INFINITY
                    : dts[c] == ACCY_DTYPE_BF16 ? round_sig(v, 8) : round_sig(v, 24);
      if (got != want)
        ck_abort_msg("iota %s at %lld: %.17g, expected %.17g", accy_dtype_name(dts[c]),
                     (long long)v, got, want);
    }
    free(out);
    accy__arena_free(&arena);
    tc_free(&t);
  }
}
END_TEST

/* ---- what prepare refuses ------------------------------------------------- */

START_TEST(test_refused) {
  tu_rng r;
  tu_rng_seed(&r, 1212);
  int64_t d4[1] = {4}, d2[1] = {2}, axis0 = 0;
  tcase t;

  tc_init(&t); /* iota has no bool form */
  tc_op(&t, ACCY_OP_IOTA, ACCY_DTYPE_BOOL, 1, d4, &axis0, 1);
  tc_expect_fail(&t, "node 0 (iota): no kernel for bool");
  tc_free(&t);

  tc_init(&t); /* float indices */
  tc_param(&t, &r, ACCY_DTYPE_F32, 1, d4);
  tc_param(&t, &r, ACCY_DTYPE_F32, 1, d2);
  tc_op(&t, ACCY_OP_GATHER, ACCY_DTYPE_F32, 1, d2, &axis0, 1);
  tc_expect_fail(&t, "no kernel for f32 indices");
  tc_free(&t);

  tc_init(&t); /* bool indices */
  tc_param(&t, &r, ACCY_DTYPE_I32, 1, d4);
  tc_param(&t, &r, ACCY_DTYPE_BOOL, 1, d2);
  tc_op(&t, ACCY_OP_GATHER, ACCY_DTYPE_I32, 1, d2, &axis0, 1);
  tc_expect_fail(&t, "no kernel for bool indices");
  tc_free(&t);

  tc_init(&t); /* bool start */
  tc_param(&t, &r, ACCY_DTYPE_U8, 1, d4);
  tc_param(&t, &r, ACCY_DTYPE_BOOL, 0, NULL);
  tc_op(&t, ACCY_OP_DYNAMIC_SLICE, ACCY_DTYPE_U8, 1, d2, d2, 1);
  tc_expect_fail(&t, "node 2 (dynamic_slice): no kernel for bool starts");
  tc_free(&t);

  tc_init(&t); /* f64 start of dynamic_update_slice */
  tc_param(&t, &r, ACCY_DTYPE_U8, 1, d4);
  tc_param(&t, &r, ACCY_DTYPE_U8, 1, d2);
  tc_param(&t, &r, ACCY_DTYPE_F64, 0, NULL);
  tc_op(&t, ACCY_OP_DYNAMIC_UPDATE_SLICE, ACCY_DTYPE_U8, 1, d4, NULL, 0);
  tc_expect_fail(&t, "no kernel for f64 starts");
  tc_free(&t);

  tc_init(&t); /* result dtype differs from the operand's */
  tc_param(&t, &r, ACCY_DTYPE_F32, 1, d4);
  tc_op(&t, ACCY_OP_REVERSE, ACCY_DTYPE_I32, 1, d4, &axis0, 1);
  tc_expect_fail(&t, "no kernel for f32 operand with i32 result");
  tc_free(&t);

  tc_init(&t); /* pad value of another dtype */
  tc_param(&t, &r, ACCY_DTYPE_F32, 1, d4);
  tc_param(&t, &r, ACCY_DTYPE_F16, 0, NULL);
  int64_t pat[3] = {0, 0, 0};
  tc_op(&t, ACCY_OP_PAD, ACCY_DTYPE_F32, 1, d4, pat, 3);
  tc_expect_fail(&t, "no kernel for f16 pad value");
  tc_free(&t);

  tc_init(&t); /* a view that would read past its operand */
  int64_t d5[1] = {5}, sat[3] = {0, 4, 1};
  tc_param(&t, &r, ACCY_DTYPE_I8, 1, d4);
  tc_op(&t, ACCY_OP_SLICE, ACCY_DTYPE_I8, 1, d5, sat, 3);
  tc_expect_fail(&t, "node 1 (slice): result reads outside the operand's 4 elements");
  tc_free(&t);

  tc_init(&t); /* a transpose axis out of range */
  int64_t bad_perm[1] = {3};
  tc_param(&t, &r, ACCY_DTYPE_I8, 1, d4);
  tc_op(&t, ACCY_OP_TRANSPOSE, ACCY_DTYPE_I8, 1, d4, bad_perm, 1);
  tc_expect_fail(&t, "permutation entry 3 out of range for rank 1");
  tc_free(&t);
}
END_TEST

/* Items are fixed work units: the iteration space does not depend on
 * anything but the node, and big results have many items. */
START_TEST(test_iteration_space) {
  tu_rng r;
  tu_rng_seed(&r, 1313);
  int64_t d[2] = {1000, 1000};
  tcase t;
  tc_init(&t);
  tc_param(&t, &r, ACCY_DTYPE_F32, 2, d);
  tc_op(&t, ACCY_OP_RESHAPE, ACCY_DTYPE_F32, 2, d, NULL, 0);
  accy__arena arena;
  accy__arena_init(&arena);
  accy__kernel k1, k2;
  ck_assert_int_eq(accy__kernel_prepare(&t.p, t.node, &arena, &k1), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__kernel_prepare(&t.p, t.node, &arena, &k2), ACCY_STATUS_OK);
  ck_assert_uint_eq(k1.n_items, k2.n_items);
  ck_assert_uint_ge(k1.n_items, 100);
  ck_assert_uint_ge(k1.n_items * k1.item_cost, 1000000);
  ck_assert_uint_le(k1.n_items * k1.item_cost, 2 * 1000000);
  accy__arena_free(&arena);
  tc_free(&t);
}
END_TEST

static Suite *data_suite(void) {
  Suite *s = suite_create("data");
  TCase *tc = tcase_create("views");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_reshape);
  tcase_add_test(tc, test_broadcast);
  tcase_add_test(tc, test_transpose);
  tcase_add_test(tc, test_transpose_large);
  tcase_add_test(tc, test_slice);
  tcase_add_test(tc, test_reverse);
  tcase_add_test(tc, test_dynamic_slice);
  suite_add_tcase(s, tc);
  tc = tcase_create("other");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_pad);
  tcase_add_test(tc, test_pad_edges);
  tcase_add_test(tc, test_concatenate);
  tcase_add_test(tc, test_iota);
  tcase_add_test(tc, test_gather);
  tcase_add_test(tc, test_dynamic_update_slice);
  tcase_add_test(tc, test_dus_in_place_window_only);
  tcase_add_test(tc, test_dus_in_place_pages);
  tcase_add_test(tc, test_iota_large_values);
  suite_add_tcase(s, tc);
  tc = tcase_create("prepare");
  tcase_add_test(tc, test_refused);
  tcase_add_test(tc, test_iteration_space);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(data_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
