/* src/scratch.h: per-launch scratch blocks.
 *
 * Each compiled program owns a scratch cache of blocks of one size (the
 * planner's per-launch total). An invoke pops a block, uses it for the
 * launch's scheduler state, binding tables and intermediates, and pushes it
 * back: a steady stream of invokes makes no allocator calls. Concurrent
 * invokes of one program each take their own block, so a cache holds at most
 * as many blocks as that program ever had invokes in flight at once; all are
 * freed when the program is released.
 *
 * Two backends, chosen once per process at the first acquire (scratch.c):
 *  - jemalloc: blocks come from one arena of accy's own in the private
 *    libaccy-jemalloc (src/jemalloc/shim.h), with no thread cache, so they
 *    never mix with the host's heap. Used when the build has the shim and the
 *    process loaded it at start.
 *  - malloc: posix_memalign/free: --without-jemalloc builds (so ASan sees
 *    every overrun), ACCY_SCRATCH_BACKEND=malloc, and processes where the
 *    shim is not loaded (libaccy dlopen'ed, static links).
 * Thread-safe. */
#ifndef ACCY_SCRATCH_H
#define ACCY_SCRATCH_H

#include <pthread.h>
#include <stdatomic.h>

#include "src/internal.h"

/* A session's memory budget: the bytes its programs hold (constants, plans,
 * scratch blocks) against its limit. Thread-safe; lock-free. */
typedef struct accy__memory_budget {
  _Atomic uint64_t held;
  uint64_t limit;          /* UINT64_MAX: none */
} accy__memory_budget;

/* Takes |bytes| from the budget, or returns false (nothing taken) when that
 * would bring it over its limit. */
bool accy__budget_take(accy__memory_budget *b, uint64_t bytes);
void accy__budget_give(accy__memory_budget *b, uint64_t bytes);
/* The default limit: half of the smaller of the machine's physical memory
 * and the process's cgroup memory limit (v1 or v2), computed once. */
uint64_t accy__memory_limit_default(void);

typedef struct accy__scratch_cache {
  atomic_bool lock;        /* guards the fields below (a spinlock: held for a few instructions) */
  void *free_list;         /* intrusive: the first word of a free block links the next */
  uint64_t block_bytes;    /* size of every block, a multiple of 64 */
  /* Statistics, under the lock (read with accy__scratch_cache_counts). */
  uint64_t n_blocks;       /* blocks allocated and not yet freed */
  uint64_t n_free;         /* of those, on the free list */
  uint64_t peak_blocks;    /* most n_blocks ever */
  /* Automatic trim: the most blocks in use during the current window of
   * ACCY__SCRATCH_TRIM_WINDOW releases; at the window's end, cached blocks
   * beyond that many are freed. */
  uint64_t window_releases;
  uint64_t window_peak;
  accy__memory_budget *budget; /* every block is taken from it; may be NULL */
  /* The process's fork count when the cache was made: a cache inherited by
   * a forked child (its lock perhaps held by a thread that does not exist
   * there, its list perhaps half updated) is never locked nor read again;
   * the child's calls allocate and free their blocks directly. */
  uint32_t fork_epoch;
} accy__scratch_cache;

/* |budget| (may be NULL) outlives the cache. */
void accy__scratch_cache_init(accy__scratch_cache *cache, uint64_t block_bytes,
                              accy__memory_budget *budget);
/* Frees every block. No block may be in use. */
void accy__scratch_cache_destroy(accy__scratch_cache *cache);
/* Pops a block (64-byte aligned, contents unspecified) or allocates one.
 * Returns OK or OUT_OF_MEMORY with a cause (the allocation failed, or a new
 * block would bring the budget over its limit). */
ACCY_NODISCARD accy_status accy__scratch_acquire(accy__scratch_cache *cache, void **out);
/* Puts a block back. Every ACCY__SCRATCH_TRIM_WINDOW releases, the blocks
 * held beyond the most that were in use during those releases are freed
 * (when they are free): after a burst, a program that goes on at lower
 * concurrency gives the burst's blocks back by itself, while a steady load
 * (whose peak recurs in every window) keeps its blocks and allocates
 * nothing. */
/* |count| (may be NULL) goes up by one under the cache's lock, so a counter
 * that only this cache's releases change needs no locked increment of its
 * own (readers load it atomically). */
void accy__scratch_release(accy__scratch_cache *cache, void *block, _Atomic uint64_t *count);
#define ACCY__SCRATCH_TRIM_WINDOW 1024u
/* Frees every block on the free list (blocks in use stay), gives their bytes
 * back to the budget and returns that number. */
uint64_t accy__scratch_cache_trim(accy__scratch_cache *cache);
/* A consistent snapshot of the counters. */
void accy__scratch_cache_counts(accy__scratch_cache *cache, uint64_t *blocks, uint64_t *in_use,
                                uint64_t *peak);
/* Asks the backend to return freed pages to the system now (jemalloc: purge
 * accy's arena; malloc: malloc_trim where glibc has it). */
void accy__scratch_purge(void);

/* Number of blocks the backend has allocated in this process (statistics and
 * tests: a steady stream of invokes must not raise it). */
uint64_t accy__scratch_backend_allocs(void);
/* The backend's name: "jemalloc" or "malloc". */
const char *accy__scratch_backend(void);
/* Why the malloc backend was chosen ("" for jemalloc). */
const char *accy__scratch_backend_note(void);

#endif /* ACCY_SCRATCH_H */
