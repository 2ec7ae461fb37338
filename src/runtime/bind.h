/* src/runtime/bind.h: running a compiled plan (src/runtime/plan.h) on the
 * caller's buffers, once per invoke.
 *
 * Binding turns the plan's buffer locations into pointers inside the
 * launch's scratch block (the caller's inputs and outputs, constant
 * payloads, scratch offsets, aliases) and hands the task graph to the
 * scheduler, whose tiles come back through the trampoline below into the
 * kernels. It needs only the plan, never the program's IR. */
#ifndef ACCY_RUNTIME_BIND_H
#define ACCY_RUNTIME_BIND_H

#include "scheduler/sched.h"
#include "src/internal.h"
#include "src/runtime/plan.h"

/* Runs one launch of |plan| with the caller's (already validated) buffers,
 * using |block| (plan->block_bytes bytes, 64-byte aligned, from the
 * program's scratch cache) on |pool| (NULL: inline) with at most
 * |max_workers| threads. Never fails. */
void accy__plan_run(const accy__plan *plan, accy__pool *pool, uint32_t max_workers, void *block,
                    const accy_input *inputs, const accy_output *outputs);

/* The binding step of accy__plan_run: resolves every task buffer of
 * |plan| for a launch in |block| and returns the launch's pointer table
 * (inside |block|), the |launch_data| that accy__task_tile expects. */
void **accy__plan_bind(const accy__plan *plan, void *block, const accy_input *inputs,
                       const accy_output *outputs);

/* The run step of accy__plan_run, on a block bound earlier (asynchronous
 * submission binds at submit and runs later): |ptrs| is what
 * accy__plan_bind returned for |block|. */
void accy__plan_run_bound(const accy__plan *plan, accy__pool *pool, uint32_t max_workers,
                          void *block, void **ptrs);

/* The scheduler's tile function of every plan task (accy__sched_fn):
 * |ctx| is the task's accy__ctask, |launch_data| the launch's pointer
 * table. Computes the tile's item range and calls the kernel, appending
 * the worker's workspace to the buffers when the kernel declares one. */
void accy__task_tile(const void *ctx, void *launch_data, uint32_t tile, uint32_t worker);

#endif /* ACCY_RUNTIME_BIND_H */
