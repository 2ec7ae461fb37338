/* src/compile/reuse.c: the scratch planner; see reuse.h.
 *
 * The region is a doubly linked list of blocks in address order, used or
 * free; adjacent free blocks are always merged. Every free block remembers
 * its *release*: the task or barrier whose completion means every earlier
 * occupant of its bytes is done with them (-1: never occupied). A range
 * placed on a free block's bytes gets one edge, release -> its first task.
 *
 * Why one edge suffices: every task touching a buffer is reachable from the
 * buffer's first task (its producer; readers have data edges from it), so
 * "all touchers of x precede y.start" reduces to "x's release precedes
 * y.start" once the release waits for all of x's touchers. A buffer with at
 * most two distinct touchers (producer, one reader) needs no barrier: its
 * last toucher depends on its producer, so that task is its release. */
#include "src/internal.h"

#include <stdlib.h>
#include <string.h>

#include "src/compile/reuse.h"
#include "src/base/limits.h"
#include "src/base/alloc.h"

/* Size classes of free blocks: sizes in units of 64 bytes; below 4 units one
 * class each, above it four classes per power of two (TLSF's two levels). */
#define N_BINS 256
#define BIN_SCAN 8 /* entries of a size's own class checked for a best fit */

typedef struct block {
  uint64_t offset, bytes;
  int32_t prev, next;         /* neighbours in address order */
  int32_t bin_prev, bin_next; /* in its class list, while free */
  int64_t release;            /* see above; -1 never occupied */
  uint16_t bin;
  bool free;
} block;

typedef struct heap {
  block *blocks;
  uint32_t n_blocks, cap_blocks;
  int32_t spare;   /* recycled block indices, linked through next; -1 none */
  int32_t tail;    /* the block at the highest address, or -1 */
  uint64_t end;    /* bytes in use from 0: the peak so far */
  int32_t bins[N_BINS];
  uint64_t bitmap[N_BINS / 64];
  /* Output being built. */
  uint32_t n_tasks;
  accy__reuse_edge *edges;
  size_t n_edges, cap_edges;
  uint32_t *barrier_after;
  uint32_t n_barriers, cap_barriers;
} heap;

static unsigned bin_of(uint64_t bytes) {
  uint64_t u = bytes >> 6;
  if (u < 4) return (unsigned)u;
  unsigned fl = 63u - (unsigned)__builtin_clzll(u);
  unsigned sl = (unsigned)(u >> (fl - 2)) & 3u;
  unsigned b = 4u + (fl - 2u) * 4u + sl;
  return b < N_BINS ? b : N_BINS - 1;
}

static void bin_insert(heap *h, int32_t i) {
  block *b = &h->blocks[i];
  b->bin = (uint16_t)bin_of(b->bytes);
  b->bin_prev = -1;
  b->bin_next = h->bins[b->bin];
  if (b->bin_next >= 0) h->blocks[b->bin_next].bin_prev = i;
  h->bins[b->bin] = i;
  h->bitmap[b->bin / 64] |= UINT64_C(1) << (b->bin % 64);
}

static void bin_remove(heap *h, int32_t i) {
  block *b = &h->blocks[i];
  if (b->bin_prev >= 0)
    h->blocks[b->bin_prev].bin_next = b->bin_next;
  else
    h->bins[b->bin] = b->bin_next;
  if (b->bin_next >= 0) h->blocks[b->bin_next].bin_prev = b->bin_prev;
  if (h->bins[b->bin] < 0) h->bitmap[b->bin / 64] &= ~(UINT64_C(1) << (b->bin % 64));
}

/* The first non-empty class above |bin|, or -1. */
static int first_bin_above(const heap *h, unsigned bin) {
  for (unsigned w = (bin + 1) / 64; w < N_BINS / 64; w++) {
    uint64_t m = h->bitmap[w];
    if (w == (bin + 1) / 64 && (bin + 1) % 64) m &= ~((UINT64_C(1) << ((bin + 1) % 64)) - 1);
    if (m) return (int)(w * 64 + (unsigned)__builtin_ctzll(m));
  }
  return -1;
}

static int32_t new_block(heap *h) {
  if (h->spare >= 0) {
    int32_t i = h->spare;
    h->spare = h->blocks[i].next;
    return i;
  }
  if (h->n_blocks == h->cap_blocks) {
    uint32_t ncap = h->cap_blocks ? h->cap_blocks * 2 : 64;
    block *nb = accy__realloc(h->blocks, (size_t)ncap * sizeof(block));
    if (!nb) return -1;
    h->blocks = nb;
    h->cap_blocks = ncap;
  }
  return (int32_t)h->n_blocks++;
}

static bool add_edge(heap *h, uint32_t from, uint32_t to) {
  if (h->n_edges == h->cap_edges) {
    size_t ncap = h->cap_edges ? h->cap_edges * 2 : 64;
    accy__reuse_edge *ne = accy__realloc(h->edges, ncap * sizeof(accy__reuse_edge));
    if (!ne) return false;
    h->edges = ne;
    h->cap_edges = ncap;
  }
  h->edges[h->n_edges++] = (accy__reuse_edge){from, to};
  return true;
}

/* A new barrier directly after task |after|; returns its id or -1. */
static int64_t new_barrier(heap *h, uint32_t after) {
  if (h->n_barriers == h->cap_barriers) {
    uint32_t ncap = h->cap_barriers ? h->cap_barriers * 2 : 64;
    uint32_t *nb = accy__realloc(h->barrier_after, (size_t)ncap * sizeof(uint32_t));
    if (!nb) return -1;
    h->barrier_after = nb;
    h->cap_barriers = ncap;
  }
  h->barrier_after[h->n_barriers] = after;
  return (int64_t)h->n_tasks + h->n_barriers++;
}

/* The release of two merged free blocks, at task |now|. -2: out of memory. */
static int64_t merge_release(heap *h, int64_t a, int64_t b, uint32_t now) {
  if (a < 0) return b;
  if (b < 0 || a == b) return a;
  int64_t k = new_barrier(h, now);
  if (k < 0 || !add_edge(h, (uint32_t)a, (uint32_t)k) || !add_edge(h, (uint32_t)b, (uint32_t)k))
    return -2;
  return k;
}

/* Places |bytes| and returns the block (-1: out of memory); *release is the
 * release of the bytes it takes. */
static int32_t heap_alloc(heap *h, uint64_t bytes, int64_t *release) {
  unsigned want = bin_of(bytes);
  int32_t f = -1;
  /* Best fit among a few of the size's own class, else any larger class. */
  int32_t i = h->bins[want];
  for (unsigned k = 0; i >= 0 && k < BIN_SCAN; k++, i = h->blocks[i].bin_next)
    if (h->blocks[i].bytes >= bytes && (f < 0 || h->blocks[i].bytes < h->blocks[f].bytes)) f = i;
  if (f < 0) {
    int above = first_bin_above(h, want);
    if (above >= 0) f = h->bins[above];
  }
  if (f >= 0) {
    bin_remove(h, f);
    *release = h->blocks[f].release;
    if (h->blocks[f].bytes > bytes) {
      int32_t g = new_block(h);
      if (g < 0) return -1;
      block *fb = &h->blocks[f], *gb = &h->blocks[g];
      gb->offset = fb->offset + bytes;
      gb->bytes = fb->bytes - bytes;
      gb->release = fb->release;
      gb->free = true;
      gb->prev = f;
      gb->next = fb->next;
      if (gb->next >= 0)
        h->blocks[gb->next].prev = g;
      else
        h->tail = g;
      fb->next = g;
      fb->bytes = bytes;
      bin_insert(h, g);
    }
    h->blocks[f].free = false;
    return f;
  }
  if (h->tail >= 0 && h->blocks[h->tail].free) {
    /* Grow the free block at the end. */
    int32_t t = h->tail;
    bin_remove(h, t);
    *release = h->blocks[t].release;
    h->blocks[t].bytes = bytes;
    h->blocks[t].free = false;
    h->end = h->blocks[t].offset + bytes;
    return t;
  }
  int32_t n = new_block(h);
  if (n < 0) return -1;
  block *nb = &h->blocks[n];
  nb->offset = h->end;
  nb->bytes = bytes;
  nb->release = -1;
  nb->free = false;
  nb->prev = h->tail;
  nb->next = -1;
  if (h->tail >= 0) h->blocks[h->tail].next = n;
  h->tail = n;
  h->end += bytes;
  *release = -1;
  return n;
}

/* Frees block |i| whose occupant is released by |release|, at task |now|. */
static bool heap_free(heap *h, int32_t i, int64_t release, uint32_t now) {
  block *b = &h->blocks[i];
  b->free = true;
  b->release = release;
  int32_t p = b->prev;
  if (p >= 0 && h->blocks[p].free) {
    /* Merge |i| into its predecessor. */
    bin_remove(h, p);
    int64_t r = merge_release(h, h->blocks[p].release, b->release, now);
    if (r == -2) return false;
    block *pb = &h->blocks[p];
    b = &h->blocks[i];
    pb->release = r;
    pb->bytes += b->bytes;
    pb->next = b->next;
    if (pb->next >= 0)
      h->blocks[pb->next].prev = p;
    else
      h->tail = p;
    h->blocks[i].next = h->spare;
    h->spare = i;
    i = p;
    b = pb;
  }
  int32_t n = b->next;
  if (n >= 0 && h->blocks[n].free) {
    bin_remove(h, n);
    int64_t r = merge_release(h, b->release, h->blocks[n].release, now);
    if (r == -2) return false;
    b = &h->blocks[i];
    block *nb = &h->blocks[n];
    b->release = r;
    b->bytes += nb->bytes;
    b->next = nb->next;
    if (b->next >= 0)
      h->blocks[b->next].prev = i;
    else
      h->tail = i;
    nb->next = h->spare;
    h->spare = n;
  }
  bin_insert(h, i);
  return true;
}

/* Order of placement: by first task, then largest first, then index. */
typedef struct order_key {
  uint32_t start;
  uint64_t bytes;
  uint32_t index;
} order_key;

static int by_start_then_size(const void *a, const void *b) {
  const order_key *x = a, *y = b;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

void accy__reuse_plan_free(accy__reuse_plan *plan) {
  accy__free(plan->barrier_after);
  accy__free(plan->edges);
  memset(plan, 0, sizeof *plan);
}

accy_status accy__plan_reuse(accy__live_range *ranges, uint32_t n, uint32_t n_tasks,
                             uint64_t max_bytes, accy__reuse_plan *out) {
  memset(out, 0, sizeof *out);
  accy_status s = ACCY_STATUS_OK;
  heap h;
  memset(&h, 0, sizeof h);
  h.spare = -1;
  h.tail = -1;
  h.n_tasks = n_tasks;
  for (unsigned k = 0; k < N_BINS; k++) h.bins[k] = -1;
  order_key *order = accy__malloc(((size_t)n + 1) * sizeof *order);
  int32_t *where = accy__malloc(((size_t)n + 1) * sizeof *where);  /* range -> block */
  uint32_t *end_head = accy__malloc(((size_t)n_tasks + 1) * sizeof *end_head); /* by end */
  uint32_t *end_next = accy__malloc(((size_t)n + 1) * sizeof *end_next);
  if (!order || !where || !end_head || !end_next) {
    s = ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory while planning scratch");
    goto done;
  }
  uint32_t n_order = 0;
  for (uint32_t t = 0; t < n_tasks; t++) end_head[t] = UINT32_MAX;
  for (uint32_t k = 0; k < n; k++) {
    where[k] = -1;
    ranges[k].offset = 0;
    if (ranges[k].bytes == 0 || ranges[k].n_touches == 0) continue;
    ACCY_ASSERT(ranges[k].start <= ranges[k].end && ranges[k].end < n_tasks);
    order[n_order++] = (order_key){ranges[k].start, ranges[k].bytes, k};
    end_next[k] = end_head[ranges[k].end];
    end_head[ranges[k].end] = k;
  }
  if (n_order) qsort(order, n_order, sizeof *order, by_start_then_size);

  uint32_t next = 0;
  for (uint32_t t = 0; t < n_tasks && s == ACCY_STATUS_OK; t++) {
    /* Place what starts at t: it overlaps everything still live at t. */
    for (; next < n_order && order[next].start == t; next++) {
      accy__live_range *y = &ranges[order[next].index];
      int64_t release;
      int32_t blk = heap_alloc(&h, y->bytes, &release);
      if (blk < 0) {
        s = ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory while planning scratch");
        goto done;
      }
      if (h.end > max_bytes) {
        s = ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                      "launch scratch of at least %llu bytes exceeds ACCY_MAX_SCRATCH_BYTES %llu",
                      (unsigned long long)h.end, (unsigned long long)max_bytes);
        goto done;
      }
      y->offset = h.blocks[blk].offset;
      where[order[next].index] = blk;
      if (release >= 0 && (uint32_t)release != y->start && !add_edge(&h, (uint32_t)release, y->start)) {
        s = ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory while planning scratch");
        goto done;
      }
    }
    /* Free what ends at t. */
    for (uint32_t k = end_head[t]; k != UINT32_MAX; k = end_next[k]) {
      accy__live_range *x = &ranges[k];
      int64_t release = x->end;
      if (x->n_touches > 2) {
        release = new_barrier(&h, t);
        bool ok = release >= 0;
        for (uint32_t q = 0; ok && q < x->n_touches; q++)
          ok = add_edge(&h, x->touches[q], (uint32_t)release);
        if (!ok) {
          s = ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory while planning scratch");
          goto done;
        }
      }
      if (!heap_free(&h, where[k], release, t)) {
        s = ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory while planning scratch");
        goto done;
      }
    }
  }
  out->peak = h.end;
  out->n_barriers = h.n_barriers;
  out->barrier_after = h.barrier_after;
  out->n_edges = h.n_edges;
  out->edges = h.edges;
  h.barrier_after = NULL;
  h.edges = NULL;
done:
  accy__free(h.blocks);
  accy__free(h.edges);
  accy__free(h.barrier_after);
  accy__free(order);
  accy__free(where);
  accy__free(end_head);
  accy__free(end_next);
  return s;
}
