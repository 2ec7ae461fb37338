/* src/kernels/data.h: what the data-movement kernels share (data.c, view.c,
 * pad.c, index.c): the cutting of a row-major result into items, the scalar
 * start operands of dynamic_slice and dynamic_update_slice, and the checks
 * their prepares make. Private to those files.
 *
 * These ops only move bytes, so the kernels work on element sizes (1, 2, 4,
 * 8) rather than on dtypes; iota is the one op that converts values, and the
 * index and start operands are read per int dtype and widened to int64
 * (src/kernels/scalar.h).
 *
 * Most ops iterate over the result in row-major order: the result is seen as
 * rows (its innermost dimension), and rows are cut into items of about
 * CHUNK_ELEMS elements (long rows split into chunks, short rows grouped).
 * Every item is thus one contiguous range of the result, and a tile walks
 * its range row segment by row segment, so the innermost loop is a memcpy, a
 * fill or a strided copy. */
#ifndef ACCY_KERNELS_DATA_H
#define ACCY_KERNELS_DATA_H

#include "src/internal.h"

#include <string.h>

#include "src/kernels/kernels.h"
#include "src/kernels/scalar.h"

/* Elements per item of the row-wise kernels: big enough that the per-item
 * bookkeeping is noise, small enough for load balancing. Fixed, so the
 * iteration space does not depend on the thread count. */
#define CHUNK_ELEMS UINT64_C(4096)

static inline uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }
/* Ceiling of a / b for b >= 1, without overflow. */
static inline uint64_t ceil_div_u64(uint64_t a, uint64_t b) { return a == 0 ? 0 : (a - 1) / b + 1; }

/* Index of a tile-function table by element size 1, 2, 4, 8. */
static inline int size_log2(size_t esize) {
  return esize == 1 ? 0 : esize == 2 ? 1 : esize == 4 ? 2 : 3;
}

/* ---- rows into items ------------------------------------------------------ */

/* |rows| rows of |len| elements, in row-major order. Rows of at least
 * CHUNK_ELEMS are split into per_row chunks; shorter rows are grouped,
 * |group| per item. Either way item i covers the contiguous element range
 * [split_flat(i), split_flat(i + 1)). */
typedef struct row_split {
  uint64_t rows;
  uint64_t len;
  uint64_t per_row; /* chunks per row (>= 1) */
  uint64_t group;   /* rows per item (>= 1; > 1 only when per_row == 1) */
  uint64_t n_items;
} row_split;

static inline void split_init(row_split *s, uint64_t rows, uint64_t len) {
  memset(s, 0, sizeof *s);
  s->rows = rows;
  s->len = len;
  s->per_row = 1;
  s->group = 1;
  if (rows == 0 || len == 0) return;
  if (len >= CHUNK_ELEMS) {
    s->per_row = (len + CHUNK_ELEMS - 1) / CHUNK_ELEMS;
    s->n_items = rows * s->per_row;
  } else {
    s->group = CHUNK_ELEMS / len;
    s->n_items = (rows + s->group - 1) / s->group;
  }
}

/* Elements an item of |s| holds at most: the kernel's item_cost. */
static inline uint64_t split_cost(const row_split *s) {
  uint64_t c = s->per_row > 1 ? CHUNK_ELEMS : s->group * s->len;
  return c ? c : 1;
}

/* First flat element of item |item|; the total for item >= n_items. */
static inline uint64_t split_flat(const row_split *s, uint64_t item) {
  if (item >= s->n_items) return s->rows * s->len;
  if (s->per_row > 1) return (item / s->per_row) * s->len + (item % s->per_row) * CHUNK_ELEMS;
  return min_u64(s->rows, item * s->group) * s->len;
}

/* ---- scalar start operands ---------------------------------------------------- */

/* A scalar start operand of dynamic_slice / dynamic_update_slice. */
typedef struct start_ref {
  uint32_t buf;   /* index into bufs */
  int32_t dtype;
  int64_t hi;     /* the start is clamped into [0, hi] */
  int64_t mul;    /* elements the start moves the window by */
} start_ref;

static inline int64_t read_start(const start_ref *s, void *const *bufs) {
  int64_t v = accy__read_int64(bufs[s->buf], s->dtype, 0);
  return v < 0 ? 0 : v > s->hi ? s->hi : v;
}

static inline int64_t dynamic_offset(const start_ref *starts, uint32_t n, void *const *bufs) {
  int64_t off = 0;
  for (uint32_t i = 0; i < n; i++) off += read_start(&starts[i], bufs) * starts[i].mul;
  return off;
}

/* ---- prepare checks ------------------------------------------------------------ */
/* Causes name what is wrong; accy__kernel_prepare puts "node N (op): " in
 * front. */

static inline accy_status fail_dtype(const char *what, int32_t dtype) {
  return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "no kernel for %s%s", accy__dtype_name(dtype), what);
}

static inline accy_status fail_shape(const char *what) {
  return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "%s", what);
}

static inline accy_status need_attrs(const accy__node *nd, uint32_t n) {
  if (nd->n_attrs != n)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "%u attrs, expected %u", nd->n_attrs, n);
  return ACCY_STATUS_OK;
}

static inline accy_status need_operands(const accy__node *nd, uint32_t n) {
  if (nd->n_operands != n)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "%u operands, expected %u", nd->n_operands, n);
  return ACCY_STATUS_OK;
}

static inline accy_status check_axis(int64_t axis, uint32_t rank, const char *what) {
  if (axis < 0 || axis >= (int64_t)rank)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "%s %lld out of range for rank %u", what,
                     (long long)axis, rank);
  return ACCY_STATUS_OK;
}

/* ---- the family's prepares, by file ---------------------------------------------- */

/* The starts of dynamic_slice / dynamic_update_slice: operands first..,
 * one scalar int per axis, clamped into [0, dims - sizes] (index.c). */
ACCY_NODISCARD accy_status accy__data_prepare_starts(const accy__program *p, uint32_t node,
                                                     uint32_t first, const int64_t *dims,
                                                     const int64_t *sizes,
                                                     const int64_t *strides, start_ref *out);
/* reshape, broadcast_in_dim, transpose, slice, reverse, dynamic_slice
 * (view.c) */
ACCY_NODISCARD accy_status accy__data_prepare_view(const accy__program *p, uint32_t node,
                                                   accy__arena *arena, accy__kernel *k);
/* pad (pad.c) */
ACCY_NODISCARD accy_status accy__data_prepare_pad(const accy__program *p, uint32_t node,
                                                  accy__arena *arena, accy__kernel *k);
/* gather, dynamic_update_slice (index.c) */
ACCY_NODISCARD accy_status accy__data_prepare_gather(const accy__program *p, uint32_t node,
                                                     accy__arena *arena, accy__kernel *k);
ACCY_NODISCARD accy_status accy__data_prepare_dus(const accy__program *p, uint32_t node,
                                                  accy__arena *arena, accy__kernel *k);

#endif /* ACCY_KERNELS_DATA_H */
