/* src/ir/infer.h: the type inference of one node (infer.c), shared by the
 * verifier (verify.h), the builder and the assembler, which infer each node
 * as it is added. */
#ifndef ACCY_IR_INFER_H
#define ACCY_IR_INFER_H

#include "src/internal.h"
#include "src/ir/ir.h"

/* Infers the result type of a node that is not yet in |p| (op, operands and
 * attrs as they would be stored; operands must be < p->n_nodes).
 * |declared| supplies what the operands cannot tell: the whole type for
 * parameter, constant, reshape and iota, the dtype for convert, argmax and
 * argmin. It may be NULL when the op needs none; an op that needs one and
 * gets NULL fails with "<op> needs a result type". When |declared| is given
 * for an op that infers fully, it must match the inferred type.
 * Returns OK with *out filled, or INVALID_PROGRAM with a cause (no node
 * prefix; accy__verify adds "node N (op): "). */
ACCY_NODISCARD accy_status accy__infer_type(const accy__program *p, uint16_t op,
                                            const uint32_t *operands, uint32_t n_operands,
                                            const int64_t *attrs, uint32_t n_attrs,
                                            const accy__type *declared, accy__type *out);

#endif /* ACCY_IR_INFER_H */
