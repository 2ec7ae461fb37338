/* src/wire/encode.c: STUB, to be replaced. */
#include "src/internal.h"
#include "src/wire/wire.h"

accy_status accy__wire_encode(const accy__program *p, void **out_bytes, size_t *out_size) {
  (void)p; *out_bytes = NULL; *out_size = 0;
  return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "encode not implemented");
}
