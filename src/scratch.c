/* src/scratch.c: per-launch scratch blocks; see scratch.h.
 *
 * The backend is chosen once per process, at the first acquire:
 *  - jemalloc when this build has libaccy-jemalloc (configure found Debian's
 *    PIC archive) and the process loaded it at start (a host linked with
 *    pkg-config's flags): dlopen finds the loaded copy, and accy creates one
 *    arena of its own in it. Loading it now, when it was not loaded at
 *    start, needs static TLS that glibc usually lacks; dlopen then fails
 *    cleanly and accy takes the malloc backend (src/jemalloc/shim.h).
 *  - malloc otherwise, or when ACCY_SCRATCH_BACKEND=malloc.
 * dlopen is referenced weakly: in a static link it stays NULL, so the static
 * library needs neither libdl nor a shared jemalloc. */
#include "src/internal.h"

#include <dlfcn.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/base/alloc.h"
#include "src/jemalloc/shim.h"
#include "src/scratch.h"
#include "scheduler/sched.h"

#pragma weak dlopen
#pragma weak dlsym
#pragma weak dlerror

/* A statistics counter read by tests after joins. It changes once per new
 * block, never per launch, so its atomics keep the default seq_cst. */
static _Atomic uint64_t backend_allocs;

uint64_t accy__scratch_backend_allocs(void) { return atomic_load(&backend_allocs); }

static pthread_once_t backend_once = PTHREAD_ONCE_INIT;
static const accy_jemalloc_ops *je; /* NULL: the malloc backend */
static char backend_note[256];

static void choose_backend(void) {
#ifdef ACCY_HAVE_JEMALLOC
  const char *want = getenv("ACCY_SCRATCH_BACKEND");
  if (want && strcmp(want, "malloc") == 0) {
    snprintf(backend_note, sizeof backend_note, "ACCY_SCRATCH_BACKEND=malloc");
    return;
  }
  if (!dlopen || !dlsym) {
    snprintf(backend_note, sizeof backend_note, "static link: %s is not loadable",
             ACCY_JEMALLOC_SONAME);
    return;
  }
  void *h = dlopen(ACCY_JEMALLOC_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror ? dlerror() : NULL;
    snprintf(backend_note, sizeof backend_note,
             "%s was not loaded at program start (link with `pkg-config --libs accy`): %.160s",
             ACCY_JEMALLOC_SONAME, why ? why : "dlopen failed");
    return;
  }
  accy_jemalloc_api_fn fn = (accy_jemalloc_api_fn)dlsym(h, ACCY_JEMALLOC_API_SYMBOL);
  const accy_jemalloc_ops *api = fn ? fn() : NULL;
  if (!api || api->version != ACCY_JEMALLOC_API_VERSION) {
    snprintf(backend_note, sizeof backend_note, "%s has another interface version",
             ACCY_JEMALLOC_SONAME);
    return; /* the handle stays open: harmless, and dlclose could unmap TLS users */
  }
  je = api;
#else
  snprintf(backend_note, sizeof backend_note, "built --without-jemalloc");
#endif
}

static bool use_jemalloc(void) {
  pthread_once(&backend_once, choose_backend);
  return je != NULL;
}

const char *accy__scratch_backend(void) { return use_jemalloc() ? "jemalloc" : "malloc"; }

const char *accy__scratch_backend_note(void) {
  use_jemalloc();
  return backend_note;
}

/* accy's own jemalloc arena, created on first use. A failed creation (out of
 * memory, or the allocation-failure hook) is retried by the next acquire
 * rather than remembered, so one failure does not disable scratch for the
 * process. */
#define ACCY_SCRATCH_DIRTY_DECAY_MS 1000
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
      if (je->arena_create(&index) == 0) {
        arena_index = index;
        /* accy caches its blocks itself (per program, until release or
         * accy_session_trim), so pages jemalloc keeps after a free are
         * only waste: return them within a second, and skip the muzzy
         * stage. */
        char name[64];
        ssize_t dirty_ms = ACCY_SCRATCH_DIRTY_DECAY_MS, muzzy_ms = 0;
        snprintf(name, sizeof name, "arena.%u.dirty_decay_ms", index);
        (void)je->ctl(name, NULL, NULL, &dirty_ms, sizeof dirty_ms);
        snprintf(name, sizeof name, "arena.%u.muzzy_decay_ms", index);
        (void)je->ctl(name, NULL, NULL, &muzzy_ms, sizeof muzzy_ms);
        atomic_store(&arena_ok, true); /* publishes arena_index */
      }
      accy__free(probe);
    }
  }
  pthread_mutex_unlock(&arena_lock);
  return atomic_load(&arena_ok);
}

static void *backend_alloc(uint64_t bytes) {
  if (use_jemalloc()) {
    if (!arena_ready()) return NULL;
    return je->alloc(arena_index, (size_t)bytes, 64);
  }
  void *p = NULL;
  if (posix_memalign(&p, 64, (size_t)bytes) != 0) return NULL;
  return p;
}

static void backend_free(void *p) {
  if (je)
    je->free(p);
  else
    free(p);
}

/* ---- memory budget ------------------------------------------------------------ */

bool accy__budget_take(accy__memory_budget *b, uint64_t bytes) {
  uint64_t cur = atomic_load(&b->held);
  for (;;) {
    if (bytes > b->limit || cur > b->limit - bytes) return false;
    if (atomic_compare_exchange_weak(&b->held, &cur, cur + bytes)) return true;
  }
}

void accy__budget_give(accy__memory_budget *b, uint64_t bytes) { atomic_fetch_sub(&b->held, bytes); }

/* The memory limit of this process's cgroup (v2 memory.max, else v1
 * memory.limit_in_bytes), or UINT64_MAX when there is none or it cannot be
 * read. */
static uint64_t cgroup_limit(void) {
  uint64_t best = UINT64_MAX;
  FILE *f = fopen("/proc/self/cgroup", "r");
  if (!f) return best;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *c1 = strchr(line, ':');
    char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2) continue;
    *c1 = *c2 = '\0';
    const char *controllers = c1 + 1, *path = c2 + 1;
    char file[640];
    if (strcmp(line, "0") == 0 && controllers[0] == '\0')
      snprintf(file, sizeof file, "/sys/fs/cgroup%s/memory.max", path);
    else if (strstr(controllers, "memory"))
      snprintf(file, sizeof file, "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", path);
    else
      continue;
    FILE *g = fopen(file, "r");
    if (!g) continue;
    unsigned long long v;
    if (fscanf(g, "%llu", &v) == 1 && v > 0 && v < best) best = v;
    fclose(g);
  }
  fclose(f);
  return best;
}

static pthread_once_t limit_once = PTHREAD_ONCE_INIT;
static uint64_t default_limit;

static void compute_default_limit(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t phys = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : UINT64_MAX;
  uint64_t cg = cgroup_limit();
  uint64_t m = phys < cg ? phys : cg;
  default_limit = m == UINT64_MAX ? UINT64_MAX : m / 2;
}

uint64_t accy__memory_limit_default(void) {
  pthread_once(&limit_once, compute_default_limit);
  return default_limit;
}

/* ---- caches ----------------------------------------------------------------------- */

/* Bumped in a forked child (accy__scratch_cache's fork_epoch): a caller
 * that held a cache's lock at the fork never gives it back there, and the
 * child's first launch of that program spun forever (check_coalesce's
 * fork test, about once in seven runs of the suite under load). */
static _Atomic uint32_t g_fork_epoch;
static pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;
static void fork_child(void) { atomic_fetch_add(&g_fork_epoch, 1); }
static void register_fork(void) { (void)pthread_atfork(NULL, NULL, fork_child); }

static inline bool inherited(const accy__scratch_cache *cache) {
  return cache->fork_epoch != atomic_load_explicit(&g_fork_epoch, memory_order_relaxed);
}

/* The cache lock guards a few loads and stores, so a test-and-set word
 * serves: one locked instruction to take it and a plain release store to
 * give it back, where a pthread mutex pair costs two locked instructions and
 * two calls (a tenth of a tiny program's invoke). A waiter spins briefly,
 * reading only, then yields: with more runnable threads than cores the
 * holder may be off its core. */
static inline void cache_lock(accy__scratch_cache *cache) {
  for (uint32_t spins = 0;; spins++) {
    if (!atomic_exchange_explicit(&cache->lock, true, memory_order_acquire)) return;
    while (atomic_load_explicit(&cache->lock, memory_order_relaxed)) {
      if (++spins >= 64) {
        sched_yield();
        spins = 0;
      } else {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
  }
}

static inline void cache_unlock(accy__scratch_cache *cache) {
  atomic_store_explicit(&cache->lock, false, memory_order_release);
}

void accy__scratch_cache_init(accy__scratch_cache *cache, uint64_t block_bytes,
                              accy__memory_budget *budget) {
  memset(cache, 0, sizeof *cache);
  atomic_init(&cache->lock, false);
  pthread_once(&g_fork_once, register_fork);
  cache->fork_epoch = atomic_load(&g_fork_epoch);
  cache->block_bytes = accy__align_up(block_bytes < 64 ? 64 : block_bytes, 64);
  cache->budget = budget;
}

void accy__scratch_cache_destroy(accy__scratch_cache *cache) {
  (void)accy__scratch_cache_trim(cache); /* no block is in use: that is all of them */
}

accy_status accy__scratch_acquire(accy__scratch_cache *cache, void **out) {
  const bool own = !inherited(cache);
  void *b = NULL;
  if (own) cache_lock(cache), b = cache->free_list;
  if (b) {
    memcpy(&cache->free_list, b, sizeof(void *));
    cache->n_free--;
    const uint64_t in_use = cache->n_blocks - cache->n_free;
    if (in_use > cache->window_peak) cache->window_peak = in_use;
  }
  if (own) cache_unlock(cache);
  if (b) {
    *out = b;
    return ACCY_STATUS_OK;
  }
  /* The allocation-failure hook covers scratch too (a zero-byte probe). */
  void *probe = accy__malloc(0);
  if (!probe)
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for %llu bytes of launch scratch",
                     (unsigned long long)cache->block_bytes);
  accy__free(probe);
  accy__memory_budget *budget = cache->budget;
  if (budget && !accy__budget_take(budget, cache->block_bytes))
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY,
                     "launch scratch of %llu bytes would bring the session's memory to %llu bytes, "
                     "over its limit of %llu (accy_session_options.memory_limit_bytes)",
                     (unsigned long long)cache->block_bytes,
                     (unsigned long long)(atomic_load(&budget->held) + cache->block_bytes),
                     (unsigned long long)budget->limit);
  b = backend_alloc(cache->block_bytes);
  if (!b) {
    if (budget) accy__budget_give(budget, cache->block_bytes);
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for %llu bytes of launch scratch",
                     (unsigned long long)cache->block_bytes);
  }
  atomic_fetch_add(&backend_allocs, 1);
  if (!own) { /* a forked child's block, freed on release */
    *out = b;
    return ACCY_STATUS_OK;
  }
  cache_lock(cache);
  if (++cache->n_blocks > cache->peak_blocks) cache->peak_blocks = cache->n_blocks;
  if (cache->n_blocks - cache->n_free > cache->window_peak)
    cache->window_peak = cache->n_blocks - cache->n_free;
  cache_unlock(cache);
  /* A block to give back later, once idle: the pool's sweeps look again. */
  accy__sched_idle_arm();
  *out = b;
  return ACCY_STATUS_OK;
}

/* Frees a chain of |n| blocks taken off the cache (linked through their
 * first word), gives their bytes back to the budget and returns them. */
static uint64_t free_chain(accy__scratch_cache *cache, void *b, uint64_t n) {
  while (b) {
    void *next;
    memcpy(&next, b, sizeof next);
    backend_free(b);
    b = next;
  }
  const uint64_t bytes = n * cache->block_bytes;
  if (cache->budget && bytes) accy__budget_give(cache->budget, bytes);
  return bytes;
}

void accy__scratch_release(accy__scratch_cache *cache, void *block, _Atomic uint64_t *count) {
  if (inherited(cache)) { /* in a forked child: a block it allocated itself, freed again */
    if (count) atomic_fetch_add_explicit(count, 1, memory_order_relaxed);
    memset(block, 0, sizeof(void *)); /* a chain of one */
    (void)free_chain(cache, block, 1);
    return;
  }
  cache_lock(cache);
  if (count)
    atomic_store_explicit(count, atomic_load_explicit(count, memory_order_relaxed) + 1,
                          memory_order_relaxed);
  memcpy(block, &cache->free_list, sizeof(void *));
  cache->free_list = block;
  cache->n_free++;
  void *excess = NULL;
  uint64_t n_excess = 0;
  if (++cache->window_releases >= ACCY__SCRATCH_TRIM_WINDOW) {
    const uint64_t keep = cache->window_peak ? cache->window_peak : 1;
    while (cache->n_blocks > keep && cache->free_list) {
      void *b = cache->free_list;
      memcpy(&cache->free_list, b, sizeof(void *));
      memcpy(b, &excess, sizeof(void *));
      excess = b;
      cache->n_free--;
      cache->n_blocks--;
      n_excess++;
    }
    cache->window_releases = 0;
    cache->window_peak = cache->n_blocks - cache->n_free;
  }
  cache_unlock(cache);
  if (excess) (void)free_chain(cache, excess, n_excess);
}

uint64_t accy__scratch_cache_trim(accy__scratch_cache *cache) {
  if (inherited(cache)) return 0; /* the parent's list: not this process's to walk */
  cache_lock(cache);
  void *b = cache->free_list;
  uint64_t n = cache->n_free;
  cache->free_list = NULL;
  cache->n_free = 0;
  cache->n_blocks -= n;
  cache_unlock(cache);
  return free_chain(cache, b, n);
}

void accy__scratch_cache_counts(accy__scratch_cache *cache, uint64_t *blocks, uint64_t *in_use,
                                uint64_t *peak) {
  if (inherited(cache)) { /* nothing cached in a forked child */
    *blocks = *in_use = *peak = 0;
    return;
  }
  cache_lock(cache);
  *blocks = cache->n_blocks;
  *in_use = cache->n_blocks - cache->n_free;
  *peak = cache->peak_blocks;
  cache_unlock(cache);
}

void accy__scratch_purge(void) {
  if (use_jemalloc()) {
    if (!atomic_load(&arena_ok)) return;
    char name[64];
    snprintf(name, sizeof name, "arena.%u.purge", arena_index);
    (void)je->ctl(name, NULL, NULL, NULL, 0);
    return;
  }
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}
