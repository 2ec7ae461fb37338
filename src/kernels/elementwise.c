/* src/kernels/elementwise.c: STUB, to be replaced. */
#include "src/internal.h"
#include "src/kernels/kernels.h"

accy_status accy__kernel_prepare_elementwise(const accy__program *p, uint32_t node, accy__arena *arena,
                                 accy__kernel *k) {
  (void)arena; (void)k;
  return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "node %u (%s): not implemented", node,
                   accy__op_name(p->nodes[node].op));
}
