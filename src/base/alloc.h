/* src/base/alloc.h: the one door through which accy allocates long-lived
 * memory (programs, plans, descriptors, tables), and a bump arena for data
 * that lives and dies with one object.
 *
 * Every allocation goes through accy__malloc so that tests can make the Nth
 * allocation fail (accy__alloc_fail_after) and prove each failure path.
 * Thread-safe. */
#ifndef ACCY_BASE_ALLOC_H
#define ACCY_BASE_ALLOC_H

#include "src/base/base.h"

/* malloc/calloc/free with the failure hook. Sizes of 0 allocate 1 byte. */
void *accy__malloc(size_t size);
void *accy__calloc(size_t count, size_t size);
void *accy__realloc(void *p, size_t size);
void accy__free(void *p);
/* Aligned allocation (|align| a power of two, at most 4096), zero-filled;
 * free with accy__free_aligned. */
void *accy__aligned_alloc(size_t size, size_t align);
void accy__free_aligned(void *p);
/* Duplicates a string of |n| bytes and NUL-terminates it. */
char *accy__strndup(const char *s, size_t n);

/* Test hook: after |n| more successful allocations, every allocation fails
 * until the hook is reset with n < 0 (the default). Process-wide. */
void accy__alloc_fail_after(long n);
/* Number of allocations made through this module so far (process-wide). */
uint64_t accy__alloc_count(void);
/* Blocks allocated through this module and not yet freed (process-wide):
 * tests compare it before and after to prove that nothing leaked. */
int64_t accy__alloc_live(void);

/* A bump arena: memory for one object's lifetime, freed all at once.
 * Thread-compatible. Allocations are zero-filled. */
typedef struct accy__arena_block accy__arena_block;
typedef struct accy__arena {
  accy__arena_block *head; /* newest block first */
  size_t used;             /* bytes used in head */
  size_t capacity;         /* usable bytes in head */
  uint64_t total;          /* bytes handed out, for statistics */
} accy__arena;

void accy__arena_init(accy__arena *arena);
/* Returns zeroed memory aligned to |align| (power of two, <= 64), or NULL when
 * out of memory (no cause is set; callers map NULL to OUT_OF_MEMORY). */
void *accy__arena_alloc(accy__arena *arena, size_t size, size_t align);
/* Duplicates |n| bytes of |s| with a NUL after them. */
char *accy__arena_strndup(accy__arena *arena, const char *s, size_t n);
void accy__arena_free(accy__arena *arena);

#endif /* ACCY_BASE_ALLOC_H */
