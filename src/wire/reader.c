/* src/wire/reader.c: the bounds-checked cursor (see reader.h). All reads of
 * wire bytes go through the one function |take| below, so there is a single
 * place where a length is compared with what remains. */
#include "src/internal.h"

#include <string.h>

#include "src/wire/reader.h"

void accy__reader_init(accy__reader *r, const void *data, size_t length) {
  r->data = data;
  r->length = data ? length : 0;
  r->offset = 0;
  r->base = 0;
}

/* Consumes |n| bytes, or fails without moving. |what| names the read for the
 * cause ("u32", "12 bytes"). */
static accy_status take(accy__reader *r, uint64_t n, const char *what, const uint8_t **out) {
  size_t left = accy__reader_remaining(r);
  /* Compare with what is left rather than forming offset + n, which could
   * wrap for a hostile n. */
  if (ACCY_UNLIKELY(n > left))
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "truncated: %s needs %llu bytes at offset %zu, %zu remain", what,
                     (unsigned long long)n, accy__reader_position(r), left);
  /* A reader over NULL (length 0) hands out NULL: NULL + 0 is undefined. */
  *out = r->data ? r->data + r->offset : NULL;
  r->offset += (size_t)n;
  return ACCY_STATUS_OK;
}

accy_status accy__reader_u8(accy__reader *r, uint8_t *out) {
  const uint8_t *p = NULL;
  *out = 0;
  ACCY_TRY(take(r, 1, "u8", &p));
  *out = p[0];
  return ACCY_STATUS_OK;
}

accy_status accy__reader_u16le(accy__reader *r, uint16_t *out) {
  const uint8_t *p = NULL;
  *out = 0;
  ACCY_TRY(take(r, 2, "u16", &p));
  *out = (uint16_t)(p[0] | (unsigned)p[1] << 8);
  return ACCY_STATUS_OK;
}

accy_status accy__reader_u32le(accy__reader *r, uint32_t *out) {
  const uint8_t *p = NULL;
  *out = 0;
  ACCY_TRY(take(r, 4, "u32", &p));
  *out = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  return ACCY_STATUS_OK;
}

accy_status accy__reader_u64le(accy__reader *r, uint64_t *out) {
  const uint8_t *p = NULL;
  *out = 0;
  ACCY_TRY(take(r, 8, "u64", &p));
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  *out = v;
  return ACCY_STATUS_OK;
}

accy_status accy__reader_i64le(accy__reader *r, int64_t *out) {
  uint64_t u;
  *out = 0;
  ACCY_TRY(accy__reader_u64le(r, &u));
  /* memcpy reinterprets the bit pattern without the implementation-defined
   * conversion of an out-of-range unsigned value. */
  memcpy(out, &u, sizeof u);
  return ACCY_STATUS_OK;
}

accy_status accy__reader_bytes(accy__reader *r, uint64_t n, const uint8_t **out) {
  const uint8_t *p = NULL;
  *out = NULL;
  ACCY_TRY(take(r, n, "byte string", &p));
  *out = p;
  return ACCY_STATUS_OK;
}

accy_status accy__reader_sub(accy__reader *r, uint64_t n, accy__reader *out) {
  const uint8_t *p = NULL;
  size_t base = accy__reader_position(r);
  accy__reader_init(out, NULL, 0);
  out->base = base;
  ACCY_TRY(take(r, n, "section", &p));
  out->data = p;
  out->length = (size_t)n;
  return ACCY_STATUS_OK;
}

accy_status accy__reader_check_count(const accy__reader *r, uint64_t count,
                                     uint64_t unit_bytes) {
  size_t left = accy__reader_remaining(r);
  if (unit_bytes == 0) unit_bytes = 1;
  /* Division, not count * unit_bytes: the product of a hostile count can
   * overflow and pass. */
  if (ACCY_UNLIKELY(count > left / unit_bytes))
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "count %llu needs at least %llu bytes each at offset %zu, but only %zu "
                     "bytes remain",
                     (unsigned long long)count, (unsigned long long)unit_bytes,
                     accy__reader_position(r), left);
  return ACCY_STATUS_OK;
}

accy_status accy__reader_expect_end(const accy__reader *r) {
  size_t left = accy__reader_remaining(r);
  if (ACCY_UNLIKELY(left != 0))
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "%zu unexpected trailing bytes at offset %zu",
                     left, accy__reader_position(r));
  return ACCY_STATUS_OK;
}
