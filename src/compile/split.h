/* src/compile/split.h: products read through column slices, split into
 * one product per slice (a compile-time rewrite: lower.h's accy__rewrite).
 *
 * An f32 dot_general x W whose W is a 2-D constant read by it alone (no
 * batch axes, one contracting axis, W's other axis the result's last: its
 * columns), optionally plus a broadcast bias [N] read there alone, whose
 * value is read only by slices (at most 16, no output) that keep every axis
 * but the last whole at unit strides and take 16 columns or more (GPT-2's
 * fused QKV product cut into Q, K and V): each slice becomes the product of
 * x with those columns of W (plus those of the bias), new constants cut
 * from the old ones, which leave the program. No slice is materialised
 * and each part is a product of its own that the later rules see (the
 * scale of attention then folds into Q's weights: simplify.h). Each column
 * of a GEMM is the same sum over K in the same order whatever the other
 * columns, so the results keep their bits.
 *
 * ACCY_SIMPLIFY=0 leaves programs alone. */
#ifndef ACCY_COMPILE_SPLIT_H
#define ACCY_COMPILE_SPLIT_H

#include "src/internal.h"
#include "src/ir/ir.h"

/* Rewrites |p| (verified) into a new program that replaces it (|p| is
 * freed and reinitialised as the new one) when it has a product to split;
 * sets *changed. Fails only for memory (|p| unchanged). Programs whose
 * nodes would pass ACCY_MAX_NODES are left alone. Linear in the nodes,
 * operands and the split weights' bytes. */
ACCY_NODISCARD accy_status accy__split_products(accy__program *p, bool *changed);

#endif /* ACCY_COMPILE_SPLIT_H */
