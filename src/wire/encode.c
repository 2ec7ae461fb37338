/* src/wire/encode.c: program IR -> canonical wire v1 bytes.
 *
 * The encoder sizes the whole program first (overflow-checked), allocates
 * once, then writes every field in the one order the format allows. Because
 * v1 has no optional fields, no padding and no alternative encodings, this
 * output is the canonical form: decode followed by encode reproduces any
 * input that decodes.
 *
 * The encoder writes what the IR holds; it does not verify. A program that
 * breaks a decode rule the format can still express (an unknown op, a
 * forward operand, a wrong payload length, a long name) is encoded as it is,
 * and decoding the result fails with the usual cause. Only what the layout
 * cannot express at all fails here, with INVALID_PROGRAM: a dtype outside
 * 0..255, a rank above ACCY_MAX_RANK, a payload on a node that is not a
 * constant, a name longer than 2^32 - 1 bytes, or a total size beyond
 * SIZE_MAX. */
#include "src/internal.h"

#include <string.h>

#include "src/base/alloc.h"
#include "src/base/limits.h"
#include "src/wire/format.h"
#include "src/wire/wire.h"

/* ---- sizing -------------------------------------------------------------- */

static accy_status name_length(const char *name, const char *what, uint32_t i, uint32_t *out) {
  size_t n = name ? strlen(name) : 0;
  if (n > UINT32_MAX)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "%s %u: name of %zu bytes cannot be encoded",
                     what, i, n);
  *out = (uint32_t)n;
  return ACCY_STATUS_OK;
}

static accy_status node_bytes(const accy__node *nd, uint32_t i, uint64_t *out) {
  if (nd->type.dtype < 0 || nd->type.dtype > UINT8_MAX)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "node %u: dtype %d cannot be encoded (the wire dtype is a u8)", i,
                     (int)nd->type.dtype);
  if (nd->type.rank > ACCY_MAX_RANK)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "node %u: rank %u exceeds ACCY_MAX_RANK %d", i,
                     nd->type.rank, ACCY_MAX_RANK);
  if (nd->op != ACCY_OP_CONSTANT && nd->payload_bytes != 0)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "node %u: op %u is not a constant but has a %llu-byte payload", i, nd->op,
                     (unsigned long long)nd->payload_bytes);
  uint32_t name_len = 0;
  ACCY_TRY(name_length(nd->name, "node", i, &name_len));
  /* Every term is far below 2^64 except the payload; check each sum. */
  uint64_t n = ACCY_WIRE_NODE_MIN_BYTES + 8u * (uint64_t)nd->type.rank +
               4u * (uint64_t)nd->n_operands + 8u * (uint64_t)nd->n_attrs + name_len;
  if (nd->op == ACCY_OP_CONSTANT &&
      (!accy__add_u64(n, 8, &n) || !accy__add_u64(n, nd->payload_bytes, &n)))
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "node %u: payload too large to encode", i);
  *out = n;
  return ACCY_STATUS_OK;
}

static accy_status program_bytes(const accy__program *p, uint64_t *out_nodes_body,
                                 uint64_t *out_outputs_body, uint64_t *out_total) {
  uint64_t nodes = 4, outputs = 4, total;
  for (uint32_t i = 0; i < p->n_nodes; i++) {
    uint64_t n = 0;
    ACCY_TRY(node_bytes(&p->nodes[i], i, &n));
    if (!accy__add_u64(nodes, n, &nodes))
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "program too large to encode");
  }
  for (uint32_t i = 0; i < p->n_outputs; i++) {
    uint32_t name_len = 0;
    ACCY_TRY(name_length(p->output_names ? p->output_names[i] : NULL, "output", i, &name_len));
    outputs += ACCY_WIRE_OUTPUT_MIN_BYTES + (uint64_t)name_len; /* < 2^32 * 2^33 */
  }
  if (!accy__add_u64(ACCY_WIRE_HEADER_BYTES + 2u * ACCY_WIRE_SECTION_HEADER_BYTES, nodes,
                     &total) ||
      !accy__add_u64(total, outputs, &total) || total > SIZE_MAX)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "program too large to encode");
  *out_nodes_body = nodes;
  *out_outputs_body = outputs;
  *out_total = total;
  return ACCY_STATUS_OK;
}

/* The minor version to write: at least what decoded bytes declared (so that
 * decode then encode reproduces them), and at least the minor that added each
 * op the program uses. Unknown ops count as 0 here: the encoder writes them
 * as they are and decoding reports them. */
static accy_status program_minor(const accy__program *p, uint16_t *out) {
  if (p->wire_minor > ACCY_WIRE_VERSION_MINOR)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "program declares wire %d.%u, newer than this build's %d.%d",
                     ACCY_WIRE_VERSION_MAJOR, p->wire_minor, ACCY_WIRE_VERSION_MAJOR,
                     ACCY_WIRE_VERSION_MINOR);
  uint16_t minor = p->wire_minor;
  for (uint32_t i = 0; i < p->n_nodes; i++) {
    uint16_t m = accy__wire_op_minor(p->nodes[i].op);
    if (m != UINT16_MAX && m > minor) minor = m;
  }
  *out = minor;
  return ACCY_STATUS_OK;
}

/* ---- writing ------------------------------------------------------------- */

/* The buffer was sized exactly beforehand, so the writers need no checks;
 * the final position is compared with the size once (ACCY_ASSERT). */
static uint8_t *put_u8(uint8_t *w, uint8_t v) {
  *w = v;
  return w + 1;
}
static uint8_t *put_u16(uint8_t *w, uint16_t v) {
  w[0] = (uint8_t)v;
  w[1] = (uint8_t)(v >> 8);
  return w + 2;
}
static uint8_t *put_u32(uint8_t *w, uint32_t v) {
  for (int k = 0; k < 4; k++) w[k] = (uint8_t)(v >> (8 * k));
  return w + 4;
}
static uint8_t *put_u64(uint8_t *w, uint64_t v) {
  for (int k = 0; k < 8; k++) w[k] = (uint8_t)(v >> (8 * k));
  return w + 8;
}
static uint8_t *put_i64(uint8_t *w, int64_t v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return put_u64(w, u);
}
static uint8_t *put_bytes(uint8_t *w, const void *src, size_t n) {
  if (n) memcpy(w, src, n);
  return w + n;
}
static uint8_t *put_name(uint8_t *w, const char *name) {
  /* Lengths were checked to fit a u32 while sizing. */
  size_t n = name ? strlen(name) : 0;
  w = put_u32(w, (uint32_t)n);
  return put_bytes(w, name, n);
}

static uint8_t *put_node(uint8_t *w, const accy__node *nd) {
  w = put_u16(w, nd->op);
  w = put_u8(w, (uint8_t)nd->type.dtype);
  w = put_u8(w, (uint8_t)nd->type.rank);
  for (uint32_t d = 0; d < nd->type.rank; d++) w = put_i64(w, nd->type.dims[d]);
  w = put_u32(w, nd->n_operands);
  for (uint32_t k = 0; k < nd->n_operands; k++) w = put_u32(w, nd->operands[k]);
  w = put_u32(w, nd->n_attrs);
  for (uint32_t k = 0; k < nd->n_attrs; k++) w = put_i64(w, nd->attrs[k]);
  w = put_name(w, nd->name);
  if (nd->op == ACCY_OP_CONSTANT) {
    w = put_u64(w, nd->payload_bytes);
    w = put_bytes(w, nd->payload, (size_t)nd->payload_bytes);
  }
  return w;
}

accy_status accy__wire_encode(const accy__program *p, void **out_bytes, size_t *out_size) {
  *out_bytes = NULL;
  *out_size = 0;
  uint64_t nodes_body = 0, outputs_body = 0, total = 0;
  ACCY_TRY(program_bytes(p, &nodes_body, &outputs_body, &total));
  uint16_t minor = 0;
  ACCY_TRY(program_minor(p, &minor));
  uint8_t *buf = accy__malloc((size_t)total);
  if (!buf)
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for %llu bytes of wire program",
                     (unsigned long long)total);

  uint8_t *w = put_bytes(buf, ACCY_WIRE_MAGIC, ACCY_WIRE_MAGIC_BYTES);
  w = put_u16(w, ACCY_WIRE_VERSION_MAJOR);
  w = put_u16(w, minor);

  w = put_u32(w, ACCY_WIRE_SECTION_NODES);
  w = put_u64(w, nodes_body);
  w = put_u32(w, p->n_nodes);
  for (uint32_t i = 0; i < p->n_nodes; i++) w = put_node(w, &p->nodes[i]);

  w = put_u32(w, ACCY_WIRE_SECTION_OUTPUTS);
  w = put_u64(w, outputs_body);
  w = put_u32(w, p->n_outputs);
  for (uint32_t i = 0; i < p->n_outputs; i++) {
    w = put_u32(w, p->outputs[i]);
    w = put_name(w, p->output_names ? p->output_names[i] : NULL);
  }
  ACCY_ASSERT((uint64_t)(w - buf) == total);
  (void)w;

  *out_bytes = buf;
  *out_size = (size_t)total;
  return ACCY_STATUS_OK;
}
