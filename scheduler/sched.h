/* scheduler/sched.h: the job-scheduling runtime. It knows nothing of tensors:
 * it runs graphs of tasks, each split into independent tiles, on one
 * process-wide OpenMP worker pool shared by every concurrent launch.
 *
 * Model: a dedicated thread opens a single `#pragma omp parallel`; its team
 * members run accy's worker loop, which claims tiles from submitted launches
 * round-robin. Any host thread may submit; the submitting thread works on its
 * own launch while it waits. Idle workers spin briefly, then sleep: no
 * unbounded spinning. <omp.h> is included only in scheduler/pool.c. */
#ifndef ACCY_SCHEDULER_SCHED_H
#define ACCY_SCHEDULER_SCHED_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accy/status.h"

/* Runs tile |tile| of a task. |task_ctx| is the task's immutable context,
 * |launch_data| the pointer given to accy__sched_run. |worker| names the
 * thread running it within this launch: 0 for the submitting thread (and
 * every inline run), 1 + its team index for a pool member, so it is below
 * accy__sched_worker_count(pool) and no two threads of one launch share it
 * at once; a tile may use per-worker memory indexed by it. Must not fail or
 * block. */
typedef void (*accy__sched_fn)(const void *task_ctx, void *launch_data, uint32_t tile,
                               uint32_t worker);

typedef struct accy__sched_task {
  accy__sched_fn fn;
  const void *ctx;
  uint32_t n_tiles;     /* 0 is allowed: the task completes at once */
  uint32_t n_preds;     /* number of tasks that list this one as successor */
  uint32_t succ_begin;  /* successors are graph->succ[succ_begin .. +n_succ) */
  uint32_t n_succ;
} accy__sched_task;

/* An immutable task graph. Tasks are in a topological order: every
 * successor index is greater than its predecessor's. */
typedef struct accy__sched_graph {
  uint32_t n_tasks;
  const accy__sched_task *tasks;
  const uint32_t *succ;
  /* The graph's work, in the kernels' cost units (multiply-adds, elements;
   * saturating). A graph of at least ACCY_SCHED_WIDE_WORK is wide: its
   * launch takes an admission turn for each thread it can use and the slack
   * turn, so that it runs without narrow launches beside it. 0: narrow. */
  uint64_t work;
} accy__sched_graph;

/* About a millisecond of multiply-adds on one core: the launches worth more
 * than one thread's turn. */
#define ACCY_SCHED_WIDE_WORK (UINT64_C(1) << 26)

typedef struct accy__pool accy__pool;

/* The default worker count: ACCY_NUM_THREADS (which must then be a count in
 * 1..ACCY_MAX_THREADS, else INVALID_BUFFER with a cause), else the first
 * entry of OMP_NUM_THREADS when it is a count (capped at ACCY_MAX_THREADS),
 * else the CPUs in the process's affinity mask (capped); at least 1. */
accy_status accy__sched_default_threads(uint32_t *out) __attribute__((warn_unused_result));

/* Admission. With C = accy__sched_cores(), at most C + 1 turns are held at
 * once in the process (pool or not) by launches of more than one tile: one
 * each, a wide launch (graph.work) its threads' and the slack; later ones
 * wait asleep, first come first served. Pool workers join a launch only
 * while running callers + working workers are fewer than C, or through a
 * turn a wide launch reserved, so that callers and workers together do not
 * oversubscribe the cores. C is
 * ACCY_CORES when set (0: no admission, and workers always join), else the
 * CPUs of the process's affinity mask. */
uint32_t accy__sched_cores(void);
/* What ACCY_CORES asks for, into *out (the CPU count when unset):
 * INVALID_BUFFER with a cause when it is set but not a count in
 * 0..ACCY_MAX_THREADS (launches then use the CPU count). */
accy_status accy__sched_cores_env(uint32_t *out) __attribute__((warn_unused_result));
accy_status accy__sched_check_env(void) __attribute__((warn_unused_result));
/* Admission turns waited for now (a snapshot; a waiting wide launch counts
 * each of its turns). */
uint32_t accy__sched_launches_waiting(void);
/* For tests: replaces C. Only while no launch runs or waits. */
void accy__sched_set_cores(uint32_t n);

/* Idle hook: the session layer's trim of idle programs. While the hook
 * says it may have more to do, the pool's first worker calls |fn| once every
 * ACCY_IDLE_TRIM_MS milliseconds (default 2000; 0: never), whether the pool
 * is busy (between jobs) or asleep (a timed wait); when |fn| returns false
 * (nothing left that a later call could free), the worker sleeps without a
 * timeout until pool work or accy__sched_idle_arm arms it again. The hook
 * runs on that worker, outside every scheduler lock. NULL removes it. */
typedef bool (*accy__sched_idle_fn)(void);
void accy__sched_set_idle_hook(accy__sched_idle_fn fn);
/* Says that the hook has something to do again (a scratch block was
 * allocated), waking the first worker when it sleeps without a timeout.
 * Cheap when already armed; meant for slow paths. */
void accy__sched_idle_arm(void);
/* What ACCY_IDLE_TRIM_MS asks for, in ms, into *out (the default when
 * unset): INVALID_BUFFER with a cause when it is set but not a count of
 * milliseconds (0..86400000). */
accy_status accy__sched_idle_env(uint32_t *out) __attribute__((warn_unused_result));
/* For tests: replaces the idle period (0: never). */
void accy__sched_set_idle_ms(uint32_t ms);

/* Takes a reference to the process-wide pool, starting it with |n_threads|
 * team members on first use (0: the default). Later calls share the running
 * pool whatever they ask for. Returns OK or OUT_OF_MEMORY / LAUNCH_FAILED
 * with a cause. Thread-safe. */
accy_status accy__pool_acquire(uint32_t n_threads, accy__pool **out);
/* Drops a reference; the last one stops the team and joins its thread.
 * Thread-safe. */
void accy__pool_release(accy__pool *pool);
/* Number of team members (worker threads) of the pool. */
uint32_t accy__pool_size(const accy__pool *pool);
/* How many distinct worker indices a launch on |pool| may see: the pool's
 * size + 1 (the submitter), or 1 for no pool. */
static inline uint32_t accy__sched_worker_count(const accy__pool *pool) {
  return pool ? accy__pool_size(pool) + 1 : 1;
}

/* Sleeping on a word: returns when |*word| differs from |expected| (at
 * once if it does already), when woken, or spuriously: callers re-check in
 * a loop. accy__sched_word_wake wakes one sleeper; it may be called on the
 * word of a record that its owner has since left (a futex wake on a mapped
 * address with no sleeper does nothing; a sleeper woken by it re-checks).
 * A futex on Linux, a process-wide condition variable elsewhere. */
void accy__sched_word_wait(_Atomic uint32_t *word, uint32_t expected);
void accy__sched_word_wake(_Atomic uint32_t *word);

/* Deferred work for the pool's threads (asynchronous submission): a job is
 * caller-owned memory that stays valid until its |run| is called. |run| is
 * called exactly once, on a pool thread, which may itself call
 * accy__sched_run (the thread then acts as that launch's caller). */
typedef struct accy__sched_job {
  struct accy__sched_job *next; /* the pool's */
  void (*run)(struct accy__sched_job *job);
  /* Jobs with the same non-NULL key may be run together by the run of one
   * of them (accy__pool_take_jobs). */
  const void *key;
} accy__sched_job;
/* Queues |job| for the next idle pool thread, first in first out, waking one
 * if all sleep. On a pool without a team (a forked child's) it runs |job| on
 * the calling thread before returning. Never fails; allocates nothing.
 * Thread-safe. */
void accy__pool_post(accy__pool *pool, accy__sched_job *job);
/* Takes up to |max| jobs with key |key| (not NULL) off the pool's queue,
 * in queue order, into out[]; returns how many. Their |run| is then never
 * called by the pool: the caller owns them (a job's run uses this to run
 * the queued jobs of its program with it). Thread-safe. */
uint32_t accy__pool_take_jobs(accy__pool *pool, const void *key, accy__sched_job **out,
                              uint32_t max);
/* True when |pool| was inherited across fork: posted jobs of the parent never
 * run here. */
bool accy__pool_orphaned(const accy__pool *pool);

/* Checks that |g| is well formed: tasks in topological order (every
 * successor index greater than its task's and below n_tasks), each n_preds
 * equal to the number of times the task is listed as a successor, and a
 * function for every task with tiles. accy__sched_run trusts its graph (a
 * malformed one may hang or run tiles twice), so the compiler checks each
 * graph once. Returns OK, COMPILE_FAILED (with a cause naming the task and
 * the numbers) or OUT_OF_MEMORY. */
accy_status accy__sched_graph_check(const accy__sched_graph *g)
    __attribute__((warn_unused_result));

/* Bytes of per-launch state accy__sched_run needs for |g|. */
size_t accy__sched_launch_bytes(const accy__sched_graph *g);

/* Runs every tile of every task of |g| exactly once, each task's tiles only
 * after all its predecessors finished, and returns when all are done.
 * At most |max_workers| threads (the caller included) work on this launch.
 * With max_workers <= 1, pool == NULL, or a graph too small to share, the
 * caller runs everything inline in task order with no atomics and no pool
 * round-trip. |state| is accy__sched_launch_bytes(g) bytes, 64-byte aligned,
 * owned by the caller for the call (contents need no initialisation).
 * Never fails. Thread-safe: many launches may run at once. */
void accy__sched_run(accy__pool *pool, const accy__sched_graph *g, void *launch_data,
                     void *state, uint32_t max_workers);

#endif /* ACCY_SCHEDULER_SCHED_H */
