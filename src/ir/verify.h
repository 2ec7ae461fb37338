/* src/ir/verify.h: semantic verification and type inference of programs.
 *
 * After accy__verify succeeds, compile and the kernels rely on the IR without
 * further checks: operands refer to earlier nodes, every attribute is in
 * range, every type is consistent, element and byte counts are within limits,
 * and constant payloads have exactly dtype size x elements bytes. */
#ifndef ACCY_IR_VERIFY_H
#define ACCY_IR_VERIFY_H

#include "src/internal.h"
#include "src/ir/ir.h"

/* Checks the whole program. Returns OK or INVALID_PROGRAM with a cause such
 * as "node 12 (dot_general): contracting dimension sizes differ: 64 vs 32".
 * Also checks: at least one output, output indices in range, names present
 * and at most ACCY_MAX_NAME_BYTES for parameters, constants and outputs,
 * distinct parameter names, total constant bytes within
 * ACCY_MAX_CONSTANT_BYTES. */
ACCY_NODISCARD accy_status accy__verify(const accy__program *p);
/* accy__verify, and on failure *out_node (may be NULL) is the node the
 * failure is about (the N of the cause's "node N"), or UINT32_MAX when it
 * concerns no single node (outputs, counts). The assembler maps it to a
 * source line. */
ACCY_NODISCARD accy_status accy__verify_where(const accy__program *p, uint32_t *out_node);

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

#endif /* ACCY_IR_VERIFY_H */
