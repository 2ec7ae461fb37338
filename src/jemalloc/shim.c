/* src/jemalloc/shim.c: libaccy-jemalloc, see shim.h. Linked with Debian's
 * libjemalloc_pic.a and a version script that exports accy_jemalloc_api
 * only, so none of jemalloc's malloc, free or operator new can interpose the
 * host's. */
#include <stdio.h>

#include <jemalloc/jemalloc.h>

#include "src/jemalloc/shim.h"

const accy_jemalloc_ops *accy_jemalloc_api(void) __attribute__((visibility("default")));

static int arena_create(unsigned *out_arena) {
  unsigned index;
  size_t sz = sizeof index;
  int err = mallctl("arenas.create", &index, &sz, NULL, 0);
  if (err) return err;
  char name[64];
  const char *dss = "disabled";
  snprintf(name, sizeof name, "arena.%u.dss", index);
  (void)mallctl(name, NULL, NULL, (void *)&dss, sizeof dss);
  *out_arena = index;
  return 0;
}

static void *arena_alloc(unsigned arena, size_t size, size_t align) {
  return mallocx(size, MALLOCX_ARENA(arena) | MALLOCX_TCACHE_NONE | MALLOCX_ALIGN(align));
}

static void arena_free(void *ptr) { dallocx(ptr, MALLOCX_TCACHE_NONE); }

static const accy_jemalloc_ops api = {
    .version = ACCY_JEMALLOC_API_VERSION,
    .arena_create = arena_create,
    .alloc = arena_alloc,
    .free = arena_free,
    .ctl = mallctl,
};

const accy_jemalloc_ops *accy_jemalloc_api(void) { return &api; }
