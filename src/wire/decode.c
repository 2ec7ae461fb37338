/* src/wire/decode.c: STUB, to be replaced. */
#include "src/internal.h"
#include "src/wire/wire.h"

accy_status accy__wire_decode(const void *bytes, size_t size, accy__program *out) {
  (void)bytes; (void)size;
  accy__program_init(out);
  return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "decode not implemented");
}
