/* src/compile/simplify.h: rewrites of a verified program before it is
 * compiled, in place, that keep every live value's type and the program's
 * results bit for bit.
 *
 * One rule so far: a dot_general whose operand is a transpose reads the
 * transpose's operand instead, its dimension numbers mapped through the
 * permutation (attention's "reshape, transpose, matmul"): the GEMM then
 * addresses the heads in place, and the transpose, read by nothing else,
 * is dead code. Only where the result is the same array: the operand's
 * free axes keep their order (they give the result's axes), and the axis
 * that is contiguous in memory is not a batch axis (nor, for the lhs, a
 * free one, which the microkernels would read a column at a time). The
 * products and their order are the GEMM's either way, so the bits are too.
 * ACCY_SIMPLIFY=0 leaves programs alone. */
#ifndef ACCY_COMPILE_SIMPLIFY_H
#define ACCY_COMPILE_SIMPLIFY_H

#include "src/internal.h"
#include "src/ir/ir.h"

/* Rewrites |p| (verified) in place; returns how many rewrites it made.
 * Never fails and allocates nothing: operands and attributes change in
 * place, their counts do not. */
uint32_t accy__simplify(accy__program *p);

#endif /* ACCY_COMPILE_SIMPLIFY_H */
