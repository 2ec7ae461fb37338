/* tests/check_coalesce.c: concurrent invokes run as one batch
 * (src/compile/batch.h, src/coalesce.h).
 *
 *  - The analysis: the programs it must follow (an MLP as ONNX Gemm writes
 *    it, a softmax over rows, attention with batch axes, reshapes,
 *    transposes, slices, concatenations) are row-separable; the ones whose
 *    rows mix or whose axis 0 is not the batch (a reduce or a slice along
 *    it, a constant that varies along it, a convolution, an output computed
 *    from constants alone) are not.
 *  - The bits: each of those programs, rebatched to k calls and compiled,
 *    gives every call's rows the same bits as a launch of the program on
 *    that call alone, at the process's ISA level (CI runs the suite at
 *    every level), with edge values among the inputs and without.
 *  - The session: many threads invoking one handle with their own inputs
 *    on one admitted core get results equal to a lone invoke's, bit for
 *    bit, while the program's stats show batched launches; ACCY_COALESCE=0
 *    and a memory limit that leaves no room for the batched form both keep
 *    every call on its own, with the same results; a release while calls
 *    wait for a group leaves them to finish. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/sched.h"
#include "src/compile/batch.h"
#include "src/coalesce.h"
#include "src/compile/compile.h"
#include "src/internal.h"
#include "src/kernels/uk/uk.h"
#include "src/ir/verify.h"
#include "src/runtime/bind.h"
#include "src/wire/wire.h"
#include "tests/testutil.h"

/* ---- building programs --------------------------------------------------------- */

static tu_rng g_rng;

static uint32_t node(accy__program *p, uint16_t op, accy__type t, const uint32_t *ops,
                     uint32_t n, const int64_t *attrs, uint32_t na) {
  uint32_t idx;
  ck_assert_int_eq(accy__program_add_node(p, op, &t, ops, n, attrs, na, NULL, 0, NULL, 0, &idx),
                   ACCY_STATUS_OK);
  return idx;
}

static uint32_t param(accy__program *p, const char *name, accy__type t) {
  uint32_t idx;
  ck_assert_int_eq(accy__program_add_node(p, ACCY_OP_PARAMETER, &t, NULL, 0, NULL, 0, name,
                                          strlen(name), NULL, 0, &idx),
                   ACCY_STATUS_OK);
  return idx;
}

/* A constant f32 of type t, random values in [-1, 1]. */
static uint32_t constant(accy__program *p, accy__type t) {
  const uint64_t n = tu_elems(&t);
  float *v = malloc((size_t)n * 4 + 4);
  for (uint64_t i = 0; i < n; i++) v[i] = (float)(tu_rng_unit(&g_rng) * 2 - 1);
  char name[32];
  snprintf(name, sizeof name, "c%u", p->n_nodes);
  uint32_t idx;
  ck_assert_int_eq(accy__program_add_node(p, ACCY_OP_CONSTANT, &t, NULL, 0, NULL, 0, name,
                                          strlen(name), v, n * 4, &idx),
                   ACCY_STATUS_OK);
  free(v);
  return idx;
}

static accy__type f32(uint32_t rank, const int64_t *dims) {
  return tu_type(ACCY_DTYPE_F32, rank, dims);
}
#define T1(a) f32(1, (const int64_t[]){a})
#define T2(a, b) f32(2, (const int64_t[]){a, b})
#define T3(a, b, c) f32(3, (const int64_t[]){a, b, c})

static uint32_t bin(accy__program *p, uint16_t op, uint32_t a, uint32_t b) {
  const uint32_t ops[2] = {a, b};
  return node(p, op, p->nodes[a].type, ops, 2, NULL, 0);
}

static void output(accy__program *p, uint32_t n) {
  char name[16];
  snprintf(name, sizeof name, "y%u", p->n_outputs);
  ck_assert_int_eq(accy__program_add_output(p, n, name, strlen(name)), ACCY_STATUS_OK);
}

/* x [R, K] . W[N, K]^T + b, then max(., 0) when |relu| (ONNX Gemm, transB). */
static uint32_t dense(accy__program *p, uint32_t x, int64_t N, bool relu) {
  const accy__type xt = p->nodes[x].type;
  const int64_t R = xt.dims[0], K = xt.dims[1];
  const uint32_t w = constant(p, T2(N, K));
  const int64_t dot_attrs[4] = {0, 1, 1, 1};
  const uint32_t ops[2] = {x, w};
  uint32_t y = node(p, ACCY_OP_DOT_GENERAL, T2(R, N), ops, 2, dot_attrs, 4);
  const uint32_t b = constant(p, T1(N));
  const int64_t one[1] = {1};
  y = bin(p, ACCY_OP_ADD, y, node(p, ACCY_OP_BROADCAST_IN_DIM, T2(R, N), &b, 1, one, 1));
  if (relu) {
    const uint32_t z = constant(p, f32(0, NULL));
    y = bin(p, ACCY_OP_MAXIMUM, y, node(p, ACCY_OP_BROADCAST_IN_DIM, T2(R, N), &z, 1, NULL, 0));
  }
  return y;
}

/* An MLP K -> H -> H -> 10 at |rows| rows (weights of H x H floats). */
static void build_mlp(accy__program *p, int64_t rows, int64_t K, int64_t H) {
  accy__program_init(p);
  uint32_t x = param(p, "x", T2(rows, K));
  x = dense(p, x, H, true);
  x = dense(p, x, H, true);
  output(p, dense(p, x, 10, false));
}

/* Softmax over each row of a dense layer's result. */
static void build_softmax(accy__program *p, int64_t rows) {
  accy__program_init(p);
  const uint32_t x = param(p, "x", T2(rows, 64));
  const uint32_t y = dense(p, x, 96, false);
  const int64_t max_attrs[2] = {2, 1}, sum_attrs[2] = {0, 1}, keep0[1] = {0};
  const uint32_t m = node(p, ACCY_OP_REDUCE, T1(rows), &y, 1, max_attrs, 2);
  const uint32_t mb = node(p, ACCY_OP_BROADCAST_IN_DIM, T2(rows, 96), &m, 1, keep0, 1);
  const uint32_t e = node(p, ACCY_OP_EXP, T2(rows, 96), (const uint32_t[]){bin(p, ACCY_OP_SUBTRACT, y, mb)}, 1, NULL, 0);
  const uint32_t s = node(p, ACCY_OP_REDUCE, T1(rows), &e, 1, sum_attrs, 2);
  const uint32_t sb = node(p, ACCY_OP_BROADCAST_IN_DIM, T2(rows, 96), &s, 1, keep0, 1);
  output(p, bin(p, ACCY_OP_DIVIDE, e, sb));
  output(p, m); /* a second output, of another rank */
}

/* Attention over 8 positions of 16 features: q = x Wq; s = q x^T (batch
 * axis 0); softmax-free: the scores' row maxima, and s x (batch axis 0). */
static void build_attention(accy__program *p, int64_t rows) {
  accy__program_init(p);
  const uint32_t x = param(p, "x", T3(rows, 8, 16));
  const uint32_t wq = constant(p, T2(16, 16));
  const int64_t proj[4] = {0, 1, 2, 0}; /* x[r, t, c] Wq[c, d] */
  const uint32_t q = node(p, ACCY_OP_DOT_GENERAL, T3(rows, 8, 16), (const uint32_t[]){x, wq}, 2, proj, 4);
  const int64_t scores[6] = {1, 0, 0, 1, 2, 2}; /* batch r; contract c */
  const uint32_t s = node(p, ACCY_OP_DOT_GENERAL, T3(rows, 8, 8), (const uint32_t[]){q, x}, 2, scores, 6);
  const int64_t mix[6] = {1, 0, 0, 1, 2, 1}; /* s[r, t, u] x[r, u, c] */
  output(p, node(p, ACCY_OP_DOT_GENERAL, T3(rows, 8, 16), (const uint32_t[]){s, x}, 2, mix, 6));
  const int64_t max_attrs[2] = {2, 2};
  output(p, node(p, ACCY_OP_REDUCE, T2(rows, 8), &s, 1, max_attrs, 2));
}

/* Layout ops along the other axes: transpose (axis 0 first), reshape
 * (axis 0 kept), slices of the whole batch axis, concatenate along axis 1,
 * a second parameter, select and clamp with scalar operands. */
static void build_layout(accy__program *p, int64_t rows) {
  accy__program_init(p);
  const uint32_t x = param(p, "x", T3(rows, 4, 8));
  const uint32_t v = param(p, "v", T2(rows, 16));
  const int64_t perm[3] = {0, 2, 1};
  const uint32_t t = node(p, ACCY_OP_TRANSPOSE, T3(rows, 8, 4), &x, 1, perm, 3);
  const uint32_t r = node(p, ACCY_OP_RESHAPE, T2(rows, 32), &t, 1, NULL, 0);
  const int64_t lo[6] = {0, 0, rows, 16, 1, 1}, hi[6] = {0, 16, rows, 32, 1, 1};
  const uint32_t a = node(p, ACCY_OP_SLICE, T2(rows, 16), &r, 1, lo, 6);
  const uint32_t b = node(p, ACCY_OP_SLICE, T2(rows, 16), &r, 1, hi, 6);
  const int64_t axis1[1] = {1};
  const uint32_t c = node(p, ACCY_OP_CONCATENATE, T2(rows, 48), (const uint32_t[]){b, v, a}, 3, axis1, 1);
  const uint32_t lo_c = constant(p, f32(0, NULL)), hi_c = constant(p, f32(0, NULL));
  const uint32_t cl = node(p, ACCY_OP_CLAMP, T2(rows, 48), (const uint32_t[]){lo_c, c, hi_c}, 3, NULL, 0);
  const uint32_t d = dense(p, cl, 256, true); /* 48 x 256: small weights, still batched */
  const int64_t lt[1] = {2};
  const uint32_t pred = node(p, ACCY_OP_COMPARE, tu_type(ACCY_DTYPE_BOOL, 2, (const int64_t[]){rows, 256}),
                             (const uint32_t[]){d, dense(p, cl, 256, false)}, 2, lt, 1);
  output(p, node(p, ACCY_OP_SELECT, T2(rows, 256), (const uint32_t[]){pred, d, bin(p, ACCY_OP_MULTIPLY, d, d)}, 3, NULL, 0));
}

/* ---- the analysis ------------------------------------------------------------------ */

static bool analyze(accy__program *p, accy__batch_info *info) {
  ck_assert_int_eq(accy__verify(p), ACCY_STATUS_OK);
  uint8_t *b = malloc(p->n_nodes + 1);
  const bool ok = accy__batch_analyze(p, b, info);
  free(b);
  return ok;
}

START_TEST(separable_programs) {
  tu_rng_seed(&g_rng, 1);
  accy__program p;
  accy__batch_info info;
  build_mlp(&p, 1, 96, 512);
  ck_assert(analyze(&p, &info));
  ck_assert_uint_eq(info.rows, 1);
  ck_assert_uint_eq(info.weight_rows, 1);
  ck_assert_uint_eq(info.weight_bytes, 512 * 512 * 4);
  accy__program_free(&p);
  build_mlp(&p, 3, 16, 32);
  ck_assert(analyze(&p, &info));
  ck_assert_uint_eq(info.rows, 3);
  ck_assert_uint_eq(info.weight_rows, 3);
  accy__program_free(&p);
  build_softmax(&p, 2);
  ck_assert(analyze(&p, &info));
  accy__program_free(&p);
  build_attention(&p, 1);
  ck_assert(analyze(&p, &info));
  ck_assert_uint_eq(info.weight_rows, 8); /* 8 positions of one call meet Wq */
  accy__program_free(&p);
  build_layout(&p, 2);
  ck_assert(analyze(&p, &info));
  accy__program_free(&p);
}
END_TEST

/* One program per way of mixing rows or losing the batch axis. */
static void build_bad(accy__program *p, int which) {
  accy__program_init(p);
  const int64_t rows = 2;
  const uint32_t x = param(p, "x", T2(rows, 8));
  const int64_t axis0[1] = {0};
  switch (which) {
    case 0: { /* a reduce along axis 0 (whose result has the extent of rows) */
      const uint32_t x3 = param(p, "x3", T3(rows, rows, 8));
      const int64_t attrs[2] = {0, 0};
      output(p, x);
      output(p, node(p, ACCY_OP_REDUCE, T2(rows, 8), &x3, 1, attrs, 2));
      break;
    }
    case 1: { /* a constant that varies along axis 0 */
      const uint32_t c = constant(p, T2(rows, 8));
      output(p, bin(p, ACCY_OP_ADD, x, c));
      break;
    }
    case 2: { /* a slice of part of axis 0 */
      const int64_t a[6] = {0, 0, 1, 8, 1, 1};
      output(p, node(p, ACCY_OP_SLICE, T2(1, 8), &x, 1, a, 6));
      break;
    }
    case 3: { /* a transpose that moves axis 0 */
      const int64_t perm[2] = {1, 0};
      output(p, node(p, ACCY_OP_TRANSPOSE, T2(8, rows), &x, 1, perm, 2));
      break;
    }
    case 4: /* concatenate along axis 0 */
      output(p, node(p, ACCY_OP_CONCATENATE, T2(2 * rows, 8), (const uint32_t[]){x, x}, 2, axis0, 1));
      break;
    case 5: { /* a product contracting axis 0 */
      const int64_t attrs[4] = {0, 1, 0, 0};
      output(p, node(p, ACCY_OP_DOT_GENERAL, T2(8, 8), (const uint32_t[]){x, x}, 2, attrs, 4));
      break;
    }
    case 6: { /* the batched value on the right of a product without batch axes */
      const uint32_t w = constant(p, T2(4, 8));
      const int64_t attrs[4] = {0, 1, 1, 1};
      output(p, node(p, ACCY_OP_DOT_GENERAL, T2(4, rows), (const uint32_t[]){w, x}, 2, attrs, 4));
      break;
    }
    case 7: { /* an output from constants alone */
      output(p, x);
      output(p, constant(p, T2(rows, 8)));
      break;
    }
    case 8: { /* parameters with different extents along axis 0 */
      const uint32_t y = param(p, "y", T2(3, 8));
      output(p, x);
      output(p, y);
      break;
    }
    case 9: { /* a reshape that merges axis 0 into the next */
      output(p, node(p, ACCY_OP_RESHAPE, T1(rows * 8), &x, 1, NULL, 0));
      break;
    }
    case 10: { /* a convolution (its kernels choose their form by batch) */
      const uint32_t x4 = node(p, ACCY_OP_RESHAPE, f32(4, (const int64_t[]){rows, 2, 2, 2}), &x, 1, NULL, 0);
      const uint32_t w = constant(p, f32(4, (const int64_t[]){3, 2, 1, 1}));
      const int64_t attrs[12] = {2, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1};
      output(p, node(p, ACCY_OP_CONVOLUTION, f32(4, (const int64_t[]){rows, 3, 2, 2}), (const uint32_t[]){x4, w}, 2, attrs, 12));
      break;
    }
    case 11: { /* a broadcast along axis 0 of a batched value (rows repeated) */
      output(p, node(p, ACCY_OP_BROADCAST_IN_DIM, T3(3, rows, 8), &x, 1, (const int64_t[]){1, 2}, 2));
      break;
    }
    default:
      ck_abort();
  }
}
#define N_BAD 12

START_TEST(inseparable_programs) {
  tu_rng_seed(&g_rng, 2);
  accy__program p;
  build_bad(&p, _i);
  accy__batch_info info;
  ck_assert_msg(!analyze(&p, &info), "case %d was taken as row-separable", _i);
  ck_assert_uint_eq(info.rows, 0);
  accy__program_free(&p);
}
END_TEST

/* A program qualifies only when a call's inputs and outputs are a small
 * part of the weights they share (ACCY__COALESCE_MAX_COPY), and only with
 * enough weights. */
static bool coalesces(accy__program *p) {
  accy__plan plan;
  ck_assert_int_eq(accy__verify(p), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__compile(p, 1, &plan), ACCY_STATUS_OK);
  accy__memory_budget budget = {.limit = UINT64_MAX};
  atomic_init(&budget.held, 0);
  accy__coalescer *co = NULL;
  ck_assert_int_eq(accy__coalescer_create(p, &plan, &budget, true, &co), ACCY_STATUS_OK);
  const bool yes = co != NULL;
  accy__coalescer_destroy(co);
  ck_assert_int_eq(accy__coalescer_create(p, &plan, &budget, false, &co), ACCY_STATUS_OK);
  ck_assert_ptr_null(co); /* the session's ACCY_SESSION_NO_COALESCE */
  accy__plan_free(&plan);
  return yes;
}

START_TEST(worth_coalescing) {
  tu_rng_seed(&g_rng, 3);
  accy__program p;
  accy__program_init(&p);
  /* 8192 inputs, 64 outputs: 2 MiB of weights against 32 KiB of input */
  output(&p, dense(&p, param(&p, "x", T2(1, 8192)), 64, false));
  ck_assert(coalesces(&p));
  accy__program_free(&p);
  accy__program_init(&p);
  /* 8192 inputs, 8 outputs: 256 KiB of weights, the input an eighth of them */
  output(&p, dense(&p, param(&p, "x", T2(1, 8192)), 8, false));
  ck_assert(!coalesces(&p));
  accy__program_free(&p);
  accy__program_init(&p);
  /* 64 -> 64: 16 KiB of weights, not worth it */
  output(&p, dense(&p, param(&p, "x", T2(1, 64)), 64, false));
  ck_assert(!coalesces(&p));
  accy__program_free(&p);
  build_mlp(&p, 1, 96, 512);
  ck_assert(coalesces(&p));
  accy__program_free(&p);
  build_mlp(&p, 8, 96, 512); /* 8 rows a call: a batched launch would take one call */
  ck_assert(!coalesces(&p));
  accy__program_free(&p);
}
END_TEST

/* ---- the bits ------------------------------------------------------------------------ */

static char *run_plan(const accy__plan *plan, accy__pool *pool, const accy__program *p,
                      void *const *inputs) {
  accy_input ins[4];
  accy_output outs[4];
  size_t total = 0;
  for (uint32_t i = 0; i < p->n_params; i++)
    ins[i] = (accy_input){inputs[i], accy__type_bytes(&p->nodes[p->params[i]].type)};
  for (uint32_t o = 0; o < p->n_outputs; o++) total += accy__type_bytes(&p->nodes[p->outputs[o]].type);
  char *out = malloc(total + 1);
  for (uint32_t o = 0, at = 0; o < p->n_outputs; o++) {
    const size_t b = accy__type_bytes(&p->nodes[p->outputs[o]].type);
    outs[o] = (accy_output){out + at, b};
    at += (uint32_t)b;
  }
  void *block = NULL;
  ck_assert_int_eq(posix_memalign(&block, 64, plan->block_bytes + 64), 0);
  accy__plan_run(plan, pool, pool ? 2 : 1, block, ins, outs);
  free(block);
  return out;
}

/* |p| rebatched to |calls| calls: each call's rows of every output equal a
 * launch of |p| on that call's inputs alone. */
static void same_bits(accy__program *p, uint32_t calls, bool edges) {
  uint8_t *batched = malloc(p->n_nodes + 1);
  accy__batch_info info;
  ck_assert_int_eq(accy__verify(p), ACCY_STATUS_OK);
  ck_assert(accy__batch_analyze(p, batched, &info));
  accy__program big;
  ck_assert_int_eq(accy__program_rebatch(p, batched, info.rows, calls, &big), ACCY_STATUS_OK);
  ck_assert_msg(accy__verify(&big) == ACCY_STATUS_OK, "rebatched: %s", accy__cause());
  accy__plan one, many;
  ck_assert_int_eq(accy__compile(p, 3, &one), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__compile(&big, 3, &many), ACCY_STATUS_OK);
  accy__pool *pool = NULL;
  ck_assert_int_eq(accy__pool_acquire(2, &pool), ACCY_STATUS_OK);
  void *big_in[4] = {0}, *call_in[4][8];
  for (uint32_t i = 0; i < p->n_params; i++) {
    const size_t per = accy__type_bytes(&p->nodes[p->params[i]].type);
    ck_assert_uint_eq(accy__type_bytes(&big.nodes[big.params[i]].type), per * calls);
    big_in[i] = malloc(per * calls + 4);
    tu_fill_random(&g_rng, ACCY_DTYPE_F32, big_in[i], per * calls / 4, edges, 2);
    for (uint32_t c = 0; c < calls; c++) call_in[i][c] = (char *)big_in[i] + c * per;
  }
  char *all = run_plan(&many, pool, &big, big_in);
  for (uint32_t c = 0; c < calls; c++) {
    void *in[4];
    for (uint32_t i = 0; i < p->n_params; i++) in[i] = call_in[i][c];
    char *alone = run_plan(&one, c % 2 ? pool : NULL, p, in);
    size_t at_one = 0, at_all = 0;
    for (uint32_t o = 0; o < p->n_outputs; o++) {
      const accy__type *t = &p->nodes[p->outputs[o]].type;
      const size_t per = accy__type_bytes(t);
      const size_t d = tu_first_difference(t->dtype, alone + at_one, all + at_all + c * per,
                                           per / accy__dtype_size(t->dtype));
      ck_assert_msg(d == SIZE_MAX, "call %u of %u, output %u, element %zu: %.9g alone, %.9g batched",
                    c, calls, o, d, tu_get_f64(t->dtype, alone + at_one, d),
                    tu_get_f64(t->dtype, all + at_all + c * per, d));
      at_one += per;
      at_all += per * calls;
    }
    free(alone);
  }
  free(all);
  for (uint32_t i = 0; i < p->n_params; i++) free(big_in[i]);
  accy__pool_release(pool);
  accy__plan_free(&one);
  accy__plan_free(&many);
  accy__program_free(&big);
  free(batched);
}

START_TEST(batched_rows_same_bits) {
  tu_rng_seed(&g_rng, 10 + (uint64_t)_i);
  const bool edges = _i % 2;
  accy__program p;
  build_mlp(&p, 1, 96, 512);
  same_bits(&p, 4, edges);
  same_bits(&p, 3, edges);
  accy__program_free(&p);
  build_mlp(&p, 2, 40, 200); /* two rows a call, odd widths */
  same_bits(&p, 2, edges);
  same_bits(&p, 4, edges);
  /* Past ACCY__COALESCE_MAX_ROWS (8) rows a launch would not keep the bits:
   * the last layer's 10 columns sum in four chains (uk.h's gemv_split) up
   * to ACCY__UK_GEMV_SPLIT_MAX_M rows only, and in one chain beyond. */
  ck_assert_uint_le(ACCY__COALESCE_MAX_ROWS, ACCY__UK_GEMV_SPLIT_MAX_M);
  accy__program_free(&p);
  build_softmax(&p, 1);
  same_bits(&p, 4, edges);
  accy__program_free(&p);
  build_attention(&p, 1);
  same_bits(&p, 4, edges);
  accy__program_free(&p);
  build_layout(&p, 2);
  same_bits(&p, 3, edges);
  accy__program_free(&p);
}
END_TEST

/* ---- the session ---------------------------------------------------------------------- */

#define CALLERS 8
#define ROUNDS 40

typedef struct caller {
  accy_session *s;
  accy_handle h;
  const float *in;  /* ROUNDS inputs of in_floats */
  const float *want; /* and their outputs */
  size_t in_floats, out_floats;
  bool released_ok;  /* INVALID_HANDLE after a release is expected */
  int failures, refused;
  atomic_bool *stop; /* NULL: one pass over the inputs; else passes until it is set */
} caller;

static void *caller_main(void *arg) {
  caller *c = arg;
  float *y = malloc(c->out_floats * 4 + 4);
  for (int r = 0; r < ROUNDS; r++) {
    if (r == ROUNDS - 1 && c->stop && !atomic_load(c->stop)) r = -1; /* another pass */
    if (r < 0) continue;
    accy_input in = {c->in + (size_t)r * c->in_floats, c->in_floats * 4};
    accy_output out = {y, c->out_floats * 4};
    const accy_status st = accy_session_invoke(c->s, c->h, &in, 1, &out, 1);
    if (st == ACCY_STATUS_INVALID_HANDLE && c->released_ok) {
      c->refused++;
      continue;
    }
    if (st != ACCY_STATUS_OK ||
        memcmp(y, c->want + (size_t)r * c->out_floats, c->out_floats * 4) != 0)
      c->failures++;
  }
  free(y);
  return NULL;
}

typedef struct served {
  accy_program_stats stats;
  int failures, refused;
  /* After the callers: accy_session_trim's bytes, the program's stats and
   * the session's bytes held around it, and one more call checked. */
  uint64_t trimmed, held_before, held_after;
  accy_program_stats trimmed_stats;
  bool call_after_trim_ok;
} served;

/* The session tests' program: the MLP 96-512-512-10 at batch 1, compiled
 * in a session with |o|, and |n| random inputs with their outputs from one
 * call at a time (the references). */
typedef struct fixture {
  accy_session *s;
  accy_handle h;
  float *in, *want;
  size_t n;
} fixture;
enum { FX_IN = 96, FX_OUT = 10 };

static void mlp_bytes(uint64_t seed, void **bytes, size_t *size) {
  tu_rng_seed(&g_rng, seed);
  accy__program p;
  build_mlp(&p, 1, FX_IN, 512);
  ck_assert_int_eq(accy__wire_encode(&p, bytes, size), ACCY_STATUS_OK);
  accy__program_free(&p);
}

static void fixture_open(fixture *f, uint64_t seed, const accy_session_options *o, size_t n) {
  void *bytes;
  size_t size;
  mlp_bytes(seed, &bytes, &size);
  ck_assert_int_eq(accy_session_create(o, &f->s), ACCY_STATUS_OK);
  ck_assert_msg(accy_session_compile(f->s, bytes, size, &f->h) == ACCY_STATUS_OK, "%s",
                accy_session_last_cause(f->s));
  free(bytes);
  f->n = n;
  f->in = malloc(n * FX_IN * 4);
  f->want = malloc(n * FX_OUT * 4);
  tu_fill_random(&g_rng, ACCY_DTYPE_F32, f->in, n * FX_IN, false, 2);
  for (size_t k = 0; k < n; k++) {
    accy_input i1 = {f->in + k * FX_IN, FX_IN * 4};
    accy_output o1 = {f->want + k * FX_OUT, FX_OUT * 4};
    ck_assert_int_eq(accy_session_invoke(f->s, f->h, &i1, 1, &o1, 1), ACCY_STATUS_OK);
  }
}

static void fixture_close(fixture *f) {
  accy_session_destroy(f->s);
  free(f->in);
  free(f->want);
}

/* CALLERS threads invoke the MLP on their own inputs, ROUNDS each, on one
 * admitted core; every result must equal a lone invoke's. With |release|,
 * the handle is released while they run. */
static served serve(uint64_t memory_limit, bool release, uint32_t flags) {
  const uint32_t saved = accy__sched_cores();
  accy__sched_set_cores(1);
  if (memory_limit == 1) {
    /* Room for the program and its callers' launches, not for the batched
     * form's second packed copy of the weights. */
    void *bytes;
    size_t size;
    mlp_bytes(77, &bytes, &size);
    accy_session *probe;
    ck_assert_int_eq(accy_session_create(NULL, &probe), ACCY_STATUS_OK);
    accy_handle ph;
    ck_assert_int_eq(accy_session_compile(probe, bytes, size, &ph), ACCY_STATUS_OK);
    free(bytes);
    accy_session_stats ss = {.struct_size = sizeof ss};
    accy_program_stats ps = {.struct_size = sizeof ps};
    ck_assert_int_eq(accy_session_stats_get(probe, &ss), ACCY_STATUS_OK);
    ck_assert_int_eq(accy_session_program_stats(probe, ph, &ps), ACCY_STATUS_OK);
    memory_limit = ss.memory_held_bytes + ps.plan_bytes / 2 + 4 * CALLERS * ps.scratch_block_bytes;
    accy_session_destroy(probe);
  }
  accy_session_options o = {.struct_size = sizeof o, .num_threads = 2,
                            .memory_limit_bytes = memory_limit, .flags = flags};
  fixture fx;
  const size_t n = (size_t)CALLERS * ROUNDS;
  fixture_open(&fx, 77, &o, n);
  accy_session *s = fx.s;
  const accy_handle h = fx.h;
  const size_t nin = FX_IN, nout = FX_OUT;
  const float *in = fx.in, *want = fx.want;
  caller c[CALLERS];
  pthread_t t[CALLERS];
  /* Unless the handle is released, the callers go on passing over their
   * inputs until batched launches were seen (a loaded machine may
   * schedule the callers one at a time for a while) or 20 s passed. */
  atomic_bool stop;
  atomic_init(&stop, release);
  for (int k = 0; k < CALLERS; k++) {
    c[k] = (caller){s, h, in + (size_t)k * ROUNDS * nin, want + (size_t)k * ROUNDS * nout,
                    nin, nout, release, 0, 0, &stop};
    ck_assert_int_eq(pthread_create(&t[k], NULL, caller_main, &c[k]), 0);
  }
  served r;
  memset(&r, 0, sizeof r);
  r.stats.struct_size = sizeof r.stats;
  if (release) {
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    ck_assert_int_eq(accy_session_release(s, h), ACCY_STATUS_OK);
  }
  for (int tick = 0; !release && tick < 2000; tick++) {
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
    accy_program_stats ps = {.struct_size = sizeof ps};
    ck_assert_int_eq(accy_session_program_stats(s, h, &ps), ACCY_STATUS_OK);
    if (ps.batched_launches >= 8 || ((memory_limit != 0 || flags) && ps.invokes >= 4 * n) ||
        getenv("ACCY_COALESCE"))
      break;
  }
  atomic_store(&stop, true);
  for (int k = 0; k < CALLERS; k++) {
    pthread_join(t[k], NULL);
    r.failures += c[k].failures;
    r.refused += c[k].refused;
  }
  if (!release) {
    ck_assert_int_eq(accy_session_program_stats(s, h, &r.stats), ACCY_STATUS_OK);
    accy_session_stats ss = {.struct_size = sizeof ss};
    ck_assert_int_eq(accy_session_stats_get(s, &ss), ACCY_STATUS_OK);
    r.held_before = ss.memory_held_bytes;
    ck_assert_int_eq(accy_session_trim(s, &r.trimmed), ACCY_STATUS_OK);
    ck_assert_int_eq(accy_session_stats_get(s, &ss), ACCY_STATUS_OK);
    r.held_after = ss.memory_held_bytes;
    r.trimmed_stats.struct_size = sizeof r.trimmed_stats;
    ck_assert_int_eq(accy_session_program_stats(s, h, &r.trimmed_stats), ACCY_STATUS_OK);
    float y[FX_OUT];
    accy_input i1 = {in, FX_IN * 4};
    accy_output o1 = {y, sizeof y};
    r.call_after_trim_ok = accy_session_invoke(s, h, &i1, 1, &o1, 1) == ACCY_STATUS_OK &&
                           memcmp(y, want, sizeof y) == 0;
  }
  fixture_close(&fx);
  accy__sched_set_cores(saved);
  return r;
}

START_TEST(session_coalesces) {
  const served r = serve(0, false, 0);
  ck_assert_int_eq(r.failures, 0);
  ck_assert_uint_ge(r.stats.invokes, (uint64_t)CALLERS * ROUNDS * 2);
  ck_assert_msg(r.stats.batched_launches > 0 && r.stats.batched_calls > r.stats.batched_launches,
                "%llu calls in %llu batched launches", (unsigned long long)r.stats.batched_calls,
                (unsigned long long)r.stats.batched_launches);
  ck_assert_uint_le(r.stats.batched_calls,
                    r.stats.batched_launches * accy__uk_get()->f32_gemm.batch_rows);
  ck_assert_uint_gt(r.stats.batched_plan_bytes, 512 * 512 * 4);
  /* A trim frees the batched program with the scratch: the session holds
   * that much less, and calls go on (the next group builds it again). */
  ck_assert_uint_ge(r.trimmed, r.stats.batched_plan_bytes);
  ck_assert_uint_eq(r.trimmed_stats.batched_plan_bytes, 0);
  ck_assert_uint_eq(r.trimmed_stats.batched_scratch_bytes, 0);
  ck_assert_uint_eq(r.held_before - r.held_after, r.trimmed);
  ck_assert(r.call_after_trim_ok);
}
END_TEST

/* Every call on its own: off through the environment (0), through the
 * session's flag (1), and with room for the program and its launches but
 * not for a second packed copy of its weights (2: groups run their calls
 * one after another). */
START_TEST(session_calls_alone) {
  if (_i == 0) setenv("ACCY_COALESCE", "0", 1);
  const served r = serve(_i == 2 ? 1 : 0, false, _i == 1 ? ACCY_SESSION_NO_COALESCE : 0);
  unsetenv("ACCY_COALESCE");
  ck_assert_int_eq(r.failures, 0);
  ck_assert_uint_eq(r.stats.batched_calls, 0);
  ck_assert_uint_eq(r.stats.batched_plan_bytes, 0);
}
END_TEST

START_TEST(session_release_while_grouped) {
  const served r = serve(0, true, 0);
  ck_assert_int_eq(r.failures, 0);
}
END_TEST

/* AddressSanitizer's allocator is not fork-safe while other threads
 * allocate: a child forked then can hang in its first malloc (clang 14 with
 * libomp: in libomp's own fork handler, before accy runs). The fork test
 * runs without it. */
#if defined(__SANITIZE_ADDRESS__)
#define FORK_WHILE_BUSY 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FORK_WHILE_BUSY 0
#endif
#endif
#ifndef FORK_WHILE_BUSY
#define FORK_WHILE_BUSY 1
#endif

/* A fork while callers run and wait for groups: the child inherits the
 * queue of calls that never end there, and must still run its own calls
 * (on its own, inline) instead of waiting for them. */
START_TEST(session_fork_while_grouped) {
  if (!FORK_WHILE_BUSY) return;
  const uint32_t saved = accy__sched_cores();
  accy__sched_set_cores(1);
  accy_session_options o = {.struct_size = sizeof o, .num_threads = 2};
  fixture fx;
  fixture_open(&fx, 78, &o, (size_t)CALLERS * ROUNDS);
  accy_session *s = fx.s;
  const accy_handle h = fx.h;
  const size_t nin = FX_IN, nout = FX_OUT;
  const float *in = fx.in, *want = fx.want;
  caller c[CALLERS];
  pthread_t t[CALLERS];
  for (int k = 0; k < CALLERS; k++) {
    c[k] = (caller){s, h, in + (size_t)k * ROUNDS * nin, want + (size_t)k * ROUNDS * nout,
                    nin, nout, false, 0, 0, NULL};
    ck_assert_int_eq(pthread_create(&t[k], NULL, caller_main, &c[k]), 0);
  }
  struct timespec ts = {0, 1000000};
  nanosleep(&ts, NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) { /* no Check asserts here: the exit code says */
    int code = 0;
    float y[10];
    for (size_t k = 0; k < 4 && !code; k++) {
      accy_input i1 = {in + k * nin, nin * 4};
      accy_output o1 = {y, sizeof y};
      if (accy_session_invoke(s, h, &i1, 1, &o1, 1) != ACCY_STATUS_OK) code = 1;
      else if (memcmp(y, want + k * nout, sizeof y) != 0) code = 2;
    }
    _exit(code);
  }
  int status = 0;
  pid_t got = 0;
  for (int k = 0; k < 1000 && (got = waitpid(pid, &status, WNOHANG)) == 0; k++) {
    struct timespec w = {0, 10000000};
    nanosleep(&w, NULL);
  }
  if (got == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  for (int k = 0; k < CALLERS; k++) pthread_join(t[k], NULL);
  ck_assert_msg(got != 0, "forked child hung");
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 0);
  for (int k = 0; k < CALLERS; k++) ck_assert_int_eq(c[k].failures, 0);
  fixture_close(&fx);
  accy__sched_set_cores(saved);
}
END_TEST

/* Submissions of a program that coalesces, queued faster than the pool
 * runs them: a pool thread takes the queued ones with the one it runs,
 * and every result is a lone invoke's. */
static void count_done(void *user_data, accy_status st) {
  atomic_int *n = user_data;
  if (st == ACCY_STATUS_OK) atomic_fetch_add(n, 1);
}

START_TEST(session_async_batches) {
  enum { N = 64 };
  accy_session_options o = {.struct_size = sizeof o, .num_threads = _i ? 2 : 1};
  fixture fx;
  fixture_open(&fx, 79, &o, N);
  accy_session *s = fx.s;
  const accy_handle h = fx.h;
  const size_t nin = FX_IN, nout = FX_OUT;
  const float *in = fx.in, *want = fx.want;
  float *got = malloc(N * nout * 4);
  accy_program_stats ps = {.struct_size = sizeof ps};
  for (int burst = 0; burst < 50; burst++) {
    memset(got, 0xff, N * nout * 4);
    atomic_int done;
    atomic_init(&done, 0);
    accy_input ins[N];
    accy_output outs[N];
    for (size_t k = 0; k < N; k++) {
      ins[k] = (accy_input){in + k * nin, nin * 4};
      outs[k] = (accy_output){got + k * nout, nout * 4};
      accy_completion c = {.struct_size = sizeof c, .callback = count_done, .user_data = &done,
                           .event_fd = -1};
      ck_assert_int_eq(accy_session_submit(s, h, &ins[k], 1, &outs[k], 1, &c), ACCY_STATUS_OK);
    }
    for (int w = 0; w < 20000 && atomic_load(&done) < N; w++) {
      struct timespec ts = {0, 100000};
      nanosleep(&ts, NULL);
    }
    ck_assert_int_eq(atomic_load(&done), N);
    for (size_t k = 0; k < N; k++)
      ck_assert_msg(memcmp(got + k * nout, want + k * nout, nout * 4) == 0,
                    "submission %zu of burst %d differs from a lone invoke", k, burst);
    ck_assert_int_eq(accy_session_program_stats(s, h, &ps), ACCY_STATUS_OK);
    if (ps.batched_launches >= 4) break;
    /* The batched program freed between bursts: the next burst builds it
     * again (and a trim while a submission runs skips it). */
    ck_assert_int_eq(accy_session_trim(s, NULL), ACCY_STATUS_OK);
  }
  ck_assert_msg(ps.batched_launches > 0 && ps.batched_calls > ps.batched_launches,
                "%llu calls in %llu batched launches", (unsigned long long)ps.batched_calls,
                (unsigned long long)ps.batched_launches);
  fixture_close(&fx);
  free(got);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("coalesce");
  TCase *tc = tcase_create("analysis");
  tcase_add_test(tc, separable_programs);
  tcase_add_loop_test(tc, inseparable_programs, 0, N_BAD);
  tcase_add_test(tc, worth_coalescing);
  suite_add_tcase(s, tc);
  tc = tcase_create("bits");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, batched_rows_same_bits, 0, 4);
  suite_add_tcase(s, tc);
  tc = tcase_create("session");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, session_coalesces);
  tcase_add_loop_test(tc, session_calls_alone, 0, 3);
  tcase_add_test(tc, session_release_while_grouped);
  tcase_add_test(tc, session_fork_while_grouped);
  tcase_add_loop_test(tc, session_async_batches, 0, 2);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  const int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
