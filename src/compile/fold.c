/* src/compile/fold.c: constant folding at compile time (fold.h). */
#include "src/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/base/alloc.h"
#include "src/compile/compile.h"
#include "src/compile/fold.h"
#include "src/ir/op_traits.h"
#include "src/ir/verify.h"
#include "src/runtime/bind.h"

#define NONE UINT32_MAX

/* A node's fate: computed at run time; a constant; folded into a
 * constant (or dead); or folded values' operand but itself computed at run
 * time (kept_at_frontier), so also computed in the folding program. */
enum { RUNTIME = 0, CONSTANT, FOLDED, KEPT };

/* Values this small are folded even when they are larger than every
 * operand (a broadcast of eps to a BatchNorm's channels). */
#define FOLD_SMALL_BYTES ((uint64_t)64 << 10)

/* The most bytes of values computed at compile time (folded or kept): past
 * it a program keeps its computations, so that a hostile one of many
 * foldable nodes cannot make its compile slow. */
#define FOLD_MAX_BYTES ((uint64_t)256 << 20)

/* Ops whose work is linear in their operands' and result's bytes. */
static bool foldable_op(uint32_t op) {
  const accy__op_trait *t = accy__op_trait_of(op);
  if (!t) return false;
  switch (t->family) {
    case ACCY__FAMILY_ELEMENTWISE:
    case ACCY__FAMILY_DATA: return op != ACCY_OP_IOTA; /* no operand: nothing to save */
    case ACCY__FAMILY_REDUCE: return op != ACCY_OP_REDUCE_WINDOW; /* windows multiply the work */
    default: return false;
  }
}

/* The result |v| of node |i| stays a computation when it is what the kernels
 * would read (a frontier): a broadcast is cheaper in registers than as an
 * array, and a reshape of a constant is a view of it already. */
static bool kept_at_frontier(uint32_t op) {
  return op == ACCY_OP_BROADCAST_IN_DIM || op == ACCY_OP_RESHAPE;
}

/* Marks state[i] and front[i] (a value that a node computed at run time,
 * or an output, reads). */
static void mark(const accy__program *p, uint8_t *state, uint8_t *front) {
  const uint32_t n = p->n_nodes;
  for (uint32_t i = 0; i < n; i++) {
    const accy__node *nd = &p->nodes[i];
    state[i] = RUNTIME;
    front[i] = 0;
    if (nd->op == ACCY_OP_CONSTANT) {
      state[i] = CONSTANT;
      continue;
    }
    if (!nd->n_operands || !foldable_op(nd->op)) continue;
    uint64_t widest = 0;
    bool all = true;
    for (uint32_t k = 0; k < nd->n_operands && all; k++) {
      const uint32_t x = nd->operands[k];
      all = state[x] == CONSTANT || state[x] == FOLDED;
      const uint64_t b = accy__type_bytes(&p->nodes[x].type);
      if (b > widest) widest = b;
    }
    const uint64_t bytes = accy__type_bytes(&nd->type);
    if (all && (bytes <= FOLD_SMALL_BYTES || bytes <= widest)) state[i] = FOLDED;
  }
  /* Readers come after their operands: walking back, every reader of i
   * has been settled when i is reached. */
  for (uint32_t o = 0; o < p->n_outputs; o++) front[p->outputs[o]] = 1;
  for (uint32_t i = n; i-- > 0;) {
    const accy__node *nd = &p->nodes[i];
    if (state[i] == FOLDED && front[i] && kept_at_frontier(nd->op)) state[i] = KEPT;
    if (state[i] != RUNTIME && state[i] != KEPT) continue;
    for (uint32_t k = 0; k < nd->n_operands; k++) front[nd->operands[k]] = 1;
  }
}

/* The program of the folded values: the constants they read, themselves,
 * and as outputs those at the frontier whose rank among them is in
 * [lo, hi), in order. sub_of[i] is i's node in |sub|. */
static accy_status build_sub(const accy__program *p, const uint8_t *state, const uint8_t *front,
                             uint32_t lo, uint32_t hi, accy__program *sub, uint32_t *sub_of) {
  uint32_t rank = 0;
  for (uint32_t i = 0; i < p->n_nodes; i++) {
    const accy__node *nd = &p->nodes[i];
    sub_of[i] = NONE;
    if (state[i] != FOLDED && state[i] != KEPT) continue;
    for (uint32_t k = 0; k < nd->n_operands; k++) {
      const uint32_t x = nd->operands[k];
      if (sub_of[x] == NONE) /* a constant, copied once */
        ACCY_TRY(accy__program_copy_node(sub, p, x, sub_of, &sub_of[x]));
    }
    ACCY_TRY(accy__program_copy_node(sub, p, i, sub_of, &sub_of[i]));
    if (state[i] != FOLDED || !front[i]) continue;
    if (rank >= lo && rank < hi) {
      char name[16];
      const int len = snprintf(name, sizeof name, "v%u", rank);
      ACCY_TRY(accy__program_add_output(sub, sub_of[i], name, (size_t)len));
    }
    rank++;
  }
  sub->wire_minor = p->wire_minor;
  return ACCY_STATUS_OK;
}

/* The folded program: |p| with each frontier value a constant (its payload
 * left for the caller to fill: at[j] is the node of sub's output j), the
 * other folded values and the constants only they read gone. */
static accy_status build_folded(const accy__program *p, const uint8_t *state,
                                const uint8_t *front, accy__program *q, uint32_t *map,
                                uint32_t *at) {
  uint32_t n_at = 0;
  for (uint32_t i = 0; i < p->n_nodes; i++) {
    const accy__node *nd = &p->nodes[i];
    map[i] = NONE;
    if (state[i] == FOLDED) {
      if (!front[i]) continue;
      char name[32];
      const char *nm = nd->name;
      if (!nm || !nm[0]) {
        snprintf(name, sizeof name, "folded.%u", i);
        nm = name;
      }
      ACCY_TRY(accy__program_add_node(q, ACCY_OP_CONSTANT, &nd->type, NULL, 0, NULL, 0, nm,
                                      strlen(nm), NULL, accy__type_bytes(&nd->type), &map[i]));
      at[n_at++] = map[i];
      continue;
    }
    if (state[i] == CONSTANT && !front[i]) continue; /* read by folded values only */
    ACCY_TRY(accy__program_copy_node(q, p, i, map, &map[i]));
  }
  return accy__program_copy_outputs(q, p, map);
}

/* Runs |sub| once, inline, its outputs written into the payloads of q's
 * nodes at[]. A plan whose scratch is over |room| fails (COMPILE_FAILED:
 * the caller then keeps the program as it is). */
static accy_status run_sub(const accy__program *sub, accy__program *q, const uint32_t *at,
                           uint64_t room) {
  accy__plan plan;
  ACCY_TRY(accy__compile(sub, 1, &plan));
  if (plan.block_bytes > room) {
    accy__plan_free(&plan);
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "folding would need %llu bytes of scratch",
                     (unsigned long long)plan.block_bytes);
  }
  accy_output *outs = accy__malloc((size_t)sub->n_outputs * sizeof *outs);
  void *block = accy__aligned_alloc((size_t)plan.block_bytes + 64, 64);
  if (!outs || !block) {
    accy__free(outs);
    accy__free_aligned(block);
    accy__plan_free(&plan);
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory folding constants");
  }
  for (uint32_t j = 0; j < sub->n_outputs; j++)
    outs[j] = (accy_output){q->nodes[at[j]].payload, (size_t)q->nodes[at[j]].payload_bytes};
  accy__plan_run(&plan, NULL, 1, block, NULL, outs);
  accy__free(outs);
  accy__free_aligned(block);
  accy__plan_free(&plan);
  return ACCY_STATUS_OK;
}

accy_status accy__fold_constants(accy__program *p, uint64_t room, bool *changed) {
  *changed = false;
  const char *e = getenv("ACCY_SIMPLIFY");
  if (e && strcmp(e, "0") == 0) return ACCY_STATUS_OK;
  const uint32_t n = p->n_nodes;
  if (!n) return ACCY_STATUS_OK;
  uint8_t *state = accy__malloc((size_t)n * 2);
  if (!state) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory folding constants");
  uint8_t *front = state + n;
  mark(p, state, front);
  /* The bytes of the new constants, and of the constants after: a program
   * that would pass the limit, or take over half the room the session has
   * left, keeps its computations. */
  uint64_t added = 0, total = 0, computed = 0;
  uint32_t fronts = 0;
  bool any_folded = false;
  for (uint32_t i = 0; i < n; i++) {
    const accy__node *nd = &p->nodes[i];
    any_folded |= state[i] == FOLDED;
    if (state[i] == FOLDED || state[i] == KEPT) computed += accy__type_bytes(&nd->type);
    if (state[i] == FOLDED && front[i]) {
      added += accy__type_bytes(&nd->type);
      fronts++;
    }
    if (state[i] == CONSTANT && front[i]) total += nd->payload_bytes;
  }
  if (!any_folded || added > room / 2 || total + added > ACCY_MAX_CONSTANT_BYTES ||
      computed > FOLD_MAX_BYTES) {
    accy__free(state);
    return ACCY_STATUS_OK;
  }
  uint32_t *mem = accy__malloc(((size_t)n * 2 + fronts + 1) * sizeof(uint32_t));
  if (!mem) {
    accy__free(state);
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory folding constants");
  }
  accy__program q;
  accy__program_init(&q);
  accy_status st = build_folded(p, state, front, &q, mem, mem + 2 * (size_t)n);
  /* The frontier values, computed ACCY_MAX_OUTPUTS at a time. */
  for (uint32_t lo = 0; st == ACCY_STATUS_OK && lo < fronts; lo += ACCY_MAX_OUTPUTS) {
    accy__program sub;
    accy__program_init(&sub);
    const uint32_t hi = fronts - lo > ACCY_MAX_OUTPUTS ? lo + ACCY_MAX_OUTPUTS : fronts;
    st = build_sub(p, state, front, lo, hi, &sub, mem);
    if (st == ACCY_STATUS_OK) st = accy__verify(&sub);
    if (st == ACCY_STATUS_OK) st = run_sub(&sub, &q, mem + 2 * (size_t)n + lo, room / 2);
    accy__program_free(&sub);
  }
  accy__free(mem);
  accy__free(state);
  if (st != ACCY_STATUS_OK) {
    accy__program_free(&q);
    /* Only memory can fail a valid program's folding; anything else (a
     * limit the pieces meet) leaves the program as it is. */
    return st == ACCY_STATUS_OUT_OF_MEMORY ? st : ACCY_STATUS_OK;
  }
  accy__program_free(p);
  *p = q;
  *changed = true;
  return ACCY_STATUS_OK;
}
