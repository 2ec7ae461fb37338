/* tests/check_compile.c: the planner. Buffer locations (aliases, in-place
 * updates, copied inputs and outputs), the scratch plan's safety under any
 * parallel schedule (property test on random programs: buffers that share
 * bytes are always ordered by a path in the task graph), results against a
 * naive evaluator, and no allocator calls in steady-state invokes. */
#include <stdlib.h>
#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/internal.h"

#include "scheduler/sched.h"

#include "src/base/alloc.h"
#include "src/compile/compile.h"
#include "src/compile/reuse.h"
#include "src/ir/verify.h"
#include "src/runtime/bind.h"
#include "src/scratch.h"
#include "src/wire/wire.h"
#include "tests/testutil.h"

static accy__type vec(int32_t dtype, int64_t n) {
  accy__type t;
  memset(&t, 0, sizeof t);
  t.dtype = dtype;
  t.rank = 1;
  t.dims[0] = n;
  return t;
}

static uint32_t add(accy__program *p, uint16_t op, accy__type t, const uint32_t *ops, uint32_t n,
                    const int64_t *attrs, uint32_t na, const char *name) {
  uint32_t idx;
  accy_status s = accy__program_add_node(p, op, &t, ops, n, attrs, na, name,
                                         name ? strlen(name) : 0, NULL, 0, &idx);
  ck_assert_int_eq(s, ACCY_STATUS_OK);
  return idx;
}

static void out(accy__program *p, uint32_t node, const char *name) {
  ck_assert_int_eq(accy__program_add_output(p, node, name, strlen(name)), ACCY_STATUS_OK);
}

static void compile_ok(const accy__program *p, accy__plan *plan) {
  accy_status s = accy__verify(p);
  ck_assert_msg(s == ACCY_STATUS_OK, "verify: %s", accy__cause());
  s = accy__compile(p, 16, plan);
  ck_assert_msg(s == ACCY_STATUS_OK, "compile: %s", accy__cause());
}

/* ---- locations ---------------------------------------------------------------- */

START_TEST(test_locations) {
  accy__program p;
  accy__program_init(&p);
  accy__type t = vec(ACCY_DTYPE_F32, 16);
  accy__type r = t;
  r.rank = 2;
  r.dims[0] = 4;
  r.dims[1] = 4;
  uint32_t x = add(&p, ACCY_OP_PARAMETER, t, NULL, 0, NULL, 0, "x");
  uint32_t y = add(&p, ACCY_OP_PARAMETER, t, NULL, 0, NULL, 0, "y");
  uint32_t ops[2] = {x, y};
  uint32_t a = add(&p, ACCY_OP_ADD, t, ops, 2, NULL, 0, NULL);        /* scratch */
  uint32_t ra = add(&p, ACCY_OP_RESHAPE, r, &a, 1, NULL, 0, NULL);    /* alias of a */
  uint32_t n = add(&p, ACCY_OP_NEGATE, r, &ra, 1, NULL, 0, NULL);     /* output 0 */
  uint32_t dead = add(&p, ACCY_OP_NEGATE, t, &x, 1, NULL, 0, NULL);   /* unused */
  out(&p, n, "n");
  out(&p, x, "x_copy");
  out(&p, n, "n_again");
  accy__plan plan;
  setenv("ACCY_FUSION", "0", 1); /* the location rules, with every node its own task */
  compile_ok(&p, &plan);
  unsetenv("ACCY_FUSION");
  ck_assert_int_eq(plan.locs[x].kind, ACCY__LOC_INPUT);
  ck_assert_int_eq(plan.locs[y].kind, ACCY__LOC_INPUT);
  ck_assert_uint_eq(plan.locs[y].index, 1);
  ck_assert_int_eq(plan.locs[a].kind, ACCY__LOC_SCRATCH);
  ck_assert_int_eq(plan.locs[ra].kind, ACCY__LOC_ALIAS);
  ck_assert_uint_eq(plan.locs[ra].index, a);
  ck_assert_int_eq(plan.locs[n].kind, ACCY__LOC_OUTPUT);
  ck_assert_int_eq(plan.locs[dead].kind, ACCY__LOC_NONE);
  /* add, negate, and two output copies; no task for the view or dead code. */
  ck_assert_uint_eq(plan.n_tasks, 4);
  ck_assert_uint_eq(plan.descs[2].flags, 0);
  ck_assert_uint_eq(plan.descs[3].flags, ACCY_DESCRIPTOR_COPIED_OUTPUT);
  ck_assert_uint_eq(plan.descs[4].flags, ACCY_DESCRIPTOR_COPIED_OUTPUT);
  ck_assert_uint_eq(plan.data_bytes, 64);
  accy__plan_free(&plan);
  accy__program_free(&p);
}
END_TEST

START_TEST(test_update_in_place_only_when_sole_reader) {
  for (int shared = 0; shared < 2; shared++) {
    accy__program p;
    accy__program_init(&p);
    accy__type t = vec(ACCY_DTYPE_I32, 8), u = vec(ACCY_DTYPE_I32, 2);
    accy__type s0;
    memset(&s0, 0, sizeof s0);
    s0.dtype = ACCY_DTYPE_I32;
    uint32_t x = add(&p, ACCY_OP_PARAMETER, t, NULL, 0, NULL, 0, "x");
    uint32_t v = add(&p, ACCY_OP_PARAMETER, u, NULL, 0, NULL, 0, "v");
    uint32_t i = add(&p, ACCY_OP_PARAMETER, s0, NULL, 0, NULL, 0, "i");
    uint32_t ops[3] = {x, v, i};
    uint32_t d = add(&p, ACCY_OP_DYNAMIC_UPDATE_SLICE, t, ops, 3, NULL, 0, NULL);
    uint32_t n = add(&p, ACCY_OP_NEGATE, t, &d, 1, NULL, 0, NULL);
    out(&p, n, "n");
    if (shared) out(&p, x, "x"); /* x read elsewhere: no in-place update */
    accy__plan plan;
    compile_ok(&p, &plan);
    if (shared) {
      ck_assert_int_eq(plan.locs[x].kind, ACCY__LOC_INPUT);
      ck_assert_int_eq(plan.locs[d].kind, ACCY__LOC_SCRATCH);
      ck_assert_uint_eq(plan.descs[0].flags, 0);
    } else {
      ck_assert_int_eq(plan.locs[x].kind, ACCY__LOC_COPIED_INPUT);
      ck_assert_int_eq(plan.locs[d].kind, ACCY__LOC_ALIAS);
      ck_assert_uint_eq(plan.descs[0].flags, ACCY_DESCRIPTOR_COPIED_INPUT);
    }
    accy__plan_free(&plan);
    accy__program_free(&p);
  }
}
END_TEST

/* ---- random programs: plan safety and results ---------------------------------- */

enum { MAX_T = 256 };

typedef struct reach {
  uint64_t bits[MAX_T][MAX_T / 64];
} reach;

static bool reaches(const reach *r, uint32_t a, uint32_t b) {
  return (r->bits[a][b / 64] >> (b % 64)) & 1;
}

static void closure(const accy__plan *plan, reach *r) {
  memset(r, 0, sizeof *r);
  for (uint32_t t = plan->n_tasks; t-- > 0;) {
    const accy__sched_task *st = &plan->stasks[t];
    for (uint32_t e = 0; e < st->n_succ; e++) {
      uint32_t s = plan->succ[st->succ_begin + e];
      ck_assert_uint_gt(s, t); /* topological order */
      r->bits[t][s / 64] |= UINT64_C(1) << (s % 64);
      for (uint32_t w = 0; w < MAX_T / 64; w++) r->bits[t][w] |= r->bits[s][w];
    }
  }
}

static uint32_t root(const accy__plan *plan, uint32_t n) {
  while (plan->locs[n].kind == ACCY__LOC_ALIAS || plan->locs[n].kind == ACCY__LOC_SUB)
    n = plan->locs[n].index;
  return n;
}

/* Builds a random f32 program of adds, multiplies, negates, maximums,
 * reshapes, in-place updates and concatenates (written in place where the
 * compiler can: plan.h's ACCY__LOC_SUB) over vectors of a few sizes. */
static void random_program(tu_rng *rng, accy__program *p) {
  accy__program_init(p);
  int n_params = (int)tu_rng_range(rng, 1, 3);
  static const int64_t sizes[] = {16, 64, 256, 1024};
  accy__type s0;
  memset(&s0, 0, sizeof s0);
  s0.dtype = ACCY_DTYPE_I32;
  char name[16];
  for (int i = 0; i < n_params; i++) {
    snprintf(name, sizeof name, "p%d", i);
    add(p, ACCY_OP_PARAMETER, vec(ACCY_DTYPE_F32, sizes[tu_rng_range(rng, 0, 3)]), NULL, 0, NULL,
        0, name);
  }
  uint32_t idx = add(p, ACCY_OP_PARAMETER, s0, NULL, 0, NULL, 0, "i");
  (void)idx;
  int n_ops = (int)tu_rng_range(rng, 3, 40);
  for (int k = 0; k < n_ops; k++) {
    /* Pick an f32 operand, then maybe a second of the same size. */
    uint32_t a;
    do a = (uint32_t)tu_rng_range(rng, 0, p->n_nodes - 1);
    while (p->nodes[a].type.dtype != ACCY_DTYPE_F32);
    accy__type t = p->nodes[a].type;
    uint64_t ne;
    accy__type_elements(&t, &ne);
    uint32_t b = a;
    for (int tries = 0; tries < 8; tries++) {
      uint32_t c = (uint32_t)tu_rng_range(rng, 0, p->n_nodes - 1);
      uint64_t nc;
      if (p->nodes[c].type.dtype == ACCY_DTYPE_F32 && accy__type_elements(&p->nodes[c].type, &nc) &&
          nc == ne && accy__type_equal(&p->nodes[c].type, &t)) {
        b = c;
        break;
      }
    }
    uint32_t ops[3] = {a, b, 0};
    const int64_t pick = tu_rng_range(rng, 0, 6);
    if (pick == 6) {
      /* Concatenate two or three rank-1 values (the last may repeat one,
       * which must then be copied). */
      uint32_t cops[3] = {a, 0, 0}, nc = 1;
      int64_t total = t.rank == 1 ? t.dims[0] : 0;
      for (int tries = 0; tries < 12 && nc < 3 && t.rank == 1; tries++) {
        const uint32_t c = (uint32_t)tu_rng_range(rng, 0, p->n_nodes - 1);
        if (p->nodes[c].type.dtype == ACCY_DTYPE_F32 && p->nodes[c].type.rank == 1 &&
            total + p->nodes[c].type.dims[0] <= 3072) {
          cops[nc++] = c;
          total += p->nodes[c].type.dims[0];
        }
      }
      if (nc < 2) {
        add(p, ACCY_OP_NEGATE, t, ops, 1, NULL, 0, NULL);
        continue;
      }
      /* Mostly fresh values read only here (negates), which the compiler
       * writes in place; sometimes the values as they are. */
      if (tu_rng_range(rng, 0, 3) != 0)
        for (uint32_t q = 0; q < nc; q++)
          cops[q] = add(p, ACCY_OP_NEGATE, p->nodes[cops[q]].type, &cops[q], 1, NULL, 0, NULL);
      const int64_t axis = 0;
      add(p, ACCY_OP_CONCATENATE, vec(ACCY_DTYPE_F32, total), cops, nc, &axis, 1, NULL);
      continue;
    }
    switch (pick) {
      case 0: add(p, ACCY_OP_ADD, t, ops, 2, NULL, 0, NULL); break;
      case 1: add(p, ACCY_OP_MULTIPLY, t, ops, 2, NULL, 0, NULL); break;
      case 2: add(p, ACCY_OP_NEGATE, t, ops, 1, NULL, 0, NULL); break;
      case 3: add(p, ACCY_OP_MAXIMUM, t, ops, 2, NULL, 0, NULL); break;
      case 4: {
        accy__type r = t;
        if (t.rank == 1) {
          r.rank = 2;
          r.dims[0] = 4;
          r.dims[1] = t.dims[0] / 4;
        } else {
          r.rank = 1;
          r.dims[0] = (int64_t)ne;
          r.dims[1] = 0;
        }
        add(p, ACCY_OP_RESHAPE, r, ops, 1, NULL, 0, NULL);
        break;
      }
      default: {
        if (t.rank != 1) {
          add(p, ACCY_OP_NEGATE, t, ops, 1, NULL, 0, NULL);
          break;
        }
        /* Update a window of a with the first elements of b's slice-free
         * stand-in: use a itself reshaped? Keep it simple: update with a
         * 16-element param-sized value when one exists. */
        uint32_t u = UINT32_MAX;
        for (uint32_t c = 0; c < p->n_nodes; c++)
          if (p->nodes[c].type.dtype == ACCY_DTYPE_F32 && p->nodes[c].type.rank == 1 &&
              p->nodes[c].type.dims[0] <= t.dims[0] && c != a)
            u = c;
        if (u == UINT32_MAX) {
          add(p, ACCY_OP_NEGATE, t, ops, 1, NULL, 0, NULL);
          break;
        }
        uint32_t dops[3] = {a, u, (uint32_t)n_params};
        add(p, ACCY_OP_DYNAMIC_UPDATE_SLICE, t, dops, 3, NULL, 0, NULL);
        break;
      }
    }
  }
  int n_out = (int)tu_rng_range(rng, 1, 3);
  for (int k = 0; k < n_out; k++) {
    snprintf(name, sizeof name, "o%d", k);
    out(p, (uint32_t)tu_rng_range(rng, (uint32_t)n_params, p->n_nodes - 1), name);
  }
  /* The last concatenate is live (an output), so some are written in place. */
  for (uint32_t c = p->n_nodes; c-- > 0;)
    if (p->nodes[c].op == ACCY_OP_CONCATENATE) {
      out(p, c, "cat");
      break;
    }
}

/* Evaluates |p| naively, node by node, into freshly allocated buffers. */
static void **evaluate(const accy__program *p, void *const *inputs) {
  void **v = calloc(p->n_nodes, sizeof(void *));
  uint32_t param = 0;
  for (uint32_t i = 0; i < p->n_nodes; i++) {
    const accy__node *node = &p->nodes[i];
    uint64_t ne;
    accy__type_elements(&node->type, &ne);
    v[i] = calloc(ne + 1, 4);
    float *o = v[i];
    const float *a = node->n_operands ? v[node->operands[0]] : NULL;
    const float *b = node->n_operands > 1 ? v[node->operands[1]] : NULL;
    switch (node->op) {
      case ACCY_OP_PARAMETER: memcpy(o, inputs[param++], ne * 4); break;
      case ACCY_OP_ADD: for (uint64_t k = 0; k < ne; k++) o[k] = a[k] + b[k]; break;
      case ACCY_OP_MULTIPLY: for (uint64_t k = 0; k < ne; k++) o[k] = a[k] * b[k]; break;
      case ACCY_OP_NEGATE: for (uint64_t k = 0; k < ne; k++) o[k] = -a[k]; break;
      case ACCY_OP_MAXIMUM:
        for (uint64_t k = 0; k < ne; k++) o[k] = a[k] != a[k] || b[k] != b[k] ? NAN : (a[k] > b[k] ? a[k] : b[k]);
        break;
      case ACCY_OP_RESHAPE: memcpy(o, a, ne * 4); break;
      case ACCY_OP_CONCATENATE: {
        uint64_t at = 0;
        for (uint32_t k = 0; k < node->n_operands; k++) {
          uint64_t nk;
          accy__type_elements(&p->nodes[node->operands[k]].type, &nk);
          memcpy(o + at, v[node->operands[k]], nk * 4);
          at += nk;
        }
        break;
      }
      case ACCY_OP_DYNAMIC_UPDATE_SLICE: {
        int64_t un = p->nodes[node->operands[1]].type.dims[0];
        int64_t st = *(const int32_t *)v[node->operands[2]];
        if (st < 0) st = 0;
        if (st > (int64_t)ne - un) st = (int64_t)ne - un;
        memcpy(o, a, ne * 4);
        memcpy(o + st, b, (size_t)un * 4);
        break;
      }
      default: ck_abort_msg("unexpected op");
    }
  }
  return v;
}

START_TEST(test_random_plans_are_safe_and_correct) {
  tu_rng rng;
  tu_rng_seed(&rng, 1000 + (uint64_t)_i);
  static reach r;
  int subs = 0; /* operands written in place into a concatenate */
  for (int iter = 0; iter < 25; iter++) {
    accy__program p;
    random_program(&rng, &p);
    accy__plan plan;
    compile_ok(&p, &plan);
    for (uint32_t x = 0; x < p.n_nodes; x++) subs += plan.locs[x].kind == ACCY__LOC_SUB;
    ck_assert_uint_le(plan.n_tasks, MAX_T);
    closure(&plan, &r);
    /* Safety: tasks touching two scratch roots whose bytes overlap are
     * ordered by a path, all one way. */
    for (uint32_t x = 0; x < p.n_nodes; x++) {
      const accy__loc *lx = &plan.locs[x];
      if (lx->kind != ACCY__LOC_SCRATCH && lx->kind != ACCY__LOC_COPIED_INPUT) continue;
      uint64_t xb = accy__type_bytes(&p.nodes[x].type);
      for (uint32_t y = x + 1; y < p.n_nodes; y++) {
        const accy__loc *ly = &plan.locs[y];
        if (ly->kind != ACCY__LOC_SCRATCH && ly->kind != ACCY__LOC_COPIED_INPUT) continue;
        uint64_t yb = accy__type_bytes(&p.nodes[y].type);
        if (!(lx->offset < ly->offset + yb && ly->offset < lx->offset + xb)) continue;
        int dir = 0;
        for (uint32_t t1 = 0; t1 < plan.n_tasks; t1++) {
          const accy__ctask *c1 = &plan.ctasks[t1];
          bool touches_x = false;
          for (uint32_t q = 0; q < c1->n_refs; q++) {
            uint32_t ref = plan.refs[c1->refs_offset + q];
            if (ACCY__REF_TAG(ref) == ACCY__REF_NODE && root(&plan, ACCY__REF_INDEX(ref)) == x) touches_x = true;
          }
          if (!touches_x) continue;
          for (uint32_t t2 = 0; t2 < plan.n_tasks; t2++) {
            const accy__ctask *c2 = &plan.ctasks[t2];
            bool touches_y = false;
            for (uint32_t q = 0; q < c2->n_refs; q++) {
              uint32_t ref = plan.refs[c2->refs_offset + q];
              if (ACCY__REF_TAG(ref) == ACCY__REF_NODE && root(&plan, ACCY__REF_INDEX(ref)) == y) touches_y = true;
            }
            if (!touches_y) continue;
            ck_assert_msg(t1 != t2, "task %u touches overlapping buffers %u and %u", t1, x, y);
            int d = reaches(&r, t1, t2) ? 1 : reaches(&r, t2, t1) ? -1 : 0;
            ck_assert_msg(d != 0, "tasks %u and %u share bytes without an order", t1, t2);
            if (dir == 0) dir = d;
            ck_assert_int_eq(d, dir);
          }
        }
      }
    }
    /* Results: run inline and through a pool; compare with the naive
     * evaluator. */
    void *inputs[8];
    for (uint32_t i = 0; i < p.n_params; i++) {
      uint64_t ne;
      accy__type_elements(&p.nodes[p.params[i]].type, &ne);
      inputs[i] = calloc(ne + 1, 4);
      if (p.nodes[p.params[i]].type.dtype == ACCY_DTYPE_F32)
        tu_fill_random(&rng, ACCY_DTYPE_F32, inputs[i], ne, false, 4);
      else
        *(int32_t *)inputs[i] = (int32_t)tu_rng_range(&rng, -5, 300);
    }
    void **ref = evaluate(&p, inputs);
    accy_input ins[8];
    for (uint32_t i = 0; i < p.n_params; i++)
      ins[i] = (accy_input){inputs[i], accy__type_bytes(&p.nodes[p.params[i]].type)};
    accy_output outs[4];
    void *outbufs[4];
    for (uint32_t j = 0; j < p.n_outputs; j++) {
      size_t bytes = accy__type_bytes(&p.nodes[p.outputs[j]].type);
      outbufs[j] = calloc(bytes + 4, 1);
      outs[j] = (accy_output){outbufs[j], bytes};
    }
    accy__pool *pool = NULL;
    ck_assert_int_eq(accy__pool_acquire(2, &pool), ACCY_STATUS_OK);
    void *block = NULL;
    ck_assert_int_eq(posix_memalign(&block, 64, plan.block_bytes + 64), 0);
    for (int mode = 0; mode < 2; mode++) {
      for (uint32_t j = 0; j < p.n_outputs; j++) memset(outbufs[j], 0xcd, outs[j].size);
      accy__plan_run(&plan, mode ? pool : NULL, mode ? 2 : 1, block, ins, outs);
      for (uint32_t j = 0; j < p.n_outputs; j++) {
        uint64_t ne = outs[j].size / 4;
        size_t d = tu_first_difference(ACCY_DTYPE_F32, outbufs[j], ref[p.outputs[j]], ne);
        ck_assert_msg(d == SIZE_MAX, "iter %d output %u differs at %zu", iter, j, d);
      }
    }
    free(block);
    accy__pool_release(pool);
    for (uint32_t i = 0; i < p.n_nodes; i++) free(ref[i]);
    free(ref);
    for (uint32_t i = 0; i < p.n_params; i++) free(inputs[i]);
    for (uint32_t j = 0; j < p.n_outputs; j++) free(outbufs[j]);
    /* The plan reuses memory: the data region never exceeds the sum. */
    uint64_t sum = 0;
    for (uint32_t x = 0; x < p.n_nodes; x++)
      if (plan.locs[x].kind == ACCY__LOC_SCRATCH || plan.locs[x].kind == ACCY__LOC_COPIED_INPUT)
        sum += accy__align_up(accy__type_bytes(&p.nodes[x].type), 64);
    ck_assert_uint_le(plan.data_bytes, sum);
    accy__plan_free(&plan);
    accy__program_free(&p);
  }
  ck_assert_int_gt(subs, 0);
}
END_TEST

START_TEST(test_chain_reuses_two_buffers) {
  /* x -> negate -> negate -> ... : only two intermediates are ever live. */
  accy__program p;
  accy__program_init(&p);
  accy__type t = vec(ACCY_DTYPE_F32, 1024);
  uint32_t cur = add(&p, ACCY_OP_PARAMETER, t, NULL, 0, NULL, 0, "x");
  for (int i = 0; i < 20; i++) cur = add(&p, ACCY_OP_NEGATE, t, &cur, 1, NULL, 0, NULL);
  out(&p, cur, "y");
  accy__plan plan;
  setenv("ACCY_FUSION", "0", 1); /* fused, the chain is one task with no scratch */
  compile_ok(&p, &plan);
  unsetenv("ACCY_FUSION");
  ck_assert_uint_eq(plan.data_bytes, 2 * 4096);
  accy__plan_free(&plan);
  compile_ok(&p, &plan);
  ck_assert_uint_eq(plan.data_bytes, 0);
  ck_assert_uint_eq(plan.n_tasks, 1);
  accy__plan_free(&plan);
  accy__program_free(&p);
}
END_TEST

/* ---- the reuse planner on its own (src/compile/reuse.c) ------------------------- */

/* Random live ranges over a task order, with up to 6 touching tasks each
 * (so barriers and merged free regions occur): ranges overlapping in time
 * never share bytes, and when they share bytes every toucher of the earlier
 * reaches the later's first task through the returned edges plus the data
 * edges the planner assumes (producer -> every other toucher). */
#define RU_TASKS 96
#define RU_RANGES 80
START_TEST(test_reuse_planner_random) {
  tu_rng rng;
  tu_rng_seed(&rng, 77 + (uint64_t)_i);
  static uint32_t touch[RU_RANGES][8];
  static bool reach_m[RU_TASKS + 4 * RU_RANGES][RU_TASKS + 4 * RU_RANGES];
  for (int iter = 0; iter < 40; iter++) {
    accy__live_range rs[RU_RANGES];
    uint32_t n = (uint32_t)tu_rng_range(&rng, 1, RU_RANGES);
    for (uint32_t k = 0; k < n; k++) {
      uint32_t a = (uint32_t)tu_rng_range(&rng, 0, RU_TASKS - 1);
      uint32_t len = (uint32_t)tu_rng_range(&rng, 0, 12);
      uint32_t e = a + len < RU_TASKS ? a + len : RU_TASKS - 1;
      uint32_t m = 0;
      touch[k][m++] = a;
      for (uint32_t t = a + 1; t < e && m < 5; t++)
        if (tu_rng_range(&rng, 0, 3) == 0) touch[k][m++] = t;
      if (e != a) touch[k][m++] = e;
      rs[k] = (accy__live_range){.start = a, .end = e, .bytes = 64 * (uint64_t)tu_rng_range(&rng, 0, 9),
                                 .touches = touch[k], .n_touches = m};
    }
    accy__reuse_plan plan;
    ck_assert_int_eq(accy__plan_reuse(rs, n, RU_TASKS, UINT64_MAX, &plan), ACCY_STATUS_OK);
    /* Positions after barrier insertion, and the transitive closure. */
    uint32_t pos_task[RU_TASKS], n_all = RU_TASKS + plan.n_barriers;
    ck_assert_uint_le(n_all, RU_TASKS + 4 * RU_RANGES);
    for (uint32_t t = 0, k = 0; t < RU_TASKS; t++) {
      pos_task[t] = t + k;
      while (k < plan.n_barriers && plan.barrier_after[k] == t) k++;
    }
#define RU_POS(id) ((id) < RU_TASKS ? pos_task[id] : plan.barrier_after[(id) - RU_TASKS] + 1 + ((id) - RU_TASKS))
    memset(reach_m, 0, sizeof reach_m);
    for (size_t e = 0; e < plan.n_edges; e++) {
      uint32_t f = RU_POS(plan.edges[e].from), t = RU_POS(plan.edges[e].to);
      ck_assert_uint_lt(f, t); /* edges go forward in the new order */
      reach_m[f][t] = true;
    }
    for (uint32_t k = 0; k < n; k++)
      for (uint32_t q = 1; q < rs[k].n_touches; q++) reach_m[pos_task[rs[k].touches[0]]][pos_task[rs[k].touches[q]]] = true;
    for (uint32_t i = n_all; i-- > 0;)
      for (uint32_t j = i + 1; j < n_all; j++)
        if (reach_m[i][j])
          for (uint32_t l = j + 1; l < n_all; l++)
            if (reach_m[j][l]) reach_m[i][l] = true;
    uint64_t peak = 0;
    for (uint32_t x = 0; x < n; x++) {
      if (!rs[x].bytes) continue;
      if (rs[x].offset + rs[x].bytes > peak) peak = rs[x].offset + rs[x].bytes;
      for (uint32_t y = 0; y < n; y++) {
        if (y == x || !rs[y].bytes) continue;
        bool bytes = rs[x].offset < rs[y].offset + rs[y].bytes && rs[y].offset < rs[x].offset + rs[x].bytes;
        if (!bytes) continue;
        bool time = !(rs[x].end < rs[y].start || rs[y].end < rs[x].start);
        ck_assert_msg(!time, "iter %d: ranges %u and %u share bytes and time", iter, x, y);
        if (rs[x].end >= rs[y].start) continue; /* the other direction */
        for (uint32_t q = 0; q < rs[x].n_touches; q++)
          ck_assert_msg(reach_m[pos_task[rs[x].touches[q]]][pos_task[rs[y].start]],
                        "iter %d: toucher %u of range %u does not precede range %u's first task %u",
                        iter, rs[x].touches[q], x, y, rs[y].start);
      }
    }
    ck_assert_uint_eq(plan.peak, peak);
    accy__reuse_plan_free(&plan);
  }
}
END_TEST

/* ---- compile time grows as n log n, not n^2 ---------------------------------------- */

static double thread_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Wire bytes of a program of |n| nodes of shape |kind|: 0 a chain of
 * negates; 1 n/2 negates of x all live until a chain of adds consumes them;
 * 2 one value read by every node of a chain. */
static void *shaped_program(uint32_t n, int kind, size_t *size) {
  accy__program p;
  accy__program_init(&p);
  accy__type t = vec(ACCY_DTYPE_F32, 16);
  uint32_t x = add(&p, ACCY_OP_PARAMETER, t, NULL, 0, NULL, 0, "x");
  uint32_t cur = x;
  if (kind == 0) {
    for (uint32_t i = 1; i < n; i++) cur = add(&p, ACCY_OP_NEGATE, t, &cur, 1, NULL, 0, NULL);
  } else if (kind == 1) {
    uint32_t first = p.n_nodes, m = n / 2;
    for (uint32_t i = 0; i < m; i++) add(&p, ACCY_OP_NEGATE, t, &x, 1, NULL, 0, NULL);
    cur = first;
    for (uint32_t i = 1; i + 1 < m; i++) {
      uint32_t ops[2] = {cur, first + i};
      cur = add(&p, ACCY_OP_ADD, t, ops, 2, NULL, 0, NULL);
    }
  } else {
    uint32_t r = add(&p, ACCY_OP_NEGATE, t, &x, 1, NULL, 0, NULL);
    cur = r;
    for (uint32_t i = 2; i < n; i++) {
      uint32_t ops[2] = {cur, r};
      cur = add(&p, ACCY_OP_ADD, t, ops, 2, NULL, 0, NULL);
    }
  }
  out(&p, cur, "y");
  void *bytes;
  ck_assert_int_eq(accy__wire_encode(&p, &bytes, size), ACCY_STATUS_OK);
  accy__program_free(&p);
  return bytes;
}

/* Best of 3 CPU seconds for decode + verify + compile through the API. */
static double compile_seconds(accy_session *s, const void *bytes, size_t size) {
  double best = 1e30;
  for (int rep = 0; rep < 3; rep++) {
    accy_handle h;
    double t0 = thread_seconds();
    ck_assert_int_eq(accy_session_compile(s, bytes, size, &h), ACCY_STATUS_OK);
    double dt = thread_seconds() - t0;
    ck_assert_int_eq(accy_session_release(s, h), ACCY_STATUS_OK);
    if (dt < best) best = dt;
  }
  return best;
}

START_TEST(test_compile_time_growth) {
  /* 8x the nodes may cost at most 20x the time: n log n gives about 9-10x,
   * the old quadratic planner 64x. A ratio, not seconds: it holds on any
   * machine. Tiny times are floored so that timer noise cannot fail it. */
  accy_session_options o = {.struct_size = sizeof o, .num_threads = 1};
  accy_session *s;
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_OK);
  size_t sa, sb;
  void *a = shaped_program(8192, _i, &sa), *b = shaped_program(65535, _i, &sb);
  double ta = compile_seconds(s, a, sa), tb = compile_seconds(s, b, sb);
  if (ta < 0.002) ta = 0.002;
  ck_assert_msg(tb / ta < 20.0, "shape %d: 8k nodes %.4f s, 64k nodes %.4f s (ratio %.1f)", _i, ta, tb,
                tb / ta);
  accy__free(a);
  accy__free(b);
  accy_session_destroy(s);
}
END_TEST

/* ---- steady state: no allocator calls --------------------------------------------- */

START_TEST(test_steady_invokes_make_no_allocations) {
  accy__program p;
  accy__program_init(&p);
  accy__type t = vec(ACCY_DTYPE_F32, 1 << 16);
  uint32_t x = add(&p, ACCY_OP_PARAMETER, t, NULL, 0, NULL, 0, "x");
  uint32_t a = add(&p, ACCY_OP_NEGATE, t, &x, 1, NULL, 0, NULL);
  uint32_t ops[2] = {a, x};
  uint32_t b = add(&p, ACCY_OP_MULTIPLY, t, ops, 2, NULL, 0, NULL);
  out(&p, b, "y");
  void *bytes;
  size_t size;
  ck_assert_int_eq(accy__wire_encode(&p, &bytes, &size), ACCY_STATUS_OK);
  accy__program_free(&p);

  accy_session_options o = {.struct_size = sizeof o, .num_threads = (uint32_t)_i + 1};
  accy_session *s;
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_OK);
  accy_handle h;
  ck_assert_int_eq(accy_session_compile(s, bytes, size, &h), ACCY_STATUS_OK);
  accy__free(bytes);
  float *in = calloc(1 << 16, 4), *res = calloc(1 << 16, 4);
  accy_input ins[1] = {{in, (size_t)4 << 16}};
  accy_output outs[1] = {{res, (size_t)4 << 16}};
  ck_assert_int_eq(accy_session_invoke(s, h, ins, 1, outs, 1), ACCY_STATUS_OK);
  uint64_t allocs = accy__alloc_count(), blocks = accy__scratch_backend_allocs();
  for (int i = 0; i < 50; i++) ck_assert_int_eq(accy_session_invoke(s, h, ins, 1, outs, 1), ACCY_STATUS_OK);
  ck_assert_uint_eq(accy__alloc_count(), allocs);
  ck_assert_uint_eq(accy__scratch_backend_allocs(), blocks);
  free(in);
  free(res);
  accy_session_destroy(s);
}
END_TEST

/* The same with concurrent callers: after a warm-up by every thread, no
 * invoke allocates, except a scratch block for a new peak of calls in
 * flight (its one zero-byte allocation probe): at most one block per
 * caller. */
enum { STEADY_CALLERS = 4, STEADY_CALLS = 60 };
typedef struct steady_arg {
  accy_session *s;
  accy_handle h;
  _Atomic int *phase;
  _Atomic int *arrived;
  int bad;
} steady_arg;

static void *steady_caller(void *varg) {
  steady_arg *a = varg;
  float *in = calloc(1 << 16, 4), *res = calloc(1 << 16, 4);
  accy_input ins[1] = {{in, (size_t)4 << 16}};
  accy_output outs[1] = {{res, (size_t)4 << 16}};
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < STEADY_CALLS; i++)
      if (accy_session_invoke(a->s, a->h, ins, 1, outs, 1) != ACCY_STATUS_OK) a->bad++;
    /* Everyone finishes the warm-up before anyone measures. */
    atomic_fetch_add(a->arrived, 1);
    while (atomic_load(a->phase) == round) sched_yield();
  }
  free(in);
  free(res);
  return NULL;
}

START_TEST(test_steady_concurrent_invokes_make_no_allocations) {
  accy__program p;
  accy__program_init(&p);
  accy__type t = vec(ACCY_DTYPE_F32, 1 << 16);
  uint32_t x = add(&p, ACCY_OP_PARAMETER, t, NULL, 0, NULL, 0, "x");
  uint32_t a = add(&p, ACCY_OP_TANH, t, &x, 1, NULL, 0, NULL);
  out(&p, a, "y");
  void *bytes;
  size_t size;
  ck_assert_int_eq(accy__wire_encode(&p, &bytes, &size), ACCY_STATUS_OK);
  accy__program_free(&p);
  accy_session_options o = {.struct_size = sizeof o, .num_threads = (uint32_t)_i + 1};
  accy_session *s;
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_OK);
  accy_handle h;
  ck_assert_int_eq(accy_session_compile(s, bytes, size, &h), ACCY_STATUS_OK);
  accy__free(bytes);
  _Atomic int phase = 0, arrived = 0;
  pthread_t th[STEADY_CALLERS];
  steady_arg args[STEADY_CALLERS];
  for (int k = 0; k < STEADY_CALLERS; k++) {
    args[k] = (steady_arg){s, h, &phase, &arrived, 0};
    ck_assert_int_eq(pthread_create(&th[k], NULL, steady_caller, &args[k]), 0);
  }
  while (atomic_load(&arrived) < STEADY_CALLERS) sched_yield();
  uint64_t allocs = accy__alloc_count(), blocks = accy__scratch_backend_allocs();
  atomic_store(&arrived, 0);
  atomic_store(&phase, 1);
  while (atomic_load(&arrived) < STEADY_CALLERS) sched_yield();
  uint64_t new_blocks = accy__scratch_backend_allocs() - blocks;
  ck_assert_uint_eq(accy__alloc_count() - allocs, new_blocks);
  accy_program_stats ps;
  memset(&ps, 0, sizeof ps);
  ps.struct_size = sizeof ps;
  ck_assert_int_eq(accy_session_program_stats(s, h, &ps), ACCY_STATUS_OK);
  ck_assert_uint_le(ps.scratch_blocks_peak, STEADY_CALLERS);
  atomic_store(&phase, 2);
  for (int k = 0; k < STEADY_CALLERS; k++) {
    pthread_join(th[k], NULL);
    ck_assert_int_eq(args[k].bad, 0);
  }
  accy_session_destroy(s);
}
END_TEST

/* Idle trim: once the pool has been idle for two periods, a program that was
 * not called through a whole period holds no cached scratch block (and the
 * session's budget has them back), while a program called all along keeps
 * its block; both still run afterwards. */
typedef struct busy_arg {
  accy_session *s;
  accy_handle h;
  _Atomic int *stop;
  int bad;
  uint64_t n; /* elements of the program's input and output (0: 4) */
} busy_arg;

/* Invokes a->h until *a->stop, pausing 0.2 ms between calls. */
static void *busy_caller(void *varg) {
  busy_arg *a = varg;
  const uint64_t n = a->n ? a->n : 4;
  float *x = calloc(n, 4), *y = calloc(n, 4);
  if (!x || !y) a->bad++;
  accy_input ins[1] = {{x, (size_t)n * 4}};
  accy_output outs[1] = {{y, (size_t)n * 4}};
  while (x && y && !atomic_load(a->stop)) {
    if (accy_session_invoke(a->s, a->h, ins, 1, outs, 1) != ACCY_STATUS_OK) a->bad++;
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
  }
  free(x);
  free(y);
  return NULL;
}

static accy_handle compile_unary(accy_session *s, uint64_t n, uint16_t op) {
  accy__program p;
  accy__program_init(&p);
  accy__type t = vec(ACCY_DTYPE_F32, n);
  uint32_t x = add(&p, ACCY_OP_PARAMETER, t, NULL, 0, NULL, 0, "x");
  uint32_t a = add(&p, op, t, &x, 1, NULL, 0, NULL);
  uint32_t b = add(&p, ACCY_OP_NEGATE, t, &a, 1, NULL, 0, NULL);
  uint32_t c = add(&p, ACCY_OP_TANH, t, &b, 1, NULL, 0, NULL);
  out(&p, c, "y");
  void *bytes;
  size_t size;
  ck_assert_int_eq(accy__wire_encode(&p, &bytes, &size), ACCY_STATUS_OK);
  accy__program_free(&p);
  accy_handle h;
  ck_assert_int_eq(accy_session_compile(s, bytes, size, &h), ACCY_STATUS_OK);
  accy__free(bytes);
  return h;
}

static uint64_t blocks_of(accy_session *s, accy_handle h) {
  accy_program_stats ps;
  memset(&ps, 0, sizeof ps);
  ps.struct_size = sizeof ps;
  ck_assert_int_eq(accy_session_program_stats(s, h, &ps), ACCY_STATUS_OK);
  return ps.scratch_blocks;
}

/* Waits up to 5 s (a loaded machine) for program h to hold no scratch
 * block; returns whether it got there. */
static bool wait_no_blocks(accy_session *s, accy_handle h) {
  for (int i = 0; i < 500 && blocks_of(s, h) != 0; i++) {
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  return blocks_of(s, h) == 0;
}

START_TEST(test_idle_programs_give_back_scratch) {
  accy__sched_set_idle_ms(100);
  accy_session_options o = {.struct_size = sizeof o, .num_threads = 2};
  accy_session *s;
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_OK);
  /* idle: a pooled program (many tiles); busy: a 4-element one, inline. */
  accy_handle idle = compile_unary(s, 1 << 18, ACCY_OP_EXP);
  accy_handle busy = compile_unary(s, 4, ACCY_OP_ABS);
  float *in = calloc(1 << 18, 4), *res = calloc(1 << 18, 4);
  accy_input ins[1] = {{in, (size_t)4 << 18}};
  accy_output outs[1] = {{res, (size_t)4 << 18}};
  _Atomic int stop = 0;
  busy_arg ba = {s, busy, &stop, 0, 0};
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, busy_caller, &ba), 0);
  while (blocks_of(s, busy) == 0) sched_yield();
  ck_assert_int_eq(accy_session_invoke(s, idle, ins, 1, outs, 1), ACCY_STATUS_OK);
  ck_assert_uint_eq(blocks_of(s, idle), 1);
  accy_session_stats ss = {.struct_size = sizeof ss};
  ck_assert_int_eq(accy_session_stats_get(s, &ss), ACCY_STATUS_OK);
  const uint64_t held = ss.memory_held_bytes;
  /* Two periods of 100 ms, then the sweeps. */
  ck_assert(wait_no_blocks(s, idle));
  ck_assert_int_eq(accy_session_stats_get(s, &ss), ACCY_STATUS_OK);
  ck_assert_uint_lt(ss.memory_held_bytes, held);
  atomic_store(&stop, 1);
  pthread_join(th, NULL);
  ck_assert_int_eq(ba.bad, 0);
  ck_assert_uint_eq(blocks_of(s, busy), 1); /* called through every period */
  ck_assert_int_eq(accy_session_invoke(s, idle, ins, 1, outs, 1), ACCY_STATUS_OK);
  ck_assert_uint_eq(blocks_of(s, idle), 1);
  for (size_t i = 0; i < 4; i++) ck_assert_float_eq(res[i], tanhf(-1.0f));
  free(in);
  free(res);
  accy_session_destroy(s);
  accy__sched_set_idle_ms(2000);
}
END_TEST

/* The idle sweeps also run while other work keeps the pool busy, and start
 * again when a block is allocated after they had stopped. */
START_TEST(test_idle_program_trimmed_beside_a_busy_pool) {
  accy__sched_set_idle_ms(100);
  accy_session_options o = {.struct_size = sizeof o, .num_threads = 2};
  accy_session *s;
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_OK);
  const uint64_t n = 1 << 18;
  accy_handle idle = compile_unary(s, n, ACCY_OP_EXP);
  accy_handle busy = compile_unary(s, n, ACCY_OP_ABS); /* pooled too: the pool stays busy */
  accy_handle tiny = compile_unary(s, 4, ACCY_OP_ABS);  /* inline: never wakes the pool */
  float *in = calloc(n, 4), *res = calloc(n, 4);
  accy_input ins[1] = {{in, (size_t)n * 4}};
  accy_output outs[1] = {{res, (size_t)n * 4}};
  _Atomic int stop = 0;
  busy_arg ba = {s, busy, &stop, 0, n};
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, busy_caller, &ba), 0);
  while (blocks_of(s, busy) == 0) sched_yield();
  ck_assert_int_eq(accy_session_invoke(s, idle, ins, 1, outs, 1), ACCY_STATUS_OK);
  ck_assert_uint_eq(blocks_of(s, idle), 1);
  ck_assert(wait_no_blocks(s, idle));
  atomic_store(&stop, 1);
  pthread_join(th, NULL);
  ck_assert_int_eq(ba.bad, 0);
  /* Everything idle: the sweeps free the busy program's block too, then
   * stop. An inline program's first block (no pool work at all) arms them
   * again. */
  ck_assert(wait_no_blocks(s, busy));
  struct timespec ts = {0, 300000000}; /* three periods: the sweeps have stopped */
  nanosleep(&ts, NULL);
  float x[4] = {1, -2, 3, -4}, y[4];
  accy_input tin[1] = {{x, sizeof x}};
  accy_output tout[1] = {{y, sizeof y}};
  ck_assert_int_eq(accy_session_invoke(s, tiny, tin, 1, tout, 1), ACCY_STATUS_OK);
  ck_assert_uint_eq(blocks_of(s, tiny), 1);
  ck_assert(wait_no_blocks(s, tiny));
  for (size_t i = 0; i < 4; i++) ck_assert_float_eq(y[i], tanhf(-fabsf(x[i])));
  free(in);
  free(res);
  accy_session_destroy(s);
  accy__sched_set_idle_ms(2000);
}
END_TEST

static double process_cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* With the idle trim off, a block allocation (which arms the sweeps) must
 * not keep the pool's first worker awake: an idle pool burns no CPU. */
START_TEST(test_idle_pool_sleeps_with_trim_off) {
  accy__sched_set_idle_ms(0);
  accy_session_options o = {.struct_size = sizeof o, .num_threads = 2};
  accy_session *s;
  ck_assert_int_eq(accy_session_create(&o, &s), ACCY_STATUS_OK);
  const uint64_t n = 1 << 18;
  accy_handle h = compile_unary(s, n, ACCY_OP_EXP);
  float *in = calloc(n, 4), *res = calloc(n, 4);
  accy_input ins[1] = {{in, (size_t)n * 4}};
  accy_output outs[1] = {{res, (size_t)n * 4}};
  ck_assert_int_eq(accy_session_invoke(s, h, ins, 1, outs, 1), ACCY_STATUS_OK);
  ck_assert_uint_eq(blocks_of(s, h), 1);
  struct timespec ts = {0, 50000000}; /* past the spin window */
  nanosleep(&ts, NULL);
  const double cpu0 = process_cpu_seconds();
  ts.tv_nsec = 200000000;
  nanosleep(&ts, NULL);
  const double burned = process_cpu_seconds() - cpu0;
  ck_assert_msg(burned < 0.02, "idle pool burned %.1f ms of CPU in 200 ms", burned * 1e3);
  ck_assert_uint_eq(blocks_of(s, h), 1); /* and nothing trimmed it */
  free(in);
  free(res);
  accy_session_destroy(s);
  accy__sched_set_idle_ms(2000);
}
END_TEST

static Suite *compile_suite(void) {
  Suite *s = suite_create("compile");
  TCase *tc = tcase_create("locations");
  tcase_add_test(tc, test_locations);
  tcase_add_test(tc, test_update_in_place_only_when_sole_reader);
  tcase_add_test(tc, test_chain_reuses_two_buffers);
  suite_add_tcase(s, tc);
  tc = tcase_create("plans");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_random_plans_are_safe_and_correct, 0, 4);
  suite_add_tcase(s, tc);
  tc = tcase_create("reuse");
  tcase_add_loop_test(tc, test_reuse_planner_random, 0, 4);
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_compile_time_growth, 0, 3);
  suite_add_tcase(s, tc);
  tc = tcase_create("steady-state");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_steady_invokes_make_no_allocations, 0, 2);
  tcase_add_loop_test(tc, test_steady_concurrent_invokes_make_no_allocations, 0, 2);
  tcase_add_test(tc, test_idle_programs_give_back_scratch);
  tcase_add_test(tc, test_idle_program_trimmed_beside_a_busy_pool);
  tcase_add_test(tc, test_idle_pool_sleeps_with_trim_off);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(compile_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
