/* src/ir/op_traits.h: what accy knows about each op, in one table.
 *
 * accy/ops.h fixes each op's number, text name and operand count (the
 * public ACCY_OP_MAP). ACCY__OP_TRAITS adds one internal row per op with
 * the columns every layer needs, so adding an op is one row here plus its
 * infer rule (src/ir/infer.c) and its kernel, not edits in parallel
 * switches:
 *
 *   family  which kernel family prepares it (src/kernels/kernels.c):
 *           LEAF (parameter, constant: no kernel), ELEMENTWISE, DATA,
 *           SCATTER, SORT, REDUCE, LINALG
 *   infer   the type rule: src/ir/infer.c's infer_<infer> (the verifier's
 *           dispatch expands this column)
 *   dclass  the dtype class its (first) data operand must have
 *           (accy__dtype_class, src/base/dtype.h); RULE when it depends on
 *           an attribute (reduce kind, scatter mode) and the infer rule
 *           decides
 *   result  what a declared result type supplies: INFERRED (nothing: a
 *           declared type is only compared), DTYPE (the dtype; the dims are
 *           inferred: convert, argmax, argmin, argsort), FULL (the whole
 *           type: parameter, constant, reshape, iota, broadcast_in_dim)
 *   attrs   the attribute schema: the layout of the node's flat int64
 *           attrs and the names the text form spells them with
 *           (op_traits.c, kAttrs_<attrs>; read by the assembler and the
 *           disassembler)
 *
 * Rows are in ACCY_OP_MAP's order; op_traits.c checks at compile time that
 * both lists name the same ops. */
#ifndef ACCY_IR_OP_TRAITS_H
#define ACCY_IR_OP_TRAITS_H

#include "src/internal.h"
#include "src/base/dtype.h"

/* The dclass column's RULE: no one class; the op's infer rule decides. */
enum { ACCY__DCLASS_RULE = 255 };

/* (NAME, family, infer, dclass, result, attrs) */
#define ACCY__OP_TRAITS(XX)                                                          \
  XX(PARAMETER, LEAF, leaf, ANY, FULL, NONE)                                         \
  XX(CONSTANT, LEAF, leaf, ANY, FULL, NONE)                                          \
  XX(ABS, ELEMENTWISE, unary, NUMERIC, INFERRED, NONE)                               \
  XX(NEGATE, ELEMENTWISE, unary, NUMERIC, INFERRED, NONE)                            \
  XX(SIGN, ELEMENTWISE, unary, NUMERIC, INFERRED, NONE)                              \
  XX(FLOOR, ELEMENTWISE, unary, FLOAT, INFERRED, NONE)                               \
  XX(CEIL, ELEMENTWISE, unary, FLOAT, INFERRED, NONE)                                \
  XX(ROUND_NEAREST_EVEN, ELEMENTWISE, unary, FLOAT, INFERRED, NONE)                  \
  XX(SQRT, ELEMENTWISE, unary, FLOAT, INFERRED, NONE)                                \
  XX(RSQRT, ELEMENTWISE, unary, FLOAT, INFERRED, NONE)                               \
  XX(EXP, ELEMENTWISE, unary, FLOAT, INFERRED, NONE)                                 \
  XX(EXPM1, ELEMENTWISE, unary, FLOAT, INFERRED, NONE)                               \
  XX(LOG, ELEMENTWISE, unary, FLOAT, INFERRED, NONE)                                 \
  XX(LOG1P, ELEMENTWISE, unary, FLOAT, INFERRED, NONE)                               \
  XX(LOGISTIC, ELEMENTWISE, unary, FLOAT, INFERRED, NONE)                            \
  XX(TANH, ELEMENTWISE, unary, FLOAT, INFERRED, NONE)                                \
  XX(ERF, ELEMENTWISE, unary, FLOAT, INFERRED, NONE)                                 \
  XX(SIN, ELEMENTWISE, unary, FLOAT, INFERRED, NONE)                                 \
  XX(COS, ELEMENTWISE, unary, FLOAT, INFERRED, NONE)                                 \
  XX(TAN, ELEMENTWISE, unary, FLOAT, INFERRED, NONE)                                 \
  XX(NOT, ELEMENTWISE, unary, INT_BOOL, INFERRED, NONE)                              \
  XX(IS_FINITE, ELEMENTWISE, unary, FLOAT, INFERRED, NONE)                           \
  XX(ADD, ELEMENTWISE, binary, NUMERIC_BOOL, INFERRED, NONE)                         \
  XX(SUBTRACT, ELEMENTWISE, binary, NUMERIC, INFERRED, NONE)                         \
  XX(MULTIPLY, ELEMENTWISE, binary, NUMERIC_BOOL, INFERRED, NONE)                    \
  XX(DIVIDE, ELEMENTWISE, binary, NUMERIC, INFERRED, NONE)                           \
  XX(REMAINDER, ELEMENTWISE, binary, NUMERIC, INFERRED, NONE)                        \
  XX(POWER, ELEMENTWISE, binary, NUMERIC, INFERRED, NONE)                            \
  XX(MAXIMUM, ELEMENTWISE, binary, NUMERIC_BOOL, INFERRED, NONE)                     \
  XX(MINIMUM, ELEMENTWISE, binary, NUMERIC_BOOL, INFERRED, NONE)                     \
  XX(ATAN2, ELEMENTWISE, binary, FLOAT, INFERRED, NONE)                              \
  XX(AND, ELEMENTWISE, binary, INT_BOOL, INFERRED, NONE)                             \
  XX(OR, ELEMENTWISE, binary, INT_BOOL, INFERRED, NONE)                              \
  XX(XOR, ELEMENTWISE, binary, INT_BOOL, INFERRED, NONE)                             \
  XX(SHIFT_LEFT, ELEMENTWISE, binary, INT, INFERRED, NONE)                           \
  XX(SHIFT_RIGHT_ARITHMETIC, ELEMENTWISE, binary, INT, INFERRED, NONE)               \
  XX(SHIFT_RIGHT_LOGICAL, ELEMENTWISE, binary, INT, INFERRED, NONE)                  \
  XX(COMPARE, ELEMENTWISE, binary, ANY, INFERRED, COMPARE)                           \
  XX(SELECT, ELEMENTWISE, select, ANY, INFERRED, NONE)                               \
  XX(CLAMP, ELEMENTWISE, clamp, NUMERIC, INFERRED, NONE)                             \
  XX(CONVERT, ELEMENTWISE, convert, ANY, DTYPE, NONE)                                \
  XX(RESHAPE, DATA, reshape, ANY, FULL, NONE)                                        \
  XX(BROADCAST_IN_DIM, DATA, broadcast, ANY, FULL, DIMS)                             \
  XX(TRANSPOSE, DATA, transpose, ANY, INFERRED, PERM)                                \
  XX(SLICE, DATA, slice, ANY, INFERRED, SLICE)                                       \
  XX(PAD, DATA, pad, ANY, INFERRED, PAD)                                             \
  XX(CONCATENATE, DATA, concatenate, ANY, INFERRED, DIM)                             \
  XX(REVERSE, DATA, reverse, ANY, INFERRED, DIMS)                                    \
  XX(IOTA, DATA, iota, NUMERIC, FULL, DIM)                                           \
  XX(GATHER, DATA, gather, ANY, INFERRED, AXIS)                                      \
  XX(DYNAMIC_SLICE, DATA, dynamic_slice, ANY, INFERRED, SIZES)                       \
  XX(DYNAMIC_UPDATE_SLICE, DATA, dynamic_update_slice, ANY, INFERRED, NONE)          \
  XX(SCATTER, SCATTER, scatter, RULE, INFERRED, SCATTER)                             \
  XX(REDUCE, REDUCE, reduce, RULE, INFERRED, REDUCE)                                 \
  XX(ARGMAX, REDUCE, arg, NUMERIC_BOOL, DTYPE, AXIS)                                 \
  XX(ARGMIN, REDUCE, arg, NUMERIC_BOOL, DTYPE, AXIS)                                 \
  XX(SORT, SORT, sort, NUMERIC_BOOL, INFERRED, SORT)                                 \
  XX(ARGSORT, SORT, argsort, NUMERIC_BOOL, DTYPE, SORT)                              \
  XX(DOT_GENERAL, LINALG, dot_general, NUMERIC, INFERRED, DOT)                       \
  XX(CONVOLUTION, LINALG, convolution, NUMERIC, INFERRED, CONV)                      \
  XX(REDUCE_WINDOW, REDUCE, reduce_window, RULE, INFERRED, REDUCE_WINDOW)

typedef enum accy__op_family {
  ACCY__FAMILY_LEAF = 0,
  ACCY__FAMILY_ELEMENTWISE,
  ACCY__FAMILY_DATA,
  ACCY__FAMILY_SCATTER,
  ACCY__FAMILY_SORT,
  ACCY__FAMILY_REDUCE,
  ACCY__FAMILY_LINALG
} accy__op_family;

typedef enum accy__op_result {
  ACCY__RESULT_INFERRED = 0,
  ACCY__RESULT_DTYPE,
  ACCY__RESULT_FULL
} accy__op_result;

/* ---- attribute schemas ------------------------------------------------------ */

/* One field of an op's flat attrs, in layout order. */
typedef enum accy__attr_kind {
  ACCY__ATTR_KEYWORD, /* one value spelt as a word before the operands
                         (compare LT, reduce sum, scatter add) */
  ACCY__ATTR_SCALAR,  /* name=N: one value */
  ACCY__ATTR_LIST,    /* name=[...]: |len| values */
  ACCY__ATTR_PAIR,    /* name=[...] name2=[...] of equal length n: the value n,
                         then the n values of each (dot_general) */
  ACCY__ATTR_SPATIAL  /* not spelt: the number of spatial axes, operand 0's
                         rank - 2, which must be 1..3 (convolution) */
} accy__attr_kind;

typedef enum accy__attr_len {
  ACCY__LEN_ONE = 0, /* keywords, scalars, pairs, spatial */
  ACCY__LEN_ANY,     /* any count: the rest of the attrs (always the last field) */
  ACCY__LEN_RANK,    /* one per axis of operand 0 */
  ACCY__LEN_SPATIAL  /* one per spatial axis (after a SPATIAL field) */
} accy__attr_len;

/* The words of a keyword field: value i is words[i]. */
typedef struct accy__attr_words {
  const char *noun;          /* "direction", "kind", "mode" */
  uint32_t n;
  const char *const *words;
} accy__attr_words;

typedef struct accy__attr_field {
  const char *name;               /* the text name (PAIR: the lhs list) */
  const char *name2;              /* PAIR: the rhs list; else NULL */
  uint8_t kind;                   /* accy__attr_kind */
  uint8_t len;                    /* accy__attr_len (LIST only) */
  bool required;                  /* the text must give it; else it is |def| */
  bool always_shown;              /* the disassembler prints it even when it
                                     equals its default (required fields are
                                     always shown) */
  int64_t def;                    /* the default value (of every entry) */
  const accy__attr_words *words;  /* KEYWORD only */
} accy__attr_field;

typedef struct accy__attr_schema {
  uint32_t n_fields;
  const accy__attr_field *fields;
} accy__attr_schema;

/* ---- the table --------------------------------------------------------------- */

typedef struct accy__op_trait {
  uint16_t code;                  /* accy_op */
  const char *name;               /* "dot_general" */
  int min_operands, max_operands; /* max -1: open (docs/ops.md) */
  uint8_t family;                 /* accy__op_family */
  uint8_t result;                 /* accy__op_result */
  uint8_t dclass;                 /* accy__dtype_class */
  const accy__attr_schema *attrs;
} accy__op_trait;

/* The row of op code |op|, or NULL for a code that names no op. */
const accy__op_trait *accy__op_trait_of(uint32_t op);
/* Row |i| of the table, 0 <= i < accy__op_count() (for tests and listings). */
const accy__op_trait *accy__op_trait_at(uint32_t i);
uint32_t accy__op_count(void);

/* Text name of an op ("dot_general"), or NULL for an unknown code. */
const char *accy__op_name(uint32_t op);
/* Looks up an op by text name; returns 0 when unknown. */
uint16_t accy__op_from_name(const char *name, size_t len);
/* Operand count bounds of an op; false for an unknown code. max is -1 when
 * the count depends on the operand rank or is open (see docs/ops.md). */
bool accy__op_arity(uint32_t op, int *min_operands, int *max_operands);

#endif /* ACCY_IR_OP_TRAITS_H */
