/* src/kernels/elementwise.c: unary and binary elementwise ops, compare,
 * select, clamp and convert (semantics: docs/ops.md): the IR side. The
 * loops themselves are microkernels of the ISA level (uk/ew_body.h, one per
 * (op, dtype) pair), picked here once at prepare time.
 *
 * One item is one result element; the operands of a node have the result's
 * dims (select's pred and clamp's bounds may be scalars), so a tile is a
 * plain index range over flat arrays and every element is computed alone,
 * which makes any split bit-identical. */
#include "src/internal.h"

#include <math.h>
#include <string.h>

#include "src/base/half.h"
#include "src/kernels/kernels.h"

#include "src/kernels/uk/uk.h"

/* Per-kernel data: the microkernel, operand strides (1: the operand has the
 * result's dims, 0: a scalar broadcast to every element) and element sizes
 * of the result (0) and the operands (1..3). */
typedef struct ew_params {
  accy__uk_ew_fn fn;
  uint32_t arity;
  size_t stride[4];
  size_t elem_bytes[4];
} ew_params;

static void tile_ew(const accy__kernel *k, void *const *bufs, uint64_t begin, uint64_t end) {
  const ew_params *p = k->params;
  const void *x[3] = {NULL, NULL, NULL};
  for (uint32_t i = 0; i < p->arity; i++)
    x[i] = (const char *)bufs[1 + i] + begin * p->stride[1 + i] * p->elem_bytes[1 + i];
  p->fn((size_t)(end - begin), (char *)bufs[0] + begin * p->elem_bytes[0], x[0], x[1], x[2],
        p->stride[1], p->stride[3]);
}

static void tile_select_scalar(const accy__kernel *k, void *const *bufs, uint64_t begin,
                               uint64_t end) {
  const ew_params *pp = (const ew_params *)k->params;
  const char *src = (const char *)(*(const uint8_t *)bufs[1] ? bufs[2] : bufs[3]);
  size_t es = pp->elem_bytes[0];
  memcpy((char *)bufs[0] + begin * es, src + begin * es, (size_t)(end - begin) * es);
}

/* ---- prepare ------------------------------------------------------------------ */

/* Rough element operations per element, for tile sizing only. */
static uint64_t op_cost(uint16_t op) {
  switch (op) {
    case ACCY_OP_DIVIDE: case ACCY_OP_REMAINDER: case ACCY_OP_SQRT: case ACCY_OP_RSQRT:
      return 4;
    case ACCY_OP_EXP: case ACCY_OP_EXPM1: case ACCY_OP_LOG: case ACCY_OP_LOG1P:
    case ACCY_OP_LOGISTIC: case ACCY_OP_TANH: case ACCY_OP_ERF: case ACCY_OP_SIN:
    case ACCY_OP_COS: case ACCY_OP_TAN: case ACCY_OP_ATAN2:
      return 20;
    case ACCY_OP_POWER:
      return 40;
    default:
      return 1;
  }
}

static int op_arity(uint16_t op) {
  switch (op) {
    case ACCY_OP_SELECT: case ACCY_OP_CLAMP:
      return 3;
    case ACCY_OP_ABS: case ACCY_OP_NEGATE: case ACCY_OP_SIGN: case ACCY_OP_FLOOR:
    case ACCY_OP_CEIL: case ACCY_OP_ROUND_NEAREST_EVEN: case ACCY_OP_SQRT: case ACCY_OP_RSQRT:
    case ACCY_OP_EXP: case ACCY_OP_EXPM1: case ACCY_OP_LOG: case ACCY_OP_LOG1P:
    case ACCY_OP_LOGISTIC: case ACCY_OP_TANH: case ACCY_OP_ERF: case ACCY_OP_SIN:
    case ACCY_OP_COS: case ACCY_OP_TAN: case ACCY_OP_NOT: case ACCY_OP_IS_FINITE:
    case ACCY_OP_CONVERT:
      return 1;
    default:
      return 2;
  }
}

/* Checks operand |i| of the node: dtype |dtype| and either the result's
 * element count |n| or (when |scalar_ok|) rank 0. The verifier guarantees
 * this; checking here keeps a bad program from turning into out-of-bounds
 * reads. Sets *stride to 0 for a scalar, else 1. */
static accy_status check_operand(const accy__program *p, uint32_t node, uint32_t i,
                                 int32_t dtype, uint64_t n, bool scalar_ok, size_t *stride) {
  const accy__node *nd = &p->nodes[node];
  uint32_t idx = nd->operands[i];
  if (idx >= node)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "operand %u is node %u, not earlier", i, idx);
  const accy__type *t = &p->nodes[idx].type;
  if (t->dtype != dtype)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                     "operand %u has dtype %s, expected %s", i,
                     accy__dtype_name(t->dtype), accy__dtype_name(dtype));
  if (scalar_ok && t->rank == 0) {
    *stride = 0;
    return ACCY_STATUS_OK;
  }
  uint64_t m;
  if (!accy__type_elements(t, &m) || m != n)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                     "operand %u has %llu elements, result has %llu",
                     i, (unsigned long long)(accy__type_elements(t, &m) ? m : 0),
                     (unsigned long long)n);
  *stride = 1;
  return ACCY_STATUS_OK;
}

accy_status accy__kernel_prepare_elementwise(const accy__program *p, uint32_t node,
                                             accy__arena *arena, accy__kernel *k) {
  const accy__node *nd = &p->nodes[node];
  const uint16_t op = nd->op;
  const int32_t rdt = nd->type.dtype;
  uint64_t n;
  if (!accy__type_elements(&nd->type, &n))
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                     "result has more than ACCY_MAX_ELEMENTS elements");
  const int arity = op_arity(op);
  if (nd->n_operands != (uint32_t)arity)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "%u operands, expected %d", nd->n_operands, arity);

  /* The dtype the op computes on: the value operand's. */
  const uint32_t value_operand = op == ACCY_OP_SELECT || op == ACCY_OP_CLAMP ? 1 : 0;
  if (nd->operands[value_operand] >= node)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "operand %u is node %u, not earlier",
                     value_operand, nd->operands[value_operand]);
  const int32_t dt = p->nodes[nd->operands[value_operand]].type.dtype;
  if (!accy__dtype_valid(dt) || !accy__dtype_valid(rdt))
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "no kernel for dtype %d to %d", (int)dt, (int)rdt);

  ew_params prm;
  memset(&prm, 0, sizeof prm);
  prm.arity = (uint32_t)arity;
  for (uint32_t i = 0; i < (uint32_t)arity; i++) {
    const bool is_pred = op == ACCY_OP_SELECT && i == 0;
    const bool scalar_ok = is_pred || (op == ACCY_OP_CLAMP && i != 1);
    ACCY_TRY(check_operand(p, node, i, is_pred ? ACCY_DTYPE_BOOL : dt, n, scalar_ok,
                           &prm.stride[1 + i]));
    prm.elem_bytes[1 + i] = accy__dtype_size(is_pred ? ACCY_DTYPE_BOOL : dt);
  }
  prm.elem_bytes[0] = accy__dtype_size(rdt);
  const accy__uk_ew *uk = &accy__uk_get()->ew;

  accy__uk_ew_fn fn = NULL;
  accy__tile_fn tile = tile_ew;
  int32_t want_rdt = dt;
  switch (op) {
    case ACCY_OP_CONVERT:
      want_rdt = rdt;
      fn = uk->convert(dt, rdt);
      break;
    case ACCY_OP_COMPARE:
      want_rdt = ACCY_DTYPE_BOOL;
      if (nd->n_attrs < 1 || nd->attrs[0] < ACCY_COMPARE_EQ || nd->attrs[0] > ACCY_COMPARE_GE)
        return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "bad direction %lld",
                         nd->n_attrs < 1 ? -1LL : (long long)nd->attrs[0]);
      fn = uk->compare(nd->attrs[0], dt);
      break;
    case ACCY_OP_SELECT:
      fn = uk->select(accy__dtype_size(dt));
      if (prm.stride[1] == 0) tile = tile_select_scalar;
      break;
    case ACCY_OP_IS_FINITE:
      want_rdt = ACCY_DTYPE_BOOL;
      fn = uk->map(op, dt);
      break;
    default:
      fn = uk->map(op, dt);
      break;
  }
  if (fn == NULL) {
    if (op == ACCY_OP_CONVERT)
      return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "no kernel for %s to %s",
                       accy__dtype_name(dt), accy__dtype_name(rdt));
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "no kernel for %s",
                     accy__dtype_name(dt));
  }
  if (rdt != want_rdt)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "result dtype %s, expected %s",
                     accy__dtype_name(rdt), accy__dtype_name(want_rdt));

  prm.fn = fn;
  ew_params *pp = (ew_params *)accy__arena_alloc(arena, sizeof *pp, _Alignof(ew_params));
  if (pp == NULL)
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "kernel parameters");
  *pp = prm;

  uint64_t cost = op_cost(op);
  if (dt == ACCY_DTYPE_F16 || dt == ACCY_DTYPE_BF16 || rdt == ACCY_DTYPE_F16 ||
      rdt == ACCY_DTYPE_BF16)
    cost += 2; /* the widening load and the rounding store */
  k->run = tile;
  k->n_items = n;
  k->item_cost = cost;
  k->params = pp;
  return ACCY_STATUS_OK;
}
