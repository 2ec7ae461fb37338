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
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/jemalloc/shim.h"
#include "src/scratch.h"
#include "src/util/alloc.h"

#pragma weak dlopen
#pragma weak dlsym
#pragma weak dlerror

/* Relaxed: a statistics counter read by tests after joins. */
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
