/* src/wire/probe.c: accy_wire_probe (accy/version.h), the public test for
 * "are these wire bytes?" that tools use to tell wire bytes from program
 * text without decoding anything. */
#include "src/internal.h"

#include <string.h>

#include "src/wire/format.h"

static uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }

accy_status accy_wire_probe(const void *bytes, size_t size, uint32_t *major, uint32_t *minor) {
  if (major) *major = 0;
  if (minor) *minor = 0;
  if (!bytes && size)
    return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "accy_wire_probe: bytes is NULL with size %zu",
                     size);
  const uint8_t *p = bytes;
  if (size < ACCY_WIRE_MAGIC_BYTES || memcmp(p, ACCY_WIRE_MAGIC, ACCY_WIRE_MAGIC_BYTES) != 0)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "not wire bytes: they do not start with the magic \"%s\"", ACCY_WIRE_MAGIC);
  if (size >= ACCY_WIRE_HEADER_BYTES) {
    if (major) *major = le16(p + 4);
    if (minor) *minor = le16(p + 6);
  }
  return ACCY_STATUS_OK;
}
