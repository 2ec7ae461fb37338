/* src/wire/wire.h: wire format v1 <-> program IR. The decoder is the only
 * code that reads wire bytes; docs/wire-format.md is the specification. */
#ifndef ACCY_WIRE_WIRE_H
#define ACCY_WIRE_WIRE_H

#include "src/internal.h"
#include "src/ir/ir.h"

/* Decodes untrusted |size| bytes into *out (initialised by this call). Checks
 * structure only: magic, version, section lengths, counts against the bytes
 * that remain and the named limits, operand indices < node index, payload
 * length = dtype size x elements. Semantic checks are accy__verify's.
 * Returns OK, INVALID_PROGRAM, UNSUPPORTED_VERSION (cause names both
 * versions) or OUT_OF_MEMORY; on failure *out holds nothing to free. */
ACCY_NODISCARD accy_status accy__wire_decode(const void *bytes, size_t size, accy__program *out);

/* The lowest minor version of wire major 1 that defines op code |op|: 0 for
 * the ops of 1.0, 1 for scatter, sort and argsort (added by 1.1), UINT16_MAX
 * for a code no version defines. Decode refuses an op newer than the minor
 * the bytes declare; encode writes at least the highest minor of the ops the
 * program uses. */
uint16_t accy__wire_op_minor(uint32_t op);

/* Encodes |p| as canonical wire v1 bytes in a buffer from accy__malloc
 * (free with accy__free / accy_free). The header's minor is the larger of
 * p->wire_minor (what decoded bytes declared; 0 for built programs) and the
 * highest accy__wire_op_minor of its ops, so encode(decode(b)) == b for
 * canonical b, and a program without 1.1 ops stays readable by 1.0 readers. Returns OK, OUT_OF_MEMORY, or INVALID_PROGRAM (with a cause) for IR the
 * format cannot hold: a dtype above 255, rank above 8, a payload on a node
 * that is not a constant, or a size overflow. Encode does not verify. */
ACCY_NODISCARD accy_status accy__wire_encode(const accy__program *p, void **out_bytes,
                                             size_t *out_size);

#endif /* ACCY_WIRE_WIRE_H */
