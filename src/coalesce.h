/* src/coalesce.h: concurrent invokes of one program run as one batch.
 *
 * A server's request threads often call the same small-batch program at
 * once: an MLP at batch 1 reads all its weights for one row, so that two
 * cores running two such calls are bound by the cache's bandwidth, not by
 * arithmetic. When a program is row-separable (src/compile/batch.h) and
 * shares constant weights over few rows, the calls that find every core busy
 * with this program wait (asleep, first come first served) and are run
 * together: the first of them (the leader) copies up to |calls| waiting
 * calls' inputs into the rows of one launch of the program compiled at
 * |calls| times its rows, runs it, and copies each call's rows of the
 * outputs back. The weights are read once for all of them.
 *
 * What a caller sees:
 *  - The same bits. Each row of a batched launch is computed by the same
 *    kernels with the same order of operations as a call of its own (the
 *    batch axis only ever indexes independent rows of the kernels; the
 *    differential tests of check_coalesce hold every op the analysis
 *    follows to it), so results do not depend on load.
 *  - No wait when a core is free: a call runs at once, on its own buffers,
 *    while fewer than accy__sched_cores() calls of this program run. Only
 *    calls that would otherwise have competed for a core wait for a group.
 *  - Memory only under load: the batched program is compiled by the first
 *    group that needs it (its packed weights count against the session's
 *    budget; a variant that does not fit leaves the program uncoalesced and
 *    groups run their calls one after another on the leader), and a trim
 *    (accy_session_trim, or the idle sweep of an idle program) frees it.
 * ACCY_COALESCE=0 turns it off (every call runs on its own). Asynchronous
 * submissions never wait for each other: the pool thread that runs one
 * takes the program's submissions still queued with it
 * (accy__coalescer_run_calls). */
#ifndef ACCY_COALESCE_H
#define ACCY_COALESCE_H

#include "scheduler/sched.h"
#include "src/internal.h"
#include "src/ir/ir.h"
#include "src/runtime/plan.h"
#include "src/scratch.h"

typedef struct accy__coalescer accy__coalescer;

/* Rows a batched launch aims for: the GEMM microkernel's batch_rows at the
 * process's ISA level (src/kernels/uk/uk.h: 4 at avx512, where the MLP's
 * cost per row falls from 82 us at batch 1 to 34.5 us at 2 to 4 rows; 6 at
 * avx2, 93 us at 1 and 36.5 us at 6), capped here. */
#define ACCY__COALESCE_MAX_ROWS 8u
/* A call's inputs and outputs, copied in and out of a batched launch, at
 * most 1/16 of the weights' bytes (MLP 784-1024-1024-10: 3.2 KB against
 * 7.5 MB). */
#define ACCY__COALESCE_MAX_COPY 16u
/* The smallest constant weights worth sharing: below, a call's product is
 * not bound by reading them. */
#define ACCY__COALESCE_MIN_WEIGHT_BYTES (UINT64_C(256) << 10)

/* *out gets a coalescer for the verified program |ir| and its plan |plan|
 * (both outlive it), or NULL when |allowed| is false (the session's
 * ACCY_SESSION_NO_COALESCE) or the program is not worth coalescing: not
 * row-separable, no shared weights, or a call's inputs and outputs more
 * than ACCY__COALESCE_MAX_COPY of the bytes the weights (copying them
 * would eat what sharing the weights saves), or ACCY_COALESCE=0. The
 * batched program is built later, at the first group. OK or OUT_OF_MEMORY
 * with a cause. */
ACCY_NODISCARD accy_status accy__coalescer_create(const accy__program *ir,
                                                  const accy__plan *plan,
                                                  accy__memory_budget *budget, bool allowed,
                                                  accy__coalescer **out);
/* Frees everything. No call may be running. NULL is a no-op. */
void accy__coalescer_destroy(accy__coalescer *co);

/* Runs one invoke of the program (accy__plan_run's arguments; |block| is
 * the caller's scratch block of |plan|), alone or in a group. Never fails. */
void accy__coalescer_run(accy__coalescer *co, const accy__plan *plan, accy__pool *pool,
                         uint32_t max_workers, void *block, const accy_input *inputs,
                         const accy_output *outputs);

/* The most calls one batched launch takes. */
uint32_t accy__coalescer_calls(const accy__coalescer *co);
/* Runs |n| calls (2 .. accy__coalescer_calls; call c's buffers ins[c] and
 * outs[c], already checked) as one batched launch, compiling the batched
 * program first when no call did yet. False when there is none (it does
 * not fit the budget, or n is out of range): nothing ran, and the caller
 * runs the calls one by one. The asynchronous path's way in: a pool thread
 * that runs a submission takes the program's other queued submissions
 * with it (src/session.c). */
bool accy__coalescer_run_calls(accy__coalescer *co, const accy__plan *plan, accy__pool *pool,
                               uint32_t max_workers, uint32_t n, const accy_input *const *ins,
                               const accy_output *const *outs);

/* Frees the batched program (its plan and cached scratch blocks) when no
 * batched launch runs, and returns the bytes freed (0 when one runs: the
 * program is not idle). The next group builds it again. */
uint64_t accy__coalescer_trim(accy__coalescer *co);

typedef struct accy__coalescer_counts {
  uint64_t calls;       /* calls that ran in a batched launch */
  uint64_t launches;    /* batched launches */
  uint64_t held_bytes;  /* the batched program and plan */
  uint64_t scratch_blocks, scratch_block_bytes;
} accy__coalescer_counts;
void accy__coalescer_get_counts(accy__coalescer *co, accy__coalescer_counts *out);

#endif /* ACCY_COALESCE_H */
