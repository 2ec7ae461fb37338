/* src/compile/simplify.h: rewrites of a verified program before it is
 * compiled, in place, that keep every live value's type and the program's
 * results bit for bit (but for the second rule's exception and the third
 * rule's roundings).
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
 * Three: a chain of per-channel affine steps after a product whose weights
 * are a constant read by it alone (a convolution's output features, or the
 * columns of a dot_general's 2-D constant rhs without batch axes), each
 * value read only by the next and none an output: y + c, c + y, y - c,
 * c - y or y * c with c a broadcast constant of one value per channel (or
 * one value), two steps or more (the conv bias, mean, scale and beta of a
 * BatchNorm as the ONNX importer writes it, once fold.h has folded its
 * rsqrt). The chain is y s + t per channel: s goes into the weights (each
 * channel's weights times s, rounded once), and the chain's last node
 * becomes y + t (t written into one of the chain's constants that only its
 * broadcast reads), which the product's epilogue applies in registers. Not
 * bit for bit: the results differ from the chain's by a few roundings of
 * the terms' magnitudes (docs/ops.md); applied only where every s, t and
 * scaled weight is finite.
 *
 * Four and five run first, in one pass in node order. Four: a transpose
 * of a transpose reads the inner one's operand through the composed
 * permutation, a reshape of a reshape the inner one's operand; a transpose
 * that moves no element (it keeps the axes of extent above 1 in order)
 * becomes a reshape (a view), and a reshape to its operand's own type an
 * alias of it. Five: nodes that compute the same value (the same op,
 * type, operands and attributes; constants: the same bytes) merge into
 * the first, except elementwise ops, broadcasts, reshapes and iotas, which
 * fused groups compute in registers once per group that reads them (a
 * merged one read by two groups would be stored between them). Both keep
 * the bits.
 *
 * ACCY_SIMPLIFY=0 leaves programs alone. */
#ifndef ACCY_COMPILE_SIMPLIFY_H
#define ACCY_COMPILE_SIMPLIFY_H

#include "src/internal.h"
#include "src/ir/ir.h"

/* Rewrites |p| (verified) in place; returns how many rewrites it made.
 * Never fails: operands, attributes and constants change in place, their
 * counts do not. The second rule allocates four words per node for its
 * tables, the third three words and a byte per node and two doubles per
 * channel of the widest product, and without them they fold nothing.
 * Linear in the nodes, operands and weights (a hostile program cannot
 * make it slow). */
uint32_t accy__simplify(accy__program *p);

#endif /* ACCY_COMPILE_SIMPLIFY_H */
