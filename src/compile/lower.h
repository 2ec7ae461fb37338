/* src/compile/lower.h: rewrites of a verified program before it is compiled
 * that change its form, run after simplify (simplify.h).
 *
 * Half convolutions through f32: a convolution of f16 or bf16 becomes
 * convert -> f32 convolution -> convert, so that it runs on the f32
 * convolution's kernels (packed filters, the GEMM, depthwise and Winograd)
 * instead of the generic one; a constant filter read by nothing else is
 * widened at compile time (one constant of f32 in its place), any other
 * operand by a convert node (one per operand, shared by its readers). The
 * generic kernel accumulates the exact products (f16's always are, in
 * f32; bf16's too while they stay normal) in f32 and rounds once, as the
 * f32 convolution of the widened operands then rounded does: at `portable`
 * the same order, so the same bits; above it the f32 convolution's order,
 * within docs/ops.md's bound for convolutions. Half pools (reduce_window
 * sum, product, max, min) likewise, with the same bits at every level (the
 * f32 pools fold each window in order, as the generic kernel does).
 *
 * An f16 dot_general whose batch axes take no one stride in an operand
 * (attention's heads read in place at a batch above 1), which the f16
 * GEMM's block providers cannot address, likewise runs as an f32 product
 * between converts, on the f32 GEMM's two sets of batch axes: f16
 * products are exact in f32, so the bits are the generic kernel's (where
 * the GEMM splits a short product into four chains, within docs/ops.md's
 * bound). bf16 ones are left alone (their products may leave f32's normal
 * range).
 *
 * ACCY_LOWER=0 leaves programs alone. */
#ifndef ACCY_COMPILE_LOWER_H
#define ACCY_COMPILE_LOWER_H

#include "src/internal.h"
#include "src/ir/ir.h"

/* Rewrites |p| (verified) when it has a half convolution or pool, into a
 * new program that replaces it (|p| is freed and reinitialised as the new
 * one); sets *changed. On failure (out of memory) |p| is unchanged.
 * Programs whose node count would pass ACCY_MAX_NODES, or whose widened
 * constants' bytes are over half of |room| (the bytes the caller can still
 * spend: the session's memory limit less what it holds), are left alone.
 * Linear in the nodes, operands and constant bytes. */
ACCY_NODISCARD accy_status accy__lower(accy__program *p, uint64_t room, bool *changed);

/* Every compile-time rewrite of a verified program, as a session applies
 * them before compiling: fold constants (fold.h), split products read
 * through slices (split.h), simplify (simplify.h), then lower (fold and
 * lower with |room| as accy__lower takes it), verifying again
 * after each that changed it (a slip becomes a refusal, not a wrong
 * kernel). */
ACCY_NODISCARD accy_status accy__rewrite(accy__program *p, uint64_t room);

#endif /* ACCY_COMPILE_LOWER_H */
