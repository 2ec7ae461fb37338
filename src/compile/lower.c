/* src/compile/lower.c: rewrites that change a program's form (lower.h). */
#include "src/internal.h"

#include <stdlib.h>
#include <string.h>

#include "src/base/alloc.h"
#include "src/base/half.h"
#include "src/compile/fold.h"
#include "src/compile/lower.h"
#include "src/compile/simplify.h"
#include "src/compile/split.h"
#include "src/ir/verify.h"

#define NONE UINT32_MAX

static bool is_half(int32_t dt) { return dt == ACCY_DTYPE_F16 || dt == ACCY_DTYPE_BF16; }

static bool half_conv(const accy__node *nd) {
  return nd->op == ACCY_OP_CONVOLUTION && is_half(nd->type.dtype);
}

/* Whether axes |ax| (n of them) of |t| step with one stride in its dense
 * layout, as their flattened index does. */
static bool one_batch_stride(const accy__type *t, const int64_t *ax, uint32_t n) {
  int64_t st[ACCY_MAX_RANK], s = 0;
  accy__type_strides(t, st);
  bool any = false;
  for (uint32_t i = 0; i < n; i++) {
    const int64_t d = t->dims[ax[i]];
    if (d == 1) continue;
    if (any && s != st[ax[i]] * d) return false;
    s = st[ax[i]];
    any = true;
  }
  return true;
}

/* An f16 or bf16 dot_general whose batch axes take no one stride in an
 * operand (attention's heads read in place at a batch above 1): the half
 * GEMM's block providers need one, the f32 GEMM splits them in two sets. */
static bool half_dot_two_sets(const accy__program *p, const accy__node *nd) {
  if (nd->op != ACCY_OP_DOT_GENERAL || !is_half(nd->type.dtype) || nd->n_operands != 2 ||
      nd->n_attrs < 1 || nd->attrs[0] < 2 || nd->n_attrs < 1 + 2 * (uint64_t)nd->attrs[0])
    return false;
  const uint32_t nb = (uint32_t)nd->attrs[0];
  return !one_batch_stride(&p->nodes[nd->operands[0]].type, nd->attrs + 1, nb) ||
         !one_batch_stride(&p->nodes[nd->operands[1]].type, nd->attrs + 1 + nb, nb);
}

/* The ops computed in f32 between converts: half convolutions, half sum,
 * product, max and min pools (reduce_window folds each window in order at
 * every level, from the identity, in f32, and rounds once: the same bits
 * in f32), and f16 and bf16 products in two sets of batch axes (f16
 * products are exact in f32, so the f32 GEMM's one chain per output over k
 * in order gives the generic kernel's bits; where the GEMM splits a short
 * product into four chains, within docs/ops.md's bound. bf16 products are
 * exact unless they leave f32's normal range: the f32 product of two
 * widened bf16 operands scans each item, linalg.c's dot_item_scanned, and
 * sums the items that fail as the generic kernel does, so the same bits). */
static bool lowered(const accy__program *p, const accy__node *nd) {
  if (half_conv(nd) || half_dot_two_sets(p, nd)) return true;
  return nd->op == ACCY_OP_REDUCE_WINDOW && is_half(nd->type.dtype) && nd->n_attrs > 0 &&
         nd->attrs[0] >= ACCY_REDUCE_SUM && nd->attrs[0] <= ACCY_REDUCE_MIN;
}

static size_t name_len(const char *s) { return s ? strlen(s) : 0; }

/* The rewrite into |q| (initialised, empty). map[x]: x's node in q (NONE
 * for a constant that only half convolutions' filters read: it has only its
 * widened form), wide[x]: x's f32 form in q, or NONE. */
static accy_status lower_into(const accy__program *p, accy__program *q,
                              const uint8_t *widen_only, uint32_t *map, uint32_t *wide) {
  for (uint32_t i = 0; i < p->n_nodes; i++) map[i] = wide[i] = NONE;
  for (uint32_t i = 0; i < p->n_nodes; i++) {
    const accy__node *nd = &p->nodes[i];
    if (widen_only[i]) { /* a half constant, widened now */
      uint64_t n = 0;
      if (!accy__type_elements(&nd->type, &n))
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "node %u: too many elements", i);
      accy__type t = nd->type;
      t.dtype = ACCY_DTYPE_F32;
      ACCY_TRY(accy__program_add_node(q, ACCY_OP_CONSTANT, &t, NULL, 0, NULL, 0, nd->name,
                                      name_len(nd->name), NULL, n * sizeof(float), &wide[i]));
      float *d = q->nodes[wide[i]].payload;
      const uint16_t *s = nd->payload;
      for (uint64_t e = 0; e < n; e++)
        d[e] = nd->type.dtype == ACCY_DTYPE_F16 ? accy__f16_to_f32(s[e]) : accy__bf16_to_f32(s[e]);
      continue;
    }
    if (lowered(p, nd)) {
      uint32_t ops[2];
      for (uint32_t s = 0; s < nd->n_operands; s++) {
        const uint32_t x = nd->operands[s];
        if (wide[x] == NONE) {
          accy__type t = p->nodes[x].type;
          t.dtype = ACCY_DTYPE_F32;
          ACCY_TRY(accy__program_add_node(q, ACCY_OP_CONVERT, &t, &map[x], 1, NULL, 0, NULL, 0,
                                          NULL, 0, &wide[x]));
        }
        ops[s] = wide[x];
      }
      accy__type t = nd->type;
      t.dtype = ACCY_DTYPE_F32;
      uint32_t c32;
      ACCY_TRY(accy__program_add_node(q, nd->op, &t, ops, nd->n_operands, nd->attrs,
                                      nd->n_attrs, NULL, 0, NULL, 0, &c32));
      ACCY_TRY(accy__program_add_node(q, ACCY_OP_CONVERT, &nd->type, &c32, 1, NULL, 0, NULL, 0,
                                      NULL, 0, &map[i]));
      continue;
    }
    ACCY_TRY(accy__program_copy_node(q, p, i, map, &map[i]));
  }
  return accy__program_copy_outputs(q, p, map);
}

accy_status accy__lower(accy__program *p, uint64_t room, bool *changed) {
  *changed = false;
  const char *e = getenv("ACCY_LOWER");
  if (e && strcmp(e, "0") == 0) return ACCY_STATUS_OK;
  const uint32_t n = p->n_nodes;
  uint64_t ops = 0;
  for (uint32_t i = 0; i < n; i++) ops += lowered(p, &p->nodes[i]);
  /* Each lowered op adds at most three nodes (two converts in, one out);
   * past the limit the program keeps the generic kernels. */
  if (ops == 0 || (uint64_t)n + 3 * ops > ACCY_MAX_NODES) return ACCY_STATUS_OK;
  uint32_t *mem = accy__malloc((size_t)n * 2 * sizeof(uint32_t));
  uint8_t *use = accy__calloc(n, 1);
  if (!mem || !use) {
    accy__free(mem);
    accy__free(use);
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory lowering a program");
  }
  /* A half constant whose every reader is a half convolution's filter (and
   * which is no output) becomes its widened form alone: use[x] gathers 1
   * for a filter read, 2 for any other; then 1 marks the constants widened
   * alone. */
  for (uint32_t i = 0; i < n; i++) {
    const accy__node *nd = &p->nodes[i];
    for (uint32_t k = 0; k < nd->n_operands; k++)
      use[nd->operands[k]] |= half_conv(nd) && k == 1 ? 1u : 2u;
  }
  for (uint32_t o = 0; o < p->n_outputs; o++) use[p->outputs[o]] |= 2u;
  /* The widened constants' bytes (the half ones stay until the new program
   * is built, and the filters' packing at compile time needs as much
   * again): a program they would not leave room for keeps the generic
   * kernels. */
  uint64_t wide_bytes = 0;
  for (uint32_t i = 0; i < n; i++) {
    use[i] = use[i] == 1u && p->nodes[i].op == ACCY_OP_CONSTANT &&
             is_half(p->nodes[i].type.dtype);
    if (use[i]) wide_bytes += p->nodes[i].payload_bytes * 2;
  }
  if (wide_bytes > room / 2) {
    accy__free(mem);
    accy__free(use);
    return ACCY_STATUS_OK;
  }
  accy__program q;
  accy__program_init(&q);
  const accy_status st = lower_into(p, &q, use, mem, mem + n);
  accy__free(mem);
  accy__free(use);
  if (st != ACCY_STATUS_OK) {
    accy__program_free(&q);
    return st;
  }
  accy__program_free(p);
  *p = q;
  *changed = true;
  return ACCY_STATUS_OK;
}

accy_status accy__rewrite(accy__program *p, uint64_t room) {
  bool folded;
  ACCY_TRY(accy__fold_constants(p, room, &folded));
  if (folded) ACCY_TRY(accy__verify(p));
  bool split;
  ACCY_TRY(accy__split_products(p, &split));
  if (split) ACCY_TRY(accy__verify(p));
  if (accy__simplify(p)) ACCY_TRY(accy__verify(p));
  bool lowered;
  ACCY_TRY(accy__lower(p, room, &lowered));
  if (lowered) ACCY_TRY(accy__verify(p));
  return ACCY_STATUS_OK;
}
