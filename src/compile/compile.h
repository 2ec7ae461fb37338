/* src/compile/compile.h: the compiler from verified IR to an executable plan.
 *
 * compile decides, for every node, where its value lives (a caller input, a
 * caller output, a constant payload, a place in the per-launch scratch block,
 * or an alias of another node's buffer), makes one task per op node (split
 * into tiles by a cost-based grain that never depends on the thread count),
 * adds copy tasks for copied inputs and copied outputs, plans intermediates
 * into one scratch block by liveness (greedy, best fit) and adds the edges
 * that make memory reuse safe under parallel execution. The result is an
 * immutable plan (src/runtime/plan.h) shared by every invoke of the
 * program, which src/runtime/bind.h runs. */
#ifndef ACCY_COMPILE_COMPILE_H
#define ACCY_COMPILE_COMPILE_H

#include "src/internal.h"
#include "src/runtime/plan.h"
#include "src/ir/ir.h"

/* Compiles the verified program |p| (which must outlive the plan: descriptor
 * dims and names, and constant payloads, point into it) for launches that
 * may see |worker_count| worker indices (accy__sched_worker_count of the pool
 * it runs on; at least 1). Returns OK, COMPILE_FAILED or OUT_OF_MEMORY with a cause; on failure
 * *plan holds nothing to free. */
ACCY_NODISCARD accy_status accy__compile(const accy__program *p, uint32_t worker_count,
                                         accy__plan *plan);
void accy__plan_free(accy__plan *plan);
/* Bytes a compiled program holds apart from scratch: its IR (node table and
 * arena, constants included unless borrowed) and its plan. */
uint64_t accy__compiled_bytes(const accy__program *ir, const accy__plan *plan);

#endif /* ACCY_COMPILE_COMPILE_H */
