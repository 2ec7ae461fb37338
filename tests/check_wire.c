/* tests/check_wire.c: wire format v1, decode (untrusted bytes -> IR) and
 * encode (IR -> canonical bytes).
 *
 * Claims tested: encode then decode gives the same program for every dtype,
 * many ops and random programs; the golden files of every wire version decode
 * to known programs and re-encode byte for byte; every input that decodes is
 * canonical (it re-encodes to itself, even after a random bit flip); every
 * class of bad input fails with the right status and a cause naming the
 * field, and leaves nothing to free; huge counts fail before any allocation;
 * allocation failures become OUT_OF_MEMORY. No session, no OpenMP. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "src/internal.h"
#include "src/ir/ir.h"
#include "src/base/limits.h"
#include "src/base/alloc.h"
#include "src/wire/format.h"
#include "src/wire/wire.h"
#include "tests/testutil.h"

/* Check's ck_assert_* report progress to the parent process even when they
 * pass; in loops that run thousands of times that dominates the run time.
 * REQUIRE talks to Check only when it fails. */
#define REQUIRE(expr, ...)                            \
  do {                                                \
    if (!(expr)) ck_abort_msg(__VA_ARGS__);           \
  } while (0)

#define ck_assert_cause_has(text)                                                          \
  ck_assert_msg(strstr(accy__cause(), (text)) != NULL, "cause \"%s\" lacks \"%s\"", \
                accy__cause(), (text))

/* ---- byte builder for hand-made inputs ------------------------------------ */

typedef struct blob {
  uint8_t *data;
  size_t len, cap;
} blob;

static void b_bytes(blob *b, const void *src, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n) cap *= 2;
    b->data = realloc(b->data, cap);
    REQUIRE(b->data != NULL, "out of memory in the test");
    b->cap = cap;
  }
  if (n) memcpy(b->data + b->len, src, n);
  b->len += n;
}
static void b_le(blob *b, uint64_t v, int n) {
  uint8_t t[8];
  for (int k = 0; k < n; k++) t[k] = (uint8_t)(v >> (8 * k));
  b_bytes(b, t, (size_t)n);
}
static void b_u8(blob *b, uint8_t v) { b_le(b, v, 1); }
static void b_u16(blob *b, uint16_t v) { b_le(b, v, 2); }
static void b_u32(blob *b, uint32_t v) { b_le(b, v, 4); }
static void b_u64(blob *b, uint64_t v) { b_le(b, v, 8); }
static void b_free(blob *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}

static void b_header(blob *b, uint16_t major, uint16_t minor) {
  b_bytes(b, "ACCY", 4);
  b_u16(b, major);
  b_u16(b, minor);
}
/* Writes a section header with a placeholder length; returns where the
 * length is, for b_section_end. */
static size_t b_section_begin(blob *b, uint32_t id) {
  b_u32(b, id);
  size_t at = b->len;
  b_u64(b, 0);
  return at;
}
static void b_section_end(blob *b, size_t at) {
  uint64_t body = b->len - (at + 8);
  for (int k = 0; k < 8; k++) b->data[at + (size_t)k] = (uint8_t)(body >> (8 * k));
}
static void b_name(blob *b, const char *name) {
  size_t n = name ? strlen(name) : 0;
  b_u32(b, (uint32_t)n);
  b_bytes(b, name, n);
}
/* One node without payload (a constant's payload length and bytes follow). */
static void b_node(blob *b, uint16_t op, uint8_t dtype, uint8_t rank, const int64_t *dims,
                   uint32_t n_operands, const uint32_t *operands, uint32_t n_attrs,
                   const int64_t *attrs, const char *name) {
  b_u16(b, op);
  b_u8(b, dtype);
  b_u8(b, rank);
  for (uint32_t d = 0; d < rank; d++) b_u64(b, (uint64_t)dims[d]);
  b_u32(b, n_operands);
  for (uint32_t k = 0; k < n_operands; k++) b_u32(b, operands[k]);
  b_u32(b, n_attrs);
  for (uint32_t k = 0; k < n_attrs; k++) b_u64(b, (uint64_t)attrs[k]);
  b_name(b, name);
}
/* Header and the start of the nodes section with |n_nodes|. */
static size_t b_begin_nodes(blob *b, uint32_t n_nodes) {
  b_header(b, 1, 0);
  size_t at = b_section_begin(b, ACCY_WIRE_SECTION_NODES);
  b_u32(b, n_nodes);
  return at;
}
/* Ends the nodes section and appends an outputs section naming node 0 "y"
 * (or no outputs when |no_outputs|). */
static void b_finish(blob *b, size_t nodes_at, bool no_outputs) {
  b_section_end(b, nodes_at);
  size_t at = b_section_begin(b, ACCY_WIRE_SECTION_OUTPUTS);
  b_u32(b, no_outputs ? 0 : 1);
  if (!no_outputs) {
    b_u32(b, 0);
    b_name(b, "y");
  }
  b_section_end(b, at);
}
static const int64_t kDims23[] = {2, 3};

/* ---- decoding helpers ---------------------------------------------------- */

/* Decodes from an exact-size heap copy so that AddressSanitizer sees any read
 * past the end. */
static accy_status decode_copy(const void *bytes, size_t size, accy__program *p) {
  void *copy = malloc(size ? size : 1);
  REQUIRE(copy != NULL, "out of memory in the test");
  if (size) memcpy(copy, bytes, size);
  accy_status st = accy__wire_decode(copy, size, p);
  free(copy);
  return st;
}

static void assert_program_empty(const accy__program *p) {
  REQUIRE(p->n_nodes == 0 && p->nodes == NULL && p->n_params == 0 && p->params == NULL &&
              p->n_outputs == 0 && p->outputs == NULL && p->output_names == NULL &&
              p->arena.head == NULL,
          "a failed decode left something in the program");
}

/* Decodes |b| expecting failure with |status| and |text| in the cause. */
static void expect_fail(const blob *b, accy_status status, const char *text) {
  accy__program p;
  memset(&p, 0xa5, sizeof p); /* decode must initialise, whatever was there */
  accy_status st = decode_copy(b->data, b->len, &p);
  ck_assert_msg(st == status, "status %d, expected %d; cause: %s", (int)st, (int)status,
                accy__cause());
  ck_assert_cause_has(text);
  assert_program_empty(&p);
  accy__program_free(&p); /* "nothing to free" also means freeing is harmless */
}

static void expect_ok(const blob *b, accy__program *p) {
  accy_status st = decode_copy(b->data, b->len, p);
  ck_assert_msg(st == ACCY_STATUS_OK, "decode failed: %s", accy__cause());
}

/* Encodes |p| and requires exactly |size| bytes equal to |bytes|. */
static void assert_encodes_to(const accy__program *p, const void *bytes, size_t size) {
  void *enc = NULL;
  size_t enc_size = 0;
  accy_status st = accy__wire_encode(p, &enc, &enc_size);
  REQUIRE(st == ACCY_STATUS_OK, "encode: %s", accy__cause());
  REQUIRE(enc_size == size, "encoded %zu bytes, expected %zu", enc_size, size);
  const uint8_t *a = enc, *b = bytes;
  for (size_t k = 0; k < size; k++)
    REQUIRE(a[k] == b[k], "byte %zu: encoded %02x, expected %02x", k, a[k], b[k]);
  accy__free(enc);
}

static void assert_same_program(const accy__program *a, const accy__program *b) {
  REQUIRE(a->n_nodes == b->n_nodes, "%u nodes vs %u", a->n_nodes, b->n_nodes);
  for (uint32_t i = 0; i < a->n_nodes; i++) {
    const accy__node *x = &a->nodes[i], *y = &b->nodes[i];
    REQUIRE(x->op == y->op, "node %u: op %u vs %u", i, x->op, y->op);
    REQUIRE(accy__type_equal(&x->type, &y->type), "node %u: type differs", i);
    REQUIRE(x->n_operands == y->n_operands, "node %u: operand count differs", i);
    for (uint32_t k = 0; k < x->n_operands; k++)
      REQUIRE(x->operands[k] == y->operands[k], "node %u: operand %u differs", i, k);
    REQUIRE(x->n_attrs == y->n_attrs, "node %u: attribute count differs", i);
    for (uint32_t k = 0; k < x->n_attrs; k++)
      REQUIRE(x->attrs[k] == y->attrs[k], "node %u: attrs[%u] differs", i, k);
    /* The wire has no empty-but-present name: "" and NULL are both "none". */
    const char *xn = x->name && *x->name ? x->name : NULL;
    const char *yn = y->name && *y->name ? y->name : NULL;
    REQUIRE((!xn && !yn) || (xn && yn && strcmp(xn, yn) == 0), "node %u: name differs", i);
    REQUIRE(x->payload_bytes == y->payload_bytes, "node %u: payload length differs", i);
    if (x->payload_bytes) {
      REQUIRE(memcmp(x->payload, y->payload, (size_t)x->payload_bytes) == 0,
              "node %u: payload differs", i);
      REQUIRE((uintptr_t)y->payload % 64 == 0, "node %u: payload not 64-aligned", i);
    }
  }
  REQUIRE(a->n_params == b->n_params, "%u parameters vs %u", a->n_params, b->n_params);
  for (uint32_t i = 0; i < a->n_params; i++)
    REQUIRE(a->params[i] == b->params[i], "parameter %u differs", i);
  REQUIRE(a->n_outputs == b->n_outputs, "%u outputs vs %u", a->n_outputs, b->n_outputs);
  for (uint32_t i = 0; i < a->n_outputs; i++) {
    REQUIRE(a->outputs[i] == b->outputs[i], "output %u: node differs", i);
    REQUIRE(strcmp(a->output_names[i], b->output_names[i]) == 0, "output %u: name differs", i);
  }
}

/* The minor the encoder must write for |p|: the declared one, raised to the
 * highest minor among its (known) ops. */
static uint16_t expected_minor(const accy__program *p) {
  uint16_t m = p->wire_minor;
  for (uint32_t i = 0; i < p->n_nodes; i++) {
    uint16_t o = accy__wire_op_minor(p->nodes[i].op);
    if (o != UINT16_MAX && o > m) m = o;
  }
  return m;
}

/* Encode, decode, compare, and re-encode byte-identically. */
static void assert_roundtrip(const accy__program *p) {
  void *enc = NULL;
  size_t size = 0;
  accy_status st = accy__wire_encode(p, &enc, &size);
  REQUIRE(st == ACCY_STATUS_OK, "encode: %s", accy__cause());
  accy__program q;
  st = decode_copy(enc, size, &q);
  REQUIRE(st == ACCY_STATUS_OK, "decode of encoded program failed: %s", accy__cause());
  REQUIRE(q.wire_minor == expected_minor(p), "wire_minor %u, expected %u", q.wire_minor,
          expected_minor(p));
  assert_same_program(p, &q);
  assert_encodes_to(&q, enc, size);
  accy__program_free(&q);
  accy__free(enc);
}

/* ---- program builders (also the source of the golden files) -------------- */

static uint32_t add(accy__program *p, uint16_t op, accy__type t, const uint32_t *ops,
                    uint32_t n_ops, const int64_t *attrs, uint32_t n_attrs, const char *name,
                    const void *payload, uint64_t payload_bytes) {
  uint32_t idx = 0;
  accy_status st = accy__program_add_node(p, op, &t, ops, n_ops, attrs, n_attrs, name,
                                          name ? strlen(name) : 0, payload, payload_bytes, &idx);
  REQUIRE(st == ACCY_STATUS_OK, "add_node: %s", accy__cause());
  return idx;
}

static void output(accy__program *p, uint32_t node, const char *name) {
  accy_status st = accy__program_add_output(p, node, name, strlen(name));
  REQUIRE(st == ACCY_STATUS_OK, "add_output: %s", accy__cause());
}

/* tiny.accy: sum = x + c, with x: f32[2] and the constant c = [1.0, 0.5].
 * docs/wire-format.md shows these bytes annotated. */
static void build_tiny(accy__program *p) {
  static const int64_t d2[] = {2};
  static const uint8_t c[] = {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x3f};
  accy__program_init(p);
  uint32_t x = add(p, ACCY_OP_PARAMETER, tu_type(ACCY_DTYPE_F32, 1, d2), NULL, 0, NULL, 0, "x",
                   NULL, 0);
  uint32_t k = add(p, ACCY_OP_CONSTANT, tu_type(ACCY_DTYPE_F32, 1, d2), NULL, 0, NULL, 0, "c", c,
                   sizeof c);
  uint32_t ops[] = {x, k};
  uint32_t s = add(p, ACCY_OP_ADD, tu_type(ACCY_DTYPE_F32, 1, d2), ops, 2, NULL, 0, NULL, NULL, 0);
  output(p, s, "sum");
}

/* The same program, written by hand from the specification (not by the
 * encoder), so that the encoder is checked against the document. */
static const uint8_t kTiny[] = {
    0x41, 0x43, 0x43, 0x59, 0x01, 0x00, 0x00, 0x00, /* "ACCY", major 1, minor 0 */
    0x01, 0x00, 0x00, 0x00,                         /* section id 1: nodes */
    0x66, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* body length 102 */
    0x03, 0x00, 0x00, 0x00,                         /* 3 nodes */
    /* node 0: parameter (1), f32 (1), rank 1, dims [2], 0 operands, 0 attrs, "x" */
    0x01, 0x00, 0x01, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x78,
    /* node 1: constant (2), f32, rank 1, dims [2], 0, 0, "c", payload 8 bytes */
    0x02, 0x00, 0x01, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x63, 0x08, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x3f,
    /* node 2: add (40), f32, rank 1, dims [2], operands (0, 1), 0 attrs, no name */
    0x28, 0x00, 0x01, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00,
    0x02, 0x00, 0x00, 0x00,                         /* section id 2: outputs */
    0x0f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* body length 15 */
    0x01, 0x00, 0x00, 0x00,                         /* 1 output */
    0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x73, 0x75, 0x6d, /* node 2, "sum" */
};

/* Four elements of each element size with the bit patterns that matter:
 * zero, all ones (NaN for floats, -1 for ints), only the top bit (-0,
 * INT_MIN) and all but the top bit (NaN, INT_MAX). Booleans get 0/1. */
static void edge_payload(int32_t dtype, uint8_t *out, size_t *out_bytes) {
  size_t size = accy__dtype_size(dtype);
  memset(out, 0, 4 * size);
  for (size_t e = 0; e < 4; e++) {
    uint8_t *v = out + e * size;
    if (dtype == ACCY_DTYPE_BOOL) {
      v[0] = (uint8_t)(e == 1 || e == 2);
      continue;
    }
    for (size_t k = 0; k < size; k++) {
      if (e == 1) v[k] = 0xff;
      if (e == 2) v[k] = k == size - 1 ? 0x80 : 0x00;
      if (e == 3) v[k] = k == size - 1 ? 0x7f : 0xff;
    }
  }
  *out_bytes = 4 * size;
}

/* dtypes.accy: for every dtype a parameter d[2,3], a constant d[4] of edge
 * bit patterns, a scalar constant, and outputs of all of them; plus an empty
 * (0-element) constant. */
static void build_dtypes(accy__program *p) {
  static const int64_t d4[] = {4}, d04[] = {0, 4};
  accy__program_init(p);
  for (int32_t dt = ACCY_DTYPE_F32; dt <= ACCY_DTYPE_BOOL; dt++) {
    char name[32];
    uint8_t payload[32];
    size_t bytes = 0;
    edge_payload(dt, payload, &bytes);
    snprintf(name, sizeof name, "p_%s", accy__dtype_name(dt));
    uint32_t a = add(p, ACCY_OP_PARAMETER, tu_type(dt, 2, kDims23), NULL, 0, NULL, 0, name, NULL, 0);
    snprintf(name, sizeof name, "c_%s", accy__dtype_name(dt));
    uint32_t c = add(p, ACCY_OP_CONSTANT, tu_type(dt, 1, d4), NULL, 0, NULL, 0, name, payload, bytes);
    snprintf(name, sizeof name, "s_%s", accy__dtype_name(dt));
    uint32_t s = add(p, ACCY_OP_CONSTANT, tu_type(dt, 0, NULL), NULL, 0, NULL, 0, name,
                     payload + accy__dtype_size(dt), accy__dtype_size(dt));
    snprintf(name, sizeof name, "out_p_%s", accy__dtype_name(dt));
    output(p, a, name);
    snprintf(name, sizeof name, "out_c_%s", accy__dtype_name(dt));
    output(p, c, name);
    snprintf(name, sizeof name, "out_s_%s", accy__dtype_name(dt));
    output(p, s, name);
  }
  uint32_t e = add(p, ACCY_OP_CONSTANT, tu_type(ACCY_DTYPE_F64, 2, d04), NULL, 0, NULL, 0, "empty",
                   NULL, 0);
  output(p, e, "out_empty");
}

/* ops.accy: ops with attributes, several operands, rank 0 to 8, a
 * zero-extent parameter, a parameter used as an output, and a duplicate
 * output. */
static void build_ops(accy__program *p) {
  static const int64_t d34[] = {3, 4}, d24[] = {2, 4}, d2[] = {2}, d32[] = {3, 2},
                       d63[] = {6, 3}, d5[] = {5}, d22[] = {2, 2}, d6[] = {6},
                       d8[] = {1, 1, 1, 1, 1, 1, 1, 2}, d05[] = {0, 5}, d25[] = {2, 5};
  static const uint8_t two[] = {0x00, 0x00, 0x00, 0x40}; /* 2.0f */
  const int32_t F = ACCY_DTYPE_F32;
  accy__program_init(p);
  uint32_t a = add(p, ACCY_OP_PARAMETER, tu_type(F, 2, kDims23), NULL, 0, NULL, 0, "a", NULL, 0);
  uint32_t b = add(p, ACCY_OP_PARAMETER, tu_type(F, 2, d34), NULL, 0, NULL, 0, "b", NULL, 0);
  uint32_t k = add(p, ACCY_OP_CONSTANT, tu_type(F, 0, NULL), NULL, 0, NULL, 0, "k", two, 4);
  uint32_t ab[] = {a, b}, aa[] = {a, a}, aaa[] = {a, a, a};
  static const int64_t dot_attrs[] = {0, 1, 1, 0};
  uint32_t dot = add(p, ACCY_OP_DOT_GENERAL, tu_type(F, 2, d24), ab, 2, dot_attrs, 4, NULL, NULL, 0);
  static const int64_t lt[] = {ACCY_COMPARE_LT};
  uint32_t cmp = add(p, ACCY_OP_COMPARE, tu_type(ACCY_DTYPE_BOOL, 2, kDims23), aa, 2, lt, 1, NULL,
                     NULL, 0);
  uint32_t sel_ops[] = {cmp, a, a};
  uint32_t sel = add(p, ACCY_OP_SELECT, tu_type(F, 2, kDims23), sel_ops, 3, NULL, 0, NULL, NULL, 0);
  uint32_t bc = add(p, ACCY_OP_BROADCAST_IN_DIM, tu_type(F, 2, kDims23), &k, 1, NULL, 0, NULL, NULL,
                    0);
  uint32_t mul_ops[] = {sel, bc};
  uint32_t mul = add(p, ACCY_OP_MULTIPLY, tu_type(F, 2, kDims23), mul_ops, 2, NULL, 0, NULL, NULL, 0);
  static const int64_t red_attrs[] = {ACCY_REDUCE_SUM, 1};
  uint32_t red = add(p, ACCY_OP_REDUCE, tu_type(F, 1, d2), &mul, 1, red_attrs, 2, NULL, NULL, 0);
  static const int64_t perm[] = {1, 0};
  uint32_t tr = add(p, ACCY_OP_TRANSPOSE, tu_type(F, 2, d32), &a, 1, perm, 2, NULL, NULL, 0);
  static const int64_t dim0[] = {0};
  uint32_t cat = add(p, ACCY_OP_CONCATENATE, tu_type(F, 2, d63), aaa, 3, dim0, 1, NULL, NULL, 0);
  uint32_t io = add(p, ACCY_OP_IOTA, tu_type(ACCY_DTYPE_I32, 1, d5), NULL, 0, dim0, 1, NULL, NULL, 0);
  uint32_t cv = add(p, ACCY_OP_CONVERT, tu_type(ACCY_DTYPE_I32, 2, kDims23), &a, 1, NULL, 0, NULL,
                    NULL, 0);
  static const int64_t sl_attrs[] = {0, 1, 2, 3, 1, 1};
  uint32_t sl = add(p, ACCY_OP_SLICE, tu_type(F, 2, d22), &a, 1, sl_attrs, 6, NULL, NULL, 0);
  uint32_t rs = add(p, ACCY_OP_RESHAPE, tu_type(F, 1, d6), &a, 1, NULL, 0, NULL, NULL, 0);
  uint32_t big = add(p, ACCY_OP_PARAMETER, tu_type(ACCY_DTYPE_U8, 8, d8), NULL, 0, NULL, 0, "big",
                     NULL, 0);
  uint32_t empty = add(p, ACCY_OP_PARAMETER, tu_type(ACCY_DTYPE_F64, 2, d05), NULL, 0, NULL, 0,
                       "empty", NULL, 0);
  static const int64_t axis1[] = {1};
  uint32_t am = add(p, ACCY_OP_ARGMAX, tu_type(ACCY_DTYPE_I32, 1, d2), &a, 1, axis1, 1, NULL, NULL, 0);
  uint32_t pad_ops[] = {a, k};
  static const int64_t pad_attrs[] = {0, 1, 0, 1, 0, 0};
  uint32_t pad = add(p, ACCY_OP_PAD, tu_type(F, 2, d25), pad_ops, 2, pad_attrs, 6, NULL, NULL, 0);
  output(p, red, "y");
  output(p, tr, "t");
  output(p, cat, "cat");
  output(p, io, "iota");
  output(p, cv, "conv");
  output(p, sl, "s");
  output(p, rs, "r");
  output(p, big, "big");
  output(p, empty, "empty");
  output(p, am, "am");
  output(p, pad, "pad");
  output(p, dot, "dot");
  output(p, red, "y2");
}

/* ops_v1_1.accy (wire 1.1): the ops 1.1 adds, with their attributes: a
 * scatter-add of rows, a scatter-max of elements (k = rank) with u8 indices,
 * a replace with k = 0 (one update: the whole tensor), sort descending,
 * argsort into i64 and i32. */
static void build_ops_v1_1(accy__program *p) {
  static const int64_t d23[] = {2, 3}, d21[] = {2, 1}, d42[] = {4, 2}, d4[] = {4}, d0[] = {0};
  const int32_t F = ACCY_DTYPE_F32;
  accy__program_init(p);
  uint32_t x = add(p, ACCY_OP_PARAMETER, tu_type(F, 2, d23), NULL, 0, NULL, 0, "x", NULL, 0);
  uint32_t i = add(p, ACCY_OP_PARAMETER, tu_type(ACCY_DTYPE_I32, 2, d21), NULL, 0, NULL, 0, "i",
                   NULL, 0);
  uint32_t e = add(p, ACCY_OP_PARAMETER, tu_type(ACCY_DTYPE_U8, 2, d42), NULL, 0, NULL, 0, "e",
                   NULL, 0);
  uint32_t v = add(p, ACCY_OP_PARAMETER, tu_type(F, 1, d4), NULL, 0, NULL, 0, "v", NULL, 0);
  uint32_t z = add(p, ACCY_OP_PARAMETER, tu_type(ACCY_DTYPE_I64, 1, d0), NULL, 0, NULL, 0, "z",
                   NULL, 0);
  static const int64_t m_add[] = {ACCY_SCATTER_ADD}, m_max[] = {ACCY_SCATTER_MAX},
                       m_rep[] = {ACCY_SCATTER_REPLACE};
  uint32_t rows_ops[] = {x, i, x}, elem_ops[] = {x, e, v}, all_ops[] = {x, z, x};
  uint32_t sa = add(p, ACCY_OP_SCATTER, tu_type(F, 2, d23), rows_ops, 3, m_add, 1, NULL, NULL, 0);
  uint32_t sm = add(p, ACCY_OP_SCATTER, tu_type(F, 2, d23), elem_ops, 3, m_max, 1, NULL, NULL, 0);
  uint32_t sr = add(p, ACCY_OP_SCATTER, tu_type(F, 2, d23), all_ops, 3, m_rep, 1, NULL, NULL, 0);
  static const int64_t desc1[] = {1, 1}, asc0[] = {0, 0};
  uint32_t so = add(p, ACCY_OP_SORT, tu_type(F, 2, d23), &x, 1, desc1, 2, NULL, NULL, 0);
  uint32_t a64 = add(p, ACCY_OP_ARGSORT, tu_type(ACCY_DTYPE_I64, 2, d23), &x, 1, asc0, 2, NULL,
                     NULL, 0);
  uint32_t a32 = add(p, ACCY_OP_ARGSORT, tu_type(ACCY_DTYPE_I32, 2, d23), &sm, 1, desc1, 2, NULL,
                     NULL, 0);
  output(p, sa, "scatter_add");
  output(p, sm, "scatter_max");
  output(p, sr, "scatter_replace");
  output(p, so, "sorted");
  output(p, a64, "order");
  output(p, a32, "order32");
}

typedef void (*builder_fn)(accy__program *);
static const struct golden {
  const char *path;
  builder_fn build;
  uint16_t minor; /* the version the file declares */
} kGolden[] = {
    {"tests/data/wire/v1.0/tiny.accyb", build_tiny, 0},
    {"tests/data/wire/v1.0/dtypes.accyb", build_dtypes, 0},
    {"tests/data/wire/v1.0/ops.accyb", build_ops, 0},
    {"tests/data/wire/v1.1/ops_v1_1.accyb", build_ops_v1_1, 1},
};

/* Every op code the format defines, for random programs. */
static const uint16_t kOps[] = {
#define XX(name, code, text, mn, mx) code,
    ACCY_OP_MAP(XX)
#undef XX
};

static void random_name(tu_rng *r, char *buf, size_t max) {
  size_t n = (size_t)tu_rng_range(r, 1, (int64_t)max);
  for (size_t k = 0; k < n; k++) buf[k] = (char)tu_rng_range(r, 1, 255); /* any byte but NUL */
  buf[n] = '\0';
}

/* A structurally valid (not necessarily meaningful) random program. */
static void build_random(accy__program *p, tu_rng *r) {
  static char name[ACCY_MAX_NAME_BYTES + 1];
  static uint8_t payload[8 * 4 * 4 * 4];
  accy__program_init(p);
  uint32_t n = (uint32_t)tu_rng_range(r, 1, 40);
  for (uint32_t i = 0; i < n; i++) {
    uint16_t op = kOps[tu_rng_range(r, 0, ACCY_ARRAY_SIZE(kOps) - 1)];
    accy__type t;
    memset(&t, 0, sizeof t);
    t.dtype = (int32_t)tu_rng_range(r, ACCY_DTYPE_F32, ACCY_DTYPE_BOOL);
    if (op == ACCY_OP_CONSTANT) {
      t.rank = (uint32_t)tu_rng_range(r, 0, 3);
      for (uint32_t d = 0; d < t.rank; d++) t.dims[d] = tu_rng_range(r, 0, 4);
    } else {
      t.rank = (uint32_t)tu_rng_range(r, 0, ACCY_MAX_RANK);
      for (uint32_t d = 0; d < t.rank; d++) t.dims[d] = tu_rng_range(r, 0, 7);
      /* Boundary: one extent at ACCY_MAX_DIM with the others 1 is exactly
       * ACCY_MAX_ELEMENTS. */
      if (t.rank && tu_rng_range(r, 0, 9) == 0) {
        for (uint32_t d = 0; d < t.rank; d++) t.dims[d] = 1;
        t.dims[tu_rng_range(r, 0, t.rank - 1)] = ACCY_MAX_DIM;
      }
    }
    uint32_t ops[8];
    uint32_t n_ops = i ? (uint32_t)tu_rng_range(r, 0, 8) : 0;
    for (uint32_t k = 0; k < n_ops; k++) ops[k] = (uint32_t)tu_rng_range(r, 0, i - 1);
    int64_t attrs[8];
    uint32_t n_attrs = (uint32_t)tu_rng_range(r, 0, 8);
    for (uint32_t k = 0; k < n_attrs; k++) {
      switch (tu_rng_range(r, 0, 3)) {
        case 0: attrs[k] = INT64_MIN; break;
        case 1: attrs[k] = INT64_MAX; break;
        case 2: attrs[k] = -1; break;
        default: attrs[k] = (int64_t)tu_rng_next(r); break;
      }
    }
    bool named = op == ACCY_OP_PARAMETER || op == ACCY_OP_CONSTANT || tu_rng_range(r, 0, 3) == 0;
    if (named) random_name(r, name, tu_rng_range(r, 0, 20) == 0 ? ACCY_MAX_NAME_BYTES : 12);
    uint64_t bytes = 0;
    if (op == ACCY_OP_CONSTANT) {
      uint64_t elems = 0;
      REQUIRE(accy__type_elements(&t, &elems), "bad random constant type");
      bytes = elems * accy__dtype_size(t.dtype);
      tu_fill_random(r, t.dtype, payload, (size_t)elems, true, 0);
    }
    add(p, op, t, ops, n_ops, attrs, n_attrs, named ? name : NULL, payload, bytes);
  }
  uint32_t n_out = (uint32_t)tu_rng_range(r, 0, 6);
  for (uint32_t k = 0; k < n_out; k++) {
    if (tu_rng_range(r, 0, 4) == 0)
      name[0] = '\0'; /* an empty output name is representable */
    else
      random_name(r, name, 16);
    output(p, (uint32_t)tu_rng_range(r, 0, n - 1), name);
  }
}

/* Reads a whole file into malloc'd memory. */
static uint8_t *read_file(const char *path, size_t *out_size) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s (is ACCY_TEST_SRCDIR set?)", path);
  blob b = {0};
  uint8_t buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) b_bytes(&b, buf, n);
  fclose(f);
  *out_size = b.len;
  return b.data;
}

/* ---- roundtrip ------------------------------------------------------------ */

START_TEST(test_roundtrip_every_dtype) {
  accy__program p;
  build_dtypes(&p);
  ck_assert_uint_eq(p.n_params, 13);
  assert_roundtrip(&p);
  accy__program_free(&p);
}
END_TEST

START_TEST(test_roundtrip_ops) {
  accy__program p;
  build_ops(&p);
  assert_roundtrip(&p);
  accy__program_free(&p);
}
END_TEST

START_TEST(test_roundtrip_random_programs) {
  tu_rng r;
  tu_rng_seed(&r, 0xacc1);
  for (int k = 0; k < 300; k++) {
    accy__program p;
    build_random(&p, &r);
    assert_roundtrip(&p);
    accy__program_free(&p);
  }
}
END_TEST

START_TEST(test_roundtrip_empty_program) {
  accy__program p;
  accy__program_init(&p);
  void *enc = NULL;
  size_t size = 0;
  ck_assert_int_eq(accy__wire_encode(&p, &enc, &size), ACCY_STATUS_OK);
  /* Header, two section headers and two zero counts. */
  ck_assert_uint_eq(size, 8 + 12 + 4 + 12 + 4);
  accy__free(enc);
  assert_roundtrip(&p);
  accy__program_free(&p);
}
END_TEST

START_TEST(test_empty_node_name_is_no_name) {
  accy__program p;
  accy__program_init(&p);
  uint32_t i = add(&p, ACCY_OP_IOTA, tu_type(ACCY_DTYPE_I32, 0, NULL), NULL, 0, NULL, 0, "", NULL, 0);
  output(&p, i, "");
  void *enc = NULL;
  size_t size = 0;
  ck_assert_int_eq(accy__wire_encode(&p, &enc, &size), ACCY_STATUS_OK);
  accy__program q;
  ck_assert_int_eq(decode_copy(enc, size, &q), ACCY_STATUS_OK);
  ck_assert_ptr_null(q.nodes[0].name);
  ck_assert_str_eq(q.output_names[0], ""); /* outputs always carry a string */
  accy__program_free(&q);
  accy__free(enc);
  accy__program_free(&p);
}
END_TEST

/* ---- golden files ---------------------------------------------------------- */

START_TEST(test_tiny_matches_the_specification) {
  accy__program want, got;
  build_tiny(&want);
  assert_encodes_to(&want, kTiny, sizeof kTiny);
  ck_assert_int_eq(decode_copy(kTiny, sizeof kTiny, &got), ACCY_STATUS_OK);
  assert_same_program(&want, &got);
  ck_assert_uint_eq(got.n_params, 1);
  ck_assert_str_eq(got.nodes[0].name, "x");
  ck_assert_ptr_null(got.nodes[2].name);
  ck_assert_str_eq(got.output_names[0], "sum");
  accy__program_free(&got);
  accy__program_free(&want);
}
END_TEST

/* Golden files of every wire version must decode in every later release (and
 * are never deleted). Each decodes to the program its builder makes, and
 * re-encodes to the same bytes, minor version included: the encoder keeps
 * the declared minor, and a built program gets the lowest minor that holds
 * its ops (so the 1.0 files are what a 1.1 encoder writes, too). */
START_TEST(test_golden_file_decodes_and_reencodes) {
  const struct golden *g = &kGolden[_i];
  size_t size = 0;
  uint8_t *bytes = read_file(tu_srcdir_path(g->path), &size);
  ck_assert_uint_ge(size, ACCY_WIRE_HEADER_BYTES);
  accy__program got, want;
  accy_status st = decode_copy(bytes, size, &got);
  ck_assert_msg(st == ACCY_STATUS_OK, "%s: %s", g->path, accy__cause());
  ck_assert_uint_eq(got.wire_minor, g->minor);
  ck_assert_uint_eq(bytes[6] | bytes[7] << 8, g->minor);
  g->build(&want);
  assert_same_program(&want, &got);
  ck_assert_uint_eq(expected_minor(&want), g->minor);
  assert_encodes_to(&got, bytes, size);
  assert_encodes_to(&want, bytes, size);
  accy__program_free(&want);
  accy__program_free(&got);
  free(bytes);
}
END_TEST

START_TEST(test_tiny_golden_file_is_the_documented_example) {
  size_t size = 0;
  uint8_t *bytes = read_file(tu_srcdir_path("tests/data/wire/v1.0/tiny.accyb"), &size);
  ck_assert_uint_eq(size, sizeof kTiny);
  ck_assert(memcmp(bytes, kTiny, size) == 0);
  free(bytes);
}
END_TEST

/* ---- robustness ------------------------------------------------------------ */

/* Every proper prefix of a valid program is truncated somewhere: the framing
 * (section lengths) notices before any field does. */
START_TEST(test_every_truncation_fails) {
  accy__program p;
  kGolden[_i].build(&p);
  void *enc = NULL;
  size_t size = 0;
  ck_assert_int_eq(accy__wire_encode(&p, &enc, &size), ACCY_STATUS_OK);
  accy__program_free(&p);
  for (size_t len = 0; len < size; len++) {
    accy__program q;
    accy_status st = decode_copy(enc, len, &q);
    REQUIRE(st == ACCY_STATUS_INVALID_PROGRAM, "length %zu: status %d", len, (int)st);
    REQUIRE(strstr(accy__cause(), "truncated") != NULL, "length %zu: cause %s", len,
            accy__cause());
    assert_program_empty(&q);
  }
  accy__free(enc);
}
END_TEST

/* Truncating the nodes section's body while keeping its length field honest:
 * now the node fields themselves run out, at every possible point. */
START_TEST(test_every_nodes_body_truncation_fails) {
  accy__program p;
  build_ops(&p);
  uint8_t *enc = NULL;
  size_t size = 0;
  ck_assert_int_eq(accy__wire_encode(&p, (void **)&enc, &size), ACCY_STATUS_OK);
  accy__program_free(&p);
  uint64_t body = 0;
  for (int k = 7; k >= 0; k--) body = body << 8 | enc[12 + k];
  const uint8_t *outputs = enc + 20 + body;
  size_t outputs_len = size - 20 - (size_t)body;
  for (uint64_t cut = 0; cut < body; cut++) {
    blob b = {0};
    b_header(&b, 1, 0);
    size_t at = b_section_begin(&b, ACCY_WIRE_SECTION_NODES);
    b_bytes(&b, enc + 20, (size_t)cut);
    b_section_end(&b, at);
    b_bytes(&b, outputs, outputs_len);
    accy__program q;
    accy_status st = decode_copy(b.data, b.len, &q);
    REQUIRE(st == ACCY_STATUS_INVALID_PROGRAM, "cut %llu: status %d", (unsigned long long)cut,
            (int)st);
    REQUIRE(strstr(accy__cause(), " at offset ") != NULL, "cut %llu: cause %s",
            (unsigned long long)cut, accy__cause());
    assert_program_empty(&q);
    b_free(&b);
  }
  accy__free(enc);
}
END_TEST

/* Flips every bit of a valid program once. Nothing may crash (run it under
 * ASan); each result is a clean failure or a program, and since the format
 * has exactly one encoding per program, any program that decodes must
 * re-encode to the flipped bytes. */
static void flip_every_bit(const uint8_t *enc, size_t size) {
  uint8_t *buf = malloc(size);
  ck_assert_ptr_nonnull(buf);
  int decoded = 0, failed = 0;
  for (size_t bit = 0; bit < size * 8; bit++) {
    memcpy(buf, enc, size);
    buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    accy__program q;
    accy_status st = decode_copy(buf, size, &q);
    if (st == ACCY_STATUS_OK) {
      decoded++;
      assert_encodes_to(&q, buf, size);
      accy__program_free(&q);
    } else {
      failed++;
      REQUIRE(st == ACCY_STATUS_INVALID_PROGRAM || st == ACCY_STATUS_UNSUPPORTED_VERSION,
              "bit %zu: status %d", bit, (int)st);
      REQUIRE(accy__cause()[0] != '\0', "bit %zu: empty cause", bit);
      assert_program_empty(&q);
    }
  }
  /* Names and payloads absorb flips; framing does not. */
  ck_assert_int_gt(decoded, 0);
  ck_assert_int_gt(failed, 0);
  free(buf);
}

START_TEST(test_bit_flips_never_crash) {
  accy__program p;
  void *enc = NULL;
  size_t size = 0;
  if (_i < (int)ACCY_ARRAY_SIZE(kGolden)) {
    kGolden[_i].build(&p);
  } else {
    tu_rng r;
    tu_rng_seed(&r, 0xf11b);
    build_random(&p, &r);
  }
  ck_assert_int_eq(accy__wire_encode(&p, &enc, &size), ACCY_STATUS_OK);
  accy__program_free(&p);
  flip_every_bit(enc, size);
  accy__free(enc);
}
END_TEST

START_TEST(test_allocation_failures_are_out_of_memory) {
  accy__program p;
  build_ops(&p);
  void *enc = NULL;
  size_t size = 0;
  ck_assert_int_eq(accy__wire_encode(&p, &enc, &size), ACCY_STATUS_OK);
  long n;
  for (n = 0; n < 10000; n++) {
    accy__alloc_fail_after(n);
    accy__program q;
    accy_status st = accy__wire_decode(enc, size, &q);
    accy__alloc_fail_after(-1);
    if (st == ACCY_STATUS_OK) {
      accy__program_free(&q);
      break;
    }
    REQUIRE(st == ACCY_STATUS_OUT_OF_MEMORY, "fail after %ld: status %d: %s", n, (int)st,
            accy__cause());
    REQUIRE(strstr(accy__cause(), "out of memory") != NULL, "cause: %s", accy__cause());
    assert_program_empty(&q);
  }
  ck_assert_int_gt(n, 0); /* decoding does allocate, so failures were exercised */
  ck_assert_int_lt(n, 10000);

  accy__alloc_fail_after(0);
  void *enc2 = (void *)1;
  size_t size2 = 1;
  accy_status st = accy__wire_encode(&p, &enc2, &size2);
  accy__alloc_fail_after(-1);
  ck_assert_int_eq(st, ACCY_STATUS_OUT_OF_MEMORY);
  ck_assert_ptr_null(enc2);
  ck_assert_uint_eq(size2, 0);
  accy__free(enc);
  accy__program_free(&p);
}
END_TEST

/* ---- header and framing ------------------------------------------------------ */

START_TEST(test_wrong_magic) {
  blob b = {0};
  b_bytes(&b, "ACCX", 4);
  b_u16(&b, 1);
  b_u16(&b, 0);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, "bad magic 41 43 43 58 at offset 0");
  b_free(&b);
}
END_TEST

START_TEST(test_too_short) {
  blob b = {0};
  b_bytes(&b, "ACC", 3);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, "header: magic: truncated");
  b_free(&b);
  b_bytes(&b, "ACCY", 4);
  b_u16(&b, 1);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, "header: minor version: truncated");
  b_free(&b);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, "0 remain"); /* empty input */
}
END_TEST

START_TEST(test_unsupported_versions) {
  static const struct {
    uint16_t major, minor;
    const char *cause;
  } kCases[] = {
      {1, ACCY_WIRE_VERSION_MINOR + 1, "wire 1.2, this build reads 1.0-1.1"},
      {2, 0, "wire 2.0, this build reads 1.0-1.1"},
      {0, 9, "wire 0.9, this build reads 1.0-1.1"},
      {0xffff, 0xffff, "wire 65535.65535, this build reads"},
  };
  /* The expected text assumes this build reads 1.0 and 1.1; when the minor
   * moves, these strings move with it. */
  ck_assert_int_eq(ACCY_WIRE_VERSION_MINOR, 1);
  blob b = {0};
  size_t at = b_begin_nodes(&b, 0);
  b_finish(&b, at, true);
  b.data[4] = (uint8_t)kCases[_i].major;
  b.data[5] = (uint8_t)(kCases[_i].major >> 8);
  b.data[6] = (uint8_t)kCases[_i].minor;
  b.data[7] = (uint8_t)(kCases[_i].minor >> 8);
  expect_fail(&b, ACCY_STATUS_UNSUPPORTED_VERSION, kCases[_i].cause);
  b_free(&b);
}
END_TEST

/* Ops that wire 1.1 adds are not ops of 1.0: bytes that declare 1.0 and use
 * one are refused with a cause naming the op and both versions; the same
 * bytes declaring 1.1 decode. */
START_TEST(test_new_ops_need_their_minor) {
  static const struct {
    uint16_t op;
    const char *name;
  } kNew[] = {{ACCY_OP_SCATTER, "scatter"}, {ACCY_OP_SORT, "sort"}, {ACCY_OP_ARGSORT, "argsort"}};
  ck_assert_uint_eq(accy__wire_op_minor(kNew[_i].op), 1);
  for (uint16_t minor = 0; minor <= 1; minor++) {
    blob b = {0};
    b_header(&b, 1, minor);
    size_t at = b_section_begin(&b, ACCY_WIRE_SECTION_NODES);
    b_u32(&b, 2);
    b_node(&b, ACCY_OP_PARAMETER, ACCY_DTYPE_F32, 2, kDims23, 0, NULL, 0, NULL, "x");
    static const uint32_t op0[] = {0};
    b_node(&b, kNew[_i].op, ACCY_DTYPE_F32, 2, kDims23, 1, op0, 0, NULL, NULL);
    b_finish(&b, at, false);
    if (minor == 0) {
      char want[160];
      snprintf(want, sizeof want,
               "node 1: op code %u (%s) needs wire 1.1, but the program declares wire 1.0 at "
               "offset 57",
               kNew[_i].op, kNew[_i].name);
      expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, want);
    } else {
      /* Structure only: the missing attributes are the verifier's business. */
      accy__program p;
      expect_ok(&b, &p);
      ck_assert_uint_eq(p.wire_minor, 1);
      ck_assert_uint_eq(p.nodes[1].op, kNew[_i].op);
      assert_encodes_to(&p, b.data, b.len);
      accy__program_free(&p);
    }
    b_free(&b);
  }
}
END_TEST

/* Every other op code is an op of 1.0, and codes no version defines stay
 * unknown whatever the declared minor. */
START_TEST(test_op_minor_table) {
  int v11 = 0;
  for (uint32_t op = 0; op <= UINT16_MAX; op++) {
    uint16_t m = accy__wire_op_minor(op);
    if (!accy__op_name(op)) {
      REQUIRE(m == UINT16_MAX, "unknown op %u has minor %u", op, m);
      continue;
    }
    REQUIRE(m <= ACCY_WIRE_VERSION_MINOR, "op %u has minor %u", op, m);
    v11 += m == 1;
  }
  ck_assert_int_eq(v11, 3);
  blob b = {0};
  b_header(&b, 1, 1);
  size_t at = b_section_begin(&b, ACCY_WIRE_SECTION_NODES);
  b_u32(&b, 1);
  b_node(&b, 95, ACCY_DTYPE_F32, 0, NULL, 0, NULL, 0, NULL, NULL);
  b_finish(&b, at, false);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, "node 0: unknown op code 95 at offset 24");
  b_free(&b);
}
END_TEST

/* The encoder writes the lowest minor that holds a built program (1.0
 * readers can read it), and keeps a decoded program's declared minor. */
START_TEST(test_encoder_writes_the_lowest_minor) {
  accy__program p;
  build_ops(&p);
  void *enc = NULL;
  size_t size = 0;
  ck_assert_int_eq(accy__wire_encode(&p, &enc, &size), ACCY_STATUS_OK);
  ck_assert_uint_eq(((uint8_t *)enc)[6], 0);
  /* The same program read from bytes that declare 1.1 stays 1.1. */
  ((uint8_t *)enc)[6] = 1;
  accy__program q;
  ck_assert_int_eq(decode_copy(enc, size, &q), ACCY_STATUS_OK);
  ck_assert_uint_eq(q.wire_minor, 1);
  assert_encodes_to(&q, enc, size);
  accy__program_free(&q);
  accy__free(enc);
  accy__program_free(&p);

  build_ops_v1_1(&p);
  ck_assert_int_eq(accy__wire_encode(&p, &enc, &size), ACCY_STATUS_OK);
  ck_assert_uint_eq(((uint8_t *)enc)[6], 1);
  accy__free(enc);
  /* An IR claiming a minor this build does not know cannot be encoded. */
  p.wire_minor = ACCY_WIRE_VERSION_MINOR + 1;
  enc = (void *)1;
  ck_assert_int_eq(accy__wire_encode(&p, &enc, &size), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_ptr_null(enc);
  ck_assert_cause_has("program declares wire 1.2, newer than this build's 1.1");
  accy__program_free(&p);
}
END_TEST

START_TEST(test_unknown_or_misordered_sections) {
  blob b = {0};
  b_header(&b, 1, 0);
  size_t at = b_section_begin(&b, 3);
  b_u32(&b, 0);
  b_section_end(&b, at);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, "section id 3 (unknown) at offset 8, expected 1");
  b_free(&b);

  b_header(&b, 1, 0);
  at = b_section_begin(&b, ACCY_WIRE_SECTION_OUTPUTS);
  b_u32(&b, 0);
  b_section_end(&b, at);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, "section id 2 (outputs) at offset 8, expected 1");
  b_free(&b);

  /* A nodes section but no outputs section. */
  at = b_begin_nodes(&b, 0);
  b_section_end(&b, at);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, "outputs section header: id: truncated");
  b_free(&b);

  /* Two nodes sections. */
  at = b_begin_nodes(&b, 0);
  b_section_end(&b, at);
  at = b_section_begin(&b, ACCY_WIRE_SECTION_NODES);
  b_u32(&b, 0);
  b_section_end(&b, at);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, "section id 1 (nodes) at offset 24, expected 2");
  b_free(&b);
}
END_TEST

START_TEST(test_trailing_bytes) {
  blob b = {0};
  size_t at = b_begin_nodes(&b, 0);
  b_finish(&b, at, true);
  b_u8(&b, 0);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM,
              "after the outputs section: 1 unexpected trailing bytes at offset 40");
  b_free(&b);

  /* Slack inside a section: the section must be consumed exactly. */
  at = b_begin_nodes(&b, 0);
  b_u16(&b, 0);
  b_finish(&b, at, true);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM,
              "nodes section: 2 unexpected trailing bytes at offset 24");
  b_free(&b);

  at = b_begin_nodes(&b, 0);
  b_section_end(&b, at);
  at = b_section_begin(&b, ACCY_WIRE_SECTION_OUTPUTS);
  b_u32(&b, 0);
  b_u8(&b, 7);
  b_section_end(&b, at);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM,
              "outputs section: 1 unexpected trailing bytes at offset 40");
  b_free(&b);
}
END_TEST

/* The size limit is checked before anything past the header is read. The
 * buffer really is that large (reserved, untouched pages cost nothing). */
START_TEST(test_program_bytes_limit) {
#if SIZE_MAX > UINT32_MAX
  size_t size = (size_t)ACCY_MAX_PROGRAM_BYTES + 1;
  uint8_t *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                    -1, 0);
  ck_assert_msg(m != MAP_FAILED, "cannot reserve %zu bytes of address space", size);
  memcpy(m, "ACCY\x01\x00\x00\x00", 8);
  accy__program p;
  ck_assert_int_eq(accy__wire_decode(m, size, &p), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_cause_has("program is 4294967297 bytes, exceeds ACCY_MAX_PROGRAM_BYTES 4294967296");
  assert_program_empty(&p);
  munmap(m, size);
#else
  ck_assert_uint_le(SIZE_MAX, ACCY_MAX_PROGRAM_BYTES); /* the limit cannot be reached */
#endif
}
END_TEST

/* ---- counts and limits ---------------------------------------------------------- */

/* A 30-byte program claiming a huge node count fails before allocating. */
START_TEST(test_huge_node_count_fails_fast) {
  static const struct {
    uint32_t n;
    const char *cause;
  } kCases[] = {
      {UINT32_MAX, "node count 4294967295 exceeds ACCY_MAX_NODES 65536 at offset 20"},
      {ACCY_MAX_NODES + 1, "node count 65537 exceeds ACCY_MAX_NODES 65536"},
      /* Boundary: within the limit, but 14 bytes cannot hold 65536 nodes. */
      {ACCY_MAX_NODES, "count 65536 needs at least 16 bytes each at offset 24, but only 6 bytes"},
      {1, "count 1 needs at least 16 bytes each at offset 24, but only 6 bytes remain"},
  };
  blob b = {0};
  size_t at = b_begin_nodes(&b, kCases[_i].n);
  b_u16(&b, 0);
  b_u32(&b, 0);
  b_section_end(&b, at);
  ck_assert_uint_eq(b.len, 30);
  uint64_t before = accy__alloc_count();
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, kCases[_i].cause);
  ck_assert_uint_eq(accy__alloc_count(), before);
  b_free(&b);
}
END_TEST

START_TEST(test_huge_section_length) {
  blob b = {0};
  b_header(&b, 1, 0);
  b_u32(&b, ACCY_WIRE_SECTION_NODES);
  b_u64(&b, UINT64_MAX);
  b_u32(&b, 1);
  b_u16(&b, 0);
  b_u32(&b, 0);
  ck_assert_uint_eq(b.len, 30);
  uint64_t before = accy__alloc_count();
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM,
              "nodes section: truncated: section needs 18446744073709551615 bytes at offset 20, "
              "10 remain");
  ck_assert_uint_eq(accy__alloc_count(), before);
  b_free(&b);
}
END_TEST

START_TEST(test_operand_and_attr_counts) {
  blob b = {0};
  /* Node 1 claims too many operands / attributes, or more than remain. */
  static const struct {
    uint32_t n_operands, n_attrs;
    const char *cause;
  } kCases[] = {
      {ACCY_MAX_OPERANDS + 1, 0, "node 1: operand count 1025 exceeds ACCY_MAX_OPERANDS 1024 at offset"},
      {ACCY_MAX_OPERANDS, 0, "node 1: operands: count 1024 needs at least 4 bytes each"},
      {0, ACCY_MAX_ATTRS + 1, "node 1: attribute count 257 exceeds ACCY_MAX_ATTRS 256 at offset"},
      {0, ACCY_MAX_ATTRS, "node 1: attributes: count 256 needs at least 8 bytes each"},
      {UINT32_MAX, 0, "operand count 4294967295 exceeds ACCY_MAX_OPERANDS"},
  };
  size_t at = b_begin_nodes(&b, 2);
  b_node(&b, ACCY_OP_IOTA, ACCY_DTYPE_I32, 0, NULL, 0, NULL, 0, NULL, NULL);
  b_u16(&b, ACCY_OP_CONCATENATE);
  b_u8(&b, ACCY_DTYPE_I32);
  b_u8(&b, 0);
  b_u32(&b, kCases[_i].n_operands);
  if (kCases[_i].n_attrs) b_u32(&b, kCases[_i].n_attrs);
  b_u64(&b, 0);
  b_finish(&b, at, false);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, kCases[_i].cause);
  b_free(&b);
}
END_TEST

/* Boundary: exactly at each count limit decodes. */
START_TEST(test_counts_at_limits_decode) {
  static uint32_t ops[ACCY_MAX_OPERANDS];
  static int64_t attrs[ACCY_MAX_ATTRS];
  for (uint32_t k = 0; k < ACCY_MAX_ATTRS; k++) attrs[k] = INT64_MIN + k;
  blob b = {0};
  size_t at = b_begin_nodes(&b, 2);
  b_node(&b, ACCY_OP_IOTA, ACCY_DTYPE_I32, 0, NULL, 0, NULL, ACCY_MAX_ATTRS, attrs, NULL);
  b_node(&b, ACCY_OP_CONCATENATE, ACCY_DTYPE_I32, 0, NULL, ACCY_MAX_OPERANDS, ops, 0, NULL, NULL);
  b_section_end(&b, at);
  at = b_section_begin(&b, ACCY_WIRE_SECTION_OUTPUTS);
  b_u32(&b, ACCY_MAX_OUTPUTS);
  for (uint32_t k = 0; k < ACCY_MAX_OUTPUTS; k++) {
    b_u32(&b, k & 1);
    b_name(&b, "o");
  }
  b_section_end(&b, at);
  accy__program p;
  expect_ok(&b, &p);
  ck_assert_uint_eq(p.nodes[0].n_attrs, ACCY_MAX_ATTRS);
  ck_assert_int_eq(p.nodes[0].attrs[ACCY_MAX_ATTRS - 1], INT64_MIN + ACCY_MAX_ATTRS - 1);
  ck_assert_uint_eq(p.nodes[1].n_operands, ACCY_MAX_OPERANDS);
  ck_assert_uint_eq(p.n_outputs, ACCY_MAX_OUTPUTS);
  assert_encodes_to(&p, b.data, b.len);
  accy__program_free(&p);

  /* One output more than the limit. */
  b.data[at + 8] = (uint8_t)((ACCY_MAX_OUTPUTS + 1) & 0xff);
  b.data[at + 9] = (uint8_t)((ACCY_MAX_OUTPUTS + 1) >> 8);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM,
              "outputs section: output count 4097 exceeds ACCY_MAX_OUTPUTS 4096 at offset");
  b_free(&b);
}
END_TEST

START_TEST(test_max_nodes_decode) {
  blob b = {0};
  size_t at = b_begin_nodes(&b, ACCY_MAX_NODES);
  for (uint32_t i = 0; i < ACCY_MAX_NODES; i++)
    b_node(&b, ACCY_OP_IOTA, ACCY_DTYPE_U8, 0, NULL, 0, NULL, 0, NULL, NULL);
  b_finish(&b, at, false);
  accy__program p;
  expect_ok(&b, &p);
  ck_assert_uint_eq(p.n_nodes, ACCY_MAX_NODES);
  assert_encodes_to(&p, b.data, b.len);
  accy__program_free(&p);
  b_free(&b);
}
END_TEST

START_TEST(test_output_count_exceeds_remaining) {
  blob b = {0};
  size_t at = b_begin_nodes(&b, 1);
  b_node(&b, ACCY_OP_IOTA, ACCY_DTYPE_U8, 0, NULL, 0, NULL, 0, NULL, NULL);
  b_section_end(&b, at);
  at = b_section_begin(&b, ACCY_WIRE_SECTION_OUTPUTS);
  b_u32(&b, 3);
  b_u32(&b, 0);
  b_name(&b, "");
  b_section_end(&b, at);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM,
              "outputs section: output count: count 3 needs at least 8 bytes each");
  b_free(&b);
}
END_TEST

/* ---- node fields -------------------------------------------------------------- */

START_TEST(test_forward_and_self_operands) {
  static const struct {
    uint32_t operand;
    const char *cause;
  } kCases[] = {
      {3, "node 2: operand 1 refers to node 3, not an earlier node (at offset"},
      {2, "node 2: operand 1 refers to node 2, not an earlier node"},
      {UINT32_MAX, "node 2: operand 1 refers to node 4294967295, not an earlier node"},
  };
  blob b = {0};
  size_t at = b_begin_nodes(&b, 4);
  b_node(&b, ACCY_OP_PARAMETER, ACCY_DTYPE_F32, 2, kDims23, 0, NULL, 0, NULL, "a");
  b_node(&b, ACCY_OP_PARAMETER, ACCY_DTYPE_F32, 2, kDims23, 0, NULL, 0, NULL, "b");
  uint32_t ops[] = {0, kCases[_i].operand};
  b_node(&b, ACCY_OP_ADD, ACCY_DTYPE_F32, 2, kDims23, 2, ops, 0, NULL, NULL);
  b_node(&b, ACCY_OP_NEGATE, ACCY_DTYPE_F32, 2, kDims23, 1, ops, 0, NULL, NULL);
  b_finish(&b, at, false);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, kCases[_i].cause);
  b_free(&b);
}
END_TEST

START_TEST(test_output_refers_to_missing_node) {
  blob b = {0};
  size_t at = b_begin_nodes(&b, 1);
  b_node(&b, ACCY_OP_IOTA, ACCY_DTYPE_U8, 0, NULL, 0, NULL, 0, NULL, NULL);
  b_section_end(&b, at);
  at = b_section_begin(&b, ACCY_WIRE_SECTION_OUTPUTS);
  b_u32(&b, 1);
  b_u32(&b, 1);
  b_name(&b, "y");
  b_section_end(&b, at);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM,
              "output 0: refers to node 1, but the program has 1 nodes");
  b_free(&b);
}
END_TEST

START_TEST(test_unknown_op_and_invalid_dtype) {
  static const struct {
    uint16_t op;
    uint8_t dtype;
    const char *cause;
  } kCases[] = {
      {0, ACCY_DTYPE_F32, "node 0: unknown op code 0 at offset 24"},
      {3, ACCY_DTYPE_F32, "node 0: unknown op code 3 at offset 24"},
      {0xffff, ACCY_DTYPE_F32, "node 0: unknown op code 65535"},
      {ACCY_OP_IOTA, 0, "node 0: dtype 0 is not a valid dtype at offset 26"},
      {ACCY_OP_IOTA, ACCY_DTYPE_BOOL + 1, "node 0: dtype 14 is not a valid dtype"},
      {ACCY_OP_IOTA, 0xff, "node 0: dtype 255 is not a valid dtype"},
  };
  blob b = {0};
  size_t at = b_begin_nodes(&b, 1);
  b_node(&b, kCases[_i].op, kCases[_i].dtype, 0, NULL, 0, NULL, 0, NULL, NULL);
  b_finish(&b, at, false);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, kCases[_i].cause);
  b_free(&b);
}
END_TEST

START_TEST(test_bad_types) {
  static const int64_t kBig = ACCY_MAX_DIM;
  static const struct {
    uint8_t rank;
    int64_t dims[9];
    const char *cause;
  } kCases[] = {
      {9, {1, 1, 1, 1, 1, 1, 1, 1, 1}, "node 0: rank 9 exceeds ACCY_MAX_RANK 8 at offset 27"},
      {255, {0}, "node 0: rank 255 exceeds ACCY_MAX_RANK 8"},
      {2, {3, -1}, "node 0: dims[1] = -1 is outside 0..ACCY_MAX_DIM 1099511627776 at offset 36"},
      {1, {INT64_MIN}, "node 0: dims[0] = -9223372036854775808 is outside"},
      {1, {kBig + 1}, "node 0: dims[0] = 1099511627777 is outside 0..ACCY_MAX_DIM"},
      {2, {kBig, 2}, "node 0: type has more than ACCY_MAX_ELEMENTS 1099511627776 elements"},
      /* 2^32 * 2^32 wraps to exactly 0 in 64 bits: must not pass as empty. */
      {2, {INT64_C(1) << 32, INT64_C(1) << 32}, "more than ACCY_MAX_ELEMENTS"},
      {4, {kBig, kBig, kBig, kBig}, "more than ACCY_MAX_ELEMENTS"},
  };
  blob b = {0};
  size_t at = b_begin_nodes(&b, 1);
  b_u16(&b, ACCY_OP_IOTA);
  b_u8(&b, ACCY_DTYPE_F32);
  b_u8(&b, kCases[_i].rank);
  for (uint32_t d = 0; d < kCases[_i].rank && d < 9; d++) b_u64(&b, (uint64_t)kCases[_i].dims[d]);
  b_u32(&b, 0); /* operands */
  b_u32(&b, 0); /* attrs */
  b_u32(&b, 0); /* name */
  b_finish(&b, at, false);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, kCases[_i].cause);
  b_free(&b);
}
END_TEST

/* Boundary: a zero extent makes the tensor empty even when the other extents
 * multiply past 2^64; the largest extents and exactly ACCY_MAX_ELEMENTS
 * elements are fine. */
START_TEST(test_types_at_limits_decode) {
  static const int64_t kBig = ACCY_MAX_DIM;
  static const int64_t zero_last[] = {kBig, kBig, kBig, kBig, 0};
  static const int64_t max_elems[] = {1, 1, 1, 1, 1, 1, 1, kBig};
  static const int64_t zero_first[] = {0, kBig, kBig, kBig};
  blob b = {0};
  size_t at = b_begin_nodes(&b, 3);
  b_node(&b, ACCY_OP_IOTA, ACCY_DTYPE_F32, 5, zero_last, 0, NULL, 0, NULL, NULL);
  b_node(&b, ACCY_OP_IOTA, ACCY_DTYPE_F32, ACCY_MAX_RANK, max_elems, 0, NULL, 0, NULL, NULL);
  b_node(&b, ACCY_OP_CONSTANT, ACCY_DTYPE_F64, 4, zero_first, 0, NULL, 0, NULL, "z");
  b_u64(&b, 0);
  b_finish(&b, at, false);
  accy__program p;
  expect_ok(&b, &p);
  ck_assert_uint_eq(p.nodes[1].type.rank, ACCY_MAX_RANK);
  ck_assert_int_eq(p.nodes[1].type.dims[7], kBig);
  ck_assert_uint_eq(p.nodes[2].payload_bytes, 0);
  assert_encodes_to(&p, b.data, b.len);
  accy__program_free(&p);
  b_free(&b);
}
END_TEST

START_TEST(test_payload_length_mismatch) {
  static const struct {
    uint8_t dtype;
    uint64_t claimed;
    const char *cause;
  } kCases[] = {
      {ACCY_DTYPE_F32, 23, "node 0: constant payload length 23 does not match f32[2,3] (24 bytes) at offset 57"},
      {ACCY_DTYPE_F32, 25, "constant payload length 25 does not match f32[2,3] (24 bytes)"},
      {ACCY_DTYPE_F64, 24, "constant payload length 24 does not match f64[2,3] (48 bytes)"},
      {ACCY_DTYPE_BOOL, UINT64_MAX, "constant payload length 18446744073709551615 does not match"},
      {ACCY_DTYPE_I8, 6, "node 0: payload: truncated: byte string needs 6 bytes at offset 65, 0 remain"},
  };
  blob b = {0};
  size_t at = b_begin_nodes(&b, 1);
  b_node(&b, ACCY_OP_CONSTANT, kCases[_i].dtype, 2, kDims23, 0, NULL, 0, NULL, "c");
  b_u64(&b, kCases[_i].claimed);
  b_finish(&b, at, true);
  uint64_t before = accy__alloc_count();
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, kCases[_i].cause);
  ck_assert_uint_eq(accy__alloc_count(), before);
  b_free(&b);
}
END_TEST

/* The total-constant limit is checked before the payload is read, so a short
 * input can exercise it. */
START_TEST(test_constant_bytes_limit) {
  int64_t dims[] = {(int64_t)ACCY_MAX_CONSTANT_BYTES + 1};
  blob b = {0};
  size_t at = b_begin_nodes(&b, 1);
  b_node(&b, ACCY_OP_CONSTANT, ACCY_DTYPE_U8, 1, dims, 0, NULL, 0, NULL, "c");
  b_u64(&b, (uint64_t)dims[0]);
  b_finish(&b, at, true);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM,
              "node 0: constants total more than ACCY_MAX_CONSTANT_BYTES 4294967296 (this "
              "payload 4294967297, before it 0)");
  b_free(&b);

  /* Boundary: exactly the limit passes that check and then runs out of
   * bytes. */
  dims[0] = (int64_t)ACCY_MAX_CONSTANT_BYTES;
  at = b_begin_nodes(&b, 1);
  b_node(&b, ACCY_OP_CONSTANT, ACCY_DTYPE_U8, 1, dims, 0, NULL, 0, NULL, "c");
  b_u64(&b, (uint64_t)dims[0]);
  b_finish(&b, at, true);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM,
              "node 0: payload: truncated: byte string needs 4294967296 bytes");
  b_free(&b);
}
END_TEST

START_TEST(test_names) {
  static char name[ACCY_MAX_NAME_BYTES + 2];
  memset(name, 'n', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  blob b = {0};

  /* Boundary: ACCY_MAX_NAME_BYTES bytes is fine, one more is not. */
  name[ACCY_MAX_NAME_BYTES] = '\0';
  size_t at = b_begin_nodes(&b, 1);
  b_node(&b, ACCY_OP_PARAMETER, ACCY_DTYPE_F32, 0, NULL, 0, NULL, 0, NULL, name);
  b_finish(&b, at, false);
  accy__program p;
  expect_ok(&b, &p);
  ck_assert_uint_eq(strlen(p.nodes[0].name), ACCY_MAX_NAME_BYTES);
  accy__program_free(&p);
  b_free(&b);

  name[ACCY_MAX_NAME_BYTES] = 'n';
  at = b_begin_nodes(&b, 1);
  b_node(&b, ACCY_OP_PARAMETER, ACCY_DTYPE_F32, 0, NULL, 0, NULL, 0, NULL, name);
  b_finish(&b, at, false);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM,
              "node 0: name length 1025 exceeds ACCY_MAX_NAME_BYTES 1024 at offset 36");
  b_free(&b);

  at = b_begin_nodes(&b, 1);
  b_node(&b, ACCY_OP_PARAMETER, ACCY_DTYPE_F32, 0, NULL, 0, NULL, 0, NULL, "ab");
  b_finish(&b, at, false);
  b.data[41] = '\0'; /* the name (at offset 40) is now "a\0" */
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, "node 0: name contains a NUL byte at offset 41");
  b_free(&b);

  /* Outputs follow the same rules. */
  at = b_begin_nodes(&b, 1);
  b_node(&b, ACCY_OP_IOTA, ACCY_DTYPE_U8, 0, NULL, 0, NULL, 0, NULL, NULL);
  b_section_end(&b, at);
  at = b_section_begin(&b, ACCY_WIRE_SECTION_OUTPUTS);
  b_u32(&b, 2);
  b_u32(&b, 0);
  b_name(&b, "ok");
  b_u32(&b, 0);
  b_u32(&b, 3);
  b_bytes(&b, "o\0k", 3);
  b_section_end(&b, at);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, "output 1: name contains a NUL byte at offset");
  b_free(&b);

  at = b_begin_nodes(&b, 1);
  b_node(&b, ACCY_OP_IOTA, ACCY_DTYPE_U8, 0, NULL, 0, NULL, 0, NULL, NULL);
  b_section_end(&b, at);
  at = b_section_begin(&b, ACCY_WIRE_SECTION_OUTPUTS);
  b_u32(&b, 1);
  b_u32(&b, 0);
  b_u32(&b, UINT32_MAX);
  b_section_end(&b, at);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM,
              "output 0: name length 4294967295 exceeds ACCY_MAX_NAME_BYTES 1024");
  b_free(&b);
}
END_TEST

START_TEST(test_parameter_limit_names_node) {
  blob b = {0};
  size_t at = b_begin_nodes(&b, ACCY_MAX_PARAMETERS + 1);
  for (uint32_t i = 0; i <= ACCY_MAX_PARAMETERS; i++)
    b_node(&b, ACCY_OP_PARAMETER, ACCY_DTYPE_U8, 0, NULL, 0, NULL, 0, NULL, "p");
  b_finish(&b, at, false);
  expect_fail(&b, ACCY_STATUS_INVALID_PROGRAM, "node 4096 (at offset");
  ck_assert_cause_has("ACCY_MAX_PARAMETERS 4096");
  b_free(&b);
}
END_TEST

/* ---- encoder ------------------------------------------------------------------ */

START_TEST(test_encode_rejects_what_the_format_cannot_hold) {
  static const uint8_t four[4] = {1, 2, 3, 4};
  accy__program p;
  accy__program_init(&p);
  add(&p, ACCY_OP_IOTA, tu_type(ACCY_DTYPE_F32, 0, NULL), NULL, 0, NULL, 0, NULL, NULL, 0);
  if (_i == 0) {
    add(&p, ACCY_OP_ADD, tu_type(ACCY_DTYPE_F32, 0, NULL), NULL, 0, NULL, 0, NULL, four, 4);
  } else {
    add(&p, ACCY_OP_IOTA, tu_type(300, 0, NULL), NULL, 0, NULL, 0, NULL, NULL, 0);
  }
  void *enc = (void *)1;
  size_t size = 1;
  ck_assert_int_eq(accy__wire_encode(&p, &enc, &size), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_cause_has(_i == 0 ? "node 1: op 40 is not a constant but has a 4-byte payload"
                              : "node 1: dtype 300 cannot be encoded");
  ck_assert_ptr_null(enc);
  ck_assert_uint_eq(size, 0);
  accy__program_free(&p);
}
END_TEST

/* Decode rules the layout can express are not the encoder's business: such a
 * program encodes, and decoding the bytes reports the problem. */
START_TEST(test_encode_does_not_verify) {
  accy__program p;
  accy__program_init(&p);
  uint32_t fwd = 5;
  add(&p, ACCY_OP_NEGATE, tu_type(ACCY_DTYPE_F32, 0, NULL), &fwd, 1, NULL, 0, NULL, NULL, 0);
  void *enc = NULL;
  size_t size = 0;
  ck_assert_int_eq(accy__wire_encode(&p, &enc, &size), ACCY_STATUS_OK);
  accy__program q;
  ck_assert_int_eq(decode_copy(enc, size, &q), ACCY_STATUS_INVALID_PROGRAM);
  ck_assert_cause_has("node 0: operand 0 refers to node 5, not an earlier node");
  accy__free(enc);
  accy__program_free(&p);
}
END_TEST

static Suite *wire_suite(void) {
  Suite *s = suite_create("wire");
  TCase *tc = tcase_create("roundtrip");
  tcase_add_test(tc, test_roundtrip_every_dtype);
  tcase_add_test(tc, test_roundtrip_ops);
  tcase_add_test(tc, test_roundtrip_random_programs);
  tcase_add_test(tc, test_roundtrip_empty_program);
  tcase_add_test(tc, test_empty_node_name_is_no_name);
  suite_add_tcase(s, tc);

  tc = tcase_create("golden");
  tcase_add_test(tc, test_tiny_matches_the_specification);
  tcase_add_loop_test(tc, test_golden_file_decodes_and_reencodes, 0, (int)ACCY_ARRAY_SIZE(kGolden));
  tcase_add_test(tc, test_tiny_golden_file_is_the_documented_example);
  suite_add_tcase(s, tc);

  tc = tcase_create("robustness");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_every_truncation_fails, 0, (int)ACCY_ARRAY_SIZE(kGolden));
  tcase_add_test(tc, test_every_nodes_body_truncation_fails);
  tcase_add_loop_test(tc, test_bit_flips_never_crash, 0, (int)ACCY_ARRAY_SIZE(kGolden) + 1);
  tcase_add_test(tc, test_allocation_failures_are_out_of_memory);
  suite_add_tcase(s, tc);

  tc = tcase_create("framing");
  tcase_add_test(tc, test_wrong_magic);
  tcase_add_test(tc, test_too_short);
  tcase_add_loop_test(tc, test_unsupported_versions, 0, 4);
  tcase_add_loop_test(tc, test_new_ops_need_their_minor, 0, 3);
  tcase_add_test(tc, test_op_minor_table);
  tcase_add_test(tc, test_encoder_writes_the_lowest_minor);
  tcase_add_test(tc, test_unknown_or_misordered_sections);
  tcase_add_test(tc, test_trailing_bytes);
  tcase_add_test(tc, test_program_bytes_limit);
  suite_add_tcase(s, tc);

  tc = tcase_create("limits");
  tcase_add_loop_test(tc, test_huge_node_count_fails_fast, 0, 4);
  tcase_add_test(tc, test_huge_section_length);
  tcase_add_loop_test(tc, test_operand_and_attr_counts, 0, 5);
  tcase_add_test(tc, test_counts_at_limits_decode);
  tcase_add_test(tc, test_max_nodes_decode);
  tcase_add_test(tc, test_output_count_exceeds_remaining);
  tcase_add_test(tc, test_parameter_limit_names_node);
  suite_add_tcase(s, tc);

  tc = tcase_create("fields");
  tcase_add_loop_test(tc, test_forward_and_self_operands, 0, 3);
  tcase_add_test(tc, test_output_refers_to_missing_node);
  tcase_add_loop_test(tc, test_unknown_op_and_invalid_dtype, 0, 6);
  tcase_add_loop_test(tc, test_bad_types, 0, 8);
  tcase_add_test(tc, test_types_at_limits_decode);
  tcase_add_loop_test(tc, test_payload_length_mismatch, 0, 5);
  tcase_add_test(tc, test_constant_bytes_limit);
  tcase_add_test(tc, test_names);
  suite_add_tcase(s, tc);

  tc = tcase_create("encoder");
  tcase_add_loop_test(tc, test_encode_rejects_what_the_format_cannot_hold, 0, 2);
  tcase_add_test(tc, test_encode_does_not_verify);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(wire_suite());
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
