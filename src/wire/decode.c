/* src/wire/decode.c: untrusted wire v1 bytes -> program IR.
 *
 * This is the only code that reads wire bytes (docs/wire-format.md is the
 * specification). It checks structure only: framing, counts against both the
 * bytes that remain and the named limits, op codes and dtypes the format
 * defines, SSA operand order, and constant payload sizes. Whether a program
 * means something is accy__verify's business.
 *
 * Every count is checked against what remains in its section before anything
 * sized by it is allocated, so a short input claiming a huge count fails
 * after a handful of byte reads. Causes name the node or output, the field,
 * the value, the limit and the absolute byte offset. */
#include "src/internal.h"

#include <string.h>

#include "src/base/limits.h"
#include "src/wire/format.h"
#include "src/wire/reader.h"
#include "src/wire/wire.h"

/* Reader calls run under ACCY_TRY_CTX: on failure "<where>: " goes in front
 * of the reader's cause (which already holds the offset and the byte
 * counts). */

/* Scratch for one node's variable-length fields. The limits bound them, so
 * they live on the decoder's stack (6 KiB) instead of being allocated. */
typedef struct decode_scratch {
  uint32_t operands[ACCY_MAX_OPERANDS];
  int64_t attrs[ACCY_MAX_ATTRS];
} decode_scratch;

/* ---- strings ------------------------------------------------------------- */

/* Reads a u32-length-prefixed name: at most ACCY_MAX_NAME_BYTES, no NUL.
 * |what| and |index| name the owner for causes ("node", 3). */
static accy_status read_name(accy__reader *r, const char *what, uint32_t index,
                             const uint8_t **out, uint32_t *out_len) {
  uint32_t len;
  *out = NULL;
  *out_len = 0;
  size_t at = accy__reader_position(r);
  ACCY_TRY_CTX(accy__reader_u32le(r, &len), "%s %u: name length: ", what, index);
  if (len > ACCY_MAX_NAME_BYTES)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "%s %u: name length %u exceeds ACCY_MAX_NAME_BYTES %u at offset %zu", what,
                     index, len, ACCY_MAX_NAME_BYTES, at);
  const uint8_t *bytes;
  ACCY_TRY_CTX(accy__reader_bytes(r, len, &bytes), "%s %u: name: ", what, index);
  const uint8_t *nul = memchr(bytes, 0, len);
  if (nul)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "%s %u: name contains a NUL byte at offset %zu", what, index,
                     at + 4 + (size_t)(nul - bytes));
  *out = bytes;
  *out_len = len;
  return ACCY_STATUS_OK;
}

/* ---- op versions ----------------------------------------------------------- */

uint16_t accy__wire_op_minor(uint32_t op) {
  switch (op) {
    case ACCY_OP_SCATTER:
    case ACCY_OP_SORT:
    case ACCY_OP_ARGSORT: return 1;
  }
  return accy__op_name(op) ? 0 : UINT16_MAX;
}

/* ---- nodes section ------------------------------------------------------- */

static accy_status read_type(accy__reader *r, uint32_t i, accy__type *t, uint64_t *out_elems) {
  uint8_t dtype, rank;
  memset(t, 0, sizeof *t);
  size_t at = accy__reader_position(r);
  ACCY_TRY_CTX(accy__reader_u8(r, &dtype), "node %u: dtype: ", i);
  if (!accy__dtype_valid(dtype))
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "node %u: dtype %u is not a valid dtype at offset %zu",
                     i, dtype, at);
  at = accy__reader_position(r);
  ACCY_TRY_CTX(accy__reader_u8(r, &rank), "node %u: rank: ", i);
  if (rank > ACCY_MAX_RANK)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "node %u: rank %u exceeds ACCY_MAX_RANK %d at offset %zu", i, rank,
                     ACCY_MAX_RANK, at);
  t->dtype = dtype;
  t->rank = rank;
  /* Each extent is at most 2^40, so the running product is overflow-checked
   * rather than bounded by construction. */
  uint64_t elems = 1;
  bool too_many = false, has_zero = false;
  for (uint32_t d = 0; d < rank; d++) {
    at = accy__reader_position(r);
    ACCY_TRY_CTX(accy__reader_i64le(r, &t->dims[d]), "node %u: dims[%u]: ", i, d);
    if (t->dims[d] < 0 || t->dims[d] > ACCY_MAX_DIM)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "node %u: dims[%u] = %lld is outside 0..ACCY_MAX_DIM %lld at offset %zu", i,
                       d, (long long)t->dims[d], (long long)ACCY_MAX_DIM, at);
    if (t->dims[d] == 0) has_zero = true;
    if (!accy__mul_u64(elems, (uint64_t)t->dims[d], &elems)) too_many = true;
  }
  /* Boundary: a zero extent makes the tensor empty even when the product of
   * the extents before it overflowed (a wrapped product can itself be 0, so
   * the zero is tracked, not inferred). */
  if (has_zero) {
    too_many = false;
    elems = 0;
  }
  if (too_many || elems > ACCY_MAX_ELEMENTS)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "node %u: type has more than ACCY_MAX_ELEMENTS %llu elements (dims end at "
                     "offset %zu)",
                     i, (unsigned long long)ACCY_MAX_ELEMENTS, accy__reader_position(r));
  *out_elems = elems;
  return ACCY_STATUS_OK;
}

static accy_status read_node(accy__reader *r, uint32_t i, decode_scratch *s,
                             uint64_t *inout_constant_bytes, accy__program *out) {
  size_t node_at = accy__reader_position(r);
  size_t at = node_at;
  uint16_t op;
  ACCY_TRY_CTX(accy__reader_u16le(r, &op), "node %u: op: ", i);
  if (!accy__op_name(op))
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "node %u: unknown op code %u at offset %zu", i,
                     op, at);
  /* An op a later minor added is not an op of the version the bytes declare
   * (a 1.0 reader would call it unknown). */
  uint16_t op_minor = accy__wire_op_minor(op);
  if (op_minor > out->wire_minor)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "node %u: op code %u (%s) needs wire %d.%u, but the program declares wire "
                     "%d.%u at offset %zu",
                     i, op, accy__op_name(op), ACCY_WIRE_VERSION_MAJOR, op_minor,
                     ACCY_WIRE_VERSION_MAJOR, out->wire_minor, at);

  accy__type type;
  uint64_t elems = 0;
  ACCY_TRY(read_type(r, i, &type, &elems));

  uint32_t n_operands;
  at = accy__reader_position(r);
  ACCY_TRY_CTX(accy__reader_u32le(r, &n_operands), "node %u: operand count: ", i);
  if (n_operands > ACCY_MAX_OPERANDS)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "node %u: operand count %u exceeds ACCY_MAX_OPERANDS %u at offset %zu", i,
                     n_operands, ACCY_MAX_OPERANDS, at);
  ACCY_TRY_CTX(accy__reader_check_count(r, n_operands, 4), "node %u: operands: ", i);
  for (uint32_t k = 0; k < n_operands; k++) {
    at = accy__reader_position(r);
    ACCY_TRY_CTX(accy__reader_u32le(r, &s->operands[k]), "node %u: operand %u: ", i, k);
    /* SSA order makes every program acyclic by construction. */
    if (s->operands[k] >= i)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "node %u: operand %u refers to node %u, not an earlier node (at offset "
                       "%zu)",
                       i, k, s->operands[k], at);
  }

  uint32_t n_attrs;
  at = accy__reader_position(r);
  ACCY_TRY_CTX(accy__reader_u32le(r, &n_attrs), "node %u: attribute count: ", i);
  if (n_attrs > ACCY_MAX_ATTRS)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "node %u: attribute count %u exceeds ACCY_MAX_ATTRS %u at offset %zu", i,
                     n_attrs, ACCY_MAX_ATTRS, at);
  ACCY_TRY_CTX(accy__reader_check_count(r, n_attrs, 8), "node %u: attributes: ", i);
  for (uint32_t k = 0; k < n_attrs; k++)
    ACCY_TRY_CTX(accy__reader_i64le(r, &s->attrs[k]), "node %u: attrs[%u]: ", i, k);

  const uint8_t *name;
  uint32_t name_len;
  ACCY_TRY(read_name(r, "node", i, &name, &name_len));

  const uint8_t *payload = NULL;
  uint64_t payload_bytes = 0;
  if (op == ACCY_OP_CONSTANT) {
    at = accy__reader_position(r);
    ACCY_TRY_CTX(accy__reader_u64le(r, &payload_bytes), "node %u: payload length: ", i);
    /* dtype was checked above, so its size is nonzero; elems <= 2^40 and
     * sizes <= 8, but the product is still checked. */
    uint64_t want;
    if (!accy__mul_u64(elems, accy__dtype_size(type.dtype), &want) || payload_bytes != want) {
      char tbuf[160];
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "node %u: constant payload length %llu does not match %s (%llu bytes) at "
                       "offset %zu",
                       i, (unsigned long long)payload_bytes,
                       accy__type_format(&type, tbuf, sizeof tbuf), (unsigned long long)want, at);
    }
    if (payload_bytes > ACCY_MAX_CONSTANT_BYTES - *inout_constant_bytes)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "node %u: constants total more than ACCY_MAX_CONSTANT_BYTES %llu (this "
                       "payload %llu, before it %llu) at offset %zu",
                       i, (unsigned long long)ACCY_MAX_CONSTANT_BYTES,
                       (unsigned long long)payload_bytes,
                       (unsigned long long)*inout_constant_bytes, at);
    ACCY_TRY_CTX(accy__reader_bytes(r, payload_bytes, &payload), "node %u: payload: ", i);
    *inout_constant_bytes += payload_bytes;
  }

  /* A zero-length name is "no name" (NULL in the IR). */
  ACCY_TRY_CTX(accy__program_add_node(out, op, &type, s->operands, n_operands, s->attrs, n_attrs,
                                      name_len ? (const char *)name : NULL, name_len, payload,
                                      payload_bytes, NULL),
               "node %u (at offset %zu): ", i, node_at);
  return ACCY_STATUS_OK;
}

static accy_status read_nodes(accy__reader *r, accy__program *out) {
  uint32_t n;
  size_t at = accy__reader_position(r);
  ACCY_TRY_CTX(accy__reader_u32le(r, &n), "nodes section: node count: ");
  if (n > ACCY_MAX_NODES)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "nodes section: node count %u exceeds ACCY_MAX_NODES %u at offset %zu", n,
                     ACCY_MAX_NODES, at);
  ACCY_TRY_CTX(accy__reader_check_count(r, n, ACCY_WIRE_NODE_MIN_BYTES), "nodes section: node count: ");
  decode_scratch s;
  uint64_t constant_bytes = 0;
  for (uint32_t i = 0; i < n; i++) ACCY_TRY(read_node(r, i, &s, &constant_bytes, out));
  ACCY_TRY_CTX(accy__reader_expect_end(r), "nodes section: ");
  return ACCY_STATUS_OK;
}

/* ---- outputs section ----------------------------------------------------- */

static accy_status read_outputs(accy__reader *r, accy__program *out) {
  uint32_t n;
  size_t at = accy__reader_position(r);
  ACCY_TRY_CTX(accy__reader_u32le(r, &n), "outputs section: output count: ");
  if (n > ACCY_MAX_OUTPUTS)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "outputs section: output count %u exceeds ACCY_MAX_OUTPUTS %u at offset %zu",
                     n, ACCY_MAX_OUTPUTS, at);
  ACCY_TRY_CTX(accy__reader_check_count(r, n, ACCY_WIRE_OUTPUT_MIN_BYTES),
       "outputs section: output count: ");
  for (uint32_t i = 0; i < n; i++) {
    uint32_t node;
    at = accy__reader_position(r);
    ACCY_TRY_CTX(accy__reader_u32le(r, &node), "output %u: node: ", i);
    if (node >= out->n_nodes)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "output %u: refers to node %u, but the program has %u nodes (at offset "
                       "%zu)",
                       i, node, out->n_nodes, at);
    const uint8_t *name;
    uint32_t name_len;
    ACCY_TRY(read_name(r, "output", i, &name, &name_len));
    ACCY_TRY_CTX(accy__program_add_output(out, node, (const char *)name, name_len),
                 "output %u (at offset %zu): ", i, at);
  }
  ACCY_TRY_CTX(accy__reader_expect_end(r), "outputs section: ");
  return ACCY_STATUS_OK;
}

/* ---- framing ------------------------------------------------------------- */

static const char *section_name(uint32_t id) {
  switch (id) {
    case ACCY_WIRE_SECTION_NODES: return "nodes";
    case ACCY_WIRE_SECTION_OUTPUTS: return "outputs";
  }
  return "unknown";
}

/* Reads one section header, requires id |want|, and returns a sub-reader
 * over exactly the section's body. */
static accy_status open_section(accy__reader *r, uint32_t want, accy__reader *sub) {
  uint32_t id;
  uint64_t len;
  accy__reader_init(sub, NULL, 0);
  size_t at = accy__reader_position(r);
  ACCY_TRY_CTX(accy__reader_u32le(r, &id), "%s section header: id: ", section_name(want));
  if (id != want)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "section id %u (%s) at offset %zu, expected %u (%s): wire 1.0 and 1.1 "
                     "have exactly the nodes section then the outputs section",
                     id, section_name(id), at, want, section_name(want));
  ACCY_TRY_CTX(accy__reader_u64le(r, &len), "%s section header: length: ", section_name(want));
  ACCY_TRY_CTX(accy__reader_sub(r, len, sub), "%s section: ", section_name(want));
  return ACCY_STATUS_OK;
}

static accy_status read_header(accy__reader *r, uint16_t *out_minor) {
  const uint8_t *magic;
  *out_minor = 0;
  ACCY_TRY_CTX(accy__reader_bytes(r, ACCY_WIRE_MAGIC_BYTES, &magic), "header: magic: ");
  if (memcmp(magic, ACCY_WIRE_MAGIC, ACCY_WIRE_MAGIC_BYTES) != 0)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "bad magic %02x %02x %02x %02x at offset 0, expected \"%s\" (41 43 43 59)",
                     magic[0], magic[1], magic[2], magic[3], ACCY_WIRE_MAGIC);
  uint16_t major, minor;
  ACCY_TRY_CTX(accy__reader_u16le(r, &major), "header: major version: ");
  ACCY_TRY_CTX(accy__reader_u16le(r, &minor), "header: minor version: ");
  /* A reader understands every older minor of its major; a newer minor may
   * add sections or fields it cannot know about. */
  if (major != ACCY_WIRE_VERSION_MAJOR || minor > ACCY_WIRE_VERSION_MINOR)
    return ACCY_FAIL(ACCY_STATUS_UNSUPPORTED_VERSION, "wire %u.%u, this build reads %d.0-%d.%d",
                     major, minor, ACCY_WIRE_VERSION_MAJOR, ACCY_WIRE_VERSION_MAJOR,
                     ACCY_WIRE_VERSION_MINOR);
  *out_minor = minor;
  return ACCY_STATUS_OK;
}

static accy_status decode_program(const void *bytes, size_t size, accy__program *out) {
  accy__reader r;
  accy__reader_init(&r, bytes, size);
  uint16_t minor;
  ACCY_TRY(read_header(&r, &minor));
  /* After the version check, so that a future major with other limits is
   * reported as a version problem. */
  if ((uint64_t)size > ACCY_MAX_PROGRAM_BYTES)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "program is %zu bytes, exceeds ACCY_MAX_PROGRAM_BYTES %llu", size,
                     (unsigned long long)ACCY_MAX_PROGRAM_BYTES);
  out->wire_minor = minor;

  accy__reader sub;
  ACCY_TRY(open_section(&r, ACCY_WIRE_SECTION_NODES, &sub));
  ACCY_TRY(read_nodes(&sub, out));
  ACCY_TRY(open_section(&r, ACCY_WIRE_SECTION_OUTPUTS, &sub));
  ACCY_TRY(read_outputs(&sub, out));
  ACCY_TRY_CTX(accy__reader_expect_end(&r), "after the outputs section: ");
  return ACCY_STATUS_OK;
}

accy_status accy__wire_decode(const void *bytes, size_t size, accy__program *out) {
  accy__program_init(out);
  accy_status st = decode_program(bytes, size, out);
  if (st != ACCY_STATUS_OK) {
    /* Leaves *out empty and initialised: nothing for the caller to free. */
    accy__program_free(out);
    accy__program_init(out);
  }
  return st;
}
