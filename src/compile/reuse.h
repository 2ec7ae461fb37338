/* src/compile/reuse.h: the scratch planner. Places the intermediates of one
 * launch into a single data region so that buffers whose lifetimes are
 * disjoint share bytes, and says which ordering constraints make that
 * sharing safe under any parallel schedule.
 *
 * Input: one live range per buffer: the first and last task (in the task
 * order, a topological order of the task graph) that touch it, its size, and
 * the distinct tasks that touch it. Output: an offset per range, the peak,
 * and edges: for every range y placed on bytes that an earlier range x held,
 * every task touching x precedes y's first task. Those edges go through
 * *barriers*, zero-work tasks the compiler inserts into the task order: a
 * barrier after task t waits for every toucher of a dead buffer (or for two
 * earlier barriers, when two freed regions merge), and later occupants wait
 * for the barrier only. So the edges and barriers are O(ranges + touches),
 * whatever the program's shape.
 *
 * The placement is a linear scan in task order: at task t, ranges starting
 * at t are placed (largest first, best fit among free regions, else at the
 * end of the region), then ranges ending at t are freed and merged with free
 * neighbours. Free regions are kept in size-segregated bins, so each step is
 * O(1) and the whole plan O(n log n) (one sort). Two ranges share bytes only
 * if their [start, end] intervals are disjoint. */
#ifndef ACCY_COMPILE_REUSE_H
#define ACCY_COMPILE_REUSE_H

#include "src/internal.h"

typedef struct accy__live_range {
  uint32_t start, end;      /* first and last task touching the buffer */
  uint64_t bytes;           /* size, a multiple of 64; 0 needs no bytes */
  const uint32_t *touches;  /* the distinct tasks touching it, ascending; */
  uint32_t n_touches;       /* touches[0] == start, touches[n - 1] == end */
  uint64_t offset;          /* out: the range's offset in the data region */
} accy__live_range;

/* An ordering edge. Ids below n_tasks are tasks; n_tasks + k is barrier k. */
typedef struct accy__reuse_edge {
  uint32_t from, to;
} accy__reuse_edge;

typedef struct accy__reuse_plan {
  uint64_t peak;                /* bytes of the data region */
  uint32_t n_barriers;
  uint32_t *barrier_after;      /* per barrier: the task it directly follows;
                                   nondecreasing in k */
  size_t n_edges;
  accy__reuse_edge *edges;
} accy__reuse_plan;

/* Places |n| ranges over a task order of |n_tasks| tasks. Fails with
 * COMPILE_FAILED when the peak would exceed |max_bytes| (the cause gives
 * both numbers), or OUT_OF_MEMORY; on failure *out holds nothing to free. */
ACCY_NODISCARD accy_status accy__plan_reuse(accy__live_range *ranges, uint32_t n, uint32_t n_tasks,
                                            uint64_t max_bytes, accy__reuse_plan *out);
void accy__reuse_plan_free(accy__reuse_plan *plan);

#endif /* ACCY_COMPILE_REUSE_H */
