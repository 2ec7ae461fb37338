/* src/ir/verify.c: STUB, to be replaced. */
#include "src/internal.h"
#include "src/ir/verify.h"

accy_status accy__verify(const accy__program *p) {
  (void)p;
  return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "verify not implemented");
}

accy_status accy__infer_type(const accy__program *p, uint16_t op, const uint32_t *operands,
                             uint32_t n_operands, const int64_t *attrs, uint32_t n_attrs,
                             const accy__type *declared, accy__type *out) {
  (void)p; (void)op; (void)operands; (void)n_operands; (void)attrs; (void)n_attrs;
  if (declared) { *out = *declared; return ACCY_STATUS_OK; }
  return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "infer not implemented");
}
