/* src/kernels/sort.c: sort and argsort (wire 1.1; semantics in docs/ops.md).
 *
 * One item per line along the axis. A line is sorted in place in the result
 * buffer (no scratch memory) by an introsort: median of three quicksort,
 * heapsort past 2 log2(n) levels, insertion sort below 16 elements. Keys map
 * every dtype to an unsigned integer whose order is the op's order (-0
 * equals +0, every NaN above +Inf); descending flips all key bits. The
 * result does not depend on the algorithm:
 *  - argsort sorts positions and breaks key ties by position, a total order,
 *    so its result is unique (and stable);
 *  - sort moves values; equal keys hold equal bytes except for the zeros
 *    (-0, +0) and NaNs (sign and payload), so after sorting the run of zeros
 *    and the run of NaNs are rewritten from the input in input order, which
 *    makes the sort stable byte for byte. */
#include "src/internal.h"

#include <string.h>

#include "src/base/half.h"
#include "src/kernels/kernels.h"

/* Lines up to this length are sorted by insertion alone. */
#define INSERTION_MAX 16

/* ---- sort keys --------------------------------------------------------------- */

/* Unsigned keys in the op's ascending order: floats by value with -0 == +0
 * and every NaN above +Inf, signed integers offset by 2^63, unsigned and
 * bool as they are. */
static inline uint64_t key_f32(uint32_t b) {
  uint32_t m = b & 0x7fffffffu;
  if (m > 0x7f800000u) return UINT32_MAX;
  if (m == 0) return 0x80000000u;
  return (b & 0x80000000u) ? (uint64_t)(~b) : (uint64_t)(b | 0x80000000u);
}
static inline uint64_t key_f64(uint64_t b) {
  uint64_t m = b & UINT64_C(0x7fffffffffffffff);
  if (m > UINT64_C(0x7ff0000000000000)) return UINT64_MAX;
  if (m == 0) return UINT64_C(0x8000000000000000);
  return (b & UINT64_C(0x8000000000000000)) ? ~b : (b | UINT64_C(0x8000000000000000));
}
static inline uint64_t key_half(uint16_t b, uint16_t inf) {
  uint16_t m = b & 0x7fffu;
  if (m > inf) return 0xffffu;
  if (m == 0) return 0x8000u;
  return (b & 0x8000u) ? (uint64_t)(uint16_t)~b : (uint64_t)(b | 0x8000u);
}
static inline uint64_t key_f16(uint16_t b) { return key_half(b, 0x7c00u); }
static inline uint64_t key_bf16(uint16_t b) { return key_half(b, 0x7f80u); }
static inline uint64_t key_signed(int64_t v) {
  return (uint64_t)v ^ UINT64_C(0x8000000000000000);
}
#define key_i8(v) key_signed(v)
#define key_i16(v) key_signed(v)
#define key_i32(v) key_signed(v)
#define key_i64(v) key_signed(v)
#define key_u8(v) ((uint64_t)(v))
#define key_u16(v) ((uint64_t)(v))
#define key_u32(v) ((uint64_t)(v))
#define key_u64(v) ((uint64_t)(v))

typedef struct sort_ctx {
  const void *x;  /* argsort: the first key of the line */
  int64_t xs;     /* argsort: elements between keys */
  uint64_t flip;  /* 0 ascending, all ones descending */
} sort_ctx;

/* ---- introsort over a strided array ------------------------------------------
 * NAME##_sort(c, a, s, n) sorts a[0], a[s], ..., a[(n-1)s] of type E by
 * LESS(c, x, y), a strict weak order. */
#define SORT_SWAP(E, a, s, i, j)   \
  do {                             \
    E t_ = (a)[(i) * (s)];         \
    (a)[(i) * (s)] = (a)[(j) * (s)]; \
    (a)[(j) * (s)] = t_;           \
  } while (0)

#define DEFINE_INTROSORT(NAME, E, LESS)                                                      \
  static void NAME##_insertion(const sort_ctx *c, E *a, int64_t s, int64_t lo, int64_t hi) {  \
    for (int64_t i = lo + 1; i < hi; i++) {                                                 \
      E v = a[i * s];                                                                       \
      int64_t j = i;                                                                        \
      while (j > lo && LESS(c, v, a[(j - 1) * s])) {                                        \
        a[j * s] = a[(j - 1) * s];                                                          \
        j--;                                                                                \
      }                                                                                     \
      a[j * s] = v;                                                                         \
    }                                                                                       \
  }                                                                                         \
  /* Max-heap over a[lo .. lo + n): moves the element at |root| down. */                   \
  static void NAME##_sift(const sort_ctx *c, E *a, int64_t s, int64_t lo, int64_t root,     \
                          int64_t n) {                                                      \
    E v = a[(lo + root) * s];                                                               \
    for (;;) {                                                                              \
      int64_t child = 2 * root + 1;                                                         \
      if (child >= n) break;                                                                \
      if (child + 1 < n && LESS(c, a[(lo + child) * s], a[(lo + child + 1) * s])) child++;  \
      if (!LESS(c, v, a[(lo + child) * s])) break;                                          \
      a[(lo + root) * s] = a[(lo + child) * s];                                             \
      root = child;                                                                         \
    }                                                                                       \
    a[(lo + root) * s] = v;                                                                 \
  }                                                                                         \
  static void NAME##_heapsort(const sort_ctx *c, E *a, int64_t s, int64_t lo, int64_t hi) { \
    int64_t n = hi - lo;                                                                    \
    for (int64_t r = n / 2; r-- > 0;) NAME##_sift(c, a, s, lo, r, n);                       \
    for (int64_t m = n - 1; m > 0; m--) {                                                   \
      SORT_SWAP(E, a, s, lo, lo + m);                                                       \
      NAME##_sift(c, a, s, lo, 0, m);                                                       \
    }                                                                                       \
  }                                                                                         \
  static void NAME##_intro(const sort_ctx *c, E *a, int64_t s, int64_t lo, int64_t hi,      \
                           int depth) {                                                     \
    while (hi - lo > INSERTION_MAX) {                                                       \
      if (depth-- == 0) {                                                                   \
        NAME##_heapsort(c, a, s, lo, hi);                                                   \
        return;                                                                             \
      }                                                                                     \
      /* Median of three, ordered in place: a[lo] <= a[mid] <= a[hi - 1]. */              \
      int64_t mid = lo + (hi - lo) / 2;                                                     \
      if (LESS(c, a[mid * s], a[lo * s])) SORT_SWAP(E, a, s, lo, mid);                      \
      if (LESS(c, a[(hi - 1) * s], a[mid * s])) {                                           \
        SORT_SWAP(E, a, s, mid, hi - 1);                                                    \
        if (LESS(c, a[mid * s], a[lo * s])) SORT_SWAP(E, a, s, lo, mid);                    \
      }                                                                                     \
      /* Hoare partition around the median's value: the scans stop at mid at  \
       * the latest, so the parts [lo, j] and [j + 1, hi) are both non-empty. */           \
      const E p = a[mid * s];                                                               \
      int64_t i = lo - 1, j = hi;                                                           \
      for (;;) {                                                                            \
        do i++;                                                                             \
        while (LESS(c, a[i * s], p));                                                       \
        do j--;                                                                             \
        while (LESS(c, p, a[j * s]));                                                       \
        if (i >= j) break;                                                                  \
        SORT_SWAP(E, a, s, i, j);                                                           \
      }                                                                                     \
      /* Recurse into the smaller part: the depth stays below log2(n). */                  \
      if (j + 1 - lo < hi - (j + 1)) {                                                      \
        NAME##_intro(c, a, s, lo, j + 1, depth);                                            \
        lo = j + 1;                                                                         \
      } else {                                                                              \
        NAME##_intro(c, a, s, j + 1, hi, depth);                                            \
        hi = j + 1;                                                                         \
      }                                                                                     \
    }                                                                                       \
    NAME##_insertion(c, a, s, lo, hi);                                                      \
  }                                                                                         \
  static void NAME##_sort(const sort_ctx *c, E *a, int64_t s, int64_t n) {                  \
    int depth = 0;                                                                          \
    for (int64_t m = n; m > 1; m >>= 1) depth += 2;                                         \
    NAME##_intro(c, a, s, 0, n, depth);                                                     \
  }

/* ---- sort and argsort tiles -------------------------------------------------- */

typedef struct sort_params {
  int64_t n;       /* line length: d[axis] */
  uint64_t inner;  /* prod d[axis+1:]: the stride of a line */
  uint64_t flip;   /* 0 ascending, all ones descending */
} sort_params;

/* First element of line |line|. */
static uint64_t line_base(const sort_params *sp, uint64_t line) {
  uint64_t o = line / sp->inner, i = line % sp->inner;
  return o * (uint64_t)sp->n * sp->inner + i;
}

/* Sort of values of storage type T with key KEY. For floats (IS_FLOAT) the
 * zero and NaN runs are then rewritten from the input in input order. */
#define DEFINE_SORT_VALUES(SUF, T, KEY, IS_FLOAT)                                            \
  static inline bool vless_##SUF(const sort_ctx *c, T a, T b) {                              \
    return (KEY(a) ^ c->flip) < (KEY(b) ^ c->flip);                                          \
  }                                                                                          \
  DEFINE_INTROSORT(vsort_##SUF, T, vless_##SUF)                                              \
  static void sort_tile_##SUF(const accy__kernel *k, void *const *bufs, uint64_t begin,      \
                              uint64_t end) {                                                \
    const sort_params *sp = k->params;                                                       \
    const sort_ctx c = {NULL, 0, sp->flip};                                                  \
    const int64_t n = sp->n, s = (int64_t)sp->inner;                                         \
    for (uint64_t line = begin; line < end; line++) {                                        \
      uint64_t base = line_base(sp, line);                                                   \
      T *out = (T *)bufs[0] + base;                                                          \
      const T *x = (const T *)bufs[1] + base;                                                \
      for (int64_t j = 0; j < n; j++) out[j * s] = x[j * s];                                 \
      vsort_##SUF##_sort(&c, out, s, n);                                                     \
      if (!(IS_FLOAT)) continue;                                                             \
      /* Where the runs start: elements whose key sorts before them. */                     \
      const uint64_t zk = KEY((T)0) ^ sp->flip, nk = KEY((T)~(T)0) ^ sp->flip;               \
      int64_t n_zero = 0, n_nan = 0, zero_at = 0, nan_at = 0;                                \
      for (int64_t j = 0; j < n; j++) {                                                      \
        uint64_t kj = KEY(x[j * s]) ^ sp->flip;                                              \
        n_zero += kj == zk;                                                                  \
        n_nan += kj == nk;                                                                   \
        zero_at += kj < zk;                                                                  \
        nan_at += kj < nk;                                                                   \
      }                                                                                      \
      if (n_zero < 2 && n_nan < 2) continue;                                                 \
      for (int64_t j = 0; j < n; j++) {                                                      \
        uint64_t kj = KEY(x[j * s]) ^ sp->flip;                                              \
        if (kj == zk) out[(zero_at++) * s] = x[j * s];                                       \
        else if (kj == nk) out[(nan_at++) * s] = x[j * s];                                   \
      }                                                                                      \
    }                                                                                        \
  }

/* All-ones bits are a NaN for every float format, so KEY(~0) is the NaN key. */
DEFINE_SORT_VALUES(f32, uint32_t, key_f32, 1)
DEFINE_SORT_VALUES(f64, uint64_t, key_f64, 1)
DEFINE_SORT_VALUES(f16, uint16_t, key_f16, 1)
DEFINE_SORT_VALUES(bf16, uint16_t, key_bf16, 1)
DEFINE_SORT_VALUES(i8, int8_t, key_i8, 0)
DEFINE_SORT_VALUES(i16, int16_t, key_i16, 0)
DEFINE_SORT_VALUES(i32, int32_t, key_i32, 0)
DEFINE_SORT_VALUES(i64, int64_t, key_i64, 0)
DEFINE_SORT_VALUES(u8, uint8_t, key_u8, 0)
DEFINE_SORT_VALUES(u16, uint16_t, key_u16, 0)
DEFINE_SORT_VALUES(u32, uint32_t, key_u32, 0)
DEFINE_SORT_VALUES(u64, uint64_t, key_u64, 0)

/* Argsort of keys of storage type T into positions of type IDX: ties by
 * position, so the order is total. */
#define DEFINE_ARGSORT(SUF, T, KEY, ISUF, IDX)                                               \
  static inline bool aless_##SUF##_##ISUF(const sort_ctx *c, IDX a, IDX b) {                 \
    const T *x = c->x;                                                                       \
    uint64_t ka = KEY(x[(int64_t)a * c->xs]) ^ c->flip;                                      \
    uint64_t kb = KEY(x[(int64_t)b * c->xs]) ^ c->flip;                                      \
    return ka < kb || (ka == kb && a < b);                                                   \
  }                                                                                          \
  DEFINE_INTROSORT(asort_##SUF##_##ISUF, IDX, aless_##SUF##_##ISUF)                          \
  static void argsort_tile_##SUF##_##ISUF(const accy__kernel *k, void *const *bufs,          \
                                          uint64_t begin, uint64_t end) {                    \
    const sort_params *sp = k->params;                                                       \
    const int64_t n = sp->n, s = (int64_t)sp->inner;                                         \
    for (uint64_t line = begin; line < end; line++) {                                        \
      uint64_t base = line_base(sp, line);                                                   \
      IDX *out = (IDX *)bufs[0] + base;                                                      \
      const sort_ctx c = {(const T *)bufs[1] + base, s, sp->flip};                           \
      for (int64_t j = 0; j < n; j++) out[j * s] = (IDX)j;                                   \
      asort_##SUF##_##ISUF##_sort(&c, out, s, n);                                            \
    }                                                                                        \
  }
#define DEFINE_ARGSORTS(SUF, T, KEY)          \
  DEFINE_ARGSORT(SUF, T, KEY, i32, int32_t)   \
  DEFINE_ARGSORT(SUF, T, KEY, i64, int64_t)
DEFINE_ARGSORTS(f32, uint32_t, key_f32)
DEFINE_ARGSORTS(f64, uint64_t, key_f64)
DEFINE_ARGSORTS(f16, uint16_t, key_f16)
DEFINE_ARGSORTS(bf16, uint16_t, key_bf16)
DEFINE_ARGSORTS(i8, int8_t, key_i8)
DEFINE_ARGSORTS(i16, int16_t, key_i16)
DEFINE_ARGSORTS(i32, int32_t, key_i32)
DEFINE_ARGSORTS(i64, int64_t, key_i64)
DEFINE_ARGSORTS(u8, uint8_t, key_u8)
DEFINE_ARGSORTS(u16, uint16_t, key_u16)
DEFINE_ARGSORTS(u32, uint32_t, key_u32)
DEFINE_ARGSORTS(u64, uint64_t, key_u64)

/* Tile functions by x dtype (bool sorts as u8: its bytes are 0 and 1). */
typedef struct sort_fns {
  int32_t dtype;
  accy__tile_fn values, pos_i32, pos_i64;
} sort_fns;

#define SORT_FNS(DT, SUF) {DT, sort_tile_##SUF, argsort_tile_##SUF##_i32, argsort_tile_##SUF##_i64}
static const sort_fns kSortFns[] = {
    SORT_FNS(ACCY_DTYPE_F32, f32), SORT_FNS(ACCY_DTYPE_F64, f64),
    SORT_FNS(ACCY_DTYPE_F16, f16), SORT_FNS(ACCY_DTYPE_BF16, bf16),
    SORT_FNS(ACCY_DTYPE_I8, i8),   SORT_FNS(ACCY_DTYPE_I16, i16),
    SORT_FNS(ACCY_DTYPE_I32, i32), SORT_FNS(ACCY_DTYPE_I64, i64),
    SORT_FNS(ACCY_DTYPE_U8, u8),   SORT_FNS(ACCY_DTYPE_U16, u16),
    SORT_FNS(ACCY_DTYPE_U32, u32), SORT_FNS(ACCY_DTYPE_U64, u64),
    SORT_FNS(ACCY_DTYPE_BOOL, u8),
};

/* ---- prepare ------------------------------------------------------------------ */

/* Causes name what is wrong; accy__kernel_prepare puts "node N (op): " in
 * front. */
static accy_status fail(const char *what) {
  return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "%s", what);
}

static accy_status out_of_memory(void) {
  return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory");
}

static accy_status prepare_sort(const accy__program *p, uint32_t node, accy__arena *arena,
                                accy__kernel *k) {
  const accy__node *nd = &p->nodes[node];
  if (nd->n_operands != 1 || nd->n_attrs != 2)
    return fail("expects 1 operand and 2 attributes");
  const accy__type *rt = &nd->type;
  const accy__type *xt = &p->nodes[nd->operands[0]].type;
  const int64_t axis = nd->attrs[0], desc = nd->attrs[1];
  if (axis < 0 || axis >= (int64_t)xt->rank || (desc != 0 && desc != 1))
    return fail("axis or descending out of range");
  if (rt->rank != xt->rank || memcmp(rt->dims, xt->dims, sizeof rt->dims) != 0)
    return fail("result dims differ from the operand's");
  const sort_fns *fns = NULL;
  for (size_t i = 0; i < ACCY_ARRAY_SIZE(kSortFns); i++)
    if (kSortFns[i].dtype == xt->dtype) fns = &kSortFns[i];
  if (!fns) return fail("no kernel for this operand dtype");
  if (nd->op == ACCY_OP_SORT) {
    if (rt->dtype != xt->dtype) return fail("result dtype differs from the operand's");
    k->run = fns->values;
  } else if (rt->dtype == ACCY_DTYPE_I32) {
    k->run = fns->pos_i32;
  } else if (rt->dtype == ACCY_DTYPE_I64) {
    k->run = fns->pos_i64;
  } else {
    return fail("no kernel for this result dtype (i32 or i64)");
  }
  sort_params *sp = accy__arena_alloc(arena, sizeof *sp, 64);
  if (!sp) return out_of_memory();
  memset(sp, 0, sizeof *sp);
  sp->n = xt->dims[axis];
  sp->flip = desc ? UINT64_MAX : 0;
  sp->inner = accy__dims_product(xt->dims + axis + 1, xt->rank - 1 - (uint32_t)axis);
  k->params = sp;
  const uint64_t elems = accy__dims_product(xt->dims, xt->rank);
  if (elems == 0) return ACCY_STATUS_OK;
  k->n_items = elems / (uint64_t)sp->n; /* lines */
  uint64_t log2n = 1;
  for (uint64_t m = (uint64_t)sp->n; m > 1; m >>= 1) log2n++;
  k->item_cost = (uint64_t)sp->n * log2n;
  return ACCY_STATUS_OK;
}

accy_status accy__kernel_prepare_sort(const accy__program *p, uint32_t node, accy__arena *arena,
                                      accy__kernel *k) {
  k->n_items = 0;
  k->item_cost = 1;
  switch (p->nodes[node].op) {
    case ACCY_OP_SORT:
    case ACCY_OP_ARGSORT: return prepare_sort(p, node, arena, k);
  }
  return fail("not a sort op");
}
