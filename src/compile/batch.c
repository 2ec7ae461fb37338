/* src/compile/batch.c: the batch-axis analysis and the rebatched program
 * (batch.h). */
#include "src/internal.h"

#include <string.h>

#include "src/compile/batch.h"

enum { UNBATCHED = 0, BATCHED = 1 };

/* Whether |axes| (n entries) names axis 0. */
static bool has_axis0(const int64_t *axes, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (axes[i] == 0) return true;
  return false;
}

/* The lhs rows of a dot_general without batch axes ([0, 0, nc, lc x nc,
 * rc x nc]): the product of the lhs free extents. */
static uint64_t dot_rows(const accy__node *nd, const accy__type *lhs) {
  const int64_t *a = nd->attrs;
  const uint32_t nc = (uint32_t)a[1];
  uint64_t rows = 1;
  for (uint32_t ax = 0; ax < lhs->rank; ax++) {
    bool contracted = false;
    for (uint32_t j = 0; j < nc; j++) contracted |= a[2 + j] == (int64_t)ax;
    if (!contracted) rows *= (uint64_t)lhs->dims[ax];
  }
  return rows;
}

/* Whether an op that reads a batched operand keeps the batch axis at axis 0
 * of its result, each result row depending on the same rows of its batched
 * operands only. |batched| holds every earlier node's state. */
static bool keeps_rows(const accy__program *p, const accy__node *nd, const uint8_t *batched,
                       uint64_t n0) {
#define b(j) (batched[nd->operands[j]] == BATCHED)
  const accy__type *x = &p->nodes[nd->operands[0]].type;
  const uint32_t r = x->rank;
  const int64_t *a = nd->attrs;
  const accy__op_trait *tr = accy__op_trait_of(nd->op);
  if (tr->family == ACCY__FAMILY_ELEMENTWISE) {
    /* Every operand batched, except the scalars that select (pred) and
     * clamp (min, max) allow. */
    for (uint32_t i = 0; i < nd->n_operands; i++) {
      const bool scalar_ok = (nd->op == ACCY_OP_SELECT && i == 0) ||
                             (nd->op == ACCY_OP_CLAMP && i != 1);
      if (!b(i) && !(scalar_ok && p->nodes[nd->operands[i]].type.rank == 0)) return false;
    }
    return true;
  }
  switch (nd->op) {
    case ACCY_OP_RESHAPE: /* row-major: axis 0 kept means each row's elements kept */
      return b(0) && nd->type.rank >= 1 && (uint64_t)nd->type.dims[0] == n0;
    case ACCY_OP_BROADCAST_IN_DIM:
      return b(0) && r >= 1 && a[0] == 0 && (uint64_t)nd->type.dims[0] == n0;
    case ACCY_OP_TRANSPOSE:
      return b(0) && a[0] == 0;
    case ACCY_OP_SLICE: /* [start x r, limit x r, stride x r] */
      return b(0) && a[0] == 0 && (uint64_t)a[r] == n0 && a[2 * r] == 1;
    case ACCY_OP_PAD: /* [low x r, high x r, interior x r]; operand 1 the value */
      return b(0) && !b(1) && a[0] == 0 && a[r] == 0 && a[2 * r] == 0;
    case ACCY_OP_CONCATENATE:
      for (uint32_t i = 0; i < nd->n_operands; i++)
        if (!b(i)) return false;
      return a[0] != 0;
    case ACCY_OP_REVERSE:
      return b(0) && !has_axis0(a, nd->n_attrs);
    case ACCY_OP_REDUCE: /* [kind, dims...]: kept axes keep their order */
      return b(0) && !has_axis0(a + 1, nd->n_attrs - 1);
    case ACCY_OP_ARGMAX:
    case ACCY_OP_ARGMIN:
      return b(0) && a[0] != 0;
    case ACCY_OP_REDUCE_WINDOW: /* [kind, window, stride, pad_low, pad_high, base_dil, win_dil] */
      return b(0) && a[1] == 1 && a[1 + r] == 1 && a[1 + 2 * r] == 0 && a[1 + 3 * r] == 0 &&
             a[1 + 4 * r] == 1 && a[1 + 5 * r] == 1;
    case ACCY_OP_DOT_GENERAL: { /* [nb, lb x nb, rb x nb, nc, lc x nc, rc x nc] */
      const uint32_t nb = (uint32_t)a[0], nc = (uint32_t)a[1 + 2 * nb];
      if (nb == 0) /* result: lhs free axes, then rhs free axes */
        return b(0) && !b(1) && !has_axis0(a + 2, nc);
      /* result: batch axes first; the first pair must be both axes 0 */
      return b(0) && b(1) && a[1] == 0 && a[1 + nb] == 0;
    }
    default: /* convolution (its kernels choose by batch), gather, dynamic
                slices, scatter, sort, iota: not followed */
      return false;
  }
}

bool accy__batch_analyze(const accy__program *p, uint8_t *batched, accy__batch_info *info) {
  memset(info, 0, sizeof *info);
  if (p->n_params == 0 || p->n_outputs == 0) return false;
  const accy__type *t0 = &p->nodes[p->params[0]].type;
  if (t0->rank == 0 || t0->dims[0] < 1) return false;
  const uint64_t n0 = (uint64_t)t0->dims[0];
  uint64_t w_rows = UINT64_MAX, w_bytes = 0;
  for (uint32_t i = 0; i < p->n_nodes; i++) {
    const accy__node *nd = &p->nodes[i];
    if (nd->op == ACCY_OP_PARAMETER) {
      if (nd->type.rank == 0 || (uint64_t)nd->type.dims[0] != n0) return false;
      batched[i] = BATCHED;
      continue;
    }
    bool any = false;
    for (uint32_t j = 0; j < nd->n_operands; j++) any |= batched[nd->operands[j]] == BATCHED;
    if (!any) {
      /* Constants and what is computed from them alone are the same for
       * every row, except a broadcast that gives them the batch axis. */
      batched[i] = UNBATCHED;
      if (nd->op == ACCY_OP_BROADCAST_IN_DIM && nd->type.rank >= 1 &&
          (uint64_t)nd->type.dims[0] == n0) {
        const accy__type *x = &p->nodes[nd->operands[0]].type;
        bool ok = true;
        for (uint32_t ax = 0; ax < x->rank; ax++)
          if (nd->attrs[ax] == 0 && x->dims[ax] != 1) ok = false; /* varies along axis 0 */
        if (ok) batched[i] = BATCHED;
      }
      continue;
    }
    if (!keeps_rows(p, nd, batched, n0)) return false;
    batched[i] = BATCHED;
    if (nd->op == ACCY_OP_DOT_GENERAL && batched[nd->operands[1]] == UNBATCHED &&
        p->nodes[nd->operands[1]].op == ACCY_OP_CONSTANT) {
      const uint64_t rows = dot_rows(nd, &p->nodes[nd->operands[0]].type);
      const uint64_t bytes = p->nodes[nd->operands[1]].payload_bytes;
      if (rows < w_rows) w_rows = rows;
      if (bytes > w_bytes) w_bytes = bytes;
    }
  }
  for (uint32_t o = 0; o < p->n_outputs; o++)
    if (!batched[p->outputs[o]]) return false;
  info->rows = n0;
  info->weight_rows = w_bytes ? w_rows : 0;
  info->weight_bytes = w_bytes;
  return true;
}

accy_status accy__program_rebatch(const accy__program *p, const uint8_t *batched, uint64_t rows,
                                  uint64_t calls, accy__program *out) {
  accy__program_init(out);
  uint64_t big;
  if (!accy__mul_u64(rows, calls, &big) || big > (uint64_t)ACCY_MAX_DIM)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "%llu calls of %llu rows: axis 0 too long",
                     (unsigned long long)calls, (unsigned long long)rows);
  accy_status st = ACCY_STATUS_OK;
  for (uint32_t i = 0; i < p->n_nodes && st == ACCY_STATUS_OK; i++) {
    const accy__node *nd = &p->nodes[i];
    accy__type t = nd->type;
    if (batched[i]) t.dims[0] = (int64_t)big;
    uint32_t idx;
    st = accy__program_add_node(out, nd->op, &t, nd->operands, nd->n_operands, nd->attrs,
                                nd->n_attrs, nd->name, nd->name ? strlen(nd->name) : 0, NULL, 0,
                                &idx);
    if (st == ACCY_STATUS_OK && batched[i] && nd->op == ACCY_OP_SLICE) /* the whole axis 0 */
      out->nodes[idx].attrs[p->nodes[nd->operands[0]].type.rank] = (int64_t)big; /* limit[0] */
    if (st == ACCY_STATUS_OK && nd->payload_bytes) {
      out->nodes[idx].payload = nd->payload; /* borrowed: |p| outlives |out| */
      out->nodes[idx].payload_bytes = nd->payload_bytes;
    }
  }
  for (uint32_t o = 0; o < p->n_outputs && st == ACCY_STATUS_OK; o++)
    st = accy__program_add_output(out, p->outputs[o], p->output_names[o],
                                  strlen(p->output_names[o]));
  if (st != ACCY_STATUS_OK) accy__program_free(out);
  else out->wire_minor = p->wire_minor;
  return st;
}
