/* src/ir/verify.h: semantic verification of whole programs (verify.c); it
 * includes infer.h, the type inference of one node, which it builds on.
 *
 * After accy__verify succeeds, the IR holds what compile and the kernels
 * need: operands refer to earlier nodes, every attribute is in range, every
 * type is consistent, element and byte counts are within limits, and
 * constant payloads have exactly dtype size x elements bytes. The compiler
 * relies on this without re-checking; each kernel family's prepare re-checks
 * what it indexes with (operand counts, dtypes, element counts, attribute
 * ranges) once per compile, so that a slip here becomes COMPILE_FAILED
 * rather than an out-of-bounds access at run time (src/kernels/kernels.h). */
#ifndef ACCY_IR_VERIFY_H
#define ACCY_IR_VERIFY_H

#include "src/internal.h"
#include "src/ir/infer.h"
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

#endif /* ACCY_IR_VERIFY_H */
