/* accy/ops.h: the operation codes of programs, with fixed numbers.
 *
 * The numbers are ABI and appear in the wire format: never renumbered or
 * reused. The meaning of each op, its operands and its integer attributes is
 * written down in docs/ops.md. */
#ifndef ACCY_OPS_H
#define ACCY_OPS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* (NAME, code, text name, minimum operands, maximum operands; -1 = no fixed
 * maximum, see docs/ops.md). Wire 1.0 defines every op here except scatter
 * (81), sort (93) and argsort (94), which wire 1.1 adds: bytes that declare
 * 1.0 may not use them (docs/wire-format.md). */
#define ACCY_OP_MAP(XX)                                           \
  XX(PARAMETER, 1, "parameter", 0, 0)                             \
  XX(CONSTANT, 2, "constant", 0, 0)                               \
  XX(ABS, 10, "abs", 1, 1)                                        \
  XX(NEGATE, 11, "negate", 1, 1)                                  \
  XX(SIGN, 12, "sign", 1, 1)                                      \
  XX(FLOOR, 13, "floor", 1, 1)                                    \
  XX(CEIL, 14, "ceil", 1, 1)                                      \
  XX(ROUND_NEAREST_EVEN, 15, "round_nearest_even", 1, 1)          \
  XX(SQRT, 16, "sqrt", 1, 1)                                      \
  XX(RSQRT, 17, "rsqrt", 1, 1)                                    \
  XX(EXP, 18, "exp", 1, 1)                                        \
  XX(EXPM1, 19, "expm1", 1, 1)                                    \
  XX(LOG, 20, "log", 1, 1)                                        \
  XX(LOG1P, 21, "log1p", 1, 1)                                    \
  XX(LOGISTIC, 22, "logistic", 1, 1)                              \
  XX(TANH, 23, "tanh", 1, 1)                                      \
  XX(ERF, 24, "erf", 1, 1)                                        \
  XX(SIN, 25, "sin", 1, 1)                                        \
  XX(COS, 26, "cos", 1, 1)                                        \
  XX(TAN, 27, "tan", 1, 1)                                        \
  XX(NOT, 28, "not", 1, 1)                                        \
  XX(IS_FINITE, 29, "is_finite", 1, 1)                            \
  XX(ADD, 40, "add", 2, 2)                                        \
  XX(SUBTRACT, 41, "subtract", 2, 2)                              \
  XX(MULTIPLY, 42, "multiply", 2, 2)                              \
  XX(DIVIDE, 43, "divide", 2, 2)                                  \
  XX(REMAINDER, 44, "remainder", 2, 2)                            \
  XX(POWER, 45, "power", 2, 2)                                    \
  XX(MAXIMUM, 46, "maximum", 2, 2)                                \
  XX(MINIMUM, 47, "minimum", 2, 2)                                \
  XX(ATAN2, 48, "atan2", 2, 2)                                    \
  XX(AND, 49, "and", 2, 2)                                        \
  XX(OR, 50, "or", 2, 2)                                          \
  XX(XOR, 51, "xor", 2, 2)                                        \
  XX(SHIFT_LEFT, 52, "shift_left", 2, 2)                          \
  XX(SHIFT_RIGHT_ARITHMETIC, 53, "shift_right_arithmetic", 2, 2)  \
  XX(SHIFT_RIGHT_LOGICAL, 54, "shift_right_logical", 2, 2)        \
  XX(COMPARE, 55, "compare", 2, 2)                                \
  XX(SELECT, 60, "select", 3, 3)                                  \
  XX(CLAMP, 61, "clamp", 3, 3)                                    \
  XX(CONVERT, 62, "convert", 1, 1)                                \
  XX(RESHAPE, 70, "reshape", 1, 1)                                \
  XX(BROADCAST_IN_DIM, 71, "broadcast_in_dim", 1, 1)              \
  XX(TRANSPOSE, 72, "transpose", 1, 1)                            \
  XX(SLICE, 73, "slice", 1, 1)                                    \
  XX(PAD, 74, "pad", 2, 2)                                        \
  XX(CONCATENATE, 75, "concatenate", 1, -1)                       \
  XX(REVERSE, 76, "reverse", 1, 1)                                \
  XX(IOTA, 77, "iota", 0, 0)                                      \
  XX(GATHER, 78, "gather", 2, 2)                                  \
  XX(DYNAMIC_SLICE, 79, "dynamic_slice", 1, -1)                   \
  XX(DYNAMIC_UPDATE_SLICE, 80, "dynamic_update_slice", 2, -1)     \
  XX(SCATTER, 81, "scatter", 3, 3)                                \
  XX(REDUCE, 90, "reduce", 1, 1)                                  \
  XX(ARGMAX, 91, "argmax", 1, 1)                                  \
  XX(ARGMIN, 92, "argmin", 1, 1)                                  \
  XX(SORT, 93, "sort", 1, 1)                                      \
  XX(ARGSORT, 94, "argsort", 1, 1)                                \
  XX(DOT_GENERAL, 100, "dot_general", 2, 2)                       \
  XX(CONVOLUTION, 101, "convolution", 2, 2)                       \
  XX(REDUCE_WINDOW, 102, "reduce_window", 1, 1)

typedef enum accy_op {
#define ACCY_OP_XX(name, code, text, min_ops, max_ops) ACCY_OP_##name = code,
  ACCY_OP_MAP(ACCY_OP_XX)
#undef ACCY_OP_XX
} accy_op;

/* compare: attrs[0]. */
typedef enum accy_compare_direction {
  ACCY_COMPARE_EQ = 0,
  ACCY_COMPARE_NE = 1,
  ACCY_COMPARE_LT = 2,
  ACCY_COMPARE_LE = 3,
  ACCY_COMPARE_GT = 4,
  ACCY_COMPARE_GE = 5
} accy_compare_direction;

/* reduce and reduce_window: attrs[0]. */
typedef enum accy_reduce_kind {
  ACCY_REDUCE_SUM = 0,
  ACCY_REDUCE_PRODUCT = 1,
  ACCY_REDUCE_MAX = 2,
  ACCY_REDUCE_MIN = 3,
  ACCY_REDUCE_AND = 4,
  ACCY_REDUCE_OR = 5
} accy_reduce_kind;

/* scatter: attrs[0], how an update combines with the element it lands on
 * (wire 1.1). */
typedef enum accy_scatter_mode {
  ACCY_SCATTER_REPLACE = 0,
  ACCY_SCATTER_ADD = 1,
  ACCY_SCATTER_MULTIPLY = 2,
  ACCY_SCATTER_MAX = 3,
  ACCY_SCATTER_MIN = 4
} accy_scatter_mode;

#ifdef __cplusplus
}
#endif
#endif /* ACCY_OPS_H */
