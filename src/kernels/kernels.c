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

/* Kernel families: which file prepares an op. */
typedef enum family {
  FAMILY_NONE = 0,    /* parameter, constant: no kernel */
  FAMILY_ELEMENTWISE, /* src/kernels/elementwise.c */
  FAMILY_DATA,        /* src/kernels/data.c */
  FAMILY_REDUCE,      /* src/kernels/reduce.c */
  FAMILY_SCATTER_SORT,/* src/kernels/scatter_sort.c */
  FAMILY_LINALG,      /* src/kernels/linalg.c */
  FAMILY_UNKNOWN
} family;

static family family_of(uint16_t op) {
  switch (op) {
    case ACCY_OP_PARAMETER:
    case ACCY_OP_CONSTANT:
      return FAMILY_NONE;
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
      return FAMILY_ELEMENTWISE;
    case ACCY_OP_RESHAPE: case ACCY_OP_BROADCAST_IN_DIM: case ACCY_OP_TRANSPOSE:
    case ACCY_OP_SLICE: case ACCY_OP_PAD: case ACCY_OP_CONCATENATE: case ACCY_OP_REVERSE:
    case ACCY_OP_IOTA: case ACCY_OP_GATHER: case ACCY_OP_DYNAMIC_SLICE:
    case ACCY_OP_DYNAMIC_UPDATE_SLICE:
      return FAMILY_DATA;
    case ACCY_OP_REDUCE: case ACCY_OP_ARGMAX: case ACCY_OP_ARGMIN: case ACCY_OP_REDUCE_WINDOW:
      return FAMILY_REDUCE;
    case ACCY_OP_SCATTER: case ACCY_OP_SORT: case ACCY_OP_ARGSORT:
      return FAMILY_SCATTER_SORT;
    case ACCY_OP_DOT_GENERAL: case ACCY_OP_CONVOLUTION:
      return FAMILY_LINALG;
  }
  return FAMILY_UNKNOWN;
}

/* The family prepare for node |node|, or the cause when there is none. */
static accy_status prepare_family(family f, const accy__program *p, uint32_t node,
                                  accy__arena *arena, accy__kernel *k) {
  switch (f) {
    case FAMILY_NONE: return ACCY_STATUS_OK;
    case FAMILY_ELEMENTWISE: return accy__kernel_prepare_elementwise(p, node, arena, k);
    case FAMILY_DATA: return accy__kernel_prepare_data(p, node, arena, k);
    case FAMILY_REDUCE: return accy__kernel_prepare_reduce(p, node, arena, k);
    case FAMILY_SCATTER_SORT: return accy__kernel_prepare_scatter_sort(p, node, arena, k);
    case FAMILY_LINALG: return accy__kernel_prepare_linalg(p, node, arena, k);
    case FAMILY_UNKNOWN: break;
  }
  return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "no kernel for op code %u", p->nodes[node].op);
}

accy_status accy__kernel_prepare(const accy__program *p, uint32_t node, accy__arena *arena,
                                 accy__kernel *k) {
  memset(k, 0, sizeof *k);
  k->program = p;
  k->node = node;
  k->item_cost = 1;
  const uint16_t op = p->nodes[node].op;
  const family f = family_of(op);
  /* The elementwise and linalg families still write "node N (op): " into
   * their causes themselves; they get no second prefix. This exception goes
   * when they drop their own prefixes. */
  if (f == FAMILY_ELEMENTWISE || f == FAMILY_LINALG) return prepare_family(f, p, node, arena, k);
  /* The families say what is wrong; this is the first caller that knows
   * which node it is (src/base/status.h: one rule for context). */
  const char *name = accy__op_name(op);
  ACCY_TRY_CTX(prepare_family(f, p, node, arena, k), "node %u (%s): ", node, name ? name : "?");
  return ACCY_STATUS_OK;
}
