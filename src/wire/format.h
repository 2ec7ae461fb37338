/* src/wire/format.h: the constants of wire format v1. docs/wire-format.md is
 * the specification; this header only names its numbers. Nothing outside
 * src/wire/ and the wire tests should need these, except the header, which
 * is public. */
#ifndef ACCY_WIRE_FORMAT_H
#define ACCY_WIRE_FORMAT_H

/* The header (ACCY_WIRE_MAGIC "ACCY", u16 major, u16 minor:
 * ACCY_WIRE_HEADER_BYTES) is public, in accy/version.h, with
 * accy_wire_probe (probe.c). */
#include "accy/version.h"

/* Section header: u32 id, u64 body length in bytes. */
#define ACCY_WIRE_SECTION_HEADER_BYTES 12u

/* Section ids. Version 1.0 has exactly these two, in this order. A later
 * minor version may add ids; a reader of that minor knows them, and older
 * readers refuse the newer minor before they look at any section. */
#define ACCY_WIRE_SECTION_NODES 1u
#define ACCY_WIRE_SECTION_OUTPUTS 2u

/* The fewest bytes one node can occupy: u16 op, u8 dtype, u8 rank,
 * u32 n_operands, u32 n_attrs, u32 name length (rank 0, nothing else).
 * Counts are checked against the remaining bytes with these minimums
 * before anything is allocated. */
#define ACCY_WIRE_NODE_MIN_BYTES 16u
/* The fewest bytes one output can occupy: u32 node, u32 name length. */
#define ACCY_WIRE_OUTPUT_MIN_BYTES 8u

#endif /* ACCY_WIRE_FORMAT_H */
