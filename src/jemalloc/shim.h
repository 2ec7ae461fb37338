/* src/jemalloc/shim.h: the interface between libaccy and libaccy-jemalloc,
 * a private shared library that holds a copy of jemalloc (Debian's PIC
 * archive) with every jemalloc symbol local. It exports one function, which
 * returns a table of the three jemalloc entry points accy uses.
 *
 * Why a library of its own: Debian's libjemalloc exports malloc, free and
 * operator new, so linking it would replace the host's allocator; and its
 * thread-locals use the initial-exec model, so any library that contains it
 * can only be loaded at program start, never by dlopen (Python, plugins).
 * libaccy therefore never links jemalloc. A host that links libaccy through
 * pkg-config also gets libaccy-jemalloc loaded at start; libaccy finds it at
 * its first scratch allocation (dlopen of the already loaded library) and
 * uses it. Where it is not loaded (libaccy itself dlopen'ed, a static link),
 * loading it now would need static TLS that glibc does not have, and accy
 * uses its malloc backend instead; accy_info("scratch.backend") says which. */
#ifndef ACCY_JEMALLOC_SHIM_H
#define ACCY_JEMALLOC_SHIM_H

#include <stddef.h>

/* The soname libaccy looks for, and the one symbol it looks up. */
#define ACCY_JEMALLOC_SONAME "libaccy-jemalloc.so.0"
#define ACCY_JEMALLOC_API_SYMBOL "accy_jemalloc_api"
/* Bumped whenever accy_jemalloc_api's layout changes. */
#define ACCY_JEMALLOC_API_VERSION 1u

typedef struct accy_jemalloc_ops {
  unsigned version; /* ACCY_JEMALLOC_API_VERSION */
  /* Creates an arena that never uses sbrk (the host's malloc owns the
   * program break). Returns 0 and sets *out_arena, or an errno value. */
  int (*arena_create)(unsigned *out_arena);
  /* |size| bytes aligned to |align| (a power of two) from |arena|, bypassing
   * the thread caches; NULL when out of memory. */
  void *(*alloc)(unsigned arena, size_t size, size_t align);
  /* Frees a block from alloc. */
  void (*free)(void *ptr);
  /* mallctl, for settings and statistics. */
  int (*ctl)(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);
} accy_jemalloc_ops;

typedef const accy_jemalloc_ops *(*accy_jemalloc_api_fn)(void);

#endif /* ACCY_JEMALLOC_SHIM_H */
