/* tests/check_fuse.c: every epilogue fusion rule (src/compile/fuse.h)
 * against the unfused program on random inputs: the fused plan must have
 * fewer tasks (the rule applied) and the same result bits (each step rounds
 * as the separate op does), at the process's ISA level; plus the chains
 * that must not fuse (a value used twice, an output in the middle, crossed
 * clamp bounds) still compute the right result. Programs go through the
 * public API and the internal plan, compiled once with ACCY_FUSION=0. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/compile/compile.h"
#include "src/compile/fold.h"
#include "src/compile/simplify.h"
#include "src/compile/split.h"
#include "src/compile/lower.h"
#include "src/internal.h"
#include "src/ir/verify.h"
#include "src/base/alloc.h"
#include "src/base/cpu.h"
#include "src/base/half.h"
#include "src/runtime/bind.h"
#include "src/kernels/kernels.h"
#include "src/kernels/uk/uk.h"
#include "tests/testutil.h"

typedef struct prog {
  accy__program p;
  tu_rng *rng;
  /* When set: some task of the fused plan says this in its description
   * (accy describe --plan's "runs as"). */
  const char *want_how;
} prog;

static uint32_t node(prog *g, uint16_t op, accy__type t, const uint32_t *ops, uint32_t n,
                     const int64_t *attrs, uint32_t na) {
  uint32_t idx;
  ck_assert_int_eq(accy__program_add_node(&g->p, op, &t, ops, n, attrs, na, NULL, 0, NULL, 0, &idx),
                   ACCY_STATUS_OK);
  return idx;
}

static uint32_t param(prog *g, const char *name, accy__type t) {
  uint32_t idx;
  ck_assert_int_eq(accy__program_add_node(&g->p, ACCY_OP_PARAMETER, &t, NULL, 0, NULL, 0, name,
                                          strlen(name), NULL, 0, &idx),
                   ACCY_STATUS_OK);
  return idx;
}

/* A random constant of type t (values in [-1, 1], rounded to t's float
 * type). */
static uint32_t constant(prog *g, accy__type t, float fixed, bool use_fixed) {
  uint64_t n = tu_elems(&t);
  const size_t es = accy__dtype_size(t.dtype);
  void *v = malloc((size_t)n * es + 4);
  for (uint64_t i = 0; i < n; i++)
    tu_set_f64(t.dtype, v, i, use_fixed ? fixed : (float)(tu_rng_unit(g->rng) * 2 - 1));
  static int counter;
  char name[32];
  snprintf(name, sizeof name, "c%d", counter++);
  uint32_t idx;
  ck_assert_int_eq(accy__program_add_node(&g->p, ACCY_OP_CONSTANT, &t, NULL, 0, NULL, 0, name,
                                          strlen(name), v, n * es, &idx),
                   ACCY_STATUS_OK);
  free(v);
  return idx;
}

/* broadcast_in_dim of a constant vector along |axis| of |t|. */
static uint32_t channel_bias(prog *g, accy__type t, uint32_t axis) {
  int64_t d[1] = {t.dims[axis]};
  uint32_t c = constant(g, tu_type(t.dtype, 1, d), 0, false);
  int64_t attr[1] = {axis};
  return node(g, ACCY_OP_BROADCAST_IN_DIM, t, &c, 1, attr, 1);
}

static uint32_t scalar(prog *g, accy__type t, float v) {
  uint32_t c = constant(g, tu_type(t.dtype, 0, NULL), v, true);
  return node(g, ACCY_OP_BROADCAST_IN_DIM, t, &c, 1, NULL, 0);
}

static uint32_t bin(prog *g, uint16_t op, accy__type t, uint32_t a, uint32_t b) {
  uint32_t ops[2] = {a, b};
  return node(g, op, t, ops, 2, NULL, 0);
}

static uint32_t un(prog *g, uint16_t op, accy__type t, uint32_t a) {
  return node(g, op, t, &a, 1, NULL, 0);
}

static uint32_t reduce_axis(prog *g, int kind, uint32_t x, accy__type rt, int64_t axis) {
  int64_t attrs[2] = {kind, axis};
  return node(g, ACCY_OP_REDUCE, rt, &x, 1, attrs, 2);
}

/* Compiles |g| (fused or not), runs it inline and through a 2-worker pool
 * on |inputs|, checks both runs agree and leave the inputs alone, and
 * returns the outputs (all of them, one after the other) and the number of
 * tasks with work. */
static float *run(prog *g, bool fuse, void **inputs, uint32_t *n_tasks) {
  setenv("ACCY_FUSION", fuse ? "1" : "0", 1);
  accy__plan plan;
  ck_assert_msg(accy__verify(&g->p) == ACCY_STATUS_OK, "verify: %s", accy__cause());
  accy_status s = accy__compile(&g->p, 16, &plan);
  ck_assert_msg(s == ACCY_STATUS_OK, "compile: %s", accy__cause());
  /* Tasks with work (barrier tasks of the scratch planner have none), not
   * counting a kernel's pre-pass (the task writing its launch buffer). */
  *n_tasks = 0;
  for (uint32_t t = 0; t < plan.n_tasks; t++) {
    const accy__ctask *ct = &plan.ctasks[t];
    const bool pre = ct->n_refs && ACCY__REF_TAG(plan.refs[ct->refs_offset]) == ACCY__REF_TEMP;
    *n_tasks += ct->kernel.n_items > 0 && !pre;
  }
  if (fuse && g->want_how) {
    bool said = false;
    for (uint32_t t = 0; t < plan.n_tasks && !said; t++)
      said = plan.ctasks[t].kernel.how && strstr(plan.ctasks[t].kernel.how, g->want_how);
    ck_assert_msg(said, "no task of the fused plan says \"%s\"", g->want_how);
  }
  accy_input ins[4];
  size_t in_bytes[4];
  void *in_copy[4];
  for (uint32_t i = 0; i < g->p.n_params; i++) {
    in_bytes[i] = accy__type_bytes(&g->p.nodes[g->p.params[i]].type);
    ins[i] = (accy_input){inputs[i], in_bytes[i]};
    in_copy[i] = malloc(in_bytes[i] + 1);
    memcpy(in_copy[i], inputs[i], in_bytes[i]);
  }
  size_t total = 0, ob[4];
  for (uint32_t j = 0; j < g->p.n_outputs; j++) total += ob[j] = accy__type_bytes(&g->p.nodes[g->p.outputs[j]].type);
  char *out = malloc(total + 4), *out2 = malloc(total + 4);
  accy_output o[4], o2[4];
  for (uint32_t j = 0, at = 0; j < g->p.n_outputs; at += (uint32_t)ob[j], j++) {
    o[j] = (accy_output){out + at, ob[j]};
    o2[j] = (accy_output){out2 + at, ob[j]};
  }
  void *block = NULL;
  ck_assert_int_eq(posix_memalign(&block, 64, plan.block_bytes + 64), 0);
  accy__plan_run(&plan, NULL, 1, block, ins, o);
  accy__pool *pool = NULL;
  ck_assert_int_eq(accy__pool_acquire(2, &pool), ACCY_STATUS_OK);
  accy__plan_run(&plan, pool, 2, block, ins, o2);
  accy__pool_release(pool);
  ck_assert_int_eq(memcmp(out, out2, total), 0);
  for (uint32_t i = 0; i < g->p.n_params; i++) {
    ck_assert_msg(memcmp(in_copy[i], inputs[i], in_bytes[i]) == 0, "input %u was modified", i);
    free(in_copy[i]);
  }
  free(out2);
  free(block);
  accy__plan_free(&plan);
  unsetenv("ACCY_FUSION");
  return (float *)out;
}

/* Runs |g| fused and unfused on random inputs; the fused plan must have
 * |want| tasks with work (and the unfused more, unless nothing fuses) and
 * the same bits. Twice: with edge values among the inputs (NaN, infinities,
 * signed zeros, extremes), and with finite ones only, since over a long sum
 * one edge value in eight makes nearly every output NaN or infinite and the
 * comparison would then say little about the ordinary values. */
static void compare_inputs(prog *g, uint32_t want, bool edges);
static void compare(prog *g, uint32_t want) {
  compare_inputs(g, want, false);
  compare_inputs(g, want, true);
  accy__program_free(&g->p);
}

static void compare_inputs(prog *g, uint32_t want, bool edges) {
  void *inputs[4];
  for (uint32_t i = 0; i < g->p.n_params; i++) {
    const accy__type *pt = &g->p.nodes[g->p.params[i]].type;
    uint64_t ne = tu_elems(pt);
    inputs[i] = malloc((size_t)ne * accy__dtype_size(pt->dtype) + 4);
    tu_fill_random(g->rng, pt->dtype, inputs[i], (size_t)ne, edges, 2);
  }
  uint32_t tf, tu;
  float *f = run(g, true, inputs, &tf), *u = run(g, false, inputs, &tu);
  if (want == UINT32_MAX) /* any fusion at all */
    ck_assert_msg(tf < tu, "fused plan has %u tasks, unfused %u", tf, tu);
  else if (want == UINT32_MAX - 1) /* whatever fuses: the bits alone */
    ;
  else
    ck_assert_msg(tf == want, "fused plan has %u tasks (unfused %u), expected %u", tf, tu, want);
  ck_assert_uint_ge(tu, tf);
  /* In f32 units (wider outputs compare as several), or in the outputs'
   * half type when the first is one (then all are). */
  const int32_t odt = g->p.nodes[g->p.outputs[0]].type.dtype;
  const bool half = odt == ACCY_DTYPE_F16 || odt == ACCY_DTYPE_BF16;
  uint64_t n = 0;
  for (uint32_t j = 0; j < g->p.n_outputs; j++)
    n += accy__type_bytes(&g->p.nodes[g->p.outputs[j]].type) / (half ? 2 : 4);
  size_t d = tu_first_difference(half ? odt : ACCY_DTYPE_F32, f, u, (size_t)n);
  ck_assert_msg(d == SIZE_MAX, "fused and unfused differ at %zu: %.9g vs %.9g", d,
                tu_get_f64(half ? odt : ACCY_DTYPE_F32, f, d),
                tu_get_f64(half ? odt : ACCY_DTYPE_F32, u, d));
  free(f);
  free(u);
  for (uint32_t i = 0; i < g->p.n_params; i++) free(inputs[i]);
}

static void out(prog *g, uint32_t n) {
  ck_assert_int_eq(accy__program_add_output(&g->p, n, "y", 1), ACCY_STATUS_OK);
}

/* x [M, K] . W[N, K]^T (constant, ONNX Gemm transB) -> [M, N]. */
static uint32_t dense(prog *g, uint32_t x, int64_t M, int64_t K, int64_t N, bool const_w) {
  int64_t wd[2] = {N, K}, od[2] = {M, N};
  uint32_t w = const_w ? constant(g, tu_type(ACCY_DTYPE_F32, 2, wd), 0, false)
                       : param(g, "w", tu_type(ACCY_DTYPE_F32, 2, wd));
  int64_t attrs[4] = {0, 1, 1, 1};
  uint32_t ops[2] = {x, w};
  return node(g, ACCY_OP_DOT_GENERAL, tu_type(ACCY_DTYPE_F32, 2, od), ops, 2, attrs, 4);
}

/* The number of pre-pass tasks (a kernel packing an operand into a launch
 * buffer) in |g|'s fused plan. */
static uint32_t pre_passes(prog *g) {
  accy__plan plan;
  ck_assert_int_eq(accy__verify(&g->p), ACCY_STATUS_OK);
  ck_assert_int_eq(accy__compile(&g->p, 16, &plan), ACCY_STATUS_OK);
  uint32_t n = 0;
  for (uint32_t t = 0; t < plan.n_tasks; t++) {
    const accy__ctask *ct = &plan.ctasks[t];
    n += ct->n_refs && ACCY__REF_TAG(plan.refs[ct->refs_offset]) == ACCY__REF_TEMP;
  }
  accy__plan_free(&plan);
  return n;
}

/* A GEMM whose B is an input, packed once per launch by a pre-pass (several
 * row blocks of more than eight tiles each, or columns that are not
 * contiguous), gives the bits of the same GEMM with B a constant packed at
 * compile time: row-major B and B read transposed (its panels turned by the
 * level's transpose; N and K with partial panels and blocks too), with a
 * bias and ReLU fused, inline and on two workers. */
START_TEST(test_dot_input_b_packed_per_launch) {
  tu_rng rng;
  tu_rng_seed(&rng, 4100);
  static const int64_t shapes[][4] = {{300, 40, 2048, 0}, {300, 40, 2048, 1}, {70, 37, 77, 1}};
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
    const int64_t M = shapes[si][0], K = shapes[si][1], N = shapes[si][2];
    const int transposed = (int)shapes[si][3];
    int64_t xd[2] = {M, K}, od[2] = {M, N};
    int64_t wd[2] = {transposed ? N : K, transposed ? K : N};
    int64_t attrs[4] = {0, 1, 1, transposed ? 1 : 0};
    accy__type wt = tu_type(ACCY_DTYPE_F32, 2, wd), ot = tu_type(ACCY_DTYPE_F32, 2, od);
    float *w = malloc((size_t)(K * N) * 4);
    for (int64_t i = 0; i < K * N; i++) w[i] = (float)(tu_rng_unit(&rng) * 2 - 1);
    float *x = malloc((size_t)(M * K) * 4);
    /* Finite: with edge values nearly every output of a 40-term sum would be
     * NaN or infinite. */
    tu_fill_random(&rng, ACCY_DTYPE_F32, x, (size_t)(M * K), false, 2);
    float *outs[2];
    for (int as_const = 0; as_const < 2; as_const++) {
      /* The same constants (the bias) in both programs. */
      tu_rng prng;
      tu_rng_seed(&prng, 4101 + (uint64_t)si);
      prog g = {.rng = &prng};
      accy__program_init(&g.p);
      uint32_t ops[2] = {param(&g, "x", tu_type(ACCY_DTYPE_F32, 2, xd)), 0};
      if (as_const)
        ck_assert_int_eq(accy__program_add_node(&g.p, ACCY_OP_CONSTANT, &wt, NULL, 0, NULL, 0,
                                                "w", 1, w, (uint64_t)(K * N) * 4, &ops[1]),
                         ACCY_STATUS_OK);
      else
        ops[1] = param(&g, "w", wt);
      uint32_t y = node(&g, ACCY_OP_DOT_GENERAL, ot, ops, 2, attrs, 4);
      y = bin(&g, ACCY_OP_ADD, ot, y, channel_bias(&g, ot, 1));
      y = bin(&g, ACCY_OP_MAXIMUM, ot, y, scalar(&g, ot, 0));
      ck_assert_int_eq(accy__program_add_output(&g.p, y, "y", 1), ACCY_STATUS_OK);
      ck_assert_uint_eq(pre_passes(&g), as_const ? 0u : 1u);
      void *inputs[2] = {x, w};
      uint32_t nt;
      outs[as_const] = run(&g, true, inputs, &nt);
      ck_assert_uint_eq(nt, 1);
      accy__program_free(&g.p);
    }
    ck_assert_msg(memcmp(outs[0], outs[1], (size_t)(M * N) * 4) == 0,
                  "B packed per launch (%lld x %lld x %lld, transposed %d) differs from B "
                  "packed at compile time",
                  (long long)M, (long long)K, (long long)N, transposed);
    free(outs[0]);
    free(outs[1]);
    free(w);
    free(x);
  }
}
END_TEST

/* An f16 product with constant weights (widened as they are packed at
 * compile time) gives the bits of the same product with the weights an
 * input (widened per block by the GEMM's provider), which check_linalg
 * holds to the reference: 41 x 300 x 77, so K blocks and panels end
 * partway, and one row. */
START_TEST(test_dot_half_constant_weights) {
  tu_rng rng;
  tu_rng_seed(&rng, 4200);
  /* f16, each row count; bf16 also with weights whose products may leave
   * f32's normal range (edge values: the generic kernel) and with safe
   * weights and one row of x whose products overflow (its items run the
   * generic loop over the packed weights). */
  for (int v = 0; v < 6; v++) {
    const bool bf = v >= 2, one_row = v % 2 == 1, edge_w = v < 4, huge_row = v >= 4;
    const int32_t dt = bf ? ACCY_DTYPE_BF16 : ACCY_DTYPE_F16;
    /* 41 rows over 600 columns: items of several column blocks read A widened
     * once per launch. */
    const int64_t M = one_row ? 1 : 41, K = 300, N = one_row ? 77 : 600;
    int64_t xd[2] = {M, K}, wd[2] = {K, N}, od[2] = {M, N};
    const accy__type xt = tu_type(dt, 2, xd), wt = tu_type(dt, 2, wd), ot = tu_type(dt, 2, od);
    uint16_t *w = malloc((size_t)(K * N) * 2), *x = malloc((size_t)(M * K) * 2);
    tu_fill_random(&rng, dt, w, (size_t)(K * N), edge_w, 2);
    tu_fill_random(&rng, dt, x, (size_t)(M * K), !huge_row, 2);
    if (huge_row) { /* w about 2^30 (still safe), row M - 1 of x about 2^100: products
                       overflow with both signs, NaN in the generic kernel's sums and an
                       infinity in fused multiply-adds */
      for (int64_t i = 0; i < K * N; i++) w[i] = (uint16_t)((w[i] & 0x807fu) | (157u << 7));
      for (int64_t k = 0; k < K; k++)
        x[(M - 1) * K + k] = (uint16_t)((x[(M - 1) * K + k] & 0x807fu) | (227u << 7));
    }
    uint16_t *outs[2];
    for (int as_const = 0; as_const < 2; as_const++) {
      prog g = {.rng = &rng};
      accy__program_init(&g.p);
      uint32_t ops[2] = {param(&g, "x", xt), 0};
      if (as_const)
        ck_assert_int_eq(accy__program_add_node(&g.p, ACCY_OP_CONSTANT, &wt, NULL, 0, NULL, 0,
                                                "w", 1, w, (uint64_t)(K * N) * 2, &ops[1]),
                         ACCY_STATUS_OK);
      else
        ops[1] = param(&g, "w", wt);
      const int64_t attrs[4] = {0, 1, 1, 0};
      out(&g, node(&g, ACCY_OP_DOT_GENERAL, ot, ops, 2, attrs, 4));
      void *inputs[2] = {x, w};
      uint32_t nt;
      outs[as_const] = (uint16_t *)(void *)run(&g, true, inputs, &nt);
      accy__program_free(&g.p);
    }
    ck_assert_msg(tu_first_difference(dt, outs[0], outs[1], (size_t)(M * N)) == SIZE_MAX,
                  "%s weights packed at compile time differ from weights an input (case %d)",
                  bf ? "bf16" : "f16", v);
    free(outs[0]);
    free(outs[1]);
    free(w);
    free(x);
  }
}
END_TEST

static void named_out(prog *g, uint32_t x, const char *name) {
  ck_assert_int_eq(accy__program_add_output(&g->p, x, name, strlen(name)), ACCY_STATUS_OK);
}

/* Broadcasts inside a fused group, for elements of 1, 2, 4 and 8 bytes: a
 * vector along the middle axis (runs of the last axis filled with one
 * value) and a scalar constant, then the same program unfused (each
 * broadcast its own kernel): the same bytes. */
START_TEST(test_group_broadcast_fills_every_width) {
  static const int32_t kTypes[] = {ACCY_DTYPE_I8, ACCY_DTYPE_U8, ACCY_DTYPE_F16, ACCY_DTYPE_BF16,
                                   ACCY_DTYPE_I16, ACCY_DTYPE_F32, ACCY_DTYPE_F64, ACCY_DTYPE_I64};
  tu_rng rng;
  tu_rng_seed(&rng, 4400);
  for (size_t t = 0; t < sizeof kTypes / sizeof kTypes[0]; t++) {
    const int32_t dt = kTypes[t];
    const size_t es = accy_dtype_size(dt);
    int64_t xd[3] = {3, 37, 75}, bd[1] = {37};
    const accy__type xt = tu_type(dt, 3, xd);
    void *x = malloc(3 * 37 * 75 * es), *b = malloc(37 * es);
    tu_fill_random(&rng, dt, x, 3 * 37 * 75, false, 4);
    tu_fill_random(&rng, dt, b, 37, false, 4);
    unsigned char one[8];
    tu_fill_random(&rng, dt, one, 1, false, 4);
    float *res[2];
    for (int fuse = 0; fuse < 2; fuse++) {
      prog g = {.rng = &rng};
      accy__program_init(&g.p);
      uint32_t xp = param(&g, "x", xt), bp = param(&g, "b", tu_type(dt, 1, bd)), c;
      ck_assert_int_eq(accy__program_add_node(&g.p, ACCY_OP_CONSTANT, &(accy__type){dt, 0, {0}},
                                              NULL, 0, NULL, 0, "c", 1, one, es, &c),
                       ACCY_STATUS_OK);
      const int64_t axis[1] = {1};
      uint32_t bb = node(&g, ACCY_OP_BROADCAST_IN_DIM, xt, &bp, 1, axis, 1);
      uint32_t cb = node(&g, ACCY_OP_BROADCAST_IN_DIM, xt, &c, 1, NULL, 0);
      uint32_t y = bin(&g, ACCY_OP_ADD, xt, xp, bb);
      out(&g, bin(&g, ACCY_OP_MAXIMUM, xt, y, cb));
      void *inputs[2] = {x, b};
      uint32_t nt;
      res[fuse] = run(&g, fuse == 1, inputs, &nt);
      accy__program_free(&g.p);
    }
    ck_assert_msg(memcmp(res[0], res[1], 3 * 37 * 75 * es) == 0,
                  "%s: the fused group's broadcasts differ from the unfused program",
                  accy__dtype_name(dt));
    free(res[0]);
    free(res[1]);
    free(x);
    free(b);
  }
}
END_TEST

/* The half program of test_half_lowered: x (a parameter) through a 3 x 3
 * convolution with constant filters w (read by nothing else: widened at
 * compile time), a 1 x 1 convolution with filters v (a parameter: a
 * convert), a 2 x 2 max pool and a 3 x 3 sum pool; in |dt| throughout, or
 * (|f32_form|) written out as the lowering writes it: converts around f32
 * convolutions and pools. */
static void half_lowered_prog(prog *g, int32_t dt, bool f32_form, const uint16_t *w) {
  const int32_t ct = f32_form ? ACCY_DTYPE_F32 : dt;
  int64_t xd[4] = {1, 16, 12, 12}, vd[4] = {8, 24, 1, 1};
  int64_t yd[4] = {1, 24, 10, 10}, zd[4] = {1, 8, 10, 10}, md[4] = {1, 8, 5, 5},
          sd[4] = {1, 8, 8, 8};
  uint32_t x = param(g, "x", tu_type(dt, 4, xd)), v = param(g, "v", tu_type(dt, 4, vd));
  uint32_t wc;
  if (f32_form) {
    float wf[24 * 16 * 9];
    for (int i = 0; i < 24 * 16 * 9; i++)
      wf[i] = dt == ACCY_DTYPE_F16 ? accy__f16_to_f32(w[i]) : accy__bf16_to_f32(w[i]);
    ck_assert_int_eq(accy__program_add_node(&g->p, ACCY_OP_CONSTANT,
                                            &(accy__type){ACCY_DTYPE_F32, 4, {24, 16, 3, 3}},
                                            NULL, 0, NULL, 0, "w", 1, wf, sizeof wf, &wc),
                     ACCY_STATUS_OK);
  } else {
    ck_assert_int_eq(accy__program_add_node(&g->p, ACCY_OP_CONSTANT, &(accy__type){dt, 4, {24, 16, 3, 3}},
                                            NULL, 0, NULL, 0, "w", 1, w, 24 * 16 * 9 * 2, &wc),
                     ACCY_STATUS_OK);
  }
  if (f32_form) {
    x = un(g, ACCY_OP_CONVERT, tu_type(ct, 4, xd), x);
  }
  const int64_t conv[] = {2, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1};
  uint32_t ops[2] = {x, wc};
  uint32_t y = node(g, ACCY_OP_CONVOLUTION, tu_type(ct, 4, yd), ops, 2, conv, 12);
  if (f32_form) {
    y = un(g, ACCY_OP_CONVERT, tu_type(dt, 4, yd), y);
    y = un(g, ACCY_OP_CONVERT, tu_type(ct, 4, yd), y);
    v = un(g, ACCY_OP_CONVERT, tu_type(ct, 4, vd), v);
  }
  ops[0] = y, ops[1] = v;
  uint32_t z = node(g, ACCY_OP_CONVOLUTION, tu_type(ct, 4, zd), ops, 2, conv, 12);
  if (f32_form) {
    z = un(g, ACCY_OP_CONVERT, tu_type(dt, 4, zd), z);
    named_out(g, z, "z");
    z = un(g, ACCY_OP_CONVERT, tu_type(ct, 4, zd), z);
  } else {
    named_out(g, z, "z");
  }
  const int64_t mx[] = {ACCY_REDUCE_MAX, 1, 1, 2, 2, 1, 1, 2, 2, 0, 0, 0, 0,
                        0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  const int64_t sm[] = {ACCY_REDUCE_SUM, 1, 1, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0,
                        0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  uint32_t m = node(g, ACCY_OP_REDUCE_WINDOW, tu_type(ct, 4, md), &z, 1, mx, 25);
  uint32_t sp = node(g, ACCY_OP_REDUCE_WINDOW, tu_type(ct, 4, sd), &z, 1, sm, 25);
  if (f32_form) {
    m = un(g, ACCY_OP_CONVERT, tu_type(dt, 4, md), m);
    sp = un(g, ACCY_OP_CONVERT, tu_type(dt, 4, sd), sp);
  }
  named_out(g, m, "m");
  named_out(g, sp, "s");
}

/* src/compile/lower.c: f16 and bf16 convolutions and pools run in f32
 * between converts. The lowered program gives, at every level, the bits of
 * the same computation written out in f32 with those converts, and at
 * portable the bits of the half program's own kernels (products exact in
 * f32, sums in the same order, one rounding). No half convolution or pool
 * is left, and the filter constant read only by the convolution is widened
 * at compile time, so no half constant either. */
START_TEST(test_half_lowered) {
  tu_rng rng;
  tu_rng_seed(&rng, 4300);
  for (int d = 0; d < 2; d++) {
    const int32_t dt = d == 0 ? ACCY_DTYPE_F16 : ACCY_DTYPE_BF16;
    uint16_t w[24 * 16 * 9], x[16 * 144], v[8 * 24];
    tu_fill_random(&rng, dt, w, 24 * 16 * 9, false, 1);
    tu_fill_random(&rng, dt, x, 16 * 144, false, 2);
    tu_fill_random(&rng, dt, v, 8 * 24, false, 1);
    void *inputs[2] = {x, v};
    uint32_t nt;
    float *res[3];
    for (int form = 0; form < 3; form++) { /* half, half lowered, written out */
      prog g = {.rng = &rng};
      accy__program_init(&g.p);
      half_lowered_prog(&g, dt, form == 2, w);
      if (form == 1) {
        bool changed = true;
        /* No room for the widened filters: left alone. */
        ck_assert_int_eq(accy__lower(&g.p, 24 * 16 * 9 * 4 - 1, &changed), ACCY_STATUS_OK);
        ck_assert(!changed);
        ck_assert_int_eq(accy__lower(&g.p, UINT64_MAX, &changed), ACCY_STATUS_OK);
        ck_assert(changed);
        for (uint32_t i = 0; i < g.p.n_nodes; i++) {
          const accy__node *nd = &g.p.nodes[i];
          const bool f32_op = nd->op == ACCY_OP_CONSTANT || nd->op == ACCY_OP_CONVOLUTION ||
                              nd->op == ACCY_OP_REDUCE_WINDOW;
          ck_assert_msg(!f32_op || nd->type.dtype == ACCY_DTYPE_F32,
                        "node %u (op %u) is left in %s", i, nd->op, accy__dtype_name(dt));
        }
      }
      res[form] = run(&g, true, inputs, &nt);
      accy__program_free(&g.p);
    }
    const size_t n = 8 * 100 + 8 * 25 + 8 * 64; /* the three outputs, 2 bytes each */
    ck_assert_msg(memcmp(res[1], res[2], n * 2) == 0,
                  "%s: the lowered program differs from its f32 form written out",
                  d == 0 ? "f16" : "bf16");
    if (accy__isa_level() == ACCY__ISA_PORTABLE)
      ck_assert_msg(memcmp(res[0], res[1], n * 2) == 0,
                    "%s: at portable the lowered program differs from the half kernels",
                    d == 0 ? "f16" : "bf16");
    for (int f = 0; f < 3; f++) free(res[f]);
  }
}
END_TEST

/* f16 and bf16 products whose batch axes take no one stride in an operand
 * (Q [2, T, 3, 8] . K [2, S, 3, 8] over the last axis, batch axes 0 and 2:
 * attention's heads read in place at a batch of 2) are lowered to f32
 * products between converts, and give the half kernel's bits: f16's
 * products are exact in f32 (one chain per output over k in order, one
 * rounding); bf16's are unless they leave f32's normal range, so the f32
 * product scans each item and sums one that holds such values as the bf16
 * kernel does. Cases 0, 1: edge values among random ones (T 5, S 6);
 * case 2 (bf16): random values in [-2, 2] (T 20, S 18, most items on the
 * GEMM) and one output whose products overflow with both signs (2^100 times
 * 2^60 and -2^60: the generic sum's +inf - inf is a NaN, fused
 * multiply-adds would give +inf). */
START_TEST(test_half_batched_dots_lowered) {
  tu_rng rng;
  tu_rng_seed(&rng, 4400);
  for (int d = 0; d < 3; d++) {
    const int32_t dt = d == 0 ? ACCY_DTYPE_F16 : ACCY_DTYPE_BF16;
    const int64_t T = d == 2 ? 20 : 5, S = d == 2 ? 18 : 6;
    const int64_t qd[4] = {2, T, 3, 8}, kd[4] = {2, S, 3, 8}, sd[4] = {2, 3, T, S};
    uint16_t q[2 * 20 * 3 * 8], k[2 * 18 * 3 * 8];
    tu_fill_random(&rng, dt, q, (size_t)(2 * T * 3 * 8), d < 2, 2);
    tu_fill_random(&rng, dt, k, (size_t)(2 * S * 3 * 8), d < 2, 2);
    if (d == 2) { /* Q[1, 7, 2, 3..4] = 2^100; K[1, 11, 2, 3] = 2^60, K[1, 11, 2, 4] = -2^60 */
      q[((1 * T + 7) * 3 + 2) * 8 + 3] = q[((1 * T + 7) * 3 + 2) * 8 + 4] = 0x7180;
      k[((1 * S + 11) * 3 + 2) * 8 + 3] = 0x5d80;
      k[((1 * S + 11) * 3 + 2) * 8 + 4] = 0xdd80;
    }
    void *inputs[2] = {q, k};
    uint16_t *res[2];
    for (int form = 0; form < 2; form++) {
      prog g = {.rng = &rng};
      accy__program_init(&g.p);
      const uint32_t ops[2] = {param(&g, "q", tu_type(dt, 4, qd)), param(&g, "k", tu_type(dt, 4, kd))};
      const int64_t da[8] = {2, 0, 2, 0, 2, 1, 3, 3};
      out(&g, node(&g, ACCY_OP_DOT_GENERAL, tu_type(dt, 4, sd), ops, 2, da, 8));
      if (form == 1) {
        bool changed = false;
        ck_assert_int_eq(accy__lower(&g.p, UINT64_MAX, &changed), ACCY_STATUS_OK);
        ck_assert(changed);
        /* the f32 GEMM in two sets of batch axes, a bf16 one scanning its items */
        g.want_how = dt == ACCY_DTYPE_BF16 ? "bf16 values: items whose every product is exact"
                                           : "GEMM ";
        for (uint32_t i = 0; i < g.p.n_nodes && changed; i++)
          ck_assert(g.p.nodes[i].op != ACCY_OP_DOT_GENERAL ||
                    g.p.nodes[i].type.dtype == ACCY_DTYPE_F32);
      }
      uint32_t nt;
      res[form] = (uint16_t *)run(&g, true, inputs, &nt);
      accy__program_free(&g.p);
    }
    const size_t diff = tu_first_difference(dt, res[0], res[1], (size_t)(2 * 3 * T * S));
    ck_assert_msg(diff == SIZE_MAX, "%s, case %d: lowered bits differ at %zu: %a vs %a",
                  accy__dtype_name(dt), d, diff, tu_get_f64(dt, res[0], diff),
                  tu_get_f64(dt, res[1], diff));
    if (d == 2) { /* the planted output is a NaN, its neighbours finite */
      const size_t at = (size_t)(((1 * 3 + 2) * T + 7) * S + 11);
      ck_assert(isnan(tu_get_f64(dt, res[1], at)));
      ck_assert(isfinite(tu_get_f64(dt, res[1], at + 1)));
    }
    free(res[0]);
    free(res[1]);
  }
}
END_TEST

START_TEST(test_dot_epilogues) {
  tu_rng rng;
  tu_rng_seed(&rng, 4000 + (uint64_t)_i);
  const int64_t M = _i == 0 ? 1 : 37, K = 70, N = 45;
  int64_t xd[2] = {M, K}, od[2] = {M, N};
  accy__type ot = tu_type(ACCY_DTYPE_F32, 2, od);
  for (int rule = 0; rule < 8; rule++) {
    prog g = {.rng = &rng};
    accy__program_init(&g.p);
    uint32_t x = param(&g, "x", tu_type(ACCY_DTYPE_F32, 2, xd));
    uint32_t r = rule >= 5 ? param(&g, "r", ot) : 0;
    uint32_t y = dense(&g, x, M, K, N, rule != 7), want = 1;
    switch (rule) {
      case 0: /* bias */
        y = bin(&g, ACCY_OP_ADD, ot, y, channel_bias(&g, ot, 1));
        break;
      case 1: /* bias (operands swapped) + ReLU */
        y = bin(&g, ACCY_OP_ADD, ot, channel_bias(&g, ot, 1), y);
        y = bin(&g, ACCY_OP_MAXIMUM, ot, y, scalar(&g, ot, 0));
        break;
      case 2: /* ReLU6 as minimum(maximum(y, 0), 6) */
        y = bin(&g, ACCY_OP_MAXIMUM, ot, scalar(&g, ot, 0), y);
        y = bin(&g, ACCY_OP_MINIMUM, ot, y, scalar(&g, ot, 0.5f));
        break;
      case 3: { /* clamp with scalar constants */
        uint32_t lo = constant(&g, tu_type(ACCY_DTYPE_F32, 0, NULL), -0.25f, true);
        uint32_t hi = constant(&g, tu_type(ACCY_DTYPE_F32, 0, NULL), 0.3f, true);
        uint32_t ops[3] = {lo, y, hi};
        y = node(&g, ACCY_OP_CLAMP, ot, ops, 3, NULL, 0);
        break;
      }
      case 4: /* crossed bounds: minimum(y, -1) then maximum(., 1): only the first fuses
               * into the dot's epilogue; the maximum and its broadcast form a group,
               * which follows the dot's items */
        y = bin(&g, ACCY_OP_MINIMUM, ot, y, scalar(&g, ot, -1));
        y = bin(&g, ACCY_OP_MAXIMUM, ot, y, scalar(&g, ot, 1));
        break;
      case 5: /* bias + residual + ReLU */
        y = bin(&g, ACCY_OP_ADD, ot, y, channel_bias(&g, ot, 1));
        y = bin(&g, ACCY_OP_ADD, ot, r, y);
        y = bin(&g, ACCY_OP_MAXIMUM, ot, y, scalar(&g, ot, 0));
        break;
      case 6: /* the residual is computed after the anchor in node order */
        y = bin(&g, ACCY_OP_ADD, ot, y, bin(&g, ACCY_OP_MULTIPLY, ot, r, r)), want = 2;
        break;
      case 7: /* weights as an input (direct B) + bias + ReLU */
        y = bin(&g, ACCY_OP_ADD, ot, y, channel_bias(&g, ot, 1));
        y = bin(&g, ACCY_OP_MAXIMUM, ot, y, scalar(&g, ot, 0));
        break;
    }
    out(&g, y);
    compare(&g, want);
  }
}
END_TEST

START_TEST(test_chains_that_must_not_fuse) {
  tu_rng rng;
  tu_rng_seed(&rng, 4100);
  int64_t xd[2] = {9, 20}, od[2] = {9, 13};
  accy__type ot = tu_type(ACCY_DTYPE_F32, 2, od);
  /* The dot's value is used twice. */
  prog g = {.rng = &rng};
  accy__program_init(&g.p);
  uint32_t x = param(&g, "x", tu_type(ACCY_DTYPE_F32, 2, xd));
  uint32_t d = dense(&g, x, 9, 20, 13, true);
  uint32_t y = bin(&g, ACCY_OP_ADD, ot, d, channel_bias(&g, ot, 1));
  y = bin(&g, ACCY_OP_MULTIPLY, ot, y, d);
  out(&g, y);
  compare(&g, 1); /* no chain: add + broadcast + multiply, a group after the dot's items */
  /* The middle of the chain is a program output too: the chain stops there. */
  accy__program_init(&g.p);
  x = param(&g, "x", tu_type(ACCY_DTYPE_F32, 2, xd));
  d = dense(&g, x, 9, 20, 13, true);
  uint32_t mid = bin(&g, ACCY_OP_ADD, ot, d, channel_bias(&g, ot, 1));
  y = bin(&g, ACCY_OP_MAXIMUM, ot, mid, scalar(&g, ot, 0));
  out(&g, y);
  ck_assert_int_eq(accy__program_add_output(&g.p, mid, "mid", 3), ACCY_STATUS_OK);
  compare(&g, 2); /* dot + bias fuse; the ReLU and its broadcast are a group */
}
END_TEST

/* A dot_general for test_groups_after_dots: x [M, K] . W [K, N] (shape 0-2:
 * M 1, 37 and 300, the GEMV, a few items and many wide ones), batched
 * [3, M, K] . [3, K, N] with W an input (3: B packed per launch by a
 * pre-pass), or lhs [4, 16, 5] contracted over its middle axis, whose two
 * free axes are no single stride (4: the generic path, [4, 5, N]). */
static uint32_t group_dot(prog *g, int shape, accy__type *ot) {
  static const int64_t Ms[4] = {1, 37, 300, 29}, Ks[4] = {70, 70, 64, 40}, Ns[4] = {45, 45, 1000, 70};
  if (shape == 4) {
    int64_t ld[3] = {4, 16, 5}, wd[2] = {16, 12}, od[3] = {4, 5, 12};
    uint32_t ops[2] = {param(g, "x", tu_type(ACCY_DTYPE_F32, 3, ld)),
                       constant(g, tu_type(ACCY_DTYPE_F32, 2, wd), 0, false)};
    int64_t attrs[4] = {0, 1, 1, 0};
    *ot = tu_type(ACCY_DTYPE_F32, 3, od);
    return node(g, ACCY_OP_DOT_GENERAL, *ot, ops, 2, attrs, 4);
  }
  const int64_t M = Ms[shape], K = Ks[shape], N = Ns[shape];
  if (shape == 3) {
    int64_t xd[3] = {3, M, K}, wd[3] = {3, K, N}, od[3] = {3, M, N};
    uint32_t ops[2] = {param(g, "x", tu_type(ACCY_DTYPE_F32, 3, xd)),
                       param(g, "w", tu_type(ACCY_DTYPE_F32, 3, wd))};
    int64_t attrs[6] = {1, 0, 0, 1, 2, 1};
    *ot = tu_type(ACCY_DTYPE_F32, 3, od);
    return node(g, ACCY_OP_DOT_GENERAL, *ot, ops, 2, attrs, 6);
  }
  int64_t xd[2] = {M, K}, od[2] = {M, N};
  *ot = tu_type(ACCY_DTYPE_F32, 2, od);
  return dense(g, param(g, "x", tu_type(ACCY_DTYPE_F32, 2, xd)), M, K, N, true);
}

/* Flat groups after a dot_general (fuse.h): the group runs on each item of
 * the product, in place, and its bits equal the unfused nodes'; groups that
 * read anything but the product and constants, or a product that is needed
 * as it is elsewhere, stay tasks of their own. */
START_TEST(test_groups_after_dots) {
  tu_rng rng;
  tu_rng_seed(&rng, 4700 + (uint64_t)_i);
  for (int rule = 0; rule < 10; rule++) {
    prog g = {.rng = &rng};
    accy__program_init(&g.p);
    accy__type ot;
    uint32_t y = group_dot(&g, _i, &ot), want = 1;
    const uint32_t rk = ot.rank;
    switch (rule) {
      case 0: { /* erf GELU: y * 0.5 * (1 + erf(y / sqrt 2)) */
        uint32_t e = un(&g, ACCY_OP_ERF, ot, bin(&g, ACCY_OP_DIVIDE, ot, y, scalar(&g, ot, 1.41421356f)));
        e = bin(&g, ACCY_OP_ADD, ot, e, scalar(&g, ot, 1));
        y = bin(&g, ACCY_OP_MULTIPLY, ot, bin(&g, ACCY_OP_MULTIPLY, ot, y, e), scalar(&g, ot, 0.5f));
        break;
      }
      case 1: { /* bias, then tanh GELU: 0.5 y (1 + tanh(0.79788 (y + 0.044715 y^3))) */
        y = bin(&g, ACCY_OP_ADD, ot, y, channel_bias(&g, ot, rk - 1));
        uint32_t c = bin(&g, ACCY_OP_POWER, ot, y, scalar(&g, ot, 3));
        c = bin(&g, ACCY_OP_ADD, ot, y, bin(&g, ACCY_OP_MULTIPLY, ot, c, scalar(&g, ot, 0.044715f)));
        c = un(&g, ACCY_OP_TANH, ot, bin(&g, ACCY_OP_MULTIPLY, ot, c, scalar(&g, ot, 0.7978846f)));
        c = bin(&g, ACCY_OP_ADD, ot, c, scalar(&g, ot, 1));
        y = bin(&g, ACCY_OP_MULTIPLY, ot, bin(&g, ACCY_OP_MULTIPLY, ot, y, scalar(&g, ot, 0.5f)), c);
        break;
      }
      case 2: { /* bias, residual, then SiLU: y * logistic(y) */
        uint32_t r = param(&g, "r", ot);
        y = bin(&g, ACCY_OP_ADD, ot, y, channel_bias(&g, ot, rk - 1));
        y = bin(&g, ACCY_OP_ADD, ot, y, r);
        y = bin(&g, ACCY_OP_MULTIPLY, ot, y, un(&g, ACCY_OP_LOGISTIC, ot, y));
        break;
      }
      case 3: /* ReLU in the epilogue, then a scale along the channels and a shift:
               * the constant vector is read at each element's own channel */
        y = bin(&g, ACCY_OP_MAXIMUM, ot, y, scalar(&g, ot, 0));
        y = bin(&g, ACCY_OP_MULTIPLY, ot, y, channel_bias(&g, ot, rk - 1));
        y = bin(&g, ACCY_OP_SUBTRACT, ot, scalar(&g, ot, 0.25f), y);
        break;
      case 4: /* the group reads an input: it stays a task */
        y = bin(&g, ACCY_OP_ADD, ot, bin(&g, ACCY_OP_MULTIPLY, ot, y, param(&g, "p", ot)),
                scalar(&g, ot, 1)), want = 2;
        break;
      case 5: { /* the product is an output too: the group stays a task */
        uint32_t t = un(&g, ACCY_OP_TANH, ot, bin(&g, ACCY_OP_MULTIPLY, ot, y, scalar(&g, ot, 2)));
        ck_assert_int_eq(accy__program_add_output(&g.p, y, "t", 1), ACCY_STATUS_OK);
        y = t, want = 2;
        break;
      }
      case 6: { /* the product read outside the group as well (a row sum, a second
                 * output): the dot, the group and the reduce */
        accy__type st = ot;
        st.rank--;
        uint32_t t = un(&g, ACCY_OP_TANH, ot, bin(&g, ACCY_OP_MULTIPLY, ot, y, scalar(&g, ot, 2)));
        ck_assert_int_eq(accy__program_add_output(&g.p, reduce_axis(&g, ACCY_REDUCE_SUM, y, st, rk - 1),
                                                  "s", 1),
                         ACCY_STATUS_OK);
        y = t, want = 3;
        break;
      }
      case 7: { /* a group whose root is no f32 (an f16 output): stays a task; through
                 * f16 and back to f32 it follows the dot */
        accy__type ht = ot;
        ht.dtype = ACCY_DTYPE_F16;
        uint32_t h = un(&g, ACCY_OP_CONVERT, ht, bin(&g, ACCY_OP_MULTIPLY, ot, y, scalar(&g, ot, 3)));
        if (_i % 2) {
          y = h, want = 2;
        } else {
          y = un(&g, ACCY_OP_CONVERT, ot, h);
        }
        break;
      }
      case 8: /* a lone sigmoid of the product: a group of one after it */
        y = un(&g, ACCY_OP_LOGISTIC, ot, y);
        break;
      default: /* x * x + x over the product */
        y = bin(&g, ACCY_OP_ADD, ot, bin(&g, ACCY_OP_MULTIPLY, ot, y, y), y);
        break;
    }
    out(&g, y);
    compare(&g, want);
  }
}
END_TEST

/* Convolutions: the GEMM form (im2col, pointwise, padded, strided), the
 * depthwise row kernel and the direct path (lhs dilation), each with bias
 * (+ residual) + ReLU6. Rows 3 and 2 positions wide (the last two) put more
 * padded rows under a tile than the microkernel's column runs take: the
 * padded form stores those through the workspace (at AVX-512's 32 columns
 * both, at 16 columns the second), the others in place. The last two are
 * depthwise over 37 channels with at most 64 outputs a plane: 11 x 5 a
 * vector's width of channels at a time where the level has the lanes
 * kernel (the bias, residual and clamp of each block's channels), 6 x 7 at
 * stride 2 through the plane kernel. */
static const struct conv_cfg_row {
  int64_t c, o, g, k, s, pad, ldil, w;
} kConvCfg[] = {{5, 12, 1, 3, 1, 1, 1, 13}, {8, 20, 1, 1, 1, 0, 1, 13}, {6, 6, 6, 3, 2, 1, 1, 13},
                {4, 6, 2, 3, 1, 1, 1, 13},  {3, 4, 1, 2, 1, 0, 2, 13},  {5, 12, 1, 3, 2, 1, 1, 13},
                {5, 12, 1, 3, 1, 1, 1, 1},  {5, 12, 1, 2, 1, 0, 1, 2},  {37, 37, 37, 3, 1, 1, 1, 5},
                {37, 37, 37, 3, 2, 1, 1, 13}, {16, 40, 1, 3, 1, 1, 1, 40}};

START_TEST(test_conv_epilogues) {
  tu_rng rng;
  tu_rng_seed(&rng, 4200 + (uint64_t)_i);
  const struct conv_cfg_row *cfg = kConvCfg;
  const int c = _i;
  const int64_t H = 11, W = cfg[c].w;
  int64_t xd[4] = {2, cfg[c].c, H, W}, wd[4] = {cfg[c].o, cfg[c].c / cfg[c].g, cfg[c].k, cfg[c].k};
  const int64_t P = (H - 1) * cfg[c].ldil + 1 + 2 * cfg[c].pad, PW = (W - 1) * cfg[c].ldil + 1 + 2 * cfg[c].pad;
  int64_t od[4] = {2, cfg[c].o, (P - cfg[c].k) / cfg[c].s + 1, (PW - cfg[c].k) / cfg[c].s + 1};
  accy__type ot = tu_type(ACCY_DTYPE_F32, 4, od);
  /* ACCY_CONV_FORM: the three layouts of the GEMM form and Winograd (3,
   * and 4 with the tiles as rows; the others ignore it; the padded one
   * needs unit strides, Winograd 3 x 3 at unit stride above the portable
   * level), Winograd once more in 4 x 4 tiles (ACCY_WINO_TILE=4: the
   * rows' epilogues of f32_wino4_out, 11 rows a tile row short). */
  for (int run_i = 0; run_i < 14; run_i++) {
    static const char *const kForm[7] = {"0", "1", "2", "3", "4", "3", "4"};
    const int residual = run_i % 2;
    setenv("ACCY_CONV_FORM", kForm[run_i / 2], 1);
    if (run_i >= 10) setenv("ACCY_WINO_TILE", "4", 1);
    prog g = {.rng = &rng};
    accy__program_init(&g.p);
    uint32_t x = param(&g, "x", tu_type(ACCY_DTYPE_F32, 4, xd));
    uint32_t r = residual ? param(&g, "r", ot) : 0;
    uint32_t w = constant(&g, tu_type(ACCY_DTYPE_F32, 4, wd), 0, false);
    int64_t attrs[12] = {2, cfg[c].s, cfg[c].s, cfg[c].pad, cfg[c].pad, cfg[c].pad, cfg[c].pad,
                         cfg[c].ldil, cfg[c].ldil, 1, 1, cfg[c].g};
    uint32_t ops[2] = {x, w};
    uint32_t y = node(&g, ACCY_OP_CONVOLUTION, ot, ops, 2, attrs, 12);
    y = bin(&g, ACCY_OP_ADD, ot, y, channel_bias(&g, ot, 1));
    if (residual) y = bin(&g, ACCY_OP_ADD, ot, y, r);
    y = bin(&g, ACCY_OP_MAXIMUM, ot, y, scalar(&g, ot, 0));
    y = bin(&g, ACCY_OP_MINIMUM, ot, y, scalar(&g, ot, 1.5f));
    out(&g, y);
    compare(&g, 1);
  }
  unsetenv("ACCY_CONV_FORM");
  unsetenv("ACCY_WINO_TILE");
}
END_TEST

/* Flat groups after a convolution (fuse.h): in the forms that take one
 * (accy__kernel_conv_takes_group: the GEMM forms but the padded one, the
 * depthwise kernels, Winograd where blocks of whole rows of tiles cost
 * little more) each item's region of the output gets the group in place,
 * and the bits equal the unfused nodes'; in the others (padded, the direct
 * loops, Winograd otherwise) the group stays a task. Every row of kConvCfg
 * (the GEMM form's layouts, grouped, strided, the depthwise kernels, the
 * direct loops; the last over 38 x 40 outputs, many items of every form)
 * in each form that ACCY_CONV_FORM and ACCY_WINO_TILE select, with bias and
 * SiLU, with bias, residual and hardswish, and a lone sigmoid; a group that
 * reads an input as well stays a task. */
START_TEST(test_groups_after_convs) {
  tu_rng rng;
  tu_rng_seed(&rng, 4800 + (uint64_t)_i);
  const struct conv_cfg_row *cf = &kConvCfg[_i];
  const int64_t H = _i == 10 ? 38 : 11, W = cf->w;
  int64_t xd[4] = {2, cf->c, H, W}, wd[4] = {cf->o, cf->c / cf->g, cf->k, cf->k};
  const int64_t P = (H - 1) * cf->ldil + 1 + 2 * cf->pad, PW = (W - 1) * cf->ldil + 1 + 2 * cf->pad;
  int64_t od[4] = {2, cf->o, (P - cf->k) / cf->s + 1, (PW - cf->k) / cf->s + 1};
  accy__type ot = tu_type(ACCY_DTYPE_F32, 4, od);
  static const char *const kForm[7] = {"0", "1", "2", "3", "4", "3", "4"};
  for (int run_i = 0; run_i < 8; run_i++) {
    const int rule = run_i == 7 ? 3 : run_i % 3;
    setenv("ACCY_CONV_FORM", kForm[run_i < 7 ? run_i : 0], 1);
    if (run_i == 5 || run_i == 6) setenv("ACCY_WINO_TILE", "4", 1);
    else unsetenv("ACCY_WINO_TILE");
    prog g = {.rng = &rng};
    accy__program_init(&g.p);
    uint32_t x = param(&g, "x", tu_type(ACCY_DTYPE_F32, 4, xd));
    uint32_t w = constant(&g, tu_type(ACCY_DTYPE_F32, 4, wd), 0, false);
    int64_t attrs[12] = {2, cf->s, cf->s, cf->pad, cf->pad, cf->pad, cf->pad, cf->ldil, cf->ldil, 1, 1, cf->g};
    uint32_t ops[2] = {x, w};
    const uint32_t conv = node(&g, ACCY_OP_CONVOLUTION, ot, ops, 2, attrs, 12);
    uint32_t y = conv, want = accy__kernel_conv_takes_group(&g.p, conv) ? 1 : 2;
    /* the pointwise one in the first two layouts, the depthwise ones, and
     * the large one's im2col and transposed forms take it */
    if ((run_i < 2 && (_i == 1 || _i == 10)) || _i == 8 || _i == 9) ck_assert_uint_eq(want, 1);
    /* and the large one as Winograd in tiles of 2 and 4 (whole rows of
     * tiles a block: 20 and 10 a row) at avx512, whose GEMMs take blocks of
     * up to 64 tiles in panels of 32 (avx2's of 16 cut those rows up) */
    if (_i == 10 && (run_i == 3 || run_i == 5) && accy__uk_get()->isa == ACCY__ISA_AVX512)
      ck_assert_uint_eq(want, 1);
    switch (rule) {
      case 0: /* bias, SiLU */
        y = bin(&g, ACCY_OP_ADD, ot, y, channel_bias(&g, ot, 1));
        y = bin(&g, ACCY_OP_MULTIPLY, ot, y, un(&g, ACCY_OP_LOGISTIC, ot, y));
        break;
      case 1: { /* bias, residual, hardswish: y min(max(y + 3, 0), 6) / 6 */
        uint32_t r = param(&g, "r", ot);
        y = bin(&g, ACCY_OP_ADD, ot, bin(&g, ACCY_OP_ADD, ot, y, channel_bias(&g, ot, 1)), r);
        uint32_t h = bin(&g, ACCY_OP_MAXIMUM, ot, bin(&g, ACCY_OP_ADD, ot, y, scalar(&g, ot, 3)),
                         scalar(&g, ot, 0));
        h = bin(&g, ACCY_OP_MINIMUM, ot, h, scalar(&g, ot, 6));
        y = bin(&g, ACCY_OP_DIVIDE, ot, bin(&g, ACCY_OP_MULTIPLY, ot, y, h), scalar(&g, ot, 6));
        break;
      }
      case 2: /* a lone sigmoid */
        y = un(&g, ACCY_OP_LOGISTIC, ot, y);
        break;
      default: /* reads an input: its own task */
        y = bin(&g, ACCY_OP_MULTIPLY, ot, un(&g, ACCY_OP_TANH, ot, y), param(&g, "p", ot));
        want = 2;
        break;
    }
    out(&g, y);
    compare(&g, want);
  }
  unsetenv("ACCY_CONV_FORM");
  unsetenv("ACCY_WINO_TILE");
}
END_TEST

/* A 2 x 2 max pool at stride 2 after a convolution that runs as Winograd
 * (16 -> 16 channels, 3 x 3, pad 1) fuses into its output transform, with
 * and without a bias and a clamp, and gives the unfused bits (NaNs and
 * signed zeros among the inputs: compare's edge values); where it must not
 * fuse it still gives them: odd output rows (case 3), the conv's value also
 * an output (4), a residual in the chain (5). accy__kernel_conv_pools says
 * which: above the portable level (the only one without Winograd) cases 0
 * to 2. Case 6 (3 -> 16 channels over 32 x 32) takes the padded form,
 * whose microkernel pools (ind_pool) at every level, and so does case 8
 * (two groups of 3 -> 4 channels, a dilation of 2, over 64 x 64); case 7 (32 -> 8: no
 * Winograd, 288 taps, more than one K block) does not fuse. Cases 9 and 10
 * are 0 and 2 in Winograd's 4 x 4 tiles (ACCY_WINO_TILE=4: f32_wino4_out_pool,
 * each tile a 2 x 2 block of pooled values) over 14 x 10 and 38 x 40
 * outputs, whose last tile row holds one pooled row, the second's blocks
 * of tiles starting within a row of them. */
START_TEST(test_conv_max_pool_fuses) {
  tu_rng rng;
  tu_rng_seed(&rng, 4400 + (uint64_t)_i);
  const int c = _i >= 9 ? (_i == 9 ? 0 : 2) : _i;
  if (_i >= 9) setenv("ACCY_WINO_TILE", "4", 1);
  const int64_t C = c == 6 ? 3 : c == 7 ? 32 : c == 8 ? 6 : 16, O = c >= 7 ? 8 : 16;
  const int64_t G = c == 8 ? 2 : 1, D = c == 8 ? 2 : 1;
  int64_t H = c == 3 ? 11 : c == 8 ? 64 : c >= 6 ? 32 : 12, W = c == 8 ? 64 : c >= 6 ? 32 : 12;
  if (_i == 9) H = 14, W = 10;
  if (_i == 10) H = 38, W = 40; /* blocks of tiles that split a row of them */
  prog g = {.rng = &rng};
  accy__program_init(&g.p);
  int64_t xd[4] = {2, C, H, W}, wd[4] = {O, C / G, 3, 3}, od[4] = {2, O, H, W};
  int64_t pd[4] = {2, O, H / 2, W / 2};
  accy__type ot = tu_type(ACCY_DTYPE_F32, 4, od), pt = tu_type(ACCY_DTYPE_F32, 4, pd);
  uint32_t x = param(&g, "x", tu_type(ACCY_DTYPE_F32, 4, xd));
  uint32_t r = c == 5 ? param(&g, "r", ot) : 0;
  uint32_t w = constant(&g, tu_type(ACCY_DTYPE_F32, 4, wd), 0, false);
  /* strides, pads (D each side keeps the plane), lhs and rhs dilations, groups */
  int64_t attrs[12] = {2, 1, 1, D, D, D, D, 1, 1, D, D, G};
  uint32_t ops[2] = {x, w};
  const uint32_t conv = node(&g, ACCY_OP_CONVOLUTION, ot, ops, 2, attrs, 12);
  uint32_t y = conv;
  if (c != 1) y = bin(&g, ACCY_OP_ADD, ot, y, channel_bias(&g, ot, 1));
  if (c == 5) y = bin(&g, ACCY_OP_ADD, ot, y, r);
  if (c != 1) y = bin(&g, ACCY_OP_MAXIMUM, ot, y, scalar(&g, ot, 0));
  if (c == 2) y = bin(&g, ACCY_OP_MINIMUM, ot, y, scalar(&g, ot, 6));
  const int64_t wattrs[25] = {ACCY_REDUCE_MAX, 1, 1, 2, 2, 1, 1, 2, 2, 0, 0, 0, 0,
                              0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  const uint32_t pool = node(&g, ACCY_OP_REDUCE_WINDOW, pt, &y, 1, wattrs, 25);
  out(&g, pool);
  if (c == 4)
    ck_assert_int_eq(accy__program_add_output(&g.p, y, "pre", 3), ACCY_STATUS_OK);
  const bool wino = accy__uk_get()->isa != ACCY__ISA_PORTABLE;
  if (_i < 9)
    ck_assert_int_eq(accy__kernel_conv_pools(&g.p, conv),
                     (wino && c != 3 && c != 7) || c == 6 || c == 8);
  else if (wino) /* (at portable the larger one pools in the padded form) */
    ck_assert(accy__kernel_conv_pools(&g.p, conv));
  compare(&g, UINT32_MAX - 1);
  unsetenv("ACCY_WINO_TILE");
}
END_TEST

/* A sum that is -0 (every product a negative underflow: FMA rounds each
 * partial sum to -0) under a ReLU: maximum(-0, +0) is +0, and the fused
 * clamp must say so too; the same for a residual of -0 added to a -0. Loop
 * over a GEMM (dot), a depthwise and a GEMM-form convolution (in its three
 * layouts: ACCY_CONV_FORM=1 and 2 on the last two), and Winograd (3). */
START_TEST(test_fused_relu_of_negative_zero) {
  tu_rng rng;
  tu_rng_seed(&rng, 4300);
  if (_i == 3) setenv("ACCY_CONV_FORM", "1", 1);
  if (_i == 4) setenv("ACCY_CONV_FORM", "2", 1);
  if (_i == 5) setenv("ACCY_CONV_FORM", "3", 1); /* Winograd above portable */
  if (_i == 6) setenv("ACCY_CONV_FORM", "4", 1); /* the tiles as rows */
  prog g = {.rng = &rng};
  accy__program_init(&g.p);
  accy__type ot;
  uint32_t y;
  float *xv = NULL, *rv = NULL;
  size_t nx;
  if (_i == 0) {
    int64_t xd[2] = {3, 16}, wd[2] = {20, 16}, od[2] = {3, 20};
    ot = tu_type(ACCY_DTYPE_F32, 2, od);
    uint32_t x = param(&g, "x", tu_type(ACCY_DTYPE_F32, 2, xd));
    uint32_t r = param(&g, "r", ot);
    uint32_t w = constant(&g, tu_type(ACCY_DTYPE_F32, 2, wd), 1e-30f, true);
    int64_t attrs[4] = {0, 1, 1, 1};
    uint32_t ops[2] = {x, w};
    y = node(&g, ACCY_OP_DOT_GENERAL, ot, ops, 2, attrs, 4);
    y = bin(&g, ACCY_OP_ADD, ot, y, r);
    nx = 3 * 16;
  } else {
    const int64_t C = 4, groups = _i == 1 ? C : 1;
    int64_t xd[4] = {1, C, 6, 7}, wd[4] = {C, C / groups, 3, 3}, od[4] = {1, C, 6, 7};
    ot = tu_type(ACCY_DTYPE_F32, 4, od);
    uint32_t x = param(&g, "x", tu_type(ACCY_DTYPE_F32, 4, xd));
    uint32_t r = param(&g, "r", ot);
    uint32_t w = constant(&g, tu_type(ACCY_DTYPE_F32, 4, wd), 1e-30f, true);
    int64_t attrs[12] = {2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, groups};
    uint32_t ops[2] = {x, w};
    y = node(&g, ACCY_OP_CONVOLUTION, ot, ops, 2, attrs, 12);
    y = bin(&g, ACCY_OP_ADD, ot, y, r);
    nx = (size_t)(C * 6 * 7);
  }
  y = bin(&g, ACCY_OP_MAXIMUM, ot, y, scalar(&g, ot, 0));
  y = bin(&g, ACCY_OP_MINIMUM, ot, y, scalar(&g, ot, 6));
  out(&g, y);
  const size_t no = (size_t)tu_elems(&ot);
  xv = malloc(nx * 4);
  rv = malloc(no * 4);
  for (size_t i = 0; i < nx; i++) xv[i] = -1e-30f;
  for (size_t i = 0; i < no; i++) rv[i] = -0.0f;
  void *inputs[2] = {xv, rv};
  uint32_t tf, tu;
  float *f = run(&g, true, inputs, &tf), *u = run(&g, false, inputs, &tu);
  ck_assert_uint_lt(tf, tu); /* the chain did fuse */
  size_t zeros = 0;
  for (size_t i = 0; i < no; i++) {
    uint32_t fb, ub;
    memcpy(&fb, &f[i], 4);
    memcpy(&ub, &u[i], 4);
    ck_assert_msg(fb == ub, "case %d element %zu: fused %08x, unfused %08x", _i, i, fb, ub);
    zeros += ub == 0;
  }
  ck_assert_uint_gt(zeros, 0); /* +0 results exist to compare */
  free(f);
  free(u);
  free(xv);
  free(rv);
  accy__program_free(&g.p);
  unsetenv("ACCY_CONV_FORM");
}
END_TEST

/* Two chains meet at an add (a residual block with a projection shortcut:
 * relu((conv1(x) + b1) + (conv2(x) + b2))): the earlier anchor takes the
 * add, with the other chain's tail as its residual. */
START_TEST(test_chains_meeting_at_an_add) {
  tu_rng rng;
  tu_rng_seed(&rng, 4300);
  int64_t xd[4] = {1, 4, 9, 9}, wd[4] = {6, 4, 3, 3}, pd[4] = {6, 4, 1, 1}, od[4] = {1, 6, 9, 9};
  accy__type ot = tu_type(ACCY_DTYPE_F32, 4, od);
  for (int order = 0; order < 2; order++) {
    prog g = {.rng = &rng};
    accy__program_init(&g.p);
    uint32_t x = param(&g, "x", tu_type(ACCY_DTYPE_F32, 4, xd));
    int64_t a3[12] = {2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, a1[12] = {2, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1};
    uint32_t w1 = constant(&g, tu_type(ACCY_DTYPE_F32, 4, wd), 0, false);
    uint32_t w2 = constant(&g, tu_type(ACCY_DTYPE_F32, 4, pd), 0, false);
    uint32_t o1[2] = {x, w1}, o2[2] = {x, w2};
    uint32_t c1 = node(&g, ACCY_OP_CONVOLUTION, ot, o1, 2, a3, 12);
    uint32_t c2 = node(&g, ACCY_OP_CONVOLUTION, ot, o2, 2, a1, 12);
    uint32_t y1 = bin(&g, ACCY_OP_ADD, ot, c1, channel_bias(&g, ot, 1));
    uint32_t y2 = bin(&g, ACCY_OP_ADD, ot, c2, channel_bias(&g, ot, 1));
    uint32_t s = order ? bin(&g, ACCY_OP_ADD, ot, y2, y1) : bin(&g, ACCY_OP_ADD, ot, y1, y2);
    out(&g, bin(&g, ACCY_OP_MAXIMUM, ot, s, scalar(&g, ot, 0)));
    compare(&g, 2);
  }
}
END_TEST


/* ---- elementwise groups ---------------------------------------------------------- */



static uint32_t bcast(prog *g, uint32_t x, accy__type rt, const int64_t *dims, uint32_t nd) {
  return node(g, ACCY_OP_BROADCAST_IN_DIM, rt, &x, 1, dims, nd);
}

/* Groups of elementwise nodes and broadcasts (fuse.h) against the unfused
 * nodes, bit for bit, through an inline and a 2-worker run. */
/* The types of a norm over rows [rows, len]: the rows, the per-row sums,
 * the per-row values [rows, 1] and a vector along the rows. */
typedef struct norm_types {
  accy__type xt, rt, kt, lt;
  int64_t len;
} norm_types;

static norm_types norm_types_of(int64_t rows, int64_t len) {
  const int64_t xd[2] = {rows, len}, kd[2] = {rows, 1};
  return (norm_types){tu_type(ACCY_DTYPE_F32, 2, xd), tu_type(ACCY_DTYPE_F32, 1, &rows),
                      tu_type(ACCY_DTYPE_F32, 2, kd), tu_type(ACCY_DTYPE_F32, 1, &len), len};
}

/* The mean of each row of |v| as exporters write it: a sum, a reshape to
 * [rows, 1] and a divide by the row length. */
static uint32_t row_mean(prog *g, const norm_types *nt, uint32_t v) {
  uint32_t s = reduce_axis(g, ACCY_REDUCE_SUM, v, nt->rt, 1);
  uint32_t k = node(g, ACCY_OP_RESHAPE, nt->kt, &s, 1, NULL, 0);
  return bin(g, ACCY_OP_DIVIDE, nt->kt, k, scalar(g, nt->kt, (float)nt->len));
}

/* x - max(x) over each row of a rank-2 |x| (softmax's first steps). */
static uint32_t minus_row_max(prog *g, accy__type xt, uint32_t x) {
  int64_t ax0[1] = {0};
  const accy__type rt = tu_type(ACCY_DTYPE_F32, 1, xt.dims);
  uint32_t m = reduce_axis(g, ACCY_REDUCE_MAX, x, rt, 1);
  return bin(g, ACCY_OP_SUBTRACT, xt, x, bcast(g, m, xt, ax0, 1));
}

START_TEST(test_elementwise_groups) {
  tu_rng rng;
  tu_rng_seed(&rng, 4400);
  /* Softmax over rows: one row group (max, broadcast, subtract, exp, sum,
   * broadcast, divide; exp is read twice, inside), whose exps go to the
   * result's rows and are divided there in place, for blocks of 2, 1 and 8
   * rows (the last one short); and the same with the exps read once more
   * by a multiply after the division, where they keep their slot. */
  {
    static const int64_t shapes[][2] = {{37, 300}, {5, 1024}, {37, 100}, {3, 2000}};
    for (size_t si = 0; si < 2 * sizeof shapes / sizeof shapes[0]; si++) {
      const bool again = si >= sizeof shapes / sizeof shapes[0];
      const int64_t *sh = shapes[si % (sizeof shapes / sizeof shapes[0])];
      int64_t xd[2] = {sh[0], sh[1]}, rd[1] = {sh[0]}, ax0[1] = {0};
      accy__type xt = tu_type(ACCY_DTYPE_F32, 2, xd), rt = tu_type(ACCY_DTYPE_F32, 1, rd);
      prog g = {.rng = &rng};
      if (!again && accy__uk_get()->f32_chain) /* the portable level has no register chains */
        g.want_how = "the summed run's values kept in the result's rows";
      accy__program_init(&g.p);
      uint32_t x = param(&g, "x", xt);
      uint32_t e = un(&g, ACCY_OP_EXP, xt, minus_row_max(&g, xt, x));
      uint32_t sm = reduce_axis(&g, ACCY_REDUCE_SUM, e, rt, 1);
      uint32_t y = bin(&g, ACCY_OP_DIVIDE, xt, e, bcast(&g, sm, xt, ax0, 1));
      out(&g, again ? bin(&g, ACCY_OP_MULTIPLY, xt, y, e) : y);
      compare(&g, 1);
    }
  }
  /* Layer norm as exporters write it (mean, centre, variance, eps, sqrt,
   * reciprocal, gamma and beta along the rows), for row counts around the
   * block of four rows and row lengths that give blocks of 4, 2 and 1
   * rows; and RMS norm, x / sqrt(mean(x * x) + eps) * gamma, whose square
   * of the input is summed in registers (a register chain that reads the
   * group's input and folds into the row sum): one row group each. The
   * fifth and sixth are larger than an L2 of up to 2 MiB, with rows of a
   * page or longer: where the last pass runs as one register chain over
   * four arrays (the rows, gamma, beta, the result) their steps prefetch
   * the input's and the result's next rows, the sixth in blocks of two
   * rows (its last block one row), else (no register chains: the portable
   * level) the input's next rows only (the last row has none). */
  {
    static const struct {
      int64_t rows, len;
      bool layer;
    } cases[] = {{37, 300, true},   {5, 2000, true},   {1, 64, true},
                 {3, 5000, true},   {131, 5000, true}, {601, 1024, true},
                 {37, 300, false},  {6, 1000, false},  {3, 77, false}};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
      const norm_types nt = norm_types_of(cases[ci].rows, cases[ci].len);
      const accy__type xt = nt.xt, kt = nt.kt, lt = nt.lt;
      int64_t ax01[2] = {0, 1}, ax1[1] = {1};
      prog g = {.rng = &rng};
      if (cases[ci].layer && cases[ci].rows * cases[ci].len * 4 > (INT64_C(2) << 20))
        g.want_how = !accy__uk_get()->f32_chain ? "prefetching its input's next rows"
                     : cases[ci].len == 1024
                         ? "prefetching its input's and result's next rows; 2 rows a block"
                         : "prefetching its input's and result's next rows";
      accy__program_init(&g.p);
      uint32_t x = param(&g, "x", xt), y;
      if (cases[ci].layer) {
        uint32_t mean = row_mean(&g, &nt, x);
        uint32_t d = bin(&g, ACCY_OP_SUBTRACT, xt, x, bcast(&g, mean, xt, ax01, 2));
        uint32_t var = row_mean(&g, &nt, bin(&g, ACCY_OP_MULTIPLY, xt, d, d));
        uint32_t sd = un(&g, ACCY_OP_SQRT, kt, bin(&g, ACCY_OP_ADD, kt, var, scalar(&g, kt, 1e-5f)));
        uint32_t inv = bin(&g, ACCY_OP_DIVIDE, kt, scalar(&g, kt, 1.0f), sd);
        y = bin(&g, ACCY_OP_MULTIPLY, xt, d, bcast(&g, inv, xt, ax01, 2));
      } else {
        uint32_t ms = row_mean(&g, &nt, bin(&g, ACCY_OP_MULTIPLY, xt, x, x));
        uint32_t rms = un(&g, ACCY_OP_SQRT, kt, bin(&g, ACCY_OP_ADD, kt, ms, scalar(&g, kt, 1e-6f)));
        y = bin(&g, ACCY_OP_DIVIDE, xt, x, bcast(&g, rms, xt, ax01, 2));
      }
      y = bin(&g, ACCY_OP_MULTIPLY, xt, y, bcast(&g, constant(&g, lt, 0, false), xt, ax1, 1));
      if (cases[ci].layer)
        y = bin(&g, ACCY_OP_ADD, xt, y, bcast(&g, constant(&g, lt, 0, false), xt, ax1, 1));
      out(&g, y);
      compare(&g, 1);
    }
  }
  /* tanh((x - max) * 3) over rows [37, 300] (blocks of two rows): a
   * register chain reading a per-row value row by row, whose result goes to
   * a slot (tanh reads it): the slot must not be the per-row value's, freed
   * after the chain's first member (it was, and the block's second row read
   * the first row's results as its maximum). */
  {
    int64_t xd[2] = {37, 300};
    accy__type xt = tu_type(ACCY_DTYPE_F32, 2, xd);
    prog g = {.rng = &rng};
    accy__program_init(&g.p);
    uint32_t x = param(&g, "x", xt);
    uint32_t t = bin(&g, ACCY_OP_MULTIPLY, xt, minus_row_max(&g, xt, x), scalar(&g, xt, 3.0f));
    out(&g, un(&g, ACCY_OP_TANH, xt, t));
    compare(&g, 1);
  }
  /* A per-row value that is also an output stays its own task; the rest
   * is one row group reading it. Max and min folds over rows with NaNs and
   * signed zeros in them (compare's inputs have edge values). */
  {
    int64_t xd[2] = {9, 70}, rd[1] = {9}, ax0[1] = {0};
    accy__type xt = tu_type(ACCY_DTYPE_F32, 2, xd), rt = tu_type(ACCY_DTYPE_F32, 1, rd);
    prog g = {.rng = &rng};
    accy__program_init(&g.p);
    uint32_t x = param(&g, "x", xt);
    uint32_t m = reduce_axis(&g, ACCY_REDUCE_MAX, x, rt, 1);
    uint32_t e = bin(&g, ACCY_OP_SUBTRACT, xt, x, bcast(&g, m, xt, ax0, 1));
    uint32_t lo = reduce_axis(&g, ACCY_REDUCE_MIN, e, rt, 1);
    out(&g, bin(&g, ACCY_OP_MULTIPLY, xt, e, bcast(&g, lo, xt, ax0, 1)));
    ck_assert_int_eq(accy__program_add_output(&g.p, m, "m", 1), ACCY_STATUS_OK);
    compare(&g, 2);
  }
  /* tanh(x * c1 + c2) * c3 with scalar broadcasts, over a length that is
   * no multiple of the chunk or of any tile: one task. */
  {
    int64_t xd[1] = {100003};
    accy__type xt = tu_type(ACCY_DTYPE_F32, 1, xd);
    prog g = {.rng = &rng};
    accy__program_init(&g.p);
    uint32_t x = param(&g, "x", xt);
    uint32_t y = bin(&g, ACCY_OP_MULTIPLY, xt, x, scalar(&g, xt, 0.75f));
    y = bin(&g, ACCY_OP_ADD, xt, scalar(&g, xt, -0.5f), y);
    y = bin(&g, ACCY_OP_MULTIPLY, xt, un(&g, ACCY_OP_TANH, xt, y), scalar(&g, xt, 3.0f));
    out(&g, y);
    compare(&g, 1);
  }
  /* erf-GELU as torch exports it, x * (erf(x / sqrt 2) + 1) * 0.5: the
   * divide by a scalar reads it as one value; one task. */
  {
    int64_t xd[1] = {70001};
    accy__type xt = tu_type(ACCY_DTYPE_F32, 1, xd);
    prog g = {.rng = &rng};
    accy__program_init(&g.p);
    uint32_t x = param(&g, "x", xt);
    uint32_t y = un(&g, ACCY_OP_ERF, xt, bin(&g, ACCY_OP_DIVIDE, xt, x, scalar(&g, xt, 1.4142135f)));
    y = bin(&g, ACCY_OP_MULTIPLY, xt, x, bin(&g, ACCY_OP_ADD, xt, y, scalar(&g, xt, 1.0f)));
    out(&g, bin(&g, ACCY_OP_MULTIPLY, xt, y, scalar(&g, xt, 0.5f)));
    compare(&g, 1);
  }
  /* tanh-GELU as GPT-2 writes it, 0.5 x (1 + tanh(0.797885 (x + 0.044715
   * x^3))), the cube a power by a constant 3: one task, one register chain
   * (the cube, the tanh and x / 2 computed before the chain needs it), and
   * the same with the power by 2 and a logistic and a log in place of the
   * tanh. */
  for (int form = 0; form < 2; form++) {
    int64_t xd[2] = {37, 1024};
    accy__type xt = tu_type(ACCY_DTYPE_F32, 2, xd);
    prog g = {.rng = &rng};
    accy__program_init(&g.p);
    uint32_t x = param(&g, "x", xt);
    uint32_t c3 = bin(&g, ACCY_OP_POWER, xt, x, scalar(&g, xt, form ? 2.0f : 3.0f));
    uint32_t in = bin(&g, ACCY_OP_ADD, xt, x, bin(&g, ACCY_OP_MULTIPLY, xt, scalar(&g, xt, 0.044715f), c3));
    in = bin(&g, ACCY_OP_MULTIPLY, xt, scalar(&g, xt, 0.7978846f), in);
    uint32_t half = bin(&g, ACCY_OP_MULTIPLY, xt, scalar(&g, xt, 0.5f), x);
    uint32_t t = form ? un(&g, ACCY_OP_LOG, xt, un(&g, ACCY_OP_LOGISTIC, xt, in))
                      : un(&g, ACCY_OP_TANH, xt, in);
    out(&g, bin(&g, ACCY_OP_MULTIPLY, xt, half, bin(&g, ACCY_OP_ADD, xt, scalar(&g, xt, 1.0f), t)));
    compare(&g, 1);
  }
  /* A member computed again at the head of its readers' runs (m = x * 3,
   * read by s = m * 2 and r = m - 1), whose readers sit between the members
   * of another run (exp(x) + 1, * s, + r): they must not be stepped over by
   * that run, since only the head of a run of their own computes m. */
  {
    int64_t xd[2] = {7, 300};
    accy__type xt = tu_type(ACCY_DTYPE_F32, 2, xd);
    prog g = {.rng = &rng};
    accy__program_init(&g.p);
    uint32_t x = param(&g, "x", xt);
    uint32_t m = bin(&g, ACCY_OP_MULTIPLY, xt, x, scalar(&g, xt, 3.0f));
    uint32_t a = un(&g, ACCY_OP_EXP, xt, x);
    uint32_t sv = bin(&g, ACCY_OP_MULTIPLY, xt, m, scalar(&g, xt, 2.0f));
    uint32_t b = bin(&g, ACCY_OP_ADD, xt, a, scalar(&g, xt, 1.0f));
    uint32_t t = bin(&g, ACCY_OP_MULTIPLY, xt, b, sv);
    uint32_t r = bin(&g, ACCY_OP_SUBTRACT, xt, m, scalar(&g, xt, 1.0f));
    out(&g, bin(&g, ACCY_OP_ADD, xt, t, r));
    compare(&g, 1);
  }
  /* General broadcasts: [3,1,5] over the middle axis, [4] along axis 1, a
   * transposing [5,3] -> [3,4,5]; compare, select and a convert to f64. */
  {
    int64_t xd[3] = {3, 4, 5}, ad[3] = {3, 1, 5}, bd[1] = {4}, cd[2] = {5, 3};
    int64_t da[3] = {0, 1, 2}, db[1] = {1}, dc[2] = {2, 0};
    accy__type xt = tu_type(ACCY_DTYPE_F32, 3, xd);
    prog g = {.rng = &rng};
    accy__program_init(&g.p);
    uint32_t x = param(&g, "x", xt);
    uint32_t a = bcast(&g, param(&g, "a", tu_type(ACCY_DTYPE_F32, 3, ad)), xt, da, 3);
    uint32_t b = bcast(&g, constant(&g, tu_type(ACCY_DTYPE_F32, 1, bd), 0, false), xt, db, 1);
    uint32_t c = bcast(&g, param(&g, "c", tu_type(ACCY_DTYPE_F32, 2, cd)), xt, dc, 2);
    uint32_t z = bin(&g, ACCY_OP_ADD, xt, bin(&g, ACCY_OP_ADD, xt, x, a), b);
    int64_t gt[1] = {ACCY_COMPARE_GT};
    uint32_t cops[2] = {z, c};
    uint32_t pr = node(&g, ACCY_OP_COMPARE, tu_type(ACCY_DTYPE_BOOL, 3, xd), cops, 2, gt, 1);
    uint32_t sops[3] = {pr, un(&g, ACCY_OP_NEGATE, xt, x), bin(&g, ACCY_OP_MULTIPLY, xt, x, x)};
    uint32_t sel = node(&g, ACCY_OP_SELECT, xt, sops, 3, NULL, 0);
    out(&g, un(&g, ACCY_OP_CONVERT, tu_type(ACCY_DTYPE_F64, 3, xd), sel));
    compare(&g, 1);
  }
  /* A value read three times inside one group is computed once there:
   * e = exp(x); e * e + e is one task. */
  {
    int64_t xd[1] = {999};
    accy__type xt = tu_type(ACCY_DTYPE_F32, 1, xd);
    prog g = {.rng = &rng};
    accy__program_init(&g.p);
    uint32_t x = param(&g, "x", xt);
    uint32_t e = un(&g, ACCY_OP_EXP, xt, x);
    out(&g, bin(&g, ACCY_OP_ADD, xt, bin(&g, ACCY_OP_MULTIPLY, xt, e, e), e));
    compare(&g, 1);
  }
  /* More leaves than a group takes: x + c1 + ... + c24 splits into several
   * groups, still exact. */
  {
    int64_t xd[2] = {7, 33};
    accy__type xt = tu_type(ACCY_DTYPE_F32, 2, xd);
    prog g = {.rng = &rng};
    accy__program_init(&g.p);
    uint32_t y = param(&g, "x", xt);
    for (int i = 0; i < 24; i++) y = bin(&g, ACCY_OP_ADD, xt, y, constant(&g, xt, 0, false));
    out(&g, y);
    compare(&g, UINT32_MAX);
  }
  /* Clamp with rank-0 bounds, one of them a broadcast to rank 0 (the
   * operand a kernel reads with stride 0). */
  {
    accy__type st = tu_type(ACCY_DTYPE_F32, 0, NULL);
    prog g = {.rng = &rng};
    accy__program_init(&g.p);
    uint32_t x = param(&g, "x", st);
    uint32_t lo = bcast(&g, constant(&g, st, -0.5f, true), st, NULL, 0);
    uint32_t hi = constant(&g, st, 0.25f, true);
    uint32_t ops[3] = {lo, un(&g, ACCY_OP_NEGATE, st, x), hi};
    out(&g, node(&g, ACCY_OP_CLAMP, st, ops, 3, NULL, 0));
    compare(&g, 1);
  }
}
END_TEST

/* Register chains of f16 and bf16 members (half_chain in elementwise.c):
 * case 0, tanh(x * 0.75 + 0.25) * 1.5 over a flat group (scalar operands);
 * case 1, erf((x + b) / z) - z over rows, b a constant vector along the
 * rows (periodic) and z a second input (a vector operand), with an exp
 * and a square; case 2, x * s with s one value per row (a per-row
 * operand) then logistic and rsqrt. Each forms a chain that rounds after
 * every op, and gives the unfused program's bits, edge values included. */
START_TEST(test_half_chains) {
  const int32_t dt = _i % 2 ? ACCY_DTYPE_BF16 : ACCY_DTYPE_F16;
  tu_rng rng;
  tu_rng_seed(&rng, 4600 + (uint64_t)_i);
  prog g = {.rng = &rng, .want_how = "rounded to the half type"};
  accy__program_init(&g.p);
  int64_t xd[2] = {37, 131}, ld[1] = {131}, kd[2] = {37, 1}, ax1[1] = {1}, ax01[2] = {0, 1};
  const accy__type xt = tu_type(dt, 2, xd);
  const uint32_t x = param(&g, "x", xt);
  switch (_i / 2) {
    case 0: {
      uint32_t v = bin(&g, ACCY_OP_MULTIPLY, xt, x, scalar(&g, xt, 0.75f));
      v = un(&g, ACCY_OP_TANH, xt, bin(&g, ACCY_OP_ADD, xt, v, scalar(&g, xt, 0.25f)));
      out(&g, bin(&g, ACCY_OP_MULTIPLY, xt, v, scalar(&g, xt, 1.5f)));
    } break;
    case 1: {
      const uint32_t z = param(&g, "z", xt);
      const uint32_t b = bcast(&g, constant(&g, tu_type(dt, 1, ld), 0, false), xt, ax1, 1);
      uint32_t v = bin(&g, ACCY_OP_ADD, xt, x, b);
      v = un(&g, ACCY_OP_ERF, xt, bin(&g, ACCY_OP_DIVIDE, xt, v, z));
      v = un(&g, ACCY_OP_EXP, xt, bin(&g, ACCY_OP_SUBTRACT, xt, v, z));
      out(&g, bin(&g, ACCY_OP_MULTIPLY, xt, v, v));
    } break;
    default: {
      const uint32_t s = bcast(&g, param(&g, "s", tu_type(dt, 2, kd)), xt, ax01, 2);
      uint32_t v = un(&g, ACCY_OP_LOGISTIC, xt, bin(&g, ACCY_OP_MULTIPLY, xt, x, s));
      out(&g, un(&g, ACCY_OP_RSQRT, xt, v));
    } break;
  }
  if (!accy__uk_get()->f32_chain) g.want_how = NULL; /* the portable level has no chains */
  compare(&g, UINT32_MAX);
}
END_TEST

/* Random programs over rows [R, L] and per-row values [R, 1]: unary and
 * binary arithmetic, reduces over rows, broadcasts of per-row values, of
 * constant vectors along the rows and of scalars, compare and select, and
 * sometimes a per-row value as a second output. Fused (however the rules
 * group them, and however the group's elementwise runs form register
 * chains) and unfused give the same bits, inline and on two workers. */
START_TEST(test_random_groups) {
  /* f32, then the same kinds of programs in f16 and bf16 (register chains
   * of half members round after each op: half_chain in elementwise.c). */
  static const int32_t kDt[3] = {ACCY_DTYPE_F32, ACCY_DTYPE_F16, ACCY_DTYPE_BF16};
  const int32_t dt = kDt[_i];
  tu_rng rng;
  tu_rng_seed(&rng, 4500 + (uint64_t)_i);
  static const int64_t kLens[] = {16, 17, 64, 100, 300};
  for (int prog_i = 0; prog_i < (_i ? 150 : 300); prog_i++) {
    const int64_t R = tu_rng_range(&rng, 1, 21), L = kLens[tu_rng_range(&rng, 0, 4)];
    int64_t xd[2] = {R, L}, kd[2] = {R, 1}, rd[1] = {R}, ld[1] = {L};
    int64_t ax01[2] = {0, 1}, ax1[1] = {1};
    accy__type xt = tu_type(dt, 2, xd), kt = tu_type(dt, 2, kd);
    accy__type rt = tu_type(dt, 1, rd), lt = tu_type(dt, 1, ld);
    accy__type bt = tu_type(ACCY_DTYPE_BOOL, 2, xd);
    prog g = {.rng = &rng};
    accy__program_init(&g.p);
    uint32_t rows[64], pr[64];
    uint32_t nr = 0, np = 0;
    rows[nr++] = param(&g, "x", xt);
    if (tu_rng_range(&rng, 0, 1)) pr[np++] = param(&g, "p", kt);
    const int steps = (int)tu_rng_range(&rng, 3, 14);
    for (int s = 0; s < steps; s++) {
      const uint32_t a = rows[tu_rng_range(&rng, 0, nr - 1)], b = rows[tu_rng_range(&rng, 0, nr - 1)];
      switch (tu_rng_range(&rng, 0, 9)) {
        case 0: { /* every unary op a register chain has (uk.h, ACCY__CH_*) */
          static const uint16_t kUn[8] = {ACCY_OP_TANH, ACCY_OP_NEGATE, ACCY_OP_EXP, ACCY_OP_LOG,
                                          ACCY_OP_LOGISTIC, ACCY_OP_ERF, ACCY_OP_SQRT,
                                          ACCY_OP_RSQRT};
          rows[nr++] = un(&g, kUn[tu_rng_range(&rng, 0, 7)], xt, a);
          break;
        }
        case 1: rows[nr++] = bin(&g, ACCY_OP_ADD, xt, a, b); break;
        case 2: rows[nr++] = bin(&g, ACCY_OP_MULTIPLY, xt, a, b); break;
        case 3: { /* a reduce and its per-row value */
          static const int kinds[3] = {ACCY_REDUCE_SUM, ACCY_REDUCE_MAX, ACCY_REDUCE_MIN};
          uint32_t red = reduce_axis(&g, kinds[tu_rng_range(&rng, 0, 2)], a, rt, 1);
          pr[np++] = node(&g, ACCY_OP_RESHAPE, kt, &red, 1, NULL, 0);
          break;
        }
        case 4: /* per-row arithmetic */
          if (np) {
            uint32_t q = pr[tu_rng_range(&rng, 0, np - 1)];
            pr[np++] = tu_rng_range(&rng, 0, 1) ? un(&g, ACCY_OP_EXP, kt, q)
                                                : bin(&g, ACCY_OP_DIVIDE, kt, q, scalar(&g, kt, 3.0f));
          }
          break;
        case 5: case 6: { /* a per-row value over the rows: mostly the second operand (read
                             per row, unmaterialised), sometimes the first, sometimes used twice */
          if (!np) break;
          static const uint16_t kOps[4] = {ACCY_OP_SUBTRACT, ACCY_OP_MULTIPLY, ACCY_OP_DIVIDE,
                                           ACCY_OP_MAXIMUM};
          uint32_t q = bcast(&g, pr[tu_rng_range(&rng, 0, np - 1)], xt, ax01, 2);
          const uint16_t op = kOps[tu_rng_range(&rng, 0, 3)];
          rows[nr++] = tu_rng_range(&rng, 0, 4) == 0 ? bin(&g, op, xt, q, a) : bin(&g, op, xt, a, q);
          if (tu_rng_range(&rng, 0, 3) == 0)
            rows[nr++] = tu_rng_range(&rng, 0, 1) ? bin(&g, ACCY_OP_ADD, xt, b, q)
                                                  : bin(&g, ACCY_OP_SUBTRACT, xt, q, b);
          break;
        }
        case 7: { /* a constant vector along the rows (read as one row, never gathered), as
                     either operand, sometimes used twice */
          uint32_t v = bcast(&g, constant(&g, lt, 0, false), xt, ax1, 1);
          rows[nr++] = tu_rng_range(&rng, 0, 3) == 0 ? bin(&g, ACCY_OP_MULTIPLY, xt, v, a)
                                                     : bin(&g, ACCY_OP_ADD, xt, a, v);
          if (tu_rng_range(&rng, 0, 3) == 0) rows[nr++] = bin(&g, ACCY_OP_SUBTRACT, xt, b, v);
          /* the vector first of a subtract or divide: a chain's reversed ops */
          if (tu_rng_range(&rng, 0, 3) == 0) {
            const uint32_t last = rows[nr - 1];
            rows[nr++] = bin(&g, tu_rng_range(&rng, 0, 1) ? ACCY_OP_SUBTRACT : ACCY_OP_DIVIDE, xt,
                             v, last);
          }
          break;
        }
        case 8: { /* a scalar broadcast as the second operand (read as one value): the
                     divide's fast path, and with a divisor below 2^-60 its fallback; half
                     the time of the input itself, a cheap one then read twice more (a
                     member that register chains compute again at their heads) */
          static const uint16_t kOps[4] = {ACCY_OP_MULTIPLY, ACCY_OP_DIVIDE, ACCY_OP_SUBTRACT,
                                           ACCY_OP_DIVIDE};
          static const float kVals[4] = {0.5f, 1.4142135f, -3.0f, 1e-30f};
          const int which = (int)tu_rng_range(&rng, 0, 3);
          const bool input = tu_rng_range(&rng, 0, 1);
          const uint32_t m = bin(&g, kOps[which], xt, input ? rows[0] : a,
                                 scalar(&g, xt, kVals[which]));
          rows[nr++] = m;
          if (input && which != 1 && which != 3) {
            rows[nr++] = bin(&g, ACCY_OP_ADD, xt, m, scalar(&g, xt, 2.0f));
            rows[nr++] = un(&g, ACCY_OP_EXP, xt, a);
            rows[nr++] = bin(&g, ACCY_OP_MULTIPLY, xt, m, scalar(&g, xt, -1.5f));
          }
          break;
        }
        default: { /* select(a > b, a, b * b) */
          int64_t gt[1] = {ACCY_COMPARE_GT};
          uint32_t cops[2] = {a, b};
          uint32_t c = node(&g, ACCY_OP_COMPARE, bt, cops, 2, gt, 1);
          uint32_t sops[3] = {c, a, bin(&g, ACCY_OP_MULTIPLY, xt, b, b)};
          rows[nr++] = node(&g, ACCY_OP_SELECT, xt, sops, 3, NULL, 0);
          break;
        }
      }
      if (nr == 60 || np == 60) break;
    }
    /* The last row value, made elementwise so a group can root there. */
    out(&g, un(&g, ACCY_OP_NEGATE, xt, rows[nr - 1]));
    if (np && tu_rng_range(&rng, 0, 2) == 0)
      ck_assert_int_eq(accy__program_add_output(&g.p, pr[np - 1], "q", 1), ACCY_STATUS_OK);
    compare(&g, UINT32_MAX - 1);
  }
}
END_TEST

/* Runs program |a| as written and |b| rewritten (the same parameters, f32)
 * on one set of random inputs from seed |seed| (|edges|: with edge
 * values); every output must have the same bits. *ta and *tb get their
 * tasks with work. */
static void compare_rewritten(prog *a, prog *b, uint64_t seed, bool edges, int which,
                              uint32_t *ta, uint32_t *tb) {
  tu_rng rng;
  tu_rng_seed(&rng, seed);
  void *inputs[4];
  ck_assert_uint_le(a->p.n_params, 4);
  for (uint32_t i = 0; i < a->p.n_params; i++) {
    const uint64_t ne = tu_elems(&a->p.nodes[a->p.params[i]].type);
    inputs[i] = malloc((size_t)ne * 4 + 4);
    tu_fill_random(&rng, ACCY_DTYPE_F32, inputs[i], (size_t)ne, edges, 2);
  }
  float *ra = run(a, true, inputs, ta), *rb = run(b, true, inputs, tb);
  uint64_t n = 0; /* in f32 units */
  for (uint32_t o = 0; o < a->p.n_outputs; o++)
    n += accy__type_bytes(&a->p.nodes[a->p.outputs[o]].type) / 4;
  const size_t d = tu_first_difference(ACCY_DTYPE_F32, ra, rb, (size_t)n);
  ck_assert_msg(d == SIZE_MAX, "case %d, element %zu: %.9g as written, %.9g rewritten", which, d,
                (double)ra[d], (double)rb[d]);
  free(ra);
  free(rb);
  for (uint32_t i = 0; i < a->p.n_params; i++) free(inputs[i]);
}

/* ---- transposes folded into dot_general (src/compile/simplify.h) ------------ */

/* Attention's layout: x [1, T, H, D] read per head. Case 0: scores
 * Q K^T with both operands transposes of x-shaped parameters (the lhs
 * [1, H, T, D], the rhs [1, H, D, T]), then the scores times V (a
 * transposed rhs [1, H, T, D]): three rewrites. Cases that must stay: 1, an
 * lhs whose contiguous axis would be a free one (a column read); 2, free
 * axes that would change order; 3, a transpose with the batch axis last.
 * The simplified program must give the same bits with fewer tasks. */
static uint32_t build_attention_layout(prog *g, int which) {
  const int64_t T = 24, H = 3, D = 20;
  const int64_t xd[4] = {1, T, H, D};
  switch (which) {
    case 0: {
      const uint32_t q = param(g, "q", tu_type(ACCY_DTYPE_F32, 4, xd));
      const uint32_t k = param(g, "k", tu_type(ACCY_DTYPE_F32, 4, xd));
      const uint32_t v = param(g, "v", tu_type(ACCY_DTYPE_F32, 4, xd));
      const int64_t p0213[4] = {0, 2, 1, 3}, p0231[4] = {0, 2, 3, 1};
      const int64_t hd[4] = {1, H, T, D}, hdt[4] = {1, H, D, T}, st[4] = {1, H, T, T};
      const uint32_t qt = node(g, ACCY_OP_TRANSPOSE, tu_type(ACCY_DTYPE_F32, 4, hd), &q, 1, p0213, 4);
      const uint32_t kt = node(g, ACCY_OP_TRANSPOSE, tu_type(ACCY_DTYPE_F32, 4, hdt), &k, 1, p0231, 4);
      const uint32_t vt = node(g, ACCY_OP_TRANSPOSE, tu_type(ACCY_DTYPE_F32, 4, hd), &v, 1, p0213, 4);
      const int64_t sa[8] = {2, 0, 1, 0, 1, 1, 3, 2};
      const uint32_t so[2] = {qt, kt};
      const uint32_t sc = node(g, ACCY_OP_DOT_GENERAL, tu_type(ACCY_DTYPE_F32, 4, st), so, 2, sa, 8);
      const int64_t ma[8] = {2, 0, 1, 0, 1, 1, 3, 2};
      const uint32_t mo[2] = {sc, vt};
      out(g, node(g, ACCY_OP_DOT_GENERAL, tu_type(ACCY_DTYPE_F32, 4, hd), mo, 2, ma, 8));
      return 3;
    }
    case 1: { /* lhs = x^T with x [K, M]: its contiguous axis is the lhs's free axis */
      const int64_t km[2] = {32, 17}, mk[2] = {17, 32}, kn[2] = {32, 9}, mn[2] = {17, 9};
      const uint32_t x = param(g, "x", tu_type(ACCY_DTYPE_F32, 2, km));
      const uint32_t w = param(g, "w", tu_type(ACCY_DTYPE_F32, 2, kn));
      const int64_t p10[2] = {1, 0};
      const uint32_t xt = node(g, ACCY_OP_TRANSPOSE, tu_type(ACCY_DTYPE_F32, 2, mk), &x, 1, p10, 2);
      const int64_t a[4] = {0, 1, 1, 0};
      const uint32_t o[2] = {xt, w};
      out(g, node(g, ACCY_OP_DOT_GENERAL, tu_type(ACCY_DTYPE_F32, 2, mn), o, 2, a, 4));
      return 0;
    }
    case 2: { /* lhs [A, B, K] from x [B, A, K]: the free axes A, B would swap */
      const int64_t xd3[3] = {5, 7, 16}, td[3] = {7, 5, 16}, wd[2] = {16, 6}, rd[3] = {7, 5, 6};
      const uint32_t x = param(g, "x", tu_type(ACCY_DTYPE_F32, 3, xd3));
      const uint32_t w = param(g, "w", tu_type(ACCY_DTYPE_F32, 2, wd));
      const int64_t p102[3] = {1, 0, 2};
      const uint32_t xt = node(g, ACCY_OP_TRANSPOSE, tu_type(ACCY_DTYPE_F32, 3, td), &x, 1, p102, 3);
      const int64_t a[4] = {0, 1, 2, 0};
      const uint32_t o[2] = {xt, w};
      out(g, node(g, ACCY_OP_DOT_GENERAL, tu_type(ACCY_DTYPE_F32, 3, rd), o, 2, a, 4));
      return 0;
    }
    default: { /* rhs [B, K, N] from x [K, N, B]: the batch axis is x's last */
      const int64_t xd3[3] = {12, 9, 4}, td[3] = {4, 12, 9}, ld[3] = {4, 6, 12}, rd[3] = {4, 6, 9};
      const uint32_t x = param(g, "x", tu_type(ACCY_DTYPE_F32, 3, xd3));
      const uint32_t l = param(g, "l", tu_type(ACCY_DTYPE_F32, 3, ld));
      const int64_t p201[3] = {2, 0, 1};
      const uint32_t xt = node(g, ACCY_OP_TRANSPOSE, tu_type(ACCY_DTYPE_F32, 3, td), &x, 1, p201, 3);
      const int64_t a[6] = {1, 0, 0, 1, 2, 1};
      const uint32_t o[2] = {l, xt};
      out(g, node(g, ACCY_OP_DOT_GENERAL, tu_type(ACCY_DTYPE_F32, 3, rd), o, 2, a, 6));
      return 0;
    }
  }
}

START_TEST(test_transposes_folded_into_dots) {
  tu_rng rng;
  prog a = {.rng = &rng}, b = {.rng = &rng};
  accy__program_init(&a.p);
  accy__program_init(&b.p);
  const uint32_t want = build_attention_layout(&a, _i);
  build_attention_layout(&b, _i);
  ck_assert_int_eq(accy__verify(&b.p), ACCY_STATUS_OK);
  ck_assert_uint_eq(accy__simplify(&b.p), want);
  ck_assert_msg(accy__verify(&b.p) == ACCY_STATUS_OK, "simplified: %s", accy__cause());
  uint32_t ta, tb;
  compare_rewritten(&a, &b, 40 + (uint64_t)_i, _i == 0, _i, &ta, &tb);
  if (want) ck_assert_msg(tb < ta, "%u tasks simplified, %u as written", tb, ta);
  else ck_assert_uint_eq(tb, ta);
  accy__program_free(&a.p);
  accy__program_free(&b.p);
}
END_TEST

/* ---- scales folded into weights (src/compile/simplify.h) --------------------- */

/* Attention's scores over x [1, T, 32] with Q = x Wq + bq and K = x Wk + bk
 * (constants), per head through a reshape and a transpose, read by exp.
 * Case 0: the scores divided by 8; 1: Q times 0.25 before the product;
 * both fold into Wq and bq (three rewrites with the two transposes); 3, Wq
 * read by a second output: the scale goes into Wk and bk. Cases that must
 * keep the scale (two rewrites): 2, a scale of 3; 4, a weight of 1e-38 in
 * both Wq and Wk (an eighth of it is subnormal); 5, the scaled scores an
 * output themselves. The simplified program must give the same bits. */
static uint32_t build_scaled_attention(prog *g, int which) {
  const int64_t T = 24, H = 2, D = 16, E = H * D;
  const int64_t xd[3] = {1, T, E}, wd[2] = {E, E}, hd[4] = {1, T, H, D}, qd[4] = {1, H, T, D},
                kd[4] = {1, H, D, T}, sd[4] = {1, H, T, T};
  const accy__type xt = tu_type(ACCY_DTYPE_F32, 3, xd), st = tu_type(ACCY_DTYPE_F32, 4, sd);
  const uint32_t x = param(g, "x", xt);
  uint32_t heads[2], wq = 0;
  for (int s = 0; s < 2; s++) {
    const uint32_t w = constant(g, tu_type(ACCY_DTYPE_F32, 2, wd), 0, false);
    if (s == 0) wq = w;
    if (which == 4) ((float *)g->p.nodes[w].payload)[5 + s] = 1e-38f;
    const int64_t da[4] = {0, 1, 2, 0};
    const uint32_t o[2] = {x, w};
    uint32_t y = node(g, ACCY_OP_DOT_GENERAL, xt, o, 2, da, 4);
    y = bin(g, ACCY_OP_ADD, xt, y, channel_bias(g, xt, 2));
    y = node(g, ACCY_OP_RESHAPE, tu_type(ACCY_DTYPE_F32, 4, hd), &y, 1, NULL, 0);
    if (s == 0 && which == 1)
      y = bin(g, ACCY_OP_MULTIPLY, tu_type(ACCY_DTYPE_F32, 4, hd), y,
              scalar(g, tu_type(ACCY_DTYPE_F32, 4, hd), 0.25f));
    const int64_t p0213[4] = {0, 2, 1, 3}, p0231[4] = {0, 2, 3, 1};
    heads[s] = node(g, ACCY_OP_TRANSPOSE, tu_type(ACCY_DTYPE_F32, 4, s ? kd : qd), &y, 1,
                    s ? p0231 : p0213, 4);
  }
  const int64_t sa[8] = {2, 0, 1, 0, 1, 1, 3, 2};
  uint32_t sc = node(g, ACCY_OP_DOT_GENERAL, st, heads, 2, sa, 8);
  if (which != 1)
    sc = bin(g, ACCY_OP_DIVIDE, st, sc, scalar(g, st, which == 2 ? 3.0f : 8.0f));
  out(g, un(g, ACCY_OP_EXP, st, sc));
  if (which == 3) { /* Wq read by another product (not the same one: that would merge) */
    const int64_t da[4] = {0, 1, 2, 1}, zd[3] = {1, T, E}; /* x Wq^T */
    const uint32_t o[2] = {x, wq};
    ck_assert_int_eq(accy__program_add_output(&g->p,
                                              node(g, ACCY_OP_DOT_GENERAL,
                                                   tu_type(ACCY_DTYPE_F32, 3, zd), o, 2, da, 4),
                                              "z", 1),
                     ACCY_STATUS_OK);
  }
  if (which == 5) ck_assert_int_eq(accy__program_add_output(&g->p, sc, "s", 1), ACCY_STATUS_OK);
  return which <= 1 || which == 3 ? 3 : 2;
}

START_TEST(test_scales_folded_into_weights) {
  tu_rng ca, cb;
  tu_rng_seed(&ca, 70 + (uint64_t)_i);
  tu_rng_seed(&cb, 70 + (uint64_t)_i);
  prog a = {.rng = &ca}, b = {.rng = &cb};
  accy__program_init(&a.p);
  accy__program_init(&b.p);
  const uint32_t want = build_scaled_attention(&a, _i);
  build_scaled_attention(&b, _i);
  ck_assert_int_eq(accy__verify(&b.p), ACCY_STATUS_OK);
  ck_assert_uint_eq(accy__simplify(&b.p), want);
  ck_assert_msg(accy__verify(&b.p) == ACCY_STATUS_OK, "simplified: %s", accy__cause());
  uint32_t ta, tb;
  compare_rewritten(&a, &b, 80 + (uint64_t)_i, false, _i, &ta, &tb);
  accy__program_free(&a.p);
  accy__program_free(&b.p);
}
END_TEST

/* ---- constants folded (src/compile/fold.h) ----------------------------------- */

/* x [8, 32] and constants v, s, b [32]. Case 0: a BatchNorm as the ONNX
 * importer writes it, x * bcast(s * rsqrt(v + bcast(eps))) + bcast(b): the
 * channel values fold, their broadcasts stay (reading the new constant);
 * 1: also the folded channel values as an output of their own; 2: exp of a
 * 256 KiB broadcast, larger than 64 KiB and its operand, added to a
 * broadcast x: nothing folds; 3: x times the transpose of a constant
 * [32, 16] (the transpose folds into a constant). Returns whether the
 * program has something to fold. */
static bool build_foldable(prog *g, int which) {
  const int64_t xd[2] = {8, 32}, cd[1] = {32};
  const accy__type xt = tu_type(ACCY_DTYPE_F32, 2, xd), ct = tu_type(ACCY_DTYPE_F32, 1, cd);
  const uint32_t x = param(g, "x", xt);
  if (which == 2) {
    const int64_t bd[2] = {2048, 32}, dim1[1] = {1};
    const accy__type bt = tu_type(ACCY_DTYPE_F32, 2, bd);
    const uint32_t c = constant(g, ct, 0, false);
    const uint32_t e = un(g, ACCY_OP_EXP, bt, node(g, ACCY_OP_BROADCAST_IN_DIM, bt, &c, 1, dim1, 1));
    const uint32_t r = reduce_axis(g, ACCY_REDUCE_SUM, e, ct, 0);
    out(g, bin(g, ACCY_OP_ADD, xt, x, node(g, ACCY_OP_BROADCAST_IN_DIM, xt, &r, 1, dim1, 1)));
    return false;
  }
  if (which == 3) {
    const int64_t wd[2] = {16, 32}, td[2] = {32, 16}, od[2] = {8, 16}, perm[2] = {1, 0};
    const uint32_t w = constant(g, tu_type(ACCY_DTYPE_F32, 2, wd), 0, false);
    const uint32_t wt = node(g, ACCY_OP_TRANSPOSE, tu_type(ACCY_DTYPE_F32, 2, td), &w, 1, perm, 2);
    const int64_t da[4] = {0, 1, 1, 0};
    const uint32_t o[2] = {x, wt};
    out(g, node(g, ACCY_OP_DOT_GENERAL, tu_type(ACCY_DTYPE_F32, 2, od), o, 2, da, 4));
    return true;
  }
  const uint32_t v = constant(g, ct, 0, false), sc = constant(g, ct, 0, false);
  /* variances in [0.5, 1.5] */
  float *vv = g->p.nodes[v].payload;
  for (int i = 0; i < 32; i++) vv[i] = fabsf(vv[i]) + 0.5f;
  const uint32_t r = un(g, ACCY_OP_RSQRT, ct, bin(g, ACCY_OP_ADD, ct, v, scalar(g, ct, 1e-5f)));
  const uint32_t a = bin(g, ACCY_OP_MULTIPLY, ct, sc, r);
  const int64_t a1[1] = {1};
  const uint32_t y = bin(g, ACCY_OP_MULTIPLY, xt, x, node(g, ACCY_OP_BROADCAST_IN_DIM, xt, &a, 1, a1, 1));
  out(g, bin(g, ACCY_OP_ADD, xt, y, channel_bias(g, xt, 1)));
  if (which == 1) ck_assert_int_eq(accy__program_add_output(&g->p, a, "a", 1), ACCY_STATUS_OK);
  return true;
}

START_TEST(test_constants_folded) {
  tu_rng ca, cb;
  tu_rng_seed(&ca, 90 + (uint64_t)_i);
  tu_rng_seed(&cb, 90 + (uint64_t)_i);
  prog a = {.rng = &ca}, b = {.rng = &cb};
  accy__program_init(&a.p);
  accy__program_init(&b.p);
  const bool want = build_foldable(&a, _i);
  build_foldable(&b, _i);
  ck_assert_int_eq(accy__verify(&b.p), ACCY_STATUS_OK);
  bool changed = false;
  ck_assert_int_eq(accy__fold_constants(&b.p, UINT64_MAX, &changed), ACCY_STATUS_OK);
  ck_assert_int_eq(changed, want);
  ck_assert_msg(accy__verify(&b.p) == ACCY_STATUS_OK, "folded: %s", accy__cause());
  /* Nothing computed from constants alone is left but broadcasts of them. */
  uint32_t bcasts = 0;
  for (uint32_t i = 0; i < b.p.n_nodes && want; i++) {
    const accy__node *nd = &b.p.nodes[i];
    bool all = nd->n_operands > 0;
    for (uint32_t k = 0; k < nd->n_operands; k++)
      all = all && b.p.nodes[nd->operands[k]].op == ACCY_OP_CONSTANT;
    if (!all) continue;
    ck_assert_msg(nd->op == ACCY_OP_BROADCAST_IN_DIM, "case %d: node %u (%s) reads constants only",
                  _i, i, accy__op_name(nd->op));
    bcasts++;
  }
  if (want) ck_assert_uint_lt(b.p.n_nodes, a.p.n_nodes);
  else ck_assert_uint_eq(b.p.n_nodes, a.p.n_nodes);
  if (_i <= 1) ck_assert_uint_eq(bcasts, 2); /* the channel values' and the bias's */
  uint32_t ta, tb;
  compare_rewritten(&a, &b, 95 + (uint64_t)_i, true, _i, &ta, &tb);
  if (_i == 0) ck_assert_msg(tb < ta, "%u tasks folded, %u as written", tb, ta);
  accy__program_free(&a.p);
  accy__program_free(&b.p);
}
END_TEST

/* ---- per-channel affine chains folded into products (simplify.h) -------- */

/* One step of a chain as built: op, the constant's node, whether the
 * constant is the lhs, and its values per channel (1 or K). */
typedef struct chain_step {
  uint16_t op;
  uint32_t c;
  bool lhs;
} chain_step;

typedef struct affine_case {
  bool conv;           /* else a dot_general */
  int64_t groups;      /* conv */
  bool trans_b;        /* dot: W [N, K] contracted on 1 */
  uint32_t x, w;       /* nodes */
  chain_step steps[6];
  uint32_t n_steps;
  int64_t k;           /* channels */
} affine_case;

/* Case 0: a 3x3 convolution x [1, 4, 6, 6] -> [1, 6, 6, 6], then + bias,
 * - mean, * scale, + beta (a BatchNorm as the importer writes it once its
 * constants fold), then ReLU: folds; 1: the same depthwise (6 channels,
 * groups 6); 2: x [5, 12] . W [12, 7], * scale + beta; 3: x . W^T with W
 * [7, 12], + bias * scale; 4: the convolution's (0.5 - y) * scale with a
 * scalar 0.5. Cases that must not fold (one step or none): 5, W read by a
 * second convolution too; 6, the biased value an output; 7, a mean that
 * varies over the spatial axes. Returns how many chains fold. */
static uint32_t build_affine(prog *g, int which, affine_case *ac) {
  memset(ac, 0, sizeof *ac);
  ac->conv = which != 2 && which != 3;
  uint32_t y;
  accy__type yt;
  if (ac->conv) {
    const int64_t cin = which == 1 ? 6 : 4;
    ac->k = 6;
    ac->groups = which == 1 ? 6 : 1;
    const int64_t xd[4] = {1, cin, 6, 6}, wd[4] = {6, cin / ac->groups, 3, 3}, yd[4] = {1, 6, 6, 6};
    ac->x = param(g, "x", tu_type(ACCY_DTYPE_F32, 4, xd));
    ac->w = constant(g, tu_type(ACCY_DTYPE_F32, 4, wd), 0, false);
    yt = tu_type(ACCY_DTYPE_F32, 4, yd);
    const int64_t ca[12] = {2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, ac->groups};
    const uint32_t o[2] = {ac->x, ac->w};
    y = node(g, ACCY_OP_CONVOLUTION, yt, o, 2, ca, 12);
    if (which == 5) { /* unpadded: not the same convolution (that would merge) */
      const uint32_t o2[2] = {ac->x, ac->w};
      const int64_t zd[4] = {1, 6, 4, 4}, cz[12] = {2, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, ac->groups};
      named_out(g, node(g, ACCY_OP_CONVOLUTION, tu_type(ACCY_DTYPE_F32, 4, zd), o2, 2, cz, 12), "z");
    }
  } else {
    ac->k = 7;
    ac->trans_b = which == 3;
    const int64_t xd[2] = {5, 12}, wd[2] = {12, 7}, wtd[2] = {7, 12}, yd[2] = {5, 7};
    ac->x = param(g, "x", tu_type(ACCY_DTYPE_F32, 2, xd));
    ac->w = constant(g, tu_type(ACCY_DTYPE_F32, 2, ac->trans_b ? wtd : wd), 0, false);
    yt = tu_type(ACCY_DTYPE_F32, 2, yd);
    const int64_t da[4] = {0, 1, 1, ac->trans_b ? 1 : 0};
    const uint32_t o[2] = {ac->x, ac->w};
    y = node(g, ACCY_OP_DOT_GENERAL, yt, o, 2, da, 4);
  }
  const uint32_t axis = 1; /* the channels: conv's features, the dot's columns */
  static const uint16_t bn[4] = {ACCY_OP_ADD, ACCY_OP_SUBTRACT, ACCY_OP_MULTIPLY, ACCY_OP_ADD};
  static const uint16_t scale_beta[2] = {ACCY_OP_MULTIPLY, ACCY_OP_ADD};
  static const uint16_t bias_scale[2] = {ACCY_OP_ADD, ACCY_OP_MULTIPLY};
  const uint16_t *ops = which == 2 ? scale_beta : which == 3 ? bias_scale : bn;
  const uint32_t n_ops = which == 2 || which == 3 ? 2 : which == 4 ? 2 : 4;
  for (uint32_t i = 0; i < n_ops; i++) {
    chain_step *st = &ac->steps[ac->n_steps++];
    st->op = which == 4 ? (i == 0 ? ACCY_OP_SUBTRACT : ACCY_OP_MULTIPLY) : ops[i];
    st->lhs = which == 4 && i == 0;
    uint32_t b;
    if (which == 4 && i == 0) {
      b = scalar(g, yt, 0.5f);
    } else if (which == 7 && i == 1) { /* a mean over the spatial axes */
      const int64_t sd[2] = {6, 6}, sa[2] = {2, 3};
      const uint32_t c = constant(g, tu_type(ACCY_DTYPE_F32, 2, sd), 0, false);
      b = node(g, ACCY_OP_BROADCAST_IN_DIM, yt, &c, 1, sa, 2);
    } else {
      b = channel_bias(g, yt, axis);
    }
    st->c = g->p.nodes[b].operands[0];
    y = st->lhs ? bin(g, st->op, yt, b, y) : bin(g, st->op, yt, y, b);
    if (which == 6 && i == 0) named_out(g, y, "b");
  }
  out(g, bin(g, ACCY_OP_MAXIMUM, yt, y, scalar(g, yt, 0.0f)));
  return which <= 4 ? 1 : 0;
}

START_TEST(test_affine_chains_folded) {
  tu_rng rng, ca, cb;
  tu_rng_seed(&ca, 100 + (uint64_t)_i);
  tu_rng_seed(&cb, 100 + (uint64_t)_i);
  prog a = {.rng = &ca}, b = {.rng = &cb};
  accy__program_init(&a.p);
  accy__program_init(&b.p);
  affine_case ac, unused;
  const uint32_t want = build_affine(&a, _i, &ac);
  build_affine(&b, _i, &unused);
  ck_assert_int_eq(accy__verify(&b.p), ACCY_STATUS_OK);
  ck_assert_uint_eq(accy__simplify(&b.p), want);
  ck_assert_msg(accy__verify(&b.p) == ACCY_STATUS_OK, "simplified: %s", accy__cause());
  if (want) { /* ReLU of one add to the product */
    const accy__node *relu = &b.p.nodes[b.p.outputs[b.p.n_outputs - 1]];
    const accy__node *add = &b.p.nodes[relu->operands[0]];
    ck_assert_int_eq(add->op, ACCY_OP_ADD);
    const uint16_t prod = b.p.nodes[add->operands[0]].op;
    ck_assert(prod == ACCY_OP_CONVOLUTION || prod == ACCY_OP_DOT_GENERAL);
  }
  tu_rng_seed(&rng, 105 + (uint64_t)_i);
  const accy__type *xt = &a.p.nodes[ac.x].type;
  const uint64_t ne = tu_elems(xt);
  float *x = malloc((size_t)ne * 4 + 4);
  tu_fill_random(&rng, ACCY_DTYPE_F32, x, (size_t)ne, false, 2);
  void *inputs[1] = {x};
  uint32_t ta, tb;
  float *ra = run(&a, true, inputs, &ta), *rb = run(&b, true, inputs, &tb);
  /* Both within (terms + 16) u S of the exact chain, S its magnitudes. */
  const accy__program *p = &a.p;
  const uint32_t yo = p->outputs[p->n_outputs - 1];
  uint64_t before = 0; /* the outputs before the last one */
  for (uint32_t o = 0; o + 1 < p->n_outputs; o++) before += tu_elems(&p->nodes[p->outputs[o]].type);
  const float *w = p->nodes[ac.w].payload;
  const uint64_t n = tu_elems(&p->nodes[yo].type);
  const int64_t cin = ac.conv ? xt->dims[1] : 12, cpg = cin / (ac.groups ? ac.groups : 1);
  const int64_t terms = ac.conv ? cpg * 9 : 12;
  for (uint64_t e = 0; e < n; e++) {
    int64_t ch, sp = 0;
    double v = 0, mag = 0;
    if (ac.conv) {
      ch = (int64_t)e / 36, sp = (int64_t)e % 36;
      const int64_t i = sp / 6, j = sp % 6, g0 = ch / (ac.k / ac.groups) * cpg;
      for (int64_t c = 0; c < cpg; c++)
        for (int64_t di = 0; di < 3; di++)
          for (int64_t dj = 0; dj < 3; dj++) {
            const int64_t yi = i + di - 1, xj = j + dj - 1;
            if (yi < 0 || yi >= 6 || xj < 0 || xj >= 6) continue;
            const double t = (double)x[((g0 + c) * 6 + yi) * 6 + xj] * w[((ch * cpg + c) * 3 + di) * 3 + dj];
            v += t, mag += fabs(t);
          }
    } else {
      const int64_t m = (int64_t)e / 7;
      ch = (int64_t)e % 7;
      for (int64_t k = 0; k < 12; k++) {
        const double t = (double)x[m * 12 + k] * w[ac.trans_b ? ch * 12 + k : k * 7 + ch];
        v += t, mag += fabs(t);
      }
    }
    for (uint32_t s = 0; s < ac.n_steps; s++) {
      const chain_step *st = &ac.steps[s];
      const accy__node *cn = &p->nodes[st->c];
      const uint64_t cnt = cn->payload_bytes / 4;
      const double c = ((const float *)cn->payload)[cnt == 1 ? 0 : cnt == (uint64_t)ac.k ? ch : sp];
      if (st->op == ACCY_OP_MULTIPLY) v *= c, mag *= fabs(c);
      else if (st->op == ACCY_OP_ADD) v += c, mag += fabs(c);
      else v = st->lhs ? c - v : v - c, mag += fabs(c);
    }
    v = v > 0 ? v : 0;
    const double tol = (double)(terms + 16) * 0x1p-24 * mag + 1e-30;
    const float got[2] = {ra[before + e], rb[before + e]};
    for (int k = 0; k < 2; k++)
      ck_assert_msg(fabs(got[k] - v) <= tol, "case %d, element %llu %s: %.9g, exact %.9g (bound %.3g)",
                    _i, (unsigned long long)e, k ? "simplified" : "as written", (double)got[k], v, tol);
  }
  if (!want) {
    const size_t d = tu_first_difference(ACCY_DTYPE_F32, ra, rb, (size_t)(before + n));
    ck_assert_msg(d == SIZE_MAX, "case %d: not folded, yet element %zu differs", _i, d);
  }
  free(ra);
  free(rb);
  free(x);
  accy__program_free(&a.p);
  accy__program_free(&b.p);
}
END_TEST

/* ---- products stored through a transpose (fuse.h) ------------------------ */

/* Attention's heads merged back: P [B, H, S, S] . V [B, H, S, D] -> [B, H,
 * S, D], transposed to [B, S, H, D] and reshaped to [B, S, H D]. Case 0:
 * B = 1, stored through the transpose (one task); 1: with a bias along D
 * and a ReLU before the transpose (one task); 2: V constant, the product
 * [H, S, D] of rank 3 merged to [S, H, D] (one task); 3: B = 2, whose
 * batch axes step with two strides (the GEMM in two sets of batch axes,
 * check_linalg: one task); 4: D moved
 * ([0, 1, 3, 2]: two tasks); 5: the lhs free axes of x [2, 3, 8] . W [8,
 * 16] swapped ([1, 0, 2]: two tasks). The bits are the unfused ones. */
START_TEST(test_transposed_stores) {
  tu_rng rng;
  tu_rng_seed(&rng, 5100 + (uint64_t)_i);
  prog g = {.rng = &rng};
  accy__program_init(&g.p);
  const int64_t B = _i == 3 ? 2 : 1, H = 3, S = 20, D = 16;
  uint32_t want = _i <= 3 ? 2 : 3; /* and exp's task */
  if (_i == 5) {
    const int64_t xd[3] = {2, 3, 8}, wd[2] = {8, 16}, yd[3] = {2, 3, 16}, td[3] = {3, 2, 16};
    const uint32_t x = param(&g, "x", tu_type(ACCY_DTYPE_F32, 3, xd));
    const uint32_t w = constant(&g, tu_type(ACCY_DTYPE_F32, 2, wd), 0, false);
    const int64_t da[4] = {0, 1, 2, 0}, perm[3] = {1, 0, 2};
    const uint32_t o[2] = {x, w};
    const uint32_t y = node(&g, ACCY_OP_DOT_GENERAL, tu_type(ACCY_DTYPE_F32, 3, yd), o, 2, da, 4);
    const accy__type tt = tu_type(ACCY_DTYPE_F32, 3, td);
    out(&g, un(&g, ACCY_OP_EXP, tt, node(&g, ACCY_OP_TRANSPOSE, tt, &y, 1, perm, 3)));
    compare(&g, want);
    return;
  }
  if (_i == 2) {
    const int64_t pd[3] = {H, S, S}, vd[3] = {H, S, D}, td[3] = {S, H, D}, rd[2] = {S, H * D};
    const uint32_t pp = param(&g, "p", tu_type(ACCY_DTYPE_F32, 3, pd));
    const uint32_t v = constant(&g, tu_type(ACCY_DTYPE_F32, 3, vd), 0, false);
    const int64_t da[6] = {1, 0, 0, 1, 2, 1}, perm[3] = {1, 0, 2};
    const uint32_t o[2] = {pp, v};
    uint32_t y = node(&g, ACCY_OP_DOT_GENERAL, tu_type(ACCY_DTYPE_F32, 3, vd), o, 2, da, 6);
    y = node(&g, ACCY_OP_TRANSPOSE, tu_type(ACCY_DTYPE_F32, 3, td), &y, 1, perm, 3);
    const accy__type rt = tu_type(ACCY_DTYPE_F32, 2, rd);
    out(&g, un(&g, ACCY_OP_EXP, rt, node(&g, ACCY_OP_RESHAPE, rt, &y, 1, NULL, 0)));
    compare(&g, want);
    return;
  }
  const int64_t pd[4] = {B, H, S, S}, vd[4] = {B, H, S, D}, td[4] = {B, S, H, D},
                td4[4] = {B, H, D, S}, rd[3] = {B, S, H * D};
  const accy__type yt = tu_type(ACCY_DTYPE_F32, 4, vd);
  const uint32_t pp = param(&g, "p", tu_type(ACCY_DTYPE_F32, 4, pd));
  const uint32_t v = param(&g, "v", yt);
  const int64_t da[8] = {2, 0, 1, 0, 1, 1, 3, 2};
  const uint32_t o[2] = {pp, v};
  uint32_t y = node(&g, ACCY_OP_DOT_GENERAL, yt, o, 2, da, 8);
  if (_i == 1) {
    y = bin(&g, ACCY_OP_ADD, yt, y, channel_bias(&g, yt, 3));
    y = bin(&g, ACCY_OP_MAXIMUM, yt, y, scalar(&g, yt, 0));
  }
  if (_i == 4) {
    const int64_t perm[4] = {0, 1, 3, 2};
    const accy__type tt = tu_type(ACCY_DTYPE_F32, 4, td4);
    out(&g, un(&g, ACCY_OP_EXP, tt, node(&g, ACCY_OP_TRANSPOSE, tt, &y, 1, perm, 4)));
  } else {
    const int64_t perm[4] = {0, 2, 1, 3};
    y = node(&g, ACCY_OP_TRANSPOSE, tu_type(ACCY_DTYPE_F32, 4, td), &y, 1, perm, 4);
    const accy__type rt = tu_type(ACCY_DTYPE_F32, 3, rd);
    out(&g, un(&g, ACCY_OP_EXP, rt, node(&g, ACCY_OP_RESHAPE, rt, &y, 1, NULL, 0)));
  }
  compare(&g, want);
}
END_TEST

/* ---- products split by their column slices (src/compile/split.h) -------- */

/* x [1, 12, 32] . W (32 -> 96 columns) read through three slices of 32
 * columns (GPT-2's QKV), each read by exp and an output. Case 0: W [32, 96]
 * with a bias; 1: without; 2: W [96, 32] contracted on its axis 1, with a
 * bias. Cases that stay as written: 3, a slice of 8 columns; 4, a slice of
 * some rows too; 5, the biased product an output as well. */
static bool build_sliced(prog *g, int which) {
  const int64_t T = 12, E = 32, xd[3] = {1, T, E}, pd[3] = {1, T, 3 * E};
  const accy__type xt = tu_type(ACCY_DTYPE_F32, 3, xd), pt = tu_type(ACCY_DTYPE_F32, 3, pd);
  const uint32_t x = param(g, "x", xt);
  const int64_t wd[2] = {E, 3 * E}, wtd[2] = {3 * E, E};
  const uint32_t w = constant(g, tu_type(ACCY_DTYPE_F32, 2, which == 2 ? wtd : wd), 0, false);
  const int64_t da[4] = {0, 1, 2, which == 2 ? 1 : 0};
  const uint32_t o[2] = {x, w};
  uint32_t y = node(g, ACCY_OP_DOT_GENERAL, pt, o, 2, da, 4);
  if (which != 1) y = bin(g, ACCY_OP_ADD, pt, y, channel_bias(g, pt, 2));
  if (which == 5) named_out(g, y, "qkv");
  static const int64_t cut[4][2] = {{0, 32}, {32, 64}, {64, 96}, {64, 72}};
  for (int part = 0; part < 3; part++) {
    const int64_t *c = cut[which == 3 && part == 2 ? 3 : part];
    const int64_t r0 = which == 4 && part == 1 ? 2 : 0;
    const int64_t sa[9] = {0, r0, c[0], 1, T, c[1], 1, 1, 1}, sd[3] = {1, T - r0, c[1] - c[0]};
    const accy__type st = tu_type(ACCY_DTYPE_F32, 3, sd);
    char name[4] = {'q', 0, 0, 0};
    name[0] = "qkv"[part];
    named_out(g, un(g, ACCY_OP_EXP, st, node(g, ACCY_OP_SLICE, st, &y, 1, sa, 9)), name);
  }
  return which <= 2;
}

START_TEST(test_slices_split) {
  tu_rng ca, cb;
  tu_rng_seed(&ca, 110 + (uint64_t)_i);
  tu_rng_seed(&cb, 110 + (uint64_t)_i);
  prog a = {.rng = &ca}, b = {.rng = &cb};
  accy__program_init(&a.p);
  accy__program_init(&b.p);
  const bool want = build_sliced(&a, _i);
  build_sliced(&b, _i);
  ck_assert_int_eq(accy__verify(&b.p), ACCY_STATUS_OK);
  bool changed = false;
  ck_assert_int_eq(accy__split_products(&b.p, &changed), ACCY_STATUS_OK);
  ck_assert_int_eq(changed, want);
  ck_assert_msg(accy__verify(&b.p) == ACCY_STATUS_OK, "split: %s", accy__cause());
  uint32_t slices = 0, dots = 0;
  for (uint32_t i = 0; i < b.p.n_nodes; i++) {
    slices += b.p.nodes[i].op == ACCY_OP_SLICE;
    dots += b.p.nodes[i].op == ACCY_OP_DOT_GENERAL;
  }
  ck_assert_uint_eq(slices, want ? 0 : 3);
  ck_assert_uint_eq(dots, want ? 3 : 1);
  uint32_t ta, tb;
  compare_rewritten(&a, &b, 115 + (uint64_t)_i, true, _i, &ta, &tb);
  accy__program_free(&a.p);
  accy__program_free(&b.p);
}
END_TEST

/* ---- transpose and reshape chains collapsed, duplicates merged ---------- */

/* x [2, 3, 4] (case 2: [1, 5, 1, 4]) through rules four and five, read
 * by exp. Case 0: a transpose undone by another (an alias of x: one
 * rewrite); 1: two transposes composed into one (1); 2: a transpose that
 * moves only axes of extent 1 (a reshape: 1); 3: a reshape of a reshape,
 * back to x's type (1); 4: x . W twice, with two constants of the same
 * bytes (merged, then the products: 2); 5:
 * two constants of the same bytes and different dtypes, f32 and i32 (none).
 * The bits are the program's as written. */
static uint32_t build_chains(prog *g, int which) {
  const int64_t xd[3] = {2, 3, 4}, ud[4] = {1, 5, 1, 4};
  const uint32_t x = param(g, "x", which == 2 ? tu_type(ACCY_DTYPE_F32, 4, ud)
                                              : tu_type(ACCY_DTYPE_F32, 3, xd));
  switch (which) {
    case 0:
    case 1: {
      const int64_t p1[3] = {1, 0, 2}, d1[3] = {3, 2, 4}, p2a[3] = {1, 0, 2}, p2b[3] = {2, 1, 0},
                    d2b[3] = {4, 2, 3};
      const uint32_t t1 = node(g, ACCY_OP_TRANSPOSE, tu_type(ACCY_DTYPE_F32, 3, d1), &x, 1, p1, 3);
      const accy__type t2t = tu_type(ACCY_DTYPE_F32, 3, which ? d2b : xd);
      const uint32_t t2 = node(g, ACCY_OP_TRANSPOSE, t2t, &t1, 1, which ? p2b : p2a, 3);
      out(g, un(g, ACCY_OP_EXP, t2t, t2));
      return 1; /* case 0: composed to the identity, a reshape to x's type: an alias */
    }
    case 2: {
      const int64_t p[4] = {2, 0, 1, 3}, d[4] = {1, 1, 5, 4};
      const accy__type t = tu_type(ACCY_DTYPE_F32, 4, d);
      out(g, un(g, ACCY_OP_EXP, t, node(g, ACCY_OP_TRANSPOSE, t, &x, 1, p, 4)));
      return 1;
    }
    case 3: {
      const int64_t d1[2] = {6, 4};
      const uint32_t r1 = node(g, ACCY_OP_RESHAPE, tu_type(ACCY_DTYPE_F32, 2, d1), &x, 1, NULL, 0);
      const accy__type t = tu_type(ACCY_DTYPE_F32, 3, xd);
      out(g, un(g, ACCY_OP_EXP, t, node(g, ACCY_OP_RESHAPE, t, &r1, 1, NULL, 0)));
      return 1;
    }
    case 4: {
      const int64_t wd[2] = {4, 8}, yd[3] = {2, 3, 8}, da[4] = {0, 1, 2, 0};
      const accy__type wt = tu_type(ACCY_DTYPE_F32, 2, wd), yt = tu_type(ACCY_DTYPE_F32, 3, yd);
      const uint32_t w1 = constant(g, wt, 0.5f, true), w2 = constant(g, wt, 0.5f, true);
      const uint32_t o1[2] = {x, w1}, o2[2] = {x, w2};
      out(g, un(g, ACCY_OP_EXP, yt, node(g, ACCY_OP_DOT_GENERAL, yt, o1, 2, da, 4)));
      named_out(g, un(g, ACCY_OP_TANH, yt, node(g, ACCY_OP_DOT_GENERAL, yt, o2, 2, da, 4)), "z");
      return 2;
    }
    default: {
      const int64_t one[1] = {1};
      const float f = 1.0f;
      int32_t i;
      memcpy(&i, &f, 4);
      const uint32_t cf = constant(g, tu_type(ACCY_DTYPE_F32, 1, one), 1.0f, true);
      uint32_t ci;
      ck_assert_int_eq(accy__program_add_node(&g->p, ACCY_OP_CONSTANT,
                                              &(accy__type){ACCY_DTYPE_I32, 1, {1}}, NULL, 0,
                                              NULL, 0, "ci", 2, &i, 4, &ci),
                       ACCY_STATUS_OK);
      const accy__type t = tu_type(ACCY_DTYPE_F32, 3, xd);
      const int64_t d0[1] = {0};
      const uint32_t b = node(g, ACCY_OP_BROADCAST_IN_DIM, t, &cf, 1, d0, 1);
      out(g, bin(g, ACCY_OP_ADD, t, x, b));
      const accy__type it = tu_type(ACCY_DTYPE_I32, 1, one);
      named_out(g, un(g, ACCY_OP_NEGATE, it, ci), "z");
      return 0;
    }
  }
}

START_TEST(test_chains_collapsed_duplicates_merged) {
  tu_rng ca, cb;
  tu_rng_seed(&ca, 120 + (uint64_t)_i);
  tu_rng_seed(&cb, 120 + (uint64_t)_i);
  prog a = {.rng = &ca}, b = {.rng = &cb};
  accy__program_init(&a.p);
  accy__program_init(&b.p);
  const uint32_t want = build_chains(&a, _i);
  build_chains(&b, _i);
  ck_assert_int_eq(accy__verify(&b.p), ACCY_STATUS_OK);
  ck_assert_uint_eq(accy__simplify(&b.p), want);
  ck_assert_msg(accy__verify(&b.p) == ACCY_STATUS_OK, "simplified: %s", accy__cause());
  const accy__node *y = &b.p.nodes[b.p.outputs[0]];
  const uint32_t x = b.p.params[0];
  if (_i == 0 || _i == 3) ck_assert_uint_eq(y->operands[0], x); /* exp reads x itself */
  if (_i == 1 || _i == 2) {
    const accy__node *t = &b.p.nodes[y->operands[0]];
    ck_assert_int_eq(t->op, _i == 1 ? ACCY_OP_TRANSPOSE : ACCY_OP_RESHAPE);
    ck_assert_uint_eq(t->operands[0], x);
  }
  if (_i == 4) /* both outputs' functions read one product */
    ck_assert_uint_eq(y->operands[0], b.p.nodes[b.p.outputs[1]].operands[0]);
  uint32_t ta, tb;
  compare_rewritten(&a, &b, 125 + (uint64_t)_i, true, _i, &ta, &tb);
  accy__program_free(&a.p);
  accy__program_free(&b.p);
}
END_TEST

static Suite *fuse_suite(void) {
  Suite *s = suite_create("fuse");
  TCase *tc = tcase_create("epilogues");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_dot_epilogues, 0, 2);
  tcase_add_test(tc, test_dot_input_b_packed_per_launch);
  tcase_add_test(tc, test_dot_half_constant_weights);
  tcase_add_test(tc, test_half_lowered);
  tcase_add_test(tc, test_half_batched_dots_lowered);
  tcase_add_test(tc, test_group_broadcast_fills_every_width);
  tcase_add_test(tc, test_chains_that_must_not_fuse);
  tcase_add_test(tc, test_chains_meeting_at_an_add);
  tcase_add_loop_test(tc, test_fused_relu_of_negative_zero, 0, 7);
  tcase_add_test(tc, test_elementwise_groups);
  tcase_add_loop_test(tc, test_groups_after_dots, 0, 5);
  tcase_add_loop_test(tc, test_random_groups, 0, 3);
  tcase_add_loop_test(tc, test_half_chains, 0, 6);
  tcase_add_loop_test(tc, test_conv_epilogues, 0, 10);
  tcase_add_loop_test(tc, test_groups_after_convs, 0, 11);
  tcase_add_loop_test(tc, test_conv_max_pool_fuses, 0, 11);
  tcase_add_loop_test(tc, test_transposes_folded_into_dots, 0, 4);
  tcase_add_loop_test(tc, test_scales_folded_into_weights, 0, 6);
  tcase_add_loop_test(tc, test_transposed_stores, 0, 6);
  tcase_add_loop_test(tc, test_constants_folded, 0, 4);
  tcase_add_loop_test(tc, test_slices_split, 0, 6);
  tcase_add_loop_test(tc, test_chains_collapsed_duplicates_merged, 0, 6);
  tcase_add_loop_test(tc, test_affine_chains_folded, 0, 8);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(fuse_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
