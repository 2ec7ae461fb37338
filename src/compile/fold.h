/* src/compile/fold.h: constant folding, the first of the compile-time
 * rewrites (lower.h: accy__rewrite).
 *
 * A node whose operands are all constants, or values folded already, is
 * computed once at compile time when its op's work is linear in its bytes
 * (elementwise ops, data movement, reductions but windowed ones) and its
 * result is no larger than its largest operand or 64 KiB: a BatchNorm's
 * rsqrt(var + eps) * scale as the ONNX importer writes it, a shape's
 * arithmetic, a weight's transpose. The values that nodes computed at run
 * time read (the frontier) become constants; the folded values inside
 * and the constants only they read leave the program. A broadcast or
 * reshape at the frontier stays a computation on its folded operand: a
 * broadcast costs nothing in a fused group's registers, a reshape is a view.
 *
 * The values are computed by the kernels that would compute them at run
 * time (a program of the folded nodes is compiled and run once, inline),
 * so the results keep their bits.
 *
 * ACCY_SIMPLIFY=0 leaves programs alone, as it does simplify's rules. */
#ifndef ACCY_COMPILE_FOLD_H
#define ACCY_COMPILE_FOLD_H

#include "src/internal.h"
#include "src/ir/ir.h"

/* Folds |p| (verified) into a new program that replaces it (|p| is freed
 * and reinitialised as the new one) when it has a node to fold; sets
 * *changed. Fails only for memory (|p| unchanged); a program whose new
 * constants would take more than half of |room| (as accy__lower takes it)
 * or pass ACCY_MAX_CONSTANT_BYTES is left alone. Linear in the nodes,
 * operands and the folded values' bytes. */
ACCY_NODISCARD accy_status accy__fold_constants(accy__program *p, uint64_t room, bool *changed);

#endif /* ACCY_COMPILE_FOLD_H */
