/* src/compile/fuse.h: fusion of elementwise consumers into the GEMM and
 * convolution kernels that produce their operand (epilogues).
 *
 * An anchor is a dot_general or convolution whose kernel can apply an
 * epilogue (accy__kernel_epilogue_axis says so and names the channel axis:
 * the result's last axis for dot_general, axis 1 for convolution). From the
 * anchor, the chain of its single-use consumers is absorbed while it has the
 * canonical shape
 *
 *     y = anchor;  y = y + bias;  y = y + residual;  y = clamp(y)
 *
 * with each step optional and at most once, in that order:
 *  - bias: add of a broadcast_in_dim of a constant vector along the channel
 *    axis (either operand order);
 *  - residual: add of any other value of the result's type;
 *  - clamp: maximum / minimum with a broadcast constant scalar, or clamp with
 *    constant scalar bounds (ReLU, ReLU6, Clip), any number of them.
 * After the chain (or the anchor alone), a 2 x 2 max pool at stride 2 of
 * its value (an f32 reduce_window over the last two axes, no padding or
 * dilation) joins it as the tail when the chain has no residual and the
 * anchor is a convolution that runs as Winograd, or in the padded form at
 * unit strides with K in one block, over an even plane
 * (accy__kernel_conv_pools): the output transform (the microkernel) folds
 * each window's four outputs into the pooled value, and the unpooled one is
 * never stored.
 * Or, after the chain of an f32 dot_general that runs as the GEMM (no
 * residual, no pool), a transpose of its value joins as the tail when the
 * GEMM can store through it (accy__kernel_dot_stores_permuted: the rhs
 * free axes stay last, the batch and lhs free axes each step with one
 * stride): C's batch and row strides write the transposed layout, and no
 * group follows such a chain.
 * The anchor's task then writes the chain's last node (the tail) directly:
 * the anchor and the absorbed nodes get no buffer and no task, and the
 * broadcasts they read become dead unless something else reads them.
 *
 * The fused kernel adds the bias and the residual to the finished sum and
 * clamps, each rounded as the separate ops would round them, so a fused
 * result equals the unfused one (bias and residual are added in the order
 * above; a graph that adds them in the other order differs by one rounding,
 * within the contract's bound).
 *
 * Fused groups come next (accy__ew_group): from the last node backwards,
 * an elementwise node that is in no chain becomes a root and absorbs
 * operands, latest first, while every use of the operand is inside the
 * group and it is no output: elementwise nodes, broadcast_in_dim and
 * reshape with the root's element count (a broadcast of a value outside the
 * group is read through its source's addressing, never materialised), and,
 * when the root's last axis L is 16..ACCY__GROUP_MAX_ROW long, the per-row
 * side of rows of L: f32 reduces over the last axis of a value with the
 * root's count, whatever is computed from their results (count / L), and
 * broadcasts that spread such a per-row value back over its rows. A group
 * with per-row members runs row by row (softmax and layer norm become one
 * pass over their input); otherwise it runs over flat chunks. What a group
 * reads but does not absorb is a leaf. A group stops growing at
 * ACCY__EW_GROUP_MAX_NODES nodes or ACCY__EW_GROUP_MAX_LEAVES leaves; a root
 * that absorbs nothing stays a plain node. Members compute with their own
 * microkernels (a reduce folds each row in its sequential order, as the
 * reduce kernel does) on the same values, so a group's bits equal the
 * unfused nodes'. Nothing is computed twice: each member runs once per
 * block, and a value read from outside the group is a leaf.
 *
 * Last, groups after products: a flat f32 group (or a lone elementwise
 * node, as a group of one) whose leaves are constants and one value T, the
 * value of a dot_general's or convolution's chain (or the anchor alone; no
 * chain with a fused pool) with the root's type, read only by the group's
 * elementwise members and no output, joins that anchor: the root becomes
 * the chain's tail, and the anchor's kernel runs the group's kernel over
 * each item's block of the result after the item, in place, while the
 * block is in cache (linalg.c; a GELU, SiLU or sigmoid after a dense
 * layer, a SiLU or hardswish after a convolution: the GEMM forms but the
 * padded one, the depthwise kernels and Winograd in blocks of whole rows
 * of tiles, whose items give their regions as rectangles of the output,
 * accy__kernel_conv_takes_group). T and the members get no buffer and no
 * task; the group's bits are its own task's.
 *
 * ACCY_FUSION=0 in the environment turns fusion off (every node its own
 * task), for comparisons and debugging. */
#ifndef ACCY_COMPILE_FUSE_H
#define ACCY_COMPILE_FUSE_H

#include "src/internal.h"
#include "src/ir/ir.h"
#include "src/kernels/kernels.h"

typedef struct accy__fusion {
  /* Per node: the anchor whose task computes it (itself for an anchor, the
   * anchor for every absorbed node), or -1. */
  int64_t *anchor_of;
  /* Per node, meaningful for anchors only. */
  accy__epilogue *ep;
  /* Per node: the root of the elementwise group that absorbs it (itself for
   * a root), or -1; groups[root] lists the group (its lists are owned here). */
  int64_t *group_of;
  accy__ew_group *groups;
  uint32_t n_nodes;
} accy__fusion;

/* Finds the epilogue chains of the verified program |p|. |uses| and
 * |out_uses| count, per node, the operand uses by live nodes and the
 * outputs that name it. On success *out must be freed with
 * accy__fusion_free. */
ACCY_NODISCARD accy_status accy__fuse(const accy__program *p, const bool *live,
                                      const uint32_t *uses, const uint32_t *out_uses,
                                      accy__fusion *out);
void accy__fusion_free(accy__fusion *f);

#endif /* ACCY_COMPILE_FUSE_H */
