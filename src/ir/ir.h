/* src/ir/ir.h: the program IR, shared by decode, encode, verify, the builder,
 * the text form, the compiler and the kernels.
 *
 * A program is a list of nodes in SSA order: a node's operands are indices of
 * earlier nodes, so every program is acyclic by construction. Parameters are
 * nodes of op PARAMETER; their order of appearance is the input order.
 * Outputs name nodes by index. Everything a program owns lives in its arena.
 *
 * Every node carries its result type. Integer attributes (attrs) are one flat
 * int64 array whose layout depends on the op: the attribute schemas of
 * src/ir/op_traits.c are the normative list (docs/ops.md gives the meaning of
 * each value). */
#ifndef ACCY_IR_IR_H
#define ACCY_IR_IR_H

#include "src/internal.h"
#include "src/base/alloc.h"
#include "src/base/dtype.h"
#include "src/base/limits.h"
#include "src/ir/op_traits.h"

/* A tensor type: element type and row-major extents. */
typedef struct accy__type {
  int32_t dtype;                /* accy_dtype */
  uint32_t rank;                /* 0..ACCY_MAX_RANK */
  int64_t dims[ACCY_MAX_RANK];  /* entries >= rank are 0 */
} accy__type;

typedef struct accy__node {
  uint16_t op;          /* accy_op */
  accy__type type;      /* result type */
  uint32_t n_operands;
  uint32_t *operands;   /* indices of earlier nodes; arena-owned */
  uint32_t n_attrs;
  int64_t *attrs;       /* op-specific; arena-owned; NULL when n_attrs is 0 */
  char *name;           /* parameters and constants: required; else NULL */
  uint64_t payload_bytes;
  void *payload;        /* constants: element bytes (little endian), 64-aligned */
} accy__node;

typedef struct accy__program {
  accy__arena arena;    /* owns every pointer below */
  uint32_t n_nodes;
  uint32_t cap_nodes;
  accy__node *nodes;    /* accy__malloc'd (grows); freed with the program */
  uint32_t n_params;
  uint32_t cap_params;
  uint32_t *params;     /* node index of each parameter, in input order; grows */
  uint32_t n_outputs;
  uint32_t cap_outputs;
  uint32_t *outputs;    /* node index of each output; grows */
  uint32_t cap_output_names;
  char **output_names;  /* parallel to outputs; arena strings */
  uint16_t wire_minor;  /* minor version the bytes declared (decode) */
} accy__program;

/* Initialises an empty program. */
void accy__program_init(accy__program *p);
/* Frees everything the program owns; the struct may be re-initialised. */
void accy__program_free(accy__program *p);

/* Appends a node. Copies |operands|, |attrs|, |name| (|name_len| bytes) and
 * |payload| into the program. For PARAMETER nodes also appends to params.
 * Performs NO semantic checks (see accy__verify); only OUT_OF_MEMORY and the
 * ACCY_MAX_NODES / ACCY_MAX_PARAMETERS limits (INVALID_PROGRAM) can fail.
 * On success *out_index (may be NULL) is the new node's index. */
ACCY_NODISCARD accy_status accy__program_add_node(
    accy__program *p, uint16_t op, const accy__type *type, const uint32_t *operands,
    uint32_t n_operands, const int64_t *attrs, uint32_t n_attrs, const char *name,
    size_t name_len, const void *payload, uint64_t payload_bytes, uint32_t *out_index);

/* Appends an output naming node |node| (not checked here). */
ACCY_NODISCARD accy_status accy__program_add_output(accy__program *p, uint32_t node,
                                                    const char *name, size_t name_len);

/* For the rewrites that build a new program from an old one
 * (src/compile): appends node |i| of |p| to |q| as it is but for its
 * operands, each x read as map[x] (its node in q); *out is its index. */
ACCY_NODISCARD accy_status accy__program_copy_node(accy__program *q, const accy__program *p,
                                                   uint32_t i, const uint32_t *map, uint32_t *out);
/* Appends |p|'s outputs to |q|, each node x as map[x], with their names,
 * and gives q p's wire minor version. */
ACCY_NODISCARD accy_status accy__program_copy_outputs(accy__program *q, const accy__program *p,
                                                      const uint32_t *map);

/* ---- type helpers (dtypes: src/base/dtype.h; ops: src/ir/op_traits.h) ---- */

/* Number of elements; false if the product exceeds ACCY_MAX_ELEMENTS. */
bool accy__type_elements(const accy__type *t, uint64_t *out);
/* Number of bytes (elements * element size). Only for verified types. */
uint64_t accy__type_bytes(const accy__type *t);
bool accy__type_equal(const accy__type *a, const accy__type *b);
/* Formats "f32[3,4]" into |buf| (always NUL-terminated); returns buf. */
char *accy__type_format(const accy__type *t, char *buf, size_t size);

/* Row-major strides in elements for |t|: strides[rank-1] = 1. */
void accy__type_strides(const accy__type *t, int64_t strides[ACCY_MAX_RANK]);

#endif /* ACCY_IR_IR_H */
