/* src/scratch.c: per-launch scratch blocks; see scratch.h. */
#include "src/internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "src/scratch.h"
#include "src/util/alloc.h"

#ifdef ACCY_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

/* Relaxed: a statistics counter read by tests after joins. */
static _Atomic uint64_t backend_allocs;

uint64_t accy__scratch_backend_allocs(void) { return atomic_load(&backend_allocs); }

#ifdef ACCY_HAVE_JEMALLOC
/* accy's own arena, created on first use. A failed creation (out of memory,
 * or the allocation-failure hook) is retried by the next acquire rather than
 * remembered, so one failure does not disable scratch for the process. */
static pthread_mutex_t arena_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic bool arena_ok;
static unsigned arena_index;

static bool arena_ready(void) {
  if (atomic_load(&arena_ok)) return true;
  pthread_mutex_lock(&arena_lock);
  if (!atomic_load(&arena_ok)) {
    void *probe = accy__malloc(0); /* the hook covers arena creation too */
    if (probe) {
      unsigned index;
      size_t sz = sizeof index;
      if (mallctl("arenas.create", &index, &sz, NULL, 0) == 0) {
        arena_index = index;
        atomic_store(&arena_ok, true); /* publishes arena_index */
      }
      accy__free(probe);
    }
  }
  pthread_mutex_unlock(&arena_lock);
  return atomic_load(&arena_ok);
}

const char *accy__scratch_backend(void) { return "jemalloc"; }

static void *backend_alloc(uint64_t bytes) {
  if (!arena_ready()) return NULL;
  return mallocx((size_t)bytes, MALLOCX_ARENA(arena_index) | MALLOCX_TCACHE_NONE | MALLOCX_ALIGN(64));
}

static void backend_free(void *p) { dallocx(p, MALLOCX_TCACHE_NONE); }
#else
const char *accy__scratch_backend(void) { return "malloc"; }

static void *backend_alloc(uint64_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 64, (size_t)bytes) != 0) return NULL;
  return p;
}

static void backend_free(void *p) { free(p); }
#endif

void accy__scratch_pool_init(accy__scratch_pool *pool, uint64_t block_bytes) {
  memset(pool, 0, sizeof *pool);
  pthread_mutex_init(&pool->mutex, NULL);
  pool->block_bytes = accy__align_up(block_bytes < 64 ? 64 : block_bytes, 64);
}

void accy__scratch_pool_destroy(accy__scratch_pool *pool) {
  void *b = pool->free_list;
  while (b) {
    void *next;
    memcpy(&next, b, sizeof next);
    backend_free(b);
    b = next;
  }
  pool->free_list = NULL;
  pthread_mutex_destroy(&pool->mutex);
}

accy_status accy__scratch_acquire(accy__scratch_pool *pool, void **out) {
  pthread_mutex_lock(&pool->mutex);
  void *b = pool->free_list;
  if (b) memcpy(&pool->free_list, b, sizeof(void *));
  pthread_mutex_unlock(&pool->mutex);
  if (b) {
    *out = b;
    return ACCY_STATUS_OK;
  }
  /* The allocation-failure hook covers scratch too (a zero-byte probe). */
  void *probe = accy__malloc(0);
  if (!probe)
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for %llu bytes of launch scratch",
                     (unsigned long long)pool->block_bytes);
  accy__free(probe);
  b = backend_alloc(pool->block_bytes);
  if (!b)
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for %llu bytes of launch scratch",
                     (unsigned long long)pool->block_bytes);
  atomic_fetch_add(&backend_allocs, 1);
  pthread_mutex_lock(&pool->mutex);
  pool->n_blocks++;
  pthread_mutex_unlock(&pool->mutex);
  *out = b;
  return ACCY_STATUS_OK;
}

void accy__scratch_release(accy__scratch_pool *pool, void *block) {
  pthread_mutex_lock(&pool->mutex);
  memcpy(block, &pool->free_list, sizeof(void *));
  pool->free_list = block;
  pthread_mutex_unlock(&pool->mutex);
}
