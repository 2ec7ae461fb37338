/* src/kernels/kernels.c: dispatch from op to kernel family, and the copy
 * kernel. */
#include "src/internal.h"

#include <string.h>

#include "src/kernels/kernels.h"

static void copy_tile(const accy__kernel *k, void *const *bufs, uint64_t begin, uint64_t end) {
  (void)k;
  memcpy((char *)bufs[0] + begin, (const char *)bufs[1] + begin, (size_t)(end - begin));
}

void accy__kernel_copy(uint64_t bytes, accy__kernel *k) {
  memset(k, 0, sizeof *k);
  k->run = copy_tile;
  k->n_items = bytes;
  k->item_cost = 1;
}

accy_status accy__kernel_prepare(const accy__program *p, uint32_t node, accy__arena *arena,
                                 accy__kernel *k) {
  memset(k, 0, sizeof *k);
  k->program = p;
  k->node = node;
  k->item_cost = 1;
  switch (p->nodes[node].op) {
    case ACCY_OP_PARAMETER:
    case ACCY_OP_CONSTANT:
      break;
    case ACCY_OP_ABS: case ACCY_OP_NEGATE: case ACCY_OP_SIGN: case ACCY_OP_FLOOR:
    case ACCY_OP_CEIL: case ACCY_OP_ROUND_NEAREST_EVEN: case ACCY_OP_SQRT: case ACCY_OP_RSQRT:
    case ACCY_OP_EXP: case ACCY_OP_EXPM1: case ACCY_OP_LOG: case ACCY_OP_LOG1P:
    case ACCY_OP_LOGISTIC: case ACCY_OP_TANH: case ACCY_OP_ERF: case ACCY_OP_SIN:
    case ACCY_OP_COS: case ACCY_OP_TAN: case ACCY_OP_NOT: case ACCY_OP_IS_FINITE:
    case ACCY_OP_ADD: case ACCY_OP_SUBTRACT: case ACCY_OP_MULTIPLY: case ACCY_OP_DIVIDE:
    case ACCY_OP_REMAINDER: case ACCY_OP_POWER: case ACCY_OP_MAXIMUM: case ACCY_OP_MINIMUM:
    case ACCY_OP_ATAN2: case ACCY_OP_AND: case ACCY_OP_OR: case ACCY_OP_XOR:
    case ACCY_OP_SHIFT_LEFT: case ACCY_OP_SHIFT_RIGHT_ARITHMETIC:
    case ACCY_OP_SHIFT_RIGHT_LOGICAL: case ACCY_OP_COMPARE: case ACCY_OP_SELECT:
    case ACCY_OP_CLAMP: case ACCY_OP_CONVERT:
      return accy__kernel_prepare_elementwise(p, node, arena, k);
    case ACCY_OP_RESHAPE: case ACCY_OP_BROADCAST_IN_DIM: case ACCY_OP_TRANSPOSE:
    case ACCY_OP_SLICE: case ACCY_OP_PAD: case ACCY_OP_CONCATENATE: case ACCY_OP_REVERSE:
    case ACCY_OP_IOTA: case ACCY_OP_GATHER: case ACCY_OP_DYNAMIC_SLICE:
    case ACCY_OP_DYNAMIC_UPDATE_SLICE:
      return accy__kernel_prepare_data(p, node, arena, k);
    case ACCY_OP_REDUCE: case ACCY_OP_ARGMAX: case ACCY_OP_ARGMIN: case ACCY_OP_REDUCE_WINDOW:
      return accy__kernel_prepare_reduce(p, node, arena, k);
    case ACCY_OP_SCATTER: case ACCY_OP_SORT: case ACCY_OP_ARGSORT:
      return accy__kernel_prepare_scatter_sort(p, node, arena, k);
    case ACCY_OP_DOT_GENERAL: case ACCY_OP_CONVOLUTION:
      return accy__kernel_prepare_linalg(p, node, NULL, arena, k);
  }
  return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "no kernel for op %u", p->nodes[node].op);
}

accy_status accy__kernel_prepare_fused(const accy__program *p, uint32_t node,
                                       const accy__epilogue *ep, accy__arena *arena,
                                       accy__kernel *k) {
  memset(k, 0, sizeof *k);
  k->program = p;
  k->node = node;
  k->item_cost = 1;
  uint32_t axis;
  if (!ep || !ep->active || !accy__kernel_epilogue_axis(p, node, &axis))
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "node %u (%s): takes no fused epilogue", node,
                     accy__op_name(p->nodes[node].op));
  return accy__kernel_prepare_linalg(p, node, ep, arena, k);
}
