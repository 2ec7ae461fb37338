/* src/kernels/kernels.c: dispatch from op to kernel family (the op table's
 * family column), and the copy kernel. */
#include "src/internal.h"

#include <stdarg.h>
#include <stdio.h>
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

/* The family prepare for node |node| (the family column of the op table,
 * src/ir/op_traits.h), or the cause when there is none. */
static accy_status prepare_family(const accy__op_trait *t, const accy__program *p, uint32_t node,
                                  accy__arena *arena, accy__kernel *k) {
  switch (t ? t->family : UINT8_MAX) {
    case ACCY__FAMILY_LEAF: return ACCY_STATUS_OK;
    case ACCY__FAMILY_ELEMENTWISE: return accy__kernel_prepare_elementwise(p, node, arena, k);
    case ACCY__FAMILY_DATA: return accy__kernel_prepare_data(p, node, arena, k);
    case ACCY__FAMILY_REDUCE: return accy__kernel_prepare_reduce(p, node, arena, k);
    case ACCY__FAMILY_SCATTER: return accy__kernel_prepare_scatter(p, node, arena, k);
    case ACCY__FAMILY_SORT: return accy__kernel_prepare_sort(p, node, arena, k);
    case ACCY__FAMILY_LINALG: return accy__kernel_prepare_linalg(p, node, NULL, arena, k);
    default: break;
  }
  return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "no kernel for op code %u", p->nodes[node].op);
}

void accy__kernel_set_how(accy__kernel *k, accy__arena *arena, const char *fmt, ...) {
  char buf[200];
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  const size_t len = (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
  char *d = accy__arena_alloc(arena, len + 1, 1);
  if (!d) return;
  memcpy(d, buf, len);
  d[len] = 0;
  k->how = d;
}

accy_status accy__kernel_prepare(const accy__program *p, uint32_t node, accy__arena *arena,
                                 accy__kernel *k) {
  memset(k, 0, sizeof *k);
  k->item_cost = 1;
  const accy__op_trait *t = accy__op_trait_of(p->nodes[node].op);
  /* The families say what is wrong; this is the first caller that knows
   * which node it is (src/base/status.h: one rule for context). */
  ACCY_TRY_CTX(prepare_family(t, p, node, arena, k), "node %u (%s): ", node, t ? t->name : "?");
  return ACCY_STATUS_OK;
}

accy_status accy__kernel_prepare_fused(const accy__program *p, uint32_t node,
                                       const accy__epilogue *ep, accy__arena *arena,
                                       accy__kernel *k) {
  memset(k, 0, sizeof *k);
  k->item_cost = 1;
  uint32_t axis;
  if (!ep || !ep->active || !accy__kernel_epilogue_axis(p, node, &axis))
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "node %u (%s): takes no fused epilogue", node,
                     accy__op_name(p->nodes[node].op));
  ACCY_TRY_CTX(accy__kernel_prepare_linalg(p, node, ep, arena, k), "node %u (%s): ", node,
               accy__op_name(p->nodes[node].op));
  return ACCY_STATUS_OK;
}
