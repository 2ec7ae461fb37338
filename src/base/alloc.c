/* src/base/alloc.c: allocation with a failure-injection hook, and the bump
 * arena. See alloc.h. */
#include "src/base/base.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "accy/memory.h"
#include "src/base/alloc.h"

/* Test aids. The counters use relaxed atomics: each allocation only needs
 * its own increment to be atomic, and tests read them after joining. The
 * hook's value is read relaxed for the same reason; setting it and counting
 * it down (the CAS) keep the default seq_cst. */
static _Atomic long fail_after = -1;
static _Atomic uint64_t n_allocs = 0;
/* Blocks handed out and not yet freed (leak checks in tests). */
static _Atomic int64_t n_live = 0;

void accy__alloc_fail_after(long n) { atomic_store(&fail_after, n); }
uint64_t accy__alloc_count(void) { return atomic_load_explicit(&n_allocs, memory_order_relaxed); }
int64_t accy__alloc_live(void) { return atomic_load(&n_live); }

static void *counted(void *p) {
  if (p) atomic_fetch_add_explicit(&n_live, 1, memory_order_relaxed);
  return p;
}
static void uncounted(void *p) {
  if (p) atomic_fetch_sub_explicit(&n_live, 1, memory_order_relaxed);
}

static bool should_fail(void) {
  long v = atomic_load_explicit(&fail_after, memory_order_relaxed);
  while (v >= 0) {
    if (v == 0) return true;
    if (atomic_compare_exchange_weak(&fail_after, &v, v - 1)) break;
  }
  atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
  return false;
}

void *accy__malloc(size_t size) {
  if (should_fail()) return NULL;
  return counted(malloc(size ? size : 1));
}

void *accy__calloc(size_t count, size_t size) {
  if (should_fail()) return NULL;
  if (count == 0 || size == 0) count = size = 1;
  return counted(calloc(count, size));
}

void *accy__realloc(void *p, size_t size) {
  if (should_fail()) return NULL;
  void *q = realloc(p, size ? size : 1);
  return p ? q : counted(q);
}

void accy__free(void *p) {
  uncounted(p);
  free(p);
}

void *accy__aligned_alloc(size_t size, size_t align) {
  if (should_fail()) return NULL;
  if (align < sizeof(void *)) align = sizeof(void *);
  void *p = NULL;
  if (posix_memalign(&p, align, size ? size : 1) != 0) return NULL;
  memset(p, 0, size ? size : 1);
  return counted(p);
}

void accy__free_aligned(void *p) {
  uncounted(p);
  free(p);
}

/* The public accy_free (accy/memory.h): what accy hands to callers comes
 * from accy__malloc, so it goes back through accy__free. */
void accy_free(void *p) { accy__free(p); }

char *accy__strndup(const char *s, size_t n) {
  char *d = accy__malloc(n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

/* ---- arena ------------------------------------------------------------ */

struct accy__arena_block {
  accy__arena_block *next;
  size_t capacity;
  _Alignas(64) unsigned char data[];
};

#define ARENA_MIN_BLOCK 4096

void accy__arena_init(accy__arena *arena) { memset(arena, 0, sizeof *arena); }

void *accy__arena_alloc(accy__arena *arena, size_t size, size_t align) {
  if (align == 0) align = 1;
  if (arena->head) {
    size_t at = (arena->used + align - 1) & ~(align - 1);
    if (at <= arena->capacity && size <= arena->capacity - at) {
      arena->used = at + size;
      arena->total += size;
      return arena->head->data + at;
    }
  }
  size_t cap = size > ARENA_MIN_BLOCK ? size : ARENA_MIN_BLOCK;
  if (arena->head && arena->head->capacity * 2 > cap && arena->head->capacity < (1u << 20))
    cap = arena->head->capacity * 2;
  if (cap > SIZE_MAX - sizeof(accy__arena_block) - 64) return NULL;
  accy__arena_block *b = accy__aligned_alloc(sizeof(accy__arena_block) + cap, 64);
  if (!b) return NULL;
  b->capacity = cap;
  b->next = arena->head;
  arena->head = b;
  arena->capacity = cap;
  arena->used = size;
  arena->total += size;
  return b->data;
}

char *accy__arena_strndup(accy__arena *arena, const char *s, size_t n) {
  if (n == SIZE_MAX) return NULL;
  char *d = accy__arena_alloc(arena, n + 1, 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

void accy__arena_free(accy__arena *arena) {
  accy__arena_block *b = arena->head;
  while (b) {
    accy__arena_block *next = b->next;
    accy__free_aligned(b);
    b = next;
  }
  memset(arena, 0, sizeof *arena);
}
