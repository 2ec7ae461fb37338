/* src/compile/simplify.h: rewrites of a verified program before it is
 * compiled, in place, that keep every live value's type and the program's
 * results bit for bit (the second rule: with the exception it names).
 *
 * One: a dot_general whose operand is a transpose reads the
 * transpose's operand instead, its dimension numbers mapped through the
 * permutation (attention's "reshape, transpose, matmul"): the GEMM then
 * addresses the heads in place, and the transpose, read by nothing else,
 * is dead code. Only where the result is the same array: the operand's
 * free axes keep their order (they give the result's axes), and the axis
 * that is contiguous in memory is not a batch axis (nor, for the lhs, a
 * free one, which the microkernels would read a column at a time). The
 * products and their order are the GEMM's either way, so the bits are too.
 *
 * Two: a value divided or multiplied by a power of two (a broadcast f32
 * constant) whose other operand is linear in constants read nowhere else
 * (reshapes and transposes of x W + b or x W, or a product of such a value
 * with anything: attention's scores Q K^T / 8) carries the factor in those
 * constants instead, scaled in place, and the scale's readers read the
 * value. A power of two commutes with every rounding of the products, sums
 * and bias adds while the values stay normal, so the rule applies only
 * where every scaled constant stays normal (or is 0, infinite or NaN); the
 * bits are then the same unless an intermediate of the scaled path falls
 * below 2^-126 or overflows where the unscaled one did not (docs/ops.md).
 *
 * ACCY_SIMPLIFY=0 leaves programs alone. */
#ifndef ACCY_COMPILE_SIMPLIFY_H
#define ACCY_COMPILE_SIMPLIFY_H

#include "src/internal.h"
#include "src/ir/ir.h"

/* Rewrites |p| (verified) in place; returns how many rewrites it made.
 * Never fails: operands, attributes and constants change in place, their
 * counts do not. The second rule allocates four words per node for its
 * tables, and without them folds nothing. Linear in the nodes and
 * operands (a hostile program cannot make it slow). */
uint32_t accy__simplify(accy__program *p);

#endif /* ACCY_COMPILE_SIMPLIFY_H */
