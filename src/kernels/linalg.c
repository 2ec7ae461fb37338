/* src/kernels/linalg.c: tile kernels for dot_general and convolution.
 *
 * dot_general is canonicalised in prepare into a batched [B, M, K] x
 * [B, K, N] problem. Each of the index spaces B, M, N and K may span several
 * operand axes; each is described by a lin_map that turns a linear index
 * into an element offset (a single stride when the axes merge, else a table
 * built once in prepare). The result is always dense [B, M, N], so no copy
 * of any operand is made at run time. An item is one output block of at
 * most DOT_MR rows by DOT_NB columns of one batch index.
 *
 * convolution is computed by direct loops. Prepare canonicalises to three
 * spatial axes (missing leading axes have extent 1) and precomputes, per
 * spatial axis and output coordinate, the run of kernel taps that land on a
 * real input element (not padding, not a hole from lhs dilation), so the
 * inner loops contain no bounds checks. An item is one output row along the
 * last spatial axis, (n, o, y0, y1).
 *
 * Summation order is fixed by docs/ops.md and is the same in every path:
 * each result element starts from 0 and adds products one at a time in
 * increasing contracting index (convolution: input channel, then kernel
 * position row-major). Taps that fall on padding or dilation holes are
 * skipped rather than multiplied by zero, so an Inf or NaN weight over
 * padding does not poison the result. */

/* Bit-identical results across the fast and generic paths (and against the
 * documented order) need every product rounded before it is added: a fused
 * multiply-add would round once and differ. gnu11 defaults to
 * -ffp-contract=fast, so turn contraction off for this file. GCC's -O2
 * "very cheap" vectoriser skips loops of unknown trip count, which is every
 * inner loop here; the "cheap" model vectorises them with a scalar tail. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off", "vect-cost-model=cheap")
#endif

#include "src/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "src/kernels/gemm.h"
#include "src/base/half.h"
#include "src/kernels/kernels.h"
#include "src/kernels/scalar.h"

/* Output columns per dot_general item. Fixed, so the item boundaries (and
 * with them every result bit) do not depend on the thread count. */
#define DOT_NB 256u
/* Output rows per dot_general item (fixed for the same reason). */
#define DOT_MR 4u
/* Accumulators the generic dot path keeps on the stack at once. */
#define DOT_CHUNK 64u

/* ---- linear index maps ------------------------------------------------- */

/* Maps a row-major linear index over some operand axes to an element
 * offset in that operand. */
typedef struct lin_map {
  uint64_t count;       /* number of indices (product of the axis extents) */
  int64_t stride;       /* offset of index i is i * stride when tab is NULL */
  const int64_t *tab;   /* else offset of index i is tab[i]; arena-owned */
} lin_map;

static inline int64_t map_off(const lin_map *m, uint64_t i) {
  return m->tab ? m->tab[i] : (int64_t)i * m->stride;
}

/* Builds the map for |n| axes (outermost first) with extents |dims| and
 * element strides |strides|. Adjacent axes whose strides nest are merged, so
 * a table is only needed when the axes are truly scattered. */
static accy_status map_build(accy__arena *arena, uint32_t node, const char *what, uint32_t n,
                             const int64_t *dims, const int64_t *strides, lin_map *out) {
  int64_t d[ACCY_MAX_RANK];
  int64_t s[ACCY_MAX_RANK];
  uint32_t m = 0;
  uint64_t count = 1;
  for (uint32_t i = 0; i < n; i++) {
    count *= (uint64_t)dims[i]; /* bounded by the operand's element count */
    if (dims[i] == 1) continue; /* extent 1 contributes no offset */
    if (m > 0 && s[m - 1] == strides[i] * dims[i]) {
      d[m - 1] *= dims[i];
      s[m - 1] = strides[i];
      continue;
    }
    d[m] = dims[i];
    s[m] = strides[i];
    m++;
  }
  out->count = count;
  out->tab = NULL;
  out->stride = m > 0 ? s[m - 1] : 0;
  if (count == 0 || m <= 1) return ACCY_STATUS_OK;

  if (count > SIZE_MAX / sizeof(int64_t))
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "%s offset table of %llu entries",
                     what, (unsigned long long)count);
  int64_t *tab = accy__arena_alloc(arena, (size_t)count * sizeof(int64_t), sizeof(int64_t));
  if (tab == NULL)
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "%s offset table of %llu entries",
                     what, (unsigned long long)count);
  int64_t idx[ACCY_MAX_RANK] = {0};
  int64_t off = 0;
  for (uint64_t i = 0; i < count; i++) {
    tab[i] = off;
    for (uint32_t a = m; a-- > 0;) {
      off += s[a];
      if (++idx[a] < d[a]) break;
      off -= s[a] * d[a];
      idx[a] = 0;
    }
  }
  out->tab = tab;
  return ACCY_STATUS_OK;
}

/* ---- element helpers ---------------------------------------------------- */

/* Integers are computed in the unsigned type of their width (signed and
 * unsigned variants may alias), widened to at least unsigned int so that no
 * product is a signed overflow. Truncating the wrapped unsigned sum gives
 * the two's complement result the docs require. */
#define LOAD_ID(x) (x)
#define LOAD_U32(x) ((uint32_t)(x))
#define LOAD_U64(x) ((uint64_t)(x))
#define STORE_F32(x) (x)
#define STORE_F64(x) (x)
#define STORE_U8(x) ((uint8_t)(x))
#define STORE_U16(x) ((uint16_t)(x))
#define STORE_U32(x) ((uint32_t)(x))
#define STORE_U64(x) ((uint64_t)(x))

/* ---- dot_general --------------------------------------------------------- */

typedef struct dot_params {
  lin_map bl, br;     /* batch index -> lhs / rhs offset */
  lin_map m;          /* lhs free index -> lhs offset */
  lin_map n;          /* rhs free index -> rhs offset */
  lin_map kl, kr;     /* contracting index -> lhs / rhs offset */
  uint64_t m_blocks;  /* ceil(M / DOT_MR) */
  uint64_t n_blocks;  /* ceil(N / DOT_NB) */
  accy__tile_fn inner; /* with a fused epilogue: the tile function it follows */
  struct epi *e;
  /* The batch axes one by one: extents and lhs / rhs strides. */
  uint32_t nb;
  int64_t bd[ACCY_MAX_RANK], bls[ACCY_MAX_RANK], brs[ACCY_MAX_RANK];
} dot_params;

/* The output block of one item: rows [m0, m0 + rows) and columns
 * [n0, n0 + w) of batch b. Items run over (b, row block, column block) in
 * that order, so consecutive items write consecutive column blocks. */
typedef struct dot_block {
  uint64_t b, m0, n0;
  uint32_t rows;
  size_t w;
} dot_block;

static inline dot_block dot_item(const dot_params *dp, uint64_t it) {
  dot_block blk;
  const uint64_t nb = it % dp->n_blocks, rest = it / dp->n_blocks;
  const uint64_t M = dp->m.count, N = dp->n.count;
  blk.b = rest / dp->m_blocks;
  blk.m0 = (rest % dp->m_blocks) * DOT_MR;
  blk.n0 = nb * DOT_NB;
  blk.rows = (uint32_t)(M - blk.m0 < DOT_MR ? M - blk.m0 : DOT_MR);
  blk.w = (size_t)(N - blk.n0 < DOT_NB ? N - blk.n0 : DOT_NB);
  return blk;
}

/* Fast path: the rhs free index is contiguous (stride 1), so for each
 * contracting index one lhs element scales one contiguous rhs row segment
 * into the output. Full blocks of DOT_MR rows keep a DOT_MR x NR tile of
 * accumulators (in registers, ideally) while k runs, so every rhs load
 * serves DOT_MR rows; leftover rows and columns accumulate straight into
 * the output row with k outside and n inside. Either way every output
 * element starts from 0 and adds its products for k = 0, 1, ... in order,
 * so the two loops agree bit for bit. Integers accumulate in CT (at least
 * 32-bit unsigned) and are truncated on store, which wraps identically. */
#define DOT_FAST(NAME, T, CT, NR)                                                      \
  static void NAME##_rows(const dot_params *dp, T *out, const T *lhs, const T *rhs,    \
                          const dot_block *blk, uint32_t r0, size_t j0) {              \
    const uint64_t N = dp->n.count, K = dp->kl.count;                                  \
    const size_t w = blk->w - j0;                                                      \
    const T *rblk = rhs + map_off(&dp->br, blk->b) + blk->n0 + j0;                     \
    for (uint32_t i = r0; i < blk->rows; i++) {                                        \
      const uint64_t m = blk->m0 + i;                                                  \
      const T *lrow = lhs + map_off(&dp->bl, blk->b) + map_off(&dp->m, m);             \
      T *restrict o = out + (blk->b * dp->m.count + m) * N + blk->n0 + j0;             \
      for (size_t j = 0; j < w; j++) o[j] = 0;                                         \
      for (uint64_t kk = 0; kk < K; kk++) {                                            \
        const CT a = (CT)lrow[map_off(&dp->kl, kk)];                                   \
        const T *restrict r = rblk + map_off(&dp->kr, kk);                             \
        for (size_t j = 0; j < w; j++) o[j] = (T)(o[j] + a * (CT)r[j]);                \
      }                                                                                \
    }                                                                                  \
  }                                                                                    \
  static void NAME(const accy__kernel *k, void *const *bufs, uint64_t begin,          \
                   uint64_t end) {                                                     \
    const dot_params *dp = k->params;                                                  \
    T *out = bufs[0];                                                                  \
    const T *lhs = bufs[1];                                                            \
    const T *rhs = bufs[2];                                                            \
    const uint64_t N = dp->n.count, K = dp->kl.count;                                  \
    for (uint64_t it = begin; it < end; it++) {                                        \
      const dot_block blk = dot_item(dp, it);                                          \
      if (blk.rows < DOT_MR) {                                                         \
        NAME##_rows(dp, out, lhs, rhs, &blk, 0, 0);                                    \
        continue;                                                                      \
      }                                                                                \
      const T *l[DOT_MR];                                                              \
      T *o[DOT_MR];                                                                    \
      for (uint32_t i = 0; i < DOT_MR; i++) {                                          \
        l[i] = lhs + map_off(&dp->bl, blk.b) + map_off(&dp->m, blk.m0 + i);            \
        o[i] = out + (blk.b * dp->m.count + blk.m0 + i) * N + blk.n0;                  \
      }                                                                                \
      const T *rblk = rhs + map_off(&dp->br, blk.b) + blk.n0;                          \
      size_t j0 = 0;                                                                   \
      for (; j0 + (NR) <= blk.w; j0 += (NR)) {                                         \
        CT acc[DOT_MR][NR];                                                            \
        memset(acc, 0, sizeof acc);                                                    \
        for (uint64_t kk = 0; kk < K; kk++) {                                          \
          const int64_t lo = map_off(&dp->kl, kk);                                     \
          const T *r = rblk + map_off(&dp->kr, kk) + j0;                               \
          _Pragma("GCC unroll 4") for (uint32_t i = 0; i < DOT_MR; i++) {              \
            const CT a = (CT)l[i][lo];                                                 \
            _Pragma("GCC unroll 8") for (uint32_t j = 0; j < (NR); j++)                \
              acc[i][j] += a * (CT)r[j];                                               \
          }                                                                            \
        }                                                                              \
        for (uint32_t i = 0; i < DOT_MR; i++)                                          \
          for (uint32_t j = 0; j < (NR); j++) o[i][j0 + j] = (T)acc[i][j];             \
      }                                                                                \
      if (j0 < blk.w) NAME##_rows(dp, out, lhs, rhs, &blk, 0, j0);                     \
    }                                                                                  \
  }

/* Generic path: any layout, any dtype. Works on chunks of DOT_CHUNK output
 * columns with accumulators of type ACC on the stack (f16/bf16 accumulate in
 * f32 and round once at the store). */
#define DOT_GENERIC(NAME, T, ACC, LOAD, STORE)                                         \
  static void NAME(const accy__kernel *k, void *const *bufs, uint64_t begin,          \
                   uint64_t end) {                                                     \
    const dot_params *dp = k->params;                                                  \
    T *out = bufs[0];                                                                  \
    const T *lhs = bufs[1];                                                            \
    const T *rhs = bufs[2];                                                            \
    const uint64_t N = dp->n.count, K = dp->kl.count;                                  \
    int64_t rn[DOT_CHUNK];                                                             \
    ACC acc[DOT_CHUNK];                                                                \
    for (uint64_t it = begin; it < end; it++) {                                        \
      const dot_block blk = dot_item(dp, it);                                          \
      const T *rb = rhs + map_off(&dp->br, blk.b);                                     \
      for (uint32_t i = 0; i < blk.rows; i++) {                                        \
        const uint64_t m = blk.m0 + i;                                                 \
        const T *lrow = lhs + map_off(&dp->bl, blk.b) + map_off(&dp->m, m);            \
        T *o = out + (blk.b * dp->m.count + m) * N;                                    \
        for (uint64_t c0 = blk.n0; c0 < blk.n0 + blk.w; c0 += DOT_CHUNK) {             \
          const uint64_t left = blk.n0 + blk.w - c0;                                   \
          const size_t w = (size_t)(left < DOT_CHUNK ? left : DOT_CHUNK);              \
          for (size_t j = 0; j < w; j++) {                                             \
            rn[j] = map_off(&dp->n, c0 + j);                                           \
            acc[j] = 0;                                                                \
          }                                                                            \
          for (uint64_t kk = 0; kk < K; kk++) {                                        \
            const ACC a = LOAD(lrow[map_off(&dp->kl, kk)]);                            \
            const T *r = rb + map_off(&dp->kr, kk);                                    \
            for (size_t j = 0; j < w; j++) acc[j] += a * LOAD(r[rn[j]]);               \
          }                                                                            \
          for (size_t j = 0; j < w; j++) o[c0 + j] = STORE(acc[j]);                    \
        }                                                                              \
      }                                                                                \
    }                                                                                  \
  }

DOT_FAST(dot_fast_f32, float, float, 8)
DOT_FAST(dot_fast_f64, double, double, 4)
DOT_FAST(dot_fast_u8, uint8_t, uint32_t, 8)
DOT_FAST(dot_fast_u16, uint16_t, uint32_t, 8)
DOT_FAST(dot_fast_u32, uint32_t, uint32_t, 8)
DOT_FAST(dot_fast_u64, uint64_t, uint64_t, 4)

DOT_GENERIC(dot_gen_f32, float, float, LOAD_ID, STORE_F32)
DOT_GENERIC(dot_gen_f64, double, double, LOAD_ID, STORE_F64)
DOT_GENERIC(dot_gen_f16, uint16_t, float, accy__f16_to_f32, accy__f32_to_f16)
DOT_GENERIC(dot_gen_bf16, uint16_t, float, accy__bf16_to_f32, accy__f32_to_bf16)
DOT_GENERIC(dot_gen_u8, uint8_t, uint32_t, LOAD_U32, STORE_U8)
DOT_GENERIC(dot_gen_u16, uint16_t, uint32_t, LOAD_U32, STORE_U16)
DOT_GENERIC(dot_gen_u32, uint32_t, uint32_t, LOAD_U32, STORE_U32)
DOT_GENERIC(dot_gen_u64, uint64_t, uint64_t, LOAD_U64, STORE_U64)

/* ---- fused epilogues (src/compile/fuse.h) ---------------------------------- */

/* A fused epilogue as the kernels apply it: y = clamp(y + bias + residual). */
typedef struct epi {
  accy__uk_f32_epilogue_fn run; /* the level's epilogue microkernel */
  const float *bias;  /* per channel, NULL none */
  bool residual;      /* bufs[3] holds it, with the result's layout */
  bool clamp;
  float lo, hi;
  bool pool;          /* then a 2 x 2 max pool at stride 2 (Winograd only) */
  bool post;          /* then a group on each item (dot_post_wrap) */
  int64_t transpose;  /* stored through this transpose (the tail); -1: none */
} epi;

static epi epi_from(const accy__epilogue *ep) {
  epi e = {accy__uk_get()->f32_epilogue, NULL, false, false, 0, 0, false, false, -1};
  if (!ep || !ep->active) return e;
  e.transpose = ep->permuted ? (int64_t)ep->tail : -1;
  e.bias = ep->bias;
  e.residual = ep->residual >= 0;
  e.clamp = ep->clamp;
  e.lo = ep->lo;
  e.hi = ep->hi;
  e.pool = ep->pool;
  e.post = ep->post != NULL;
  return e;
}

/* n results at dst whose channel biases are bias[0], bias[bstride], ...
 * (bstride 0: one channel); res the residual at the same elements. Each
 * step rounds as the separate op does: the same bits as unfused. */
static void epi_run(const epi *e, float *dst, const float *res, size_t n, const float *bias,
                    size_t bstride) {
  e->run(n, dst, dst, bias, bstride, res, e->clamp, e->lo, e->hi);
}

/* A kernel's launch buffer (kernels.h: after its two operands and the
 * residual) and its worker workspace (after that buffer, if any). */
static inline void *temp_of(void *const *bufs, bool residual) { return bufs[residual ? 4 : 3]; }

static inline void *ws_of(const accy__kernel *k, void *const *bufs, bool residual) {
  return k->worker_bytes ? bufs[(residual ? 4 : 3) + (k->temp_bytes ? 1 : 0)] : NULL;
}

bool accy__kernel_epilogue_axis(const accy__program *p, uint32_t node, uint32_t *axis) {
  const accy__node *nd = &p->nodes[node];
  if (nd->type.dtype != ACCY_DTYPE_F32 || nd->n_operands != 2) return false;
  if (nd->op == ACCY_OP_CONVOLUTION) {
    if (nd->type.rank < 3) return false;
    *axis = 1;
    return true;
  }
  if (nd->op != ACCY_OP_DOT_GENERAL || nd->n_attrs < 2 || nd->type.rank < 1) return false;
  /* Channels are the result's last axis, which must be the rhs's only free
   * axis (so that a column of the GEMM is one channel). */
  const accy__type *rt = &p->nodes[nd->operands[1]].type;
  const int64_t nb = nd->attrs[0];
  if (nb < 0 || (uint64_t)nd->n_attrs < 2 + 2 * (uint64_t)nb) return false;
  const int64_t nc = nd->attrs[1 + 2 * nb];
  if (nc < 0 || rt->rank != (uint32_t)(nb + nc + 1)) return false;
  *axis = nd->type.rank - 1;
  return true;
}

/* A GEMM kernel's parameters: the driver's, and the strides of B for a
 * pre-pass that packs it (dot_pack_f32). */
/* Largest B packed per launch (floats): beyond, items pack their own
 * blocks (a direct B) or the generic path runs, rather than a launch
 * buffer of that size. */
#define DOT_PACK_MAX_FLOATS (UINT64_C(1) << 26)
/* Smallest direct B packed per launch: below, items pack their blocks (an
 * attention product's 4 x 64 x 128 gained nothing from a task more;
 * gemm_256, 256 x 256, went 5-13% faster with it, gemm_1024 6-14%). */
#define DOT_PACK_MIN_FLOATS (UINT64_C(1) << 16)

typedef struct dot_pack {
  accy__gemm g;
  ptrdiff_t bs, ks, js; /* B(b, k, j) = rhs[b * bs + k * ks + j * js] */
  /* f16 operands through the f32 GEMM (half_a_block, half_b_block,
   * half_c_store): A(b, i, k) = lhs[b * a_bs + i * a_rs + k * a_cs], C's
   * strides, and the level's conversions. */
  ptrdiff_t a_bs, a_rs, a_cs, c_bs, c_rs;
  accy__uk_ew_fn widen, narrow;
  bool bf16; /* the half type is bf16 (else f16) */
  /* A widened to f32 once per launch by a pre-pass (half_widen_a) into the
   * launch buffer, dense (rows of K), which items read in place of a. */
  bool a_widened;
  /* Batch axes in two sets (f32, split_batch): g is one index of the outer
   * set, whose |outer| indices step A, B and C by a_os, b_os and c_os;
   * kernel item o * g_items + i is g's item i at outer index o, pre-pass
   * item o * pre_items + i its pack item i, into b_floats floats of the
   * launch buffer each. outer 0: one set, g the whole product. */
  uint64_t outer, g_items, pre_items, b_floats;
  ptrdiff_t a_os, b_os, c_os;
  /* An f32 product of two sets whose operands are bf16 values widened
   * (lower.c's bf16 products): an item runs the GEMM only where its rows
   * of A and columns of B are bf16_run_safe, else the generic bf16
   * kernel's loop on the f32 values (dot_item_scanned), as dot_gemm_bf16
   * does; so the converted result has the bf16 kernel's bits. */
  bool scan;
} dot_pack;

static inline float half_value(const dot_pack *dk, uint16_t h) {
  return dk->bf16 ? accy__bf16_to_f32(h) : accy__f16_to_f32(h);
}

/* f16 products run through the f32 GEMM: the providers widen each block of
 * A and B to f32 as they pack it (the level's conversion, F16C above
 * portable), and C's finished blocks are rounded to f16 (to nearest even).
 * Each output is then one chain over k in order from +0 whose products are
 * exact in f32 (11-bit significands, exponents far inside f32's range), so
 * a fused multiply-add gives the rounded product's sum: the generic kernel's
 * bits (docs/ops.md: f16 accumulates in f32 and rounds once), at every
 * level. The GEMM never splits such a product into four chains (its
 * providers rule that out). */
static void half_a_block(const void *vctx, const float *a, uint64_t bi, uint64_t m0,
                         uint64_t rows, uint64_t k0, uint64_t kcur, float *dst) {
  const dot_pack *dk = vctx;
  const uint64_t mr = dk->g.uk.mr;
  const uint16_t *base = (const uint16_t *)(const void *)a + (ptrdiff_t)bi * dk->a_bs;
  float row[ACCY__GEMM_KC];
  for (uint64_t t = 0; t * mr < rows; t++) {
    float *d = dst + t * kcur * mr;
    const uint64_t n = rows - t * mr < mr ? rows - t * mr : mr;
    for (uint64_t i = 0; i < mr; i++) {
      if (i >= n) { /* computed, never stored */
        for (uint64_t k = 0; k < kcur; k++) d[k * mr + i] = 0.0f;
        continue;
      }
      const uint16_t *src =
          base + (ptrdiff_t)(m0 + t * mr + i) * dk->a_rs + (ptrdiff_t)k0 * dk->a_cs;
      if (dk->a_cs == 1) {
        dk->widen((size_t)kcur, row, src, NULL, NULL, 0, 0);
        for (uint64_t k = 0; k < kcur; k++) d[k * mr + i] = row[k];
      } else {
        for (uint64_t k = 0; k < kcur; k++)
          d[k * mr + i] = half_value(dk, src[(ptrdiff_t)k * dk->a_cs]);
      }
    }
  }
}

static void half_b_block(const void *vctx, const float *b, uint64_t bi, uint64_t k0,
                         uint64_t kcur, uint64_t n0, uint64_t cols, float *dst) {
  const dot_pack *dk = vctx;
  const uint64_t nr = dk->g.uk.nr, np = (cols + nr - 1) / nr;
  const uint16_t *base = (const uint16_t *)(const void *)b + (ptrdiff_t)bi * dk->bs;
  float row[ACCY__GEMM_NB_MAX];
  for (uint64_t k = 0; k < kcur; k++) {
    const uint16_t *src = base + (ptrdiff_t)(k0 + k) * dk->ks + (ptrdiff_t)n0 * dk->js;
    if (dk->js == 1)
      dk->widen((size_t)cols, row, src, NULL, NULL, 0, 0);
    else
      for (uint64_t j = 0; j < cols; j++) row[j] = half_value(dk, src[(ptrdiff_t)j * dk->js]);
    for (uint64_t p = 0; p < np; p++) {
      float *d = dst + (p * kcur + k) * nr;
      const uint64_t w = cols - p * nr < nr ? cols - p * nr : nr;
      memcpy(d, row + p * nr, (size_t)w * sizeof(float));
      for (uint64_t j = w; j < nr; j++) d[j] = 0.0f;
    }
  }
}

static void half_c_store(const void *vctx, uint64_t bi, uint64_t m0, uint64_t rows, uint64_t n0,
                         uint64_t cols, float *tile, size_t ld, float *c, const float *r) {
  (void)r;
  const dot_pack *dk = vctx;
  uint16_t *out = (uint16_t *)(void *)c + (ptrdiff_t)bi * dk->c_bs + (ptrdiff_t)n0;
  for (uint64_t i = 0; i < rows; i++)
    dk->narrow((size_t)cols, out + (ptrdiff_t)(m0 + i) * dk->c_rs, tile + i * ld, NULL, NULL, 0,
               0);
}

/* bf16 products through the same driver. A bf16 product has 16 significant
 * bits, exact in f32 unless it leaves f32's normal range (a product below
 * 2^-126 or from 2^128, where the generic kernel's rounded product and a
 * fused multiply-add part). Products of values whose exponent fields lie in
 * 64..190 (magnitudes in [2^-63, 2^64)), zeros, infinities and NaNs never
 * do, so an item whose A rows and B columns hold nothing else runs the
 * GEMM, with the generic kernel's bits as f16 does; any other item runs
 * the generic loop below over its block (the same sums in the same order:
 * each product rounded to f32, then added, k in order from +0). The scan
 * reads an item's rows of A and columns of B once against the GEMM's
 * 2 x rows x cols x K flops. */
static bool bf16_run_safe(const uint16_t *x, ptrdiff_t stride, uint64_t n) {
  unsigned bad = 0;
  if (stride == 1) {
    for (uint64_t i = 0; i < n; i++) {
      const unsigned h = x[i] & 0x7fffu, e = h >> 7;
      bad |= (unsigned)(h != 0) & (unsigned)(e - 64u > 126u) & (unsigned)(e != 255u);
    }
  } else {
    for (uint64_t i = 0; i < n; i++) {
      const unsigned h = x[(ptrdiff_t)i * stride] & 0x7fffu, e = h >> 7;
      bad |= (unsigned)(h != 0) & (unsigned)(e - 64u > 126u) & (unsigned)(e != 255u);
    }
  }
  return bad == 0;
}

/* bf16_run_safe on f32 values (bf16 widened: the same exponent field); a
 * contiguous run in a loop the compiler vectorises. */
static bool f32_run_safe(const float *x, ptrdiff_t stride, uint64_t n) {
  unsigned bad = 0;
  if (stride == 1) {
    const uint32_t *u = (const uint32_t *)(const void *)x;
    for (uint64_t i = 0; i < n; i++) {
      const uint32_t h = u[i] & 0x7fffffffu, e = h >> 23;
      bad |= (unsigned)(h != 0) & (unsigned)(e - 64u > 126u) & (unsigned)(e != 255u);
    }
    return bad == 0;
  }
  for (uint64_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &x[(ptrdiff_t)i * stride], 4);
    const unsigned h = u & 0x7fffffffu, e = h >> 23;
    bad |= (unsigned)(h != 0) & (unsigned)(e - 64u > 126u) & (unsigned)(e != 255u);
  }
  return bad == 0;
}

static void dot_gemm_bf16(const accy__kernel *k, void *const *bufs, uint64_t begin,
                          uint64_t end) {
  const dot_pack *dk = k->params;
  const accy__gemm *g = &dk->g;
  const uint16_t *a = bufs[1], *b = bufs[2];
  uint16_t *c = bufs[0];
  const uint64_t K = g->K;
  /* A constant B is packed (widened) at compile time, and was scanned then;
   * the generic loop reads its values from the panels. */
  const uint64_t pnr = g->b_pnr ? g->b_pnr : g->uk.nr, panels = (g->N + pnr - 1) / pnr;
  for (uint64_t it = begin; it < end; it++) {
    const accy__gemm_rect rc = accy__gemm_item_rect(g, it);
    const uint16_t *ab = a + (ptrdiff_t)rc.bi * dk->a_bs;
    const uint16_t *bb = g->b_packed ? NULL : b + (ptrdiff_t)rc.bi * dk->bs;
    const float *bp =
        g->b_packed
            ? g->b_packed + (g->b_batch_mod ? rc.bi % g->b_batch_mod : rc.bi) * panels * K * pnr
            : NULL;
    bool safe = true;
    for (uint64_t i = 0; i < rc.rows && safe; i++)
      safe = bf16_run_safe(ab + (ptrdiff_t)(rc.m0 + i) * dk->a_rs, dk->a_cs, K);
    for (uint64_t kk = 0; bb && kk < K && safe; kk++)
      safe = bf16_run_safe(bb + (ptrdiff_t)kk * dk->ks + (ptrdiff_t)rc.n0 * dk->js, dk->js,
                           rc.cols);
    if (safe) {
      accy__gemm_run(g, dk->a_widened ? temp_of(bufs, false) : bufs[1], bufs[2], bufs[0], NULL,
                     it, it + 1, ws_of(k, bufs, false));
      continue;
    }
    float acc[DOT_CHUNK];
    for (uint64_t i = 0; i < rc.rows; i++) {
      const uint16_t *ar = ab + (ptrdiff_t)(rc.m0 + i) * dk->a_rs;
      uint16_t *o = c + (ptrdiff_t)rc.bi * dk->c_bs + (ptrdiff_t)(rc.m0 + i) * dk->c_rs;
      for (uint64_t c0 = rc.n0; c0 < rc.n0 + rc.cols; c0 += DOT_CHUNK) {
        const uint64_t w = rc.n0 + rc.cols - c0 < DOT_CHUNK ? rc.n0 + rc.cols - c0 : DOT_CHUNK;
        for (uint64_t j = 0; j < w; j++) acc[j] = 0.0f;
        for (uint64_t kk = 0; kk < K; kk++) {
          const float x = accy__bf16_to_f32(ar[(ptrdiff_t)kk * dk->a_cs]);
          if (bp) {
            for (uint64_t j = 0; j < w; j++) {
              const uint64_t col = c0 + j;
              acc[j] += x * bp[((col / pnr) * K + kk) * pnr + col % pnr];
            }
          } else {
            const uint16_t *br = bb + (ptrdiff_t)kk * dk->ks + (ptrdiff_t)c0 * dk->js;
            for (uint64_t j = 0; j < w; j++)
              acc[j] += x * accy__bf16_to_f32(br[(ptrdiff_t)j * dk->js]);
          }
        }
        for (uint64_t j = 0; j < w; j++) o[c0 + j] = accy__f32_to_bf16(acc[j]);
      }
    }
  }
}

/* Item |it| of g (its operands a, b, c already offset to its outer index)
 * when dk->scan: the GEMM where every product is exact in f32, else each
 * output the generic kernel's sum, every product rounded then added, k in
 * order from +0, on the f32 values of A and of B as the rhs holds them. */
static void dot_item_scanned(const dot_pack *dk, const float *a, const float *b_run,
                             const float *b, float *c, uint64_t it, void *ws) {
  const accy__gemm *g = &dk->g;
  const accy__gemm_rect rc = accy__gemm_item_rect(g, it);
  const uint64_t K = g->K;
  const float *ab = a + (ptrdiff_t)rc.bi * g->a_bs;
  const float *bb = b + (ptrdiff_t)rc.bi * dk->bs;
  bool safe = true;
  for (uint64_t i = 0; i < rc.rows && safe; i++)
    safe = f32_run_safe(ab + (ptrdiff_t)(rc.m0 + i) * g->a_rs, g->a_cs, K);
  if (dk->ks == 1) /* columns contiguous along k (attention's keys) */
    for (uint64_t j = 0; j < rc.cols && safe; j++)
      safe = f32_run_safe(bb + (ptrdiff_t)(rc.n0 + j) * dk->js, 1, K);
  else
    for (uint64_t kk = 0; kk < K && safe; kk++)
      safe = f32_run_safe(bb + (ptrdiff_t)kk * dk->ks + (ptrdiff_t)rc.n0 * dk->js, dk->js,
                          rc.cols);
  if (safe) {
    accy__gemm_run(g, a, b_run, c, NULL, it, it + 1, ws);
    return;
  }
  for (uint64_t i = 0; i < rc.rows; i++) {
    const float *ar = ab + (ptrdiff_t)(rc.m0 + i) * g->a_rs;
    float *o = c + (ptrdiff_t)rc.bi * g->c_bs + (ptrdiff_t)(rc.m0 + i) * g->c_rs;
    for (uint64_t j = rc.n0; j < rc.n0 + rc.cols; j++) {
      float acc = 0.0f;
      for (uint64_t kk = 0; kk < K; kk++) {
        const float prod = ar[(ptrdiff_t)kk * g->a_cs] * bb[(ptrdiff_t)kk * dk->ks + (ptrdiff_t)j * dk->js];
        acc = acc + prod;
      }
      o[j] = acc;
    }
  }
}

/* f32 through the packed GEMM driver (src/kernels/gemm.c) and the ISA
 * level's microkernel, when the operands' index spaces are single strides
 * (B may be anything when it is a constant: it is packed at compile time). */
static void dot_gemm_f32(const accy__kernel *k, void *const *bufs, uint64_t begin, uint64_t end) {
  const dot_pack *dk = k->params;
  const accy__gemm *g = &dk->g;
  /* B packed, or a half A widened, by the pre-pass is its launch buffer. */
  const float *b = g->b_run_packed ? temp_of(bufs, g->has_residual) : bufs[2];
  const float *a = dk->a_widened ? temp_of(bufs, false) : bufs[1];
  float *c = bufs[0];
  const float *r = g->has_residual ? bufs[3] : NULL;
  void *ws = ws_of(k, bufs, g->has_residual);
  if (!dk->outer) {
    accy__gemm_run(g, a, b, c, r, begin, end, ws);
    return;
  }
  /* Each outer index's items in one call, its operands offset. */
  for (uint64_t it = begin; it < end;) {
    const uint64_t o = it / dk->g_items, lo = it % dk->g_items;
    const uint64_t hi = end - it < dk->g_items - lo ? lo + (end - it) : dk->g_items;
    const ptrdiff_t co = (ptrdiff_t)o * dk->c_os;
    const float *bo = g->b_run_packed ? b + o * dk->b_floats : b + (ptrdiff_t)o * dk->b_os;
    if (dk->scan) {
      const float *bin = (const float *)bufs[2] + (ptrdiff_t)o * dk->b_os;
      for (uint64_t i = lo; i < hi; i++)
        dot_item_scanned(dk, a + (ptrdiff_t)o * dk->a_os, bo, bin, c + co, i, ws);
    } else {
      accy__gemm_run(g, a + (ptrdiff_t)o * dk->a_os, bo, c + co, r ? r + co : NULL, lo, hi, ws);
    }
    it += hi - lo;
  }
}

/* The pre-pass of a half GEMM whose items would each widen the same rows
 * of A (more than one block of columns): every row of A widened once per
 * launch into the launch buffer (bufs[0]), an item per row. */
static void half_widen_a(const accy__kernel *k, void *const *bufs, uint64_t begin, uint64_t end) {
  const dot_pack *dk = k->params;
  const uint64_t M = dk->g.M, K = dk->g.K;
  float *dst = bufs[0];
  const uint16_t *a = bufs[1];
  for (uint64_t r = begin; r < end; r++) {
    const uint16_t *src = a + (ptrdiff_t)(r / M) * dk->a_bs + (ptrdiff_t)(r % M) * dk->a_rs;
    float *d = dst + r * K;
    if (dk->a_cs == 1)
      dk->widen((size_t)K, d, src, NULL, NULL, 0, 0);
    else
      for (uint64_t kk = 0; kk < K; kk++) d[kk] = half_value(dk, src[(ptrdiff_t)kk * dk->a_cs]);
  }
}

/* The pre-pass of a GEMM whose B is an input or an intermediate read by
 * several items: packs its panels once per launch into the launch buffer
 * (bufs[0]), so items read them as they read constant weights instead of
 * each packing its own block (each panel was copied once per row block). */
static void dot_pack_f32(const accy__kernel *k, void *const *bufs, uint64_t begin, uint64_t end) {
  const dot_pack *dk = k->params;
  if (!dk->outer) {
    accy__gemm_pack_b_items(&dk->g, bufs[2], dk->bs, dk->ks, dk->js, bufs[0], begin, end);
    return;
  }
  const float *b = bufs[2];
  float *dst = bufs[0];
  for (uint64_t it = begin; it < end;) {
    const uint64_t o = it / dk->pre_items, lo = it % dk->pre_items;
    const uint64_t hi = end - it < dk->pre_items - lo ? lo + (end - it) : dk->pre_items;
    accy__gemm_pack_b_items(&dk->g, b + (ptrdiff_t)o * dk->b_os, dk->bs, dk->ks, dk->js,
                            dst + o * dk->b_floats, lo, hi);
    it += hi - lo;
  }
}

/* B's panels for every batch, in floats; UINT64_MAX when that overflows. */
static uint64_t gemm_b_panel_floats(const accy__gemm *g) {
  const uint64_t panels = (g->N + g->uk.nr - 1) / g->uk.nr;
  uint64_t nf;
  if (!accy__mul_u64(g->batch, panels, &nf) || !accy__mul_u64(nf, g->K, &nf) ||
      !accy__mul_u64(nf, g->uk.nr, &nf))
    return UINT64_MAX;
  return nf;
}

/* Makes g read B as panels that the pre-pass pre packs once per launch into
 * the kernel's launch buffer (nf floats, from gemm_b_panel_floats), and
 * plans again: items then read them as they read constant weights. */
static void gemm_pack_b_per_launch(accy__gemm *g, accy__kernel *k, uint64_t nf,
                                   accy__tile_fn pre) {
  static const float kRunPackedB[1]; /* packed mode; the pointer is the launch buffer */
  const uint64_t panels = (g->N + g->uk.nr - 1) / g->uk.nr;
  g->b_packed = kRunPackedB;
  g->b_run_packed = true;
  accy__gemm_plan(g);
  k->pre_run = pre;
  k->pre_items = accy__gemm_pack_b_item_count(g);
  k->pre_item_cost = (panels * g->uk.nr * g->K) / (k->pre_items / g->batch);
  k->temp_bytes = nf * sizeof(float);
}

static void gemm_set_epilogue(accy__gemm *g, const epi *e, bool bias_by_row) {
  if (!e->bias && !e->residual && !e->clamp) return;
  g->ep_flags = ACCY__UK_EPILOGUE | (e->clamp ? ACCY__UK_CLAMP : 0u);
  if (bias_by_row)
    g->ep.bias_row = e->bias;
  else
    g->ep.bias_col = e->bias;
  g->has_residual = e->residual;
  g->ep.lo = e->lo;
  g->ep.hi = e->hi;
}

/* Whether a B read at run time suits the GEMM: its columns contiguous
 * (items read or pack its rows), or its panels for every batch index few
 * enough to pack once per launch. */
static bool dot_b_fits(const dot_params *dp) {
  if (dp->n.stride == 1 || dp->n.count <= 1) return true;
  const uint64_t nr = accy__uk_get()->f32_gemm.nr, panels = (dp->n.count + nr - 1) / nr;
  uint64_t nf;
  return accy__mul_u64(dp->bl.count, panels, &nf) && accy__mul_u64(nf, dp->kl.count, &nf) &&
         accy__mul_u64(nf, nr, &nf) && nf > 0 && nf <= DOT_PACK_MAX_FLOATS;
}

/* Whether prepare_dot_gemm takes f32 dot |node| (maps |dp|): A's batch,
 * row and contracting offsets each one stride, and B constant (packed at
 * compile time), or strided with contiguous columns, or strided with
 * panels few enough to pack per launch. */
static bool dot_gemm_f32_takes(const accy__program *p, uint32_t node, const dot_params *dp) {
  const accy__node *nd = &p->nodes[node];
  if (nd->type.dtype != ACCY_DTYPE_F32 || dp->bl.tab || dp->m.tab || dp->kl.tab) return false;
  if (p->nodes[nd->operands[1]].op == ACCY_OP_CONSTANT) return true;
  if (dp->br.tab || dp->kr.tab || dp->n.tab) return false;
  return dot_b_fits(dp);
}

/* One stride that steps through axes |dims| (strides |st|, row-major
 * order) as their flattened index does; false when there is none. */
static bool one_stride(uint32_t n, const int64_t *dims, const int64_t *st, int64_t *out) {
  int64_t s = 0;
  bool any = false;
  for (uint32_t i = 0; i < n; i++) {
    if (dims[i] == 1) continue;
    if (any && s != st[i] * dims[i]) return false;
    s = st[i];
    any = true;
  }
  *out = any ? s : 0;
  return true;
}

/* C's layout when dot |node| (verified) stores its result (or its chain's,
 * of the same type) through transpose |t| in t's dense layout: sd[a] is
 * result axis a's stride there, *c_rs the rows' (the lhs free axes as one
 * stride); false unless the rhs free axes stay last and contiguous and the
 * lhs free axes step with one stride. *nb_out gets the batch axes. */
static bool dot_store_layout(const accy__program *p, uint32_t node, uint32_t t, int64_t *sd,
                             uint32_t *nb_out, ptrdiff_t *c_rs) {
  const accy__node *nd = &p->nodes[node], *tn = &p->nodes[t];
  const uint32_t r = nd->type.rank;
  if (tn->op != ACCY_OP_TRANSPOSE || tn->n_operands != 1 || tn->n_attrs != r ||
      tn->type.rank != r || nd->n_operands != 2 || nd->n_attrs < 2)
    return false;
  const int64_t nb = nd->attrs[0];
  if (nb < 0 || nb > (int64_t)r || nd->n_attrs < 2 + 2 * (uint64_t)nb) return false;
  const int64_t nc = nd->attrs[1 + 2 * nb];
  const int64_t nm = (int64_t)p->nodes[nd->operands[0]].type.rank - nb - nc;
  if (nc < 0 || nm < 0 || nb + nm > (int64_t)r) return false;
  int64_t st[ACCY_MAX_RANK];
  accy__type_strides(&tn->type, st);
  for (uint32_t i = 0; i < r; i++) {
    const int64_t a = tn->attrs[i];
    if (a < 0 || a >= (int64_t)r || tn->type.dims[i] != nd->type.dims[a]) return false;
    sd[a] = st[i];
  }
  const int64_t *dims = nd->type.dims;
  int64_t rs, cs;
  if (!one_stride((uint32_t)nm, dims + nb, sd + nb, &rs) ||
      !one_stride(r - (uint32_t)(nb + nm), dims + nb + nm, sd + nb + nm, &cs) || cs > 1)
    return false;
  *nb_out = (uint32_t)nb;
  *c_rs = (ptrdiff_t)rs;
  return true;
}

/* C's strides when the batch axes also step with one stride in that
 * layout: C(b, i, j) at b * c_bs + i * c_rs + j. */
static bool dot_permuted_strides(const accy__program *p, uint32_t node, uint32_t t,
                                 ptrdiff_t *c_bs, ptrdiff_t *c_rs) {
  int64_t sd[ACCY_MAX_RANK], bs;
  uint32_t nb;
  if (!dot_store_layout(p, node, t, sd, &nb, c_rs) ||
      !one_stride(nb, p->nodes[node].type.dims, sd, &bs))
    return false;
  *c_bs = (ptrdiff_t)bs;
  return true;
}

/* Batch axes in two sets, for a product whose batch offsets take no one
 * stride (attention's heads read in place at a batch above 1: [B, S, H, D]
 * as [B, H, S, D]): the outer set [0, s) and the inner set [s, nb), each
 * stepping with one stride in A, in B and in C (batch axis i at cs[i]), for
 * the first s that allows it. */
typedef struct batch_split {
  uint64_t outer, inner;
  int64_t a_os, a_is, b_os, b_is, c_os, c_is;
} batch_split;

static bool split_batch(const dot_params *dp, const int64_t *cs, batch_split *bs) {
  const uint32_t nb = dp->nb;
  for (uint32_t sp = 1; sp < nb; sp++) {
    const uint32_t ni = nb - sp;
    batch_split b = {1, 1, 0, 0, 0, 0, 0, 0};
    for (uint32_t i = 0; i < nb; i++) *(i < sp ? &b.outer : &b.inner) *= (uint64_t)dp->bd[i];
    if (one_stride(sp, dp->bd, dp->bls, &b.a_os) && one_stride(ni, dp->bd + sp, dp->bls + sp, &b.a_is) &&
        one_stride(sp, dp->bd, dp->brs, &b.b_os) && one_stride(ni, dp->bd + sp, dp->brs + sp, &b.b_is) &&
        one_stride(sp, dp->bd, cs, &b.c_os) && one_stride(ni, dp->bd + sp, cs + sp, &b.c_is) &&
        b.outer > 1 && b.inner > 1) {
      *bs = b;
      return true;
    }
  }
  return false;
}

/* C's batch strides |cs| (dense [batch, M, N], or through transpose
 * |t| >= 0) and its row stride; false where the transpose's layout does not
 * allow the GEMM's rows. */
static bool dot_c_batch_strides(const accy__program *p, uint32_t node, const dot_params *dp,
                                int64_t t, int64_t *cs, ptrdiff_t *c_rs) {
  if (t >= 0) {
    int64_t sd[ACCY_MAX_RANK];
    uint32_t nb;
    if (!dot_store_layout(p, node, (uint32_t)t, sd, &nb, c_rs) || nb != dp->nb) return false;
    for (uint32_t i = 0; i < nb; i++) cs[i] = sd[i];
    return true;
  }
  uint64_t after = dp->m.count * dp->n.count; /* bounded by C's element count */
  for (uint32_t i = dp->nb; i-- > 0;) {
    cs[i] = (int64_t)after;
    after *= (uint64_t)dp->bd[i];
  }
  *c_rs = (ptrdiff_t)dp->n.count;
  return true;
}

/* Whether f32 dot |node| (maps |dp|, stored through transpose |t| >= 0 or
 * dense) runs as the GEMM in two sets of batch axes (*bs): its batch
 * offsets (or C's, through the transpose) take no one stride, every other
 * map one, B is read at run time, and B's panels, where its columns are
 * not contiguous, fit the launch buffer. */
static bool dot_two_sets(const accy__program *p, uint32_t node, const dot_params *dp, int64_t t,
                         batch_split *bs, ptrdiff_t *c_rs) {
  const accy__node *nd = &p->nodes[node];
  int64_t cs[ACCY_MAX_RANK];
  if (nd->type.dtype != ACCY_DTYPE_F32 || dp->m.tab || dp->kl.tab || dp->kr.tab || dp->n.tab ||
      p->nodes[nd->operands[1]].op == ACCY_OP_CONSTANT ||
      !dot_c_batch_strides(p, node, dp, t, cs, c_rs) || !split_batch(dp, cs, bs))
    return false;
  ptrdiff_t one_bs, one_rs;
  if (!dp->bl.tab && !dp->br.tab && (t < 0 || dot_permuted_strides(p, node, (uint32_t)t, &one_bs, &one_rs)))
    return false; /* one set does */
  return dot_b_fits(dp);
}

static accy_status prepare_dot_gemm(const accy__program *p, uint32_t node, const dot_params *dp,
                                    const epi *e, accy__arena *arena, accy__kernel *k, bool *used) {
  *used = false;
  const accy__node *nd = &p->nodes[node];
  const bool bf16 = nd->type.dtype == ACCY_DTYPE_BF16;
  const bool half = nd->type.dtype == ACCY_DTYPE_F16 || bf16;
  /* f32 batch axes that take no one stride: two sets (split_batch), B
   * read at run time, C dense, no group after the items. */
  batch_split bsp = {0};
  ptrdiff_t two_rs = 0;
  const bool two = !e->post && !e->pool && dot_two_sets(p, node, dp, e->transpose, &bsp, &two_rs);
  if ((nd->type.dtype != ACCY_DTYPE_F32 && !half) || (dp->bl.tab && !two) || dp->m.tab ||
      dp->kl.tab)
    return ACCY_STATUS_OK;
  if (half && (e->bias || e->residual || e->clamp || e->pool || e->post)) return ACCY_STATUS_OK;
  const accy__node *rhs = &p->nodes[nd->operands[1]];
  const bool packed = rhs->op == ACCY_OP_CONSTANT;
  /* A constant bf16 B is scanned here, whole: if any product with it could
   * leave f32's normal range, the generic kernel runs the product. */
  if (bf16 && packed) {
    uint64_t nb = 0;
    if (!accy__type_elements(&rhs->type, &nb) || !bf16_run_safe(rhs->payload, 1, nb))
      return ACCY_STATUS_OK;
  }
  const bool strided = (two || !dp->br.tab) && !dp->kr.tab && !dp->n.tab;
  const bool direct = strided && (dp->n.stride == 1 || dp->n.count <= 1);
  if (!packed && !strided) return ACCY_STATUS_OK;
  /* A dot_pack, whose GEMM is the kernel's (a pre-pass may need it). */
  dot_pack *dk = accy__arena_alloc(arena, sizeof *dk, 64);
  if (!dk) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "kernel parameters");
  memset(dk, 0, sizeof *dk);
  accy__gemm *g = &dk->g;
  g->uk = accy__uk_get()->f32_gemm;
  g->batch = two ? bsp.inner : dp->bl.count;
  g->M = dp->m.count;
  g->N = dp->n.count;
  g->K = dp->kl.count;
  g->a_bs = two ? bsp.a_is : dp->bl.stride;
  g->a_rs = dp->m.stride;
  g->a_cs = dp->kl.stride;
  g->c_rs = two ? two_rs : (ptrdiff_t)g->N;
  g->c_bs = two ? (ptrdiff_t)bsp.c_is : (ptrdiff_t)(g->M * g->N);
  if (two) {
    dk->outer = bsp.outer;
    dk->a_os = (ptrdiff_t)bsp.a_os, dk->b_os = (ptrdiff_t)bsp.b_os, dk->c_os = (ptrdiff_t)bsp.c_os;
    /* Both operands bf16 values widened, and nothing applied to C: the
     * items scan (dot_item_scanned). */
    bool from_bf16 = !half && !e->bias && !e->residual && !e->clamp && e->transpose < 0;
    for (uint32_t o = 0; o < 2 && from_bf16; o++) {
      const accy__node *on = &p->nodes[nd->operands[o]];
      from_bf16 = on->op == ACCY_OP_CONVERT && on->n_operands == 1 &&
                  p->nodes[on->operands[0]].type.dtype == ACCY_DTYPE_BF16;
    }
    dk->scan = from_bf16;
  }
  if (e->transpose >= 0 && !two &&
      (half || !dot_permuted_strides(p, node, (uint32_t)e->transpose, &g->c_bs, &g->c_rs)))
    return ACCY_STATUS_OK; /* prepare_dot refuses */
  if (half) {
    dk->a_bs = g->a_bs, dk->a_rs = g->a_rs, dk->a_cs = g->a_cs;
    dk->c_bs = g->c_bs, dk->c_rs = g->c_rs;
    dk->bf16 = bf16;
    dk->widen = accy__uk_get()->ew.convert(nd->type.dtype, ACCY_DTYPE_F32);
    dk->narrow = accy__uk_get()->ew.convert(ACCY_DTYPE_F32, nd->type.dtype);
    g->a_bs = 0; /* the providers offset by the batch index themselves */
    g->a_block = half_a_block;
    g->a_block_ctx = dk;
    g->c_store = half_c_store;
    g->c_store_ctx = dk;
    if (!packed) {
      dk->bs = dp->br.stride, dk->ks = dp->kr.stride, dk->js = dp->n.stride;
      g->b_block = half_b_block;
      g->b_block_ctx = dk;
    }
  }
  static const float kNoWeights[1];
  if (packed) g->b_packed = kNoWeights; /* the plan needs to know; the pointer comes below */
  /* Few columns (a classifier's 10 at batch 1): panels half as wide, read
   * a cache line per row of K instead of two (gemm.h's b_pnr). */
  if (packed && g->N <= g->uk.nr / 2) g->b_pnr = g->uk.nr / 2;
  /* A group after each item runs over the item's rows: items of long rows
   * (64 x 1024 after GPT-2's first FFN product: items of 16 x 256 instead
   * of 64 x 64 ran the GEMM and its tanh GELU in 0.338 ms against 0.357,
   * as fast as the two tasks apart). */
  g->wide = e->post;
  accy__gemm_plan(g);
  /* A half A that several blocks of columns would each widen again is
   * widened once per launch instead (a dense f32 copy, the same values, so
   * the same bits); then read directly, as an f32 A is. */
  uint64_t a_floats = 0;
  if (half && g->n_items > 1 && accy__mul_u64(g->batch, g->M, &a_floats) &&
      accy__mul_u64(a_floats, g->K, &a_floats) && a_floats > 0 &&
      a_floats <= DOT_PACK_MAX_FLOATS) {
    dk->a_widened = true;
    g->a_block = NULL;
    g->a_block_ctx = NULL;
    g->a_bs = (ptrdiff_t)(g->M * g->K);
    g->a_rs = (ptrdiff_t)g->K;
    g->a_cs = 1;
    accy__gemm_plan(g);
    k->pre_run = half_widen_a;
    k->pre_items = g->batch * g->M;
    k->pre_item_cost = g->K;
    k->temp_bytes = a_floats * sizeof(float);
  }
  /* The split GEMV reads one panel of exactly N columns: rows of B with no
   * padding (cnn_b1's 8192 x 10 classifier: 320 KiB read instead of 512). */
  if (packed && g->split) g->b_pnr = g->N;
  if (packed) {
    uint64_t nf = accy__gemm_packed_floats(g);
    float *dst = nf ? accy__arena_alloc(arena, (size_t)nf * sizeof(float), 64) : NULL;
    if (nf && !dst)
      return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "%llu bytes of packed weights",
                       (unsigned long long)nf * 4);
    const float *src = rhs->payload;
    const uint16_t *src16 = rhs->payload; /* half: widened as they are packed */
    const uint64_t nr = g->b_pnr ? g->b_pnr : g->uk.nr, panels = (g->N + nr - 1) / nr;
    for (uint64_t b = 0; b < g->batch; b++)
      for (uint64_t pn = 0; pn < panels; pn++)
        for (uint64_t kk = 0; kk < g->K; kk++) {
          float *d = dst + ((b * panels + pn) * g->K + kk) * nr;
          const int64_t base = map_off(&dp->br, b) + map_off(&dp->kr, kk);
          for (uint64_t j = 0; j < nr; j++) {
            uint64_t col = pn * nr + j;
            const int64_t at = base + map_off(&dp->n, col < g->N ? col : 0);
            d[j] = col >= g->N ? 0.0f : half ? half_value(dk, src16[at]) : src[at];
          }
        }
    if (dst) g->b_packed = dst; /* else empty: kNoWeights keeps packed mode */
  } else if (!half) {
    g->b_bs = two ? (ptrdiff_t)bsp.b_is : dp->br.stride;
    g->b_rs = dp->kr.stride;
    /* Packed once per launch by a pre-pass when items would otherwise pack
     * the same panels again (more than one row block) and B is big enough
     * for that to outweigh a task more, or when B's columns are not
     * contiguous (items pack only direct rows). With two sets of batch
     * axes, nf floats for each outer index. */
    const uint64_t nf = gemm_b_panel_floats(g);
    uint64_t all = nf;
    if (two && !accy__mul_u64(nf, bsp.outer, &all)) all = UINT64_MAX;
    if (!direct && (all == 0 || all > DOT_PACK_MAX_FLOATS)) return ACCY_STATUS_OK; /* generic */
    if (all && all <= DOT_PACK_MAX_FLOATS &&
        (!direct || (accy__gemm_b_reread(g) && g->m_items > 1 && nf >= DOT_PACK_MIN_FLOATS))) {
      dk->bs = g->b_bs;
      dk->ks = dp->kr.stride;
      dk->js = dp->n.stride;
      gemm_pack_b_per_launch(g, k, nf, dot_pack_f32);
      if (two) {
        dk->pre_items = k->pre_items;
        dk->b_floats = nf;
        k->pre_items *= bsp.outer;
        k->temp_bytes = all * sizeof(float);
      }
    }
  }
  if (dk->scan) {
    /* One chain per output over k in order, as the generic kernel sums. */
    g->split = false;
    dk->bs = g->b_bs;
    dk->ks = dp->kr.stride;
    dk->js = dp->n.stride;
  }
  gemm_set_epilogue(g, e, false);
  char kb[48] = "";
  if (!g->split && g->K > g->kc)
    snprintf(kb, sizeof kb, ", K in blocks of %llu", (unsigned long long)g->kc);
  accy__kernel_set_how(k, arena, "GEMM %s%s%s%s, B %s%s", g->split ? g->uk.gemv_split_name : g->uk.name,
          !g->split && g->uk.gemv ? " / " : "", !g->split && g->uk.gemv ? g->uk.gemv_name : "", kb,
          packed ? "packed at compile time" : g->b_run_packed ? "packed per launch (pre-pass)"
                                                              : "packed per item",
          bf16   ? ", bf16 widened to f32 per block where every product is exact"
          : half ? ", f16 widened to f32 per block"
          : dk->scan ? ", bf16 values: items whose every product is exact"
                 : "");
  k->run = bf16 ? dot_gemm_bf16 : dot_gemm_f32;
  k->params = dk;
  k->worker_bytes = accy__gemm_workspace_bytes(g);
  k->n_items = accy__gemm_items(g);
  if (two) {
    dk->g_items = k->n_items;
    k->n_items *= bsp.outer;
  }
  k->item_cost = accy__gemm_item_cost(g);
  *used = true;
  return ACCY_STATUS_OK;
}

static accy_status no_kernel(const accy__program *p, uint32_t node) {
  const accy__node *nd = &p->nodes[node];
  return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "no kernel for %s",
                   accy__dtype_name(nd->type.dtype));
}

/* Tile functions for one dtype: [0] fast (NULL if none), [1] generic. */
static bool dot_fns(int32_t dtype, accy__tile_fn fns[2]) {
  switch (dtype) {
    case ACCY_DTYPE_F32: fns[0] = dot_fast_f32; fns[1] = dot_gen_f32; return true;
    case ACCY_DTYPE_F64: fns[0] = dot_fast_f64; fns[1] = dot_gen_f64; return true;
    case ACCY_DTYPE_F16: fns[0] = NULL; fns[1] = dot_gen_f16; return true;
    case ACCY_DTYPE_BF16: fns[0] = NULL; fns[1] = dot_gen_bf16; return true;
    case ACCY_DTYPE_I8: case ACCY_DTYPE_U8:
      fns[0] = dot_fast_u8; fns[1] = dot_gen_u8; return true;
    case ACCY_DTYPE_I16: case ACCY_DTYPE_U16:
      fns[0] = dot_fast_u16; fns[1] = dot_gen_u16; return true;
    case ACCY_DTYPE_I32: case ACCY_DTYPE_U32:
      fns[0] = dot_fast_u32; fns[1] = dot_gen_u32; return true;
    case ACCY_DTYPE_I64: case ACCY_DTYPE_U64:
      fns[0] = dot_fast_u64; fns[1] = dot_gen_u64; return true;
    default: return false;
  }
}

/* Checks that an operand's dtype matches the result's; the verifier ensures
 * this, but a mismatch would make the kernel read the wrong element size. */
static accy_status check_operands(const accy__program *p, uint32_t node) {
  const accy__node *nd = &p->nodes[node];
  if (nd->n_operands != 2)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "%u operands, expected 2", nd->n_operands);
  for (uint32_t i = 0; i < 2; i++) {
    const accy__type *t = &p->nodes[nd->operands[i]].type;
    if (t->dtype != nd->type.dtype)
      return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                       "operand %u is %s but the result is %s", i, accy__dtype_name(t->dtype),
                       accy__dtype_name(nd->type.dtype));
  }
  return ACCY_STATUS_OK;
}

/* The non-GEMM dot paths with a fused epilogue: the tile, then the epilogue
 * over the rows of each of its items while they are in cache. */
static void dot_epi_f32(const accy__kernel *k, void *const *bufs, uint64_t begin, uint64_t end) {
  const dot_params *dp = k->params;
  dp->inner(k, bufs, begin, end);
  float *out = bufs[0];
  const float *res = dp->e->residual ? bufs[3] : NULL;
  const uint64_t M = dp->m.count, N = dp->n.count;
  for (uint64_t it = begin; it < end; it++) {
    const dot_block blk = dot_item(dp, it);
    for (uint32_t i = 0; i < blk.rows; i++) {
      const uint64_t off = (blk.b * M + blk.m0 + i) * N + blk.n0;
      epi_run(dp->e, out + off, res ? res + off : NULL, blk.w, dp->e->bias ? dp->e->bias + blk.n0 : NULL, 1);
    }
  }
}

/* Dot |node|'s index maps (*out, in |arena|), after checking its
 * attributes against its operands and result. */
static accy_status dot_build(const accy__program *p, uint32_t node, accy__arena *arena,
                             dot_params **out) {
  const accy__node *nd = &p->nodes[node];
  const accy__type *lt = &p->nodes[nd->operands[0]].type;
  const accy__type *rt = &p->nodes[nd->operands[1]].type;

  /* The verifier guarantees a well-formed attribute list; these checks only
   * keep an unverified program from indexing out of bounds. */
  const int64_t *at = nd->attrs;
  if (nd->n_attrs < 2 || at[0] < 0 || at[0] > ACCY_MAX_RANK ||
      nd->n_attrs < 2 + 2 * (uint64_t)at[0])
    goto bad_attrs;
  const uint32_t nb = (uint32_t)at[0];
  const int64_t *lb = at + 1, *rb = at + 1 + nb;
  const int64_t ncv = at[1 + 2 * nb];
  if (ncv < 0 || ncv > ACCY_MAX_RANK || nd->n_attrs != 2 + 2 * nb + 2 * (uint64_t)ncv)
    goto bad_attrs;
  const uint32_t nc = (uint32_t)ncv;
  const int64_t *lc = at + 2 + 2 * nb, *rc = lc + nc;

  /* Role of each axis: 0 free, 1 batch, 2 contracting. */
  uint8_t lrole[ACCY_MAX_RANK] = {0}, rrole[ACCY_MAX_RANK] = {0};
  for (uint32_t i = 0; i < nb + nc; i++) {
    int64_t la = i < nb ? lb[i] : lc[i - nb];
    int64_t ra = i < nb ? rb[i] : rc[i - nb];
    if (la < 0 || la >= lt->rank || ra < 0 || ra >= rt->rank || lrole[la] || rrole[ra] ||
        lt->dims[la] != rt->dims[ra])
      goto bad_attrs;
    lrole[la] = rrole[ra] = i < nb ? 1 : 2;
  }

  int64_t sl[ACCY_MAX_RANK], sr[ACCY_MAX_RANK];
  accy__type_strides(lt, sl);
  accy__type_strides(rt, sr);
  int64_t bd[ACCY_MAX_RANK], bls[ACCY_MAX_RANK], brs[ACCY_MAX_RANK];
  int64_t kd[ACCY_MAX_RANK], kls[ACCY_MAX_RANK], krs[ACCY_MAX_RANK];
  for (uint32_t i = 0; i < nb; i++) {
    bd[i] = lt->dims[lb[i]];
    bls[i] = sl[lb[i]];
    brs[i] = sr[rb[i]];
  }
  for (uint32_t i = 0; i < nc; i++) {
    kd[i] = lt->dims[lc[i]];
    kls[i] = sl[lc[i]];
    krs[i] = sr[rc[i]];
  }
  /* Free axes in operand order; with the batch axes they give the result
   * dims, which must be exactly the declared ones since tiles write the
   * result densely as [B, M, N]. */
  int64_t md[ACCY_MAX_RANK], ms[ACCY_MAX_RANK], ndims[ACCY_MAX_RANK], ns[ACCY_MAX_RANK];
  uint32_t nm = 0, nn = 0;
  for (uint32_t a = 0; a < lt->rank; a++)
    if (!lrole[a]) { md[nm] = lt->dims[a]; ms[nm++] = sl[a]; }
  for (uint32_t a = 0; a < rt->rank; a++)
    if (!rrole[a]) { ndims[nn] = rt->dims[a]; ns[nn++] = sr[a]; }
  if (nb + nm + nn != nd->type.rank) goto bad_result;
  for (uint32_t i = 0; i < nd->type.rank; i++) {
    int64_t want = i < nb ? bd[i] : i < nb + nm ? md[i - nb] : ndims[i - nb - nm];
    if (nd->type.dims[i] != want) goto bad_result;
  }

  dot_params *dp = accy__arena_alloc(arena, sizeof *dp, 64);
  if (dp == NULL)
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "kernel parameters");
  dp->nb = nb;
  for (uint32_t i = 0; i < nb; i++) dp->bd[i] = bd[i], dp->bls[i] = bls[i], dp->brs[i] = brs[i];
  ACCY_TRY(map_build(arena, node, "lhs batch", nb, bd, bls, &dp->bl));
  ACCY_TRY(map_build(arena, node, "rhs batch", nb, bd, brs, &dp->br));
  ACCY_TRY(map_build(arena, node, "lhs free", nm, md, ms, &dp->m));
  ACCY_TRY(map_build(arena, node, "rhs free", nn, ndims, ns, &dp->n));
  ACCY_TRY(map_build(arena, node, "lhs contracting", nc, kd, kls, &dp->kl));
  ACCY_TRY(map_build(arena, node, "rhs contracting", nc, kd, krs, &dp->kr));
  *out = dp;
  return ACCY_STATUS_OK;

bad_attrs:
  return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                   "malformed batch/contracting attributes (%u attrs)", nd->n_attrs);
bad_result:
  return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                   "declared result rank %u does not match the operands", nd->type.rank);
}

static accy_status prepare_dot(const accy__program *p, uint32_t node, const epi *e,
                               accy__arena *arena, accy__kernel *k) {
  const accy__node *nd = &p->nodes[node];
  accy__tile_fn fns[2];
  if (!dot_fns(nd->type.dtype, fns)) return no_kernel(p, node);
  ACCY_TRY(check_operands(p, node));
  dot_params *dp;
  ACCY_TRY(dot_build(p, node, arena, &dp));
  bool gemm = false;
  ACCY_TRY(prepare_dot_gemm(p, node, dp, e, arena, k, &gemm));
  if (gemm) return ACCY_STATUS_OK;
  if (e->transpose >= 0) /* fuse.c asked accy__kernel_dot_stores_permuted */
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "a transposed store needs the GEMM form");

  const uint64_t B = dp->bl.count, M = dp->m.count, N = dp->n.count, K = dp->kl.count;
  dp->m_blocks = (M + DOT_MR - 1) / DOT_MR;
  dp->n_blocks = (N + DOT_NB - 1) / DOT_NB;
  bool contiguous_n = dp->n.tab == NULL && (dp->n.stride == 1 || N <= 1);
  k->run = contiguous_n && fns[0] ? fns[0] : fns[1];
  k->params = dp;
  if (e->bias || e->residual || e->clamp) {
    dp->e = accy__arena_alloc(arena, sizeof *dp->e, 8);
    if (!dp->e) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "kernel parameters");
    *dp->e = *e;
    dp->inner = k->run;
    k->run = dot_epi_f32;
  }
  k->n_items = B * dp->m_blocks * dp->n_blocks; /* <= result elements */
  /* Boundary: K == 0 still writes zeros, so an item is never free. */
  uint64_t w = N < DOT_NB ? N : DOT_NB, h = M < DOT_MR ? M : DOT_MR;
  k->item_cost = h * w * (K > 0 ? K : 1);
  if (k->item_cost == 0) k->item_cost = 1;
  return ACCY_STATUS_OK;
}

bool accy__kernel_dot_stores_permuted(const accy__program *p, uint32_t node, uint32_t t) {
  const accy__node *nd = &p->nodes[node];
  if (nd->op != ACCY_OP_DOT_GENERAL || nd->n_operands != 2 || nd->type.dtype != ACCY_DTYPE_F32)
    return false;
  ptrdiff_t bs, rs;
  const bool one = dot_permuted_strides(p, node, t, &bs, &rs);
  for (uint32_t i = 0; i < 2; i++)
    if (p->nodes[nd->operands[i]].type.dtype != ACCY_DTYPE_F32) return false;
  /* The maps, in an arena of their own (their tables are what says no):
   * the GEMM in one set of batch axes, or in two. */
  accy__arena arena;
  accy__arena_init(&arena);
  dot_params *dp = NULL;
  batch_split two;
  const bool takes =
      dot_build(p, node, &arena, &dp) == ACCY_STATUS_OK &&
      ((one && dot_gemm_f32_takes(p, node, dp)) || dot_two_sets(p, node, dp, t, &two, &rs));
  accy__arena_free(&arena);
  return takes;
}

/* ---- convolution --------------------------------------------------------- */

/* The kernel taps of one spatial axis that read a real input element for
 * one output coordinate: tap t (0 <= t < count) uses kernel position
 * kfirst + t * kstep and input position xfirst + t * xstep. */
typedef struct conv_range {
  int64_t kfirst;
  int64_t count;
  int64_t xfirst;
} conv_range;

typedef struct conv_axis {
  uint64_t out;            /* result extent */
  int64_t kstep, xstep;    /* advance between consecutive valid taps */
  int64_t lstride;         /* element stride of this axis in lhs */
  int64_t rstride;         /* element stride of this axis in rhs */
  const conv_range *r;     /* out entries; arena-owned */
} conv_axis;

typedef struct conv_params {
  conv_axis ax[3];         /* canonical spatial axes; leading ones may be dummies */
  uint64_t n_out_ch;       /* O */
  uint64_t out_per_group;  /* O / G */
  uint64_t in_per_group;   /* C / G */
  int64_t l_n, l_c;        /* lhs strides of the batch and channel axes */
  int64_t r_o, r_c;        /* rhs strides of the output and input channel axes */
} conv_params;

#define CONV_TILE(NAME, T, ACC, LOAD, STORE)                                           \
  static void NAME(const accy__kernel *k, void *const *bufs, uint64_t begin,          \
                   uint64_t end) {                                                     \
    const conv_params *cp = k->params;                                                 \
    T *out = bufs[0];                                                                  \
    const T *lhs = bufs[1];                                                            \
    const T *rhs = bufs[2];                                                            \
    const conv_axis *a0 = &cp->ax[0], *a1 = &cp->ax[1], *a2 = &cp->ax[2];              \
    const int64_t dl2 = a2->xstep * a2->lstride, dr2 = a2->kstep * a2->rstride;        \
    for (uint64_t it = begin; it < end; it++) {                                        \
      uint64_t rest = it;                                                              \
      const uint64_t y1 = rest % a1->out;                                              \
      rest /= a1->out;                                                                 \
      const uint64_t y0 = rest % a0->out;                                              \
      rest /= a0->out;                                                                 \
      const uint64_t o = rest % cp->n_out_ch, n = rest / cp->n_out_ch;                 \
      const uint64_t grp = o / cp->out_per_group;                                      \
      const conv_range *r0 = &a0->r[y0], *r1 = &a1->r[y1];                             \
      const T *lbase = lhs + (int64_t)n * cp->l_n +                                    \
                       (int64_t)(grp * cp->in_per_group) * cp->l_c;                    \
      const T *rbase = rhs + (int64_t)o * cp->r_o;                                     \
      T *dst = out + it * a2->out;                                                     \
      for (uint64_t y2 = 0; y2 < a2->out; y2++) {                                      \
        const conv_range *r2 = &a2->r[y2];                                             \
        ACC acc = 0;                                                                   \
        for (uint64_t ci = 0; ci < cp->in_per_group; ci++) {                           \
          const T *lch = lbase + (int64_t)ci * cp->l_c;                                \
          const T *rch = rbase + (int64_t)ci * cp->r_c;                                \
          for (int64_t t0 = 0; t0 < r0->count; t0++) {                                 \
            const T *l0 = lch + (r0->xfirst + t0 * a0->xstep) * a0->lstride;           \
            const T *w0 = rch + (r0->kfirst + t0 * a0->kstep) * a0->rstride;           \
            for (int64_t t1 = 0; t1 < r1->count; t1++) {                               \
              const T *lp = l0 + (r1->xfirst + t1 * a1->xstep) * a1->lstride +         \
                            r2->xfirst * a2->lstride;                                  \
              const T *wp = w0 + (r1->kfirst + t1 * a1->kstep) * a1->rstride +         \
                            r2->kfirst * a2->rstride;                                  \
              for (int64_t t2 = 0; t2 < r2->count; t2++)                               \
                acc += LOAD(lp[t2 * dl2]) * LOAD(wp[t2 * dr2]);                        \
            }                                                                          \
          }                                                                            \
        }                                                                              \
        dst[y2] = STORE(acc);                                                          \
      }                                                                                \
    }                                                                                  \
  }

CONV_TILE(conv_f32, float, float, LOAD_ID, STORE_F32)
CONV_TILE(conv_f64, double, double, LOAD_ID, STORE_F64)
CONV_TILE(conv_f16, uint16_t, float, accy__f16_to_f32, accy__f32_to_f16)
CONV_TILE(conv_bf16, uint16_t, float, accy__bf16_to_f32, accy__f32_to_bf16)
CONV_TILE(conv_u8, uint8_t, uint32_t, LOAD_U32, STORE_U8)
CONV_TILE(conv_u16, uint16_t, uint32_t, LOAD_U32, STORE_U16)
CONV_TILE(conv_u32, uint32_t, uint32_t, LOAD_U32, STORE_U32)
CONV_TILE(conv_u64, uint64_t, uint64_t, LOAD_U64, STORE_U64)

static accy__tile_fn conv_fn(int32_t dtype) {
  switch (dtype) {
    case ACCY_DTYPE_F32: return conv_f32;
    case ACCY_DTYPE_F64: return conv_f64;
    case ACCY_DTYPE_F16: return conv_f16;
    case ACCY_DTYPE_BF16: return conv_bf16;
    case ACCY_DTYPE_I8: case ACCY_DTYPE_U8: return conv_u8;
    case ACCY_DTYPE_I16: case ACCY_DTYPE_U16: return conv_u16;
    case ACCY_DTYPE_I32: case ACCY_DTYPE_U32: return conv_u32;
    case ACCY_DTYPE_I64: case ACCY_DTYPE_U64: return conv_u64;
    default: return NULL;
  }
}

static int64_t floor_mod(int64_t a, int64_t m) {
  int64_t r = a % m;
  return r < 0 ? r + m : r;
}

static int64_t gcd_i64(int64_t a, int64_t b) {
  while (b != 0) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* (a * b) mod m for 0 <= a, b < m <= INT64_MAX without 128-bit arithmetic. */
static uint64_t mul_mod(uint64_t a, uint64_t b, uint64_t m) {
  uint64_t r = 0;
  while (b != 0) {
    if (b & 1) r = (r + a) % m;
    a = (a * 2) % m;
    b >>= 1;
  }
  return r;
}

/* Inverse of a modulo m (gcd(a, m) = 1, m >= 1); 0 when m is 1. */
static int64_t inv_mod(int64_t a, int64_t m) {
  int64_t t = 0, nt = 1, r = m, nr = floor_mod(a, m);
  while (nr != 0) {
    int64_t q = r / nr, tmp;
    tmp = t - q * nt; t = nt; nt = tmp;
    tmp = r - q * nr; r = nr; nr = tmp;
  }
  return m == 1 ? 0 : floor_mod(t, m);
}

/* One spatial axis as given by the attributes. */
typedef struct conv_axis_attrs {
  int64_t in;       /* lhs extent */
  int64_t ksize;    /* rhs extent */
  int64_t stride, pad_low, lhs_dil, rhs_dil;
} conv_axis_attrs;

/* Valid taps for output coordinate y. The tap at kernel position kp reads
 * dilated-padded position p = y * stride - pad_low + kp * rhs_dil, which is
 * a real element iff 0 <= p <= (in - 1) * lhs_dil and p % lhs_dil == 0.
 * Since rhs_dil * kp must hit a fixed residue modulo lhs_dil, the valid kp
 * form an arithmetic progression with step lhs_dil / gcd. Returns false on
 * int64 overflow (only possible for attributes the verifier rejects). */
static bool conv_range_for(const conv_axis_attrs *x, int64_t y, int64_t g, int64_t q,
                           int64_t inv, conv_range *out) {
  out->kfirst = out->count = out->xfirst = 0;
  int64_t base, pmax, lo, hi;
  if (__builtin_mul_overflow(y, x->stride, &base) ||
      __builtin_sub_overflow(base, x->pad_low, &base))
    return false;
  if (x->in == 0 || x->ksize == 0) return true;
  if (__builtin_mul_overflow(x->in - 1, x->lhs_dil, &pmax)) return false;
  if (base > pmax) return true;
  if (base >= 0) {
    lo = 0;
  } else {
    int64_t neg;
    if (__builtin_sub_overflow((int64_t)0, base, &neg)) return false;
    lo = neg / x->rhs_dil + (neg % x->rhs_dil != 0);
  }
  if (__builtin_sub_overflow(pmax, base, &hi)) return false;
  hi /= x->rhs_dil;
  if (hi > x->ksize - 1) hi = x->ksize - 1;
  if (lo > hi) return true;
  /* Solve kp * rhs_dil == -base (mod lhs_dil). */
  int64_t need = floor_mod(-floor_mod(base, x->lhs_dil), x->lhs_dil);
  if (need % g != 0) return true;
  int64_t c = (int64_t)mul_mod((uint64_t)(need / g), (uint64_t)inv, (uint64_t)q);
  int64_t first = lo + floor_mod(c - lo % q, q);
  if (first > hi) return true;
  out->kfirst = first;
  out->count = (hi - first) / q + 1;
  out->xfirst = (base + first * x->rhs_dil) / x->lhs_dil; /* in [0, in) by construction */
  return true;
}

/* ---- convolution as GEMM (f32, constant finite filters) -------------------- */

/* One image and group at a time, a 2-D convolution is a GEMM: A is the
 * group's filters [O/G, C/G x KH x KW] (the constant, row-major), B the
 * input read as im2col [C/G x KH x KW, OH x OW], C the output rows of the
 * group. A 1x1 convolution with unit stride and no padding reads the input
 * as B directly; any other is read through a panel provider that gathers
 * an item's kc x nb block of im2col at a time into the worker workspace, so the
 * column matrix is never materialised. Taps over padding read 0, which adds
 * nothing to a sum that starts from +0 when the filter is finite (w * 0 is
 * +-0, and x + +-0 == x, also for x = +0): the same as skipping them, which
 * is what docs/ops.md defines. Filters with an Inf or NaN keep the direct
 * path, where skipping matters. */
/* The largest stride of the padded form (its phase tables are this big). */
#define CONV_PAD_MAX_STRIDE 4

/* Channels per item of a pointwise convolution's transposed pre-pass. */
#define CONV_PRE_KB 64u

typedef struct conv_gemm {
  accy__gemm g;
  uint64_t groups;
  int64_t C, H, W, KH, KW;     /* C: input channels per group */
  int64_t sh, sw, ph, pw, dh, dw;
  int64_t OH, OW;
  int64_t img_stride;          /* elements of one input image */
  /* The transposed form (rows are output positions, columns the group's
   * output channels; C goes through conv_store_t) and the padded one keep
   * their epilogue here. */
  epi e;
  /* The padded form (g.b_off set): a pre-pass copies each input plane,
   * zero-padded and split by the strides into phase planes of Hq x Wq
   * (phase (py, px): element (y, x) is padded element (y sh + py, x sw +
   * px); only the phases some tap reads, nph of them), into the launch
   * buffer, and the columns are positions oy * Wq + ox, whose taps are then
   * a phase plane at fixed offsets (ox >= OW: computed, never stored). */
  int64_t Hq, Wq;
  uint64_t planes;           /* input planes of the launch (images x channels) */
  uint32_t nph;              /* phase planes per input plane */
  int8_t py_of[CONV_PAD_MAX_STRIDE * CONV_PAD_MAX_STRIDE],
      px_of[CONV_PAD_MAX_STRIDE * CONV_PAD_MAX_STRIDE]; /* phase i's (py, px) */
  accy__uk_f32_transpose_fn transpose; /* the transposed form's store */
  /* The transposed form's pre-pass of a pointwise convolution: items of
   * pre_kb channels (0: items of one panel, conv_pack_a_f32). */
  uint64_t pre_kb;
} conv_gemm;

/* copy_run: d[u] = s[u] for u < n; zero_run: d[u] = 0 for u < n. SSE2
 * moves inline (a library call per short row cost more than the copy, and
 * GCC may turn a plain loop into one). */
static inline void copy_run(float *d, const float *s, int64_t n) {
  int64_t u = 0;
#if defined(__SSE2__)
  for (; u + 8 <= n; u += 8) {
    const __m128 a = _mm_loadu_ps(s + u), b = _mm_loadu_ps(s + u + 4);
    _mm_storeu_ps(d + u, a);
    _mm_storeu_ps(d + u + 4, b);
  }
  for (; u + 4 <= n; u += 4) _mm_storeu_ps(d + u, _mm_loadu_ps(s + u));
#endif
  for (; u < n; u++) d[u] = s[u];
}

static inline void zero_run(float *d, int64_t n) {
  int64_t u = 0;
#if defined(__SSE2__)
  for (; u + 4 <= n; u += 4) _mm_storeu_ps(d + u, _mm_setzero_ps());
#endif
  for (; u < n; u++) d[u] = 0.0f;
}

/* t[u] = src[u * sw] for u < n, reading src[0 .. (n - 1) sw] only: four
 * at a time in SSE2 vectors at strides 1 and 2 (the even floats of two
 * loads), the rest one by one. */
static inline void gather_run(float *t, const float *src, int64_t n, int64_t sw) {
  int64_t u = 0;
#if defined(__SSE2__)
  if (sw == 1) {
    for (; u + 4 <= n; u += 4) _mm_storeu_ps(t + u, _mm_loadu_ps(src + u));
  } else if (sw == 2) {
    /* Vector u reads src[2u .. 2u + 7]: while 2u + 7 <= 2 (n - 1). */
    for (; u + 5 <= n; u += 4)
      _mm_storeu_ps(t + u, _mm_shuffle_ps(_mm_loadu_ps(src + 2 * u), _mm_loadu_ps(src + 2 * u + 4),
                                          _MM_SHUFFLE(2, 0, 2, 0)));
  }
#endif
  for (; u < n; u++) t[u] = src[u * sw];
}

/* Row (c, ky, kx) of im2col (one input channel and filter tap) over the
 * output positions p0 .. p0 + count, into row[0 .. count). Each output
 * row's run reads one input row at a fixed stride, so the run is a zero
 * head, a copy and a zero tail. */
static void im2col_row(const conv_gemm *cg, const float *xb, int64_t c, int64_t ky, int64_t kx,
                       uint64_t p0, uint64_t count, float *row) {
  const float *xc = xb + c * cg->H * cg->W;
  const int64_t sw = cg->sw;
  const int64_t yoff = ky * cg->dh - cg->ph, xoff = kx * cg->dw - cg->pw;
  int64_t oy = (int64_t)p0 / cg->OW, ox = (int64_t)p0 % cg->OW;
  for (uint64_t j = 0; j < count;) {
    uint64_t run = (uint64_t)(cg->OW - ox);
    if (run > count - j) run = count - j;
    float *t = row + j;
    const int64_t iy = oy * cg->sh + yoff;
    if (iy < 0 || iy >= cg->H) {
      for (uint64_t u = 0; u < run; u++) t[u] = 0.0f;
    } else {
      /* Input column of run position u: base + u * sw, valid in [0, W). */
      const int64_t base = ox * sw + xoff;
      int64_t lo = base >= 0 ? 0 : (-base + sw - 1) / sw;
      int64_t hi = base <= cg->W - 1 ? (cg->W - 1 - base) / sw + 1 : 0;
      if (lo > (int64_t)run) lo = (int64_t)run;
      if (hi > (int64_t)run) hi = (int64_t)run;
      if (hi < lo) hi = lo;
      /* Runs are short (an output row, or part of one): loops the compiler
       * can unroll, not library calls. */
      const float *src = xc + iy * cg->W + base;
      for (int64_t u = 0; u < lo; u++) t[u] = 0.0f;
      if (hi > lo) gather_run(t + lo, src + lo * sw, hi - lo, sw);
      for (int64_t u = hi; u < (int64_t)run; u++) t[u] = 0.0f;
    }
    j += run;
    ox += (int64_t)run;
    if (ox == cg->OW) ox = 0, oy++;
  }
}

/* The filter tap of im2col row k: input channel c, kernel row ky, column
 * kx (row-major over (c, ky, kx)); tap_next steps to row k + 1. */
typedef struct conv_tap {
  int64_t c, ky, kx;
} conv_tap;

static conv_tap tap_at(const conv_gemm *cg, uint64_t k) {
  const int64_t khw = cg->KH * cg->KW;
  return (conv_tap){(int64_t)k / khw, (int64_t)k % khw / cg->KW, (int64_t)k % cg->KW};
}

static void tap_next(const conv_gemm *cg, conv_tap *t) {
  if (++t->kx == cg->KW) {
    t->kx = 0;
    if (++t->ky == cg->KH) t->ky = 0, t->c++;
  }
}

/* The input image and group of GEMM batch index bi. */
static const float *conv_image(const conv_gemm *cg, const float *x, uint64_t bi) {
  const uint64_t n = bi / cg->groups, grp = bi % cg->groups;
  return x + (int64_t)n * cg->img_stride + (int64_t)grp * cg->C * cg->H * cg->W;
}

/* The B block provider (accy__gemm_block_fn): im2col rows k0 .. k0 + kcur
 * over output positions n0 .. n0 + cols, each gathered whole, then cut into
 * panels of nr. */
static void conv_im2col_block(const void *vctx, const float *x, uint64_t bi, uint64_t k0,
                              uint64_t kcur, uint64_t n0, uint64_t cols, float *dst) {
  const conv_gemm *cg = vctx;
  const uint64_t nr = cg->g.uk.nr, full = cols / nr, rest = cols % nr;
  const float *xb = conv_image(cg, x, bi);
  conv_tap tap = tap_at(cg, k0);
  /* Each panel's row straight into its place (no row buffer to copy). */
  for (uint64_t k = 0; k < kcur; k++, tap_next(cg, &tap)) {
    float *d = dst + k * nr;
    for (uint64_t p = 0; p < full; p++)
      im2col_row(cg, xb, tap.c, tap.ky, tap.kx, n0 + p * nr, nr, d + p * kcur * nr);
    if (rest) {
      float *dp = d + full * kcur * nr;
      im2col_row(cg, xb, tap.c, tap.ky, tap.kx, n0 + full * nr, rest, dp);
      for (uint64_t u = rest; u < nr; u++) dp[u] = 0.0f;
    }
  }
}

/* Most tap offsets im2col_panels tabulates per panel (24 KiB of stack). */
#define IM2COL_TAB_MAX 4096

/* A pointwise panel's row: |valid| consecutive floats of a channel's plane
 * at d, zeros up to the panel's width w (eight or six floats, a full row of
 * the AVX-512 or AVX2 level's panel, as inlined moves: a library call per
 * row of six made the AVX2 pre-pass of a 960 x 7 x 7 layer 0.037 ms,
 * against 0.010 at AVX-512). */
static inline void panel_row(float *d, const float *src, uint64_t valid, uint64_t w) {
  if (valid == 8)
    memcpy(d, src, 8 * sizeof(float));
  else if (valid == 6)
    memcpy(d, src, 6 * sizeof(float));
  else
    memcpy(d, src, (size_t)valid * sizeof(float));
  for (uint64_t i = valid; i < w; i++) d[i] = 0.0f;
}

/* im2col rows k0 .. k0 + kcur over output positions p0 .. p0 + count as
 * panels of |w| positions (position p0 + t + i of row k0 + k at
 * dst[t * kcur + k * w + i] for t a multiple of w), written in place: each
 * position's input row and column per tap, from its origin, and zero where
 * that falls in the padding or past |count|. Panel by panel, so that the
 * writes run on in one stream (row by row, each k stores into every panel,
 * kcur * w floats apart: a 7 x 7 convolution ran 20% slower so). For small
 * images, where runs are a few columns; conv_im2col_block's copied runs are
 * faster on large ones. */
static void im2col_panels(const conv_gemm *cg, const float *x, uint64_t bi, uint64_t p0,
                          uint64_t count, uint64_t k0, uint64_t kcur, uint64_t w, float *dst) {
  const uint64_t n = (count + w - 1) / w * w;
  const float *xb = conv_image(cg, x, bi);
  /* Each position's origin: input row iy0 and column ix0 of tap (0, 0);
   * positions past |count| get an origin no tap reaches. */
  int64_t iy0[ACCY__GEMM_NB_MAX], ix0[ACCY__GEMM_NB_MAX];
  for (uint64_t u = 0; u < n; u++) {
    const int64_t pos = (int64_t)(p0 + u);
    iy0[u] = u < count ? pos / cg->OW * cg->sh - cg->ph : -(INT64_C(1) << 40);
    ix0[u] = u < count ? pos % cg->OW * cg->sw - cg->pw : 0;
  }
  /* Each tap's row and column offset and its channel's plane. */
  const int64_t H = cg->H, W = cg->W;
  int64_t ty[ACCY__GEMM_KC], tx[ACCY__GEMM_KC];
  const float *tp[ACCY__GEMM_KC];
  conv_tap tap = tap_at(cg, k0);
  for (uint64_t k = 0; k < kcur; k++, tap_next(cg, &tap))
    ty[k] = tap.ky * cg->dh, tx[k] = tap.kx * cg->dw, tp[k] = xb + tap.c * H * W;
  if (cg->KH == 1 && cg->KW == 1 && cg->sh == 1 && cg->sw == 1 && cg->ph == 0 && cg->pw == 0 &&
      cg->OH == H && cg->OW == W) {
    /* Pointwise: a position's input is the same position of each channel,
     * so a panel's row of a tap is w consecutive floats (a transpose). */
    for (uint64_t t = 0; t < n; t += w) {
      const uint64_t valid = count - t < w ? count - t : w;
      float *d = dst + t * kcur;
      for (uint64_t k = 0; k < kcur; k++, d += w) {
        panel_row(d, tp[k] + p0 + t, valid, w);
      }
    }
    return;
  }
  const int64_t khw = cg->KH * cg->KW;
  const int64_t TW = ACCY__UK_GATHER_W;
  if (w <= (uint64_t)TW && khw * TW <= IM2COL_TAB_MAX && H * W <= INT32_MAX) {
    /* Every channel repeats the taps' geometry: per panel, each tap
     * position's offset in its plane (or -1 over the padding, and past the
     * panel's w positions) once, in rows of ACCY__UK_GATHER_W; then the
     * level's gather kernel copies each row of the block (one vector gather
     * a row above the portable level: the scalar lookups made the
     * transposed form's pre-pass 0.36 ms for a 14 x 14 x 256 layer). */
    accy__uk_gather_row tab[IM2COL_TAB_MAX / ACCY__UK_GATHER_W];
    const accy__uk_gather_row *tk[ACCY__GEMM_KC];
    const accy__uk_f32_gather_rows_fn gather = accy__uk_get()->f32_gather_rows;
    for (uint64_t t = 0; t < n; t += w) {
      for (int64_t q = 0; q < khw; q++) {
        const int64_t oy = q / cg->KW * cg->dh, ox = q % cg->KW * cg->dw;
        accy__uk_gather_row *r = &tab[q];
        r->n_runs = 0;
        for (int64_t i = 0; i < TW; i++) {
          const int64_t iy = (uint64_t)i < w ? iy0[t + (uint64_t)i] + oy : -1;
          const int64_t ix = (uint64_t)i < w ? ix0[t + (uint64_t)i] + ox : -1;
          const bool in = (uint64_t)iy < (uint64_t)H && (uint64_t)ix < (uint64_t)W;
          r->off[i] = in ? (int32_t)(iy * W + ix) : -1;
          if (!in || r->n_runs > ACCY__UK_GATHER_RUNS) continue;
          /* The lane's run: the lanes whose offset less their index is
           * this one's (one output row of the panel, at stride 1). */
          const int32_t base = r->off[i] - (int32_t)i;
          unsigned u = 0;
          while (u < r->n_runs && r->base[u] != base) u++;
          if (u == ACCY__UK_GATHER_RUNS) {
            r->n_runs = ACCY__UK_GATHER_RUNS + 1; /* too many: the offsets */
            continue;
          }
          if (u == r->n_runs) {
            r->base[u] = base;
            r->mask[u] = 0;
            r->n_runs++;
          }
          r->mask[u] |= (uint8_t)(1u << i);
        }
      }
      int64_t q = (int64_t)(k0 % (uint64_t)khw);
      for (uint64_t k = 0; k < kcur; k++) {
        tk[k] = &tab[q];
        if (++q == khw) q = 0;
      }
      gather((size_t)kcur, (size_t)w, dst + t * kcur, tp, tk);
    }
    return;
  }
  for (uint64_t t = 0; t < n; t += w) {
    float *d = dst + t * kcur;
    for (uint64_t k = 0; k < kcur; k++, d += w)
      for (uint64_t i = 0; i < w; i++) {
        const int64_t iy = iy0[t + i] + ty[k], ix = ix0[t + i] + tx[k];
        d[i] = (uint64_t)iy < (uint64_t)H && (uint64_t)ix < (uint64_t)W ? tp[k][iy * W + ix]
                                                                        : 0.0f;
      }
  }
}

/* The transposed form's A block provider (accy__gemm_a_block_fn): the
 * positions are the rows, in micro-panels of mr. */
static void conv_im2col_a(const void *vctx, const float *x, uint64_t bi, uint64_t m0,
                          uint64_t rows, uint64_t k0, uint64_t kcur, float *dst) {
  const conv_gemm *cg = vctx;
  im2col_panels(cg, x, bi, m0, rows, k0, kcur, cg->g.uk.mr, dst);
}

/* The transposed form's C consumer (accy__gemm_c_store_fn): tile element
 * (position m0 + i, channel n0 + j) goes to output channel n0 + j's row
 * (the level's transpose kernel, blocks through registers), which then
 * gets the epilogue the microkernel did not apply (the unfused ops' bits,
 * as everywhere). */
static void conv_store_t(const void *vctx, uint64_t bi, uint64_t m0, uint64_t rows, uint64_t n0,
                         uint64_t cols, float *tile, size_t ld, float *c, const float *r) {
  const conv_gemm *cg = vctx;
  const int64_t OHW = cg->OH * cg->OW;
  const uint64_t grp = bi % cg->groups;
  const ptrdiff_t off0 = ((ptrdiff_t)bi * (ptrdiff_t)cg->g.N + (ptrdiff_t)n0) * OHW + (ptrdiff_t)m0;
  cg->transpose((size_t)rows, (size_t)cols, tile, (ptrdiff_t)ld, c + off0, OHW);
  if (!(cg->e.bias || cg->e.residual || cg->e.clamp)) return;
  for (uint64_t j = 0; j < cols; j++) {
    const ptrdiff_t off = off0 + (ptrdiff_t)j * OHW;
    epi_run(&cg->e, c + off, cg->e.residual ? r + off : NULL, (size_t)rows,
            cg->e.bias ? cg->e.bias + grp * cg->g.N + n0 + j : NULL, 0);
  }
}

/* The transposed form's pre-pass: im2col^T as A's micro-panels, once per
 * launch into the launch buffer (bufs[0]), item b * panels + t being panel
 * t of GEMM batch index b, one K block at a time. */
static void conv_pack_a_f32(const accy__kernel *k, void *const *bufs, uint64_t begin,
                            uint64_t end) {
  const conv_gemm *cg = k->params;
  const uint64_t mr = cg->g.uk.mr, M = cg->g.M, K = cg->g.K, panels = (M + mr - 1) / mr;
  float *dst = bufs[0];
  if (cg->pre_kb) {
    /* Pointwise: element (position m, channel k) is channel k's plane at
     * m, so panel t's row k is mr consecutive floats of that plane. Items
     * are blocks of channels, each plane read once from start to end and
     * spread over the panels (panel by panel, every plane was read again
     * for each: 960 x 7 x 7 took 25 us). */
    const uint64_t kblocks = (K + cg->pre_kb - 1) / cg->pre_kb;
    for (uint64_t it = begin; it < end; it++) {
      const uint64_t bi = it / kblocks, k0 = it % kblocks * cg->pre_kb;
      const uint64_t k1 = K - k0 < cg->pre_kb ? K : k0 + cg->pre_kb;
      const float *xb = conv_image(cg, bufs[1], bi);
      float *base = dst + bi * panels * K * mr;
      for (uint64_t kk = k0; kk < k1; kk++) {
        const float *src = xb + kk * (uint64_t)(cg->H * cg->W);
        for (uint64_t t = 0; t < panels; t++) {
          const uint64_t valid = M - t * mr < mr ? M - t * mr : mr;
          panel_row(base + (t * K + kk) * mr, src + t * mr, valid, mr);
        }
      }
    }
    return;
  }
  for (uint64_t it = begin; it < end; it++) {
    const uint64_t bi = it / panels, t = it % panels;
    const uint64_t rows = M - t * mr < mr ? M - t * mr : mr;
    float *panel = dst + it * K * mr;
    for (uint64_t k0 = 0; k0 < K; k0 += ACCY__GEMM_KC) {
      const uint64_t kcur = K - k0 < ACCY__GEMM_KC ? K - k0 : ACCY__GEMM_KC;
      im2col_panels(cg, bufs[1], bi, t * mr, rows, k0, kcur, mr, panel + k0 * mr);
    }
  }
}

/* The padded form's pre-pass: input plane it (image n, channel c: x +
 * it * H * W) zero-padded and split into its nph phase planes, plane it of
 * the launch buffer (bufs[0], nph * Hq * Wq floats each); the last item also
 * zeroes the nr floats after the last plane, which the last tiles read
 * (computed columns past the outputs). */
static void conv_pad_f32(const accy__kernel *k, void *const *bufs, uint64_t begin, uint64_t end) {
  const conv_gemm *cg = k->params;
  const int64_t H = cg->H, W = cg->W, Hq = cg->Hq, Wq = cg->Wq, ph = cg->ph, pw = cg->pw;
  const int64_t sh = cg->sh, sw = cg->sw;
  /* Per phase, the columns x whose input column x sw + px - pw is in
   * [0, W). */
  int64_t span[CONV_PAD_MAX_STRIDE * CONV_PAD_MAX_STRIDE][2];
  for (uint32_t f = 0; f < cg->nph; f++) {
    const int64_t c0 = cg->px_of[f] - pw; /* input column of x = 0 */
    int64_t lo = c0 >= 0 ? 0 : (-c0 + sw - 1) / sw;
    int64_t hi = W - c0 > 0 ? (W - c0 + sw - 1) / sw : 0;
    if (lo > Wq) lo = Wq;
    if (hi > Wq) hi = Wq;
    if (hi < lo) hi = lo;
    span[f][0] = lo;
    span[f][1] = hi;
  }
  float *end_of = NULL;
  for (uint64_t it = begin; it < end; it++) {
    const float *src = (const float *)bufs[1] + (ptrdiff_t)it * H * W;
    float *const base = (float *)bufs[0] + (ptrdiff_t)(it * cg->nph) * Hq * Wq;
    end_of = base + (ptrdiff_t)cg->nph * Hq * Wq;
    /* Row y of every phase before row y + 1 of any: the input rows are read
     * in order, each once per column phase while it is in L1. (Phase by
     * phase, a stride-2 stem read the plane four times, every other row at
     * a time, from memory in a network: MobileNetV2's 3 x 224 x 224
     * pre-pass there 0.107 -> 0.036-0.039 ms, SqueezeNet's 0.086 ->
     * 0.036-0.043, on a Zen 4.) */
    for (int64_t y = 0; y < Hq; y++)
      for (uint32_t f = 0; f < cg->nph; f++) {
        const int64_t c0 = cg->px_of[f] - pw, lo = span[f][0], hi = span[f][1];
        float *dst = base + ((ptrdiff_t)f * Hq + y) * Wq;
        const int64_t iy = y * sh + cg->py_of[f] - ph;
        if (iy < 0 || iy >= H) {
          zero_run(dst, Wq);
          continue;
        }
        zero_run(dst, lo);
        if (hi > lo) {
          const float *row = src + iy * W + (lo * sw + c0); /* input of column lo */
          if (sw == 1)
            copy_run(dst + lo, row, hi - lo);
          else
            gather_run(dst + lo, row, hi - lo, sw);
        }
        zero_run(dst + hi, Wq - hi);
      }
    if (it + 1 == cg->planes) memset(end_of, 0, cg->g.uk.nr * sizeof(float));
  }
}

/* The padded form's C consumer: tile column n0 + j is padded position q =
 * oy * Wq + ox, stored (with the epilogue) only where ox < OW. */
static void conv_store_pad(const void *vctx, uint64_t bi, uint64_t m0, uint64_t rows, uint64_t n0,
                           uint64_t cols, float *tile, size_t ld, float *c, const float *r) {
  const conv_gemm *cg = vctx;
  const int64_t OHW = cg->OH * cg->OW, Wp = cg->Wq, OW = cg->OW;
  const uint64_t grp = bi % cg->groups, M = cg->g.M;
  const bool ep = cg->e.bias || cg->e.residual || cg->e.clamp;
  for (uint64_t i = 0; i < rows; i++) {
    float *src = tile + i * ld;
    const ptrdiff_t base = ((ptrdiff_t)bi * (ptrdiff_t)M + (ptrdiff_t)(m0 + i)) * OHW;
    const float *bias = cg->e.bias ? cg->e.bias + grp * M + m0 + i : NULL;
    for (uint64_t q = n0; q < n0 + cols;) {
      const int64_t oy = (int64_t)q / Wp, ox = (int64_t)q % Wp;
      uint64_t run = (uint64_t)(Wp - ox);
      if (run > n0 + cols - q) run = n0 + cols - q;
      if (ox < OW) {
        const uint64_t valid = run < (uint64_t)(OW - ox) ? run : (uint64_t)(OW - ox);
        const ptrdiff_t off = base + oy * OW + ox;
        /* The epilogue on the run from the workspace (in L1) to the output,
         * which is written once and never read back. */
        if (ep)
          cg->e.run((size_t)valid, c + off, src + (q - n0), bias, 0,
                    cg->e.residual ? r + off : NULL, cg->e.clamp, cg->e.lo, cg->e.hi);
        else
          memcpy(c + off, src + (q - n0), valid * sizeof(float));
      }
      q += run;
    }
  }
}

/* A pointwise convolution's pre-pass: its input (bufs[1]) as B panels
 * into the launch buffer (bufs[0]). */
static void conv_pack_b_f32(const accy__kernel *k, void *const *bufs, uint64_t begin,
                            uint64_t end) {
  const conv_gemm *cg = k->params;
  accy__gemm_pack_b_items(&cg->g, bufs[1], cg->g.b_bs, cg->g.b_rs, 1, bufs[0], begin, end);
}

static void conv_gemm_f32(const accy__kernel *k, void *const *bufs, uint64_t begin, uint64_t end) {
  const conv_gemm *cg = k->params;
  if (cg->g.b_off) {
    /* The padded form: B is the pre-pass's padded planes; the filters are
     * packed A (bufs[1], the input, is passed only as an unused A). The
     * residual is the consumer's (e) or the microkernel's (g). */
    const bool res = cg->e.residual || cg->g.has_residual;
    accy__gemm_run(&cg->g, bufs[1], temp_of(bufs, res), bufs[0], res ? bufs[3] : NULL, begin, end,
                   ws_of(k, bufs, res));
    return;
  }
  /* The transposed form reads the input (bufs[1]) as A, or the pre-pass's
   * panels of it (after the residual), the filters are its packed B; it
   * takes the residual itself (its epilogue, e). */
  if (cg->g.c_store) {
    const float *a = cg->g.a_run_packed ? temp_of(bufs, cg->e.residual) : bufs[1];
    accy__gemm_run(&cg->g, a, NULL, bufs[0], cg->e.residual ? bufs[3] : NULL, begin, end,
                   ws_of(k, bufs, cg->e.residual));
    return;
  }
  const float *b = cg->g.b_run_packed ? temp_of(bufs, cg->g.has_residual) : bufs[1];
  accy__gemm_run(&cg->g, bufs[2], b, bufs[0], cg->g.has_residual ? bufs[3] : NULL, begin, end,
                 ws_of(k, bufs, cg->g.has_residual));
}

/* ---- depthwise convolution (f32, constant finite filters) ------------------ */

/* One input channel per group (C/G == 1): each output channel o is a 2-D
 * convolution of input channel o / (O/G) with one KH x KW filter. An item is
 * one (image, output channel) plane. Where the level has a plane kernel
 * (f32_dwconv_plane), the plane is one call that reads the input in place
 * under lane masks. Otherwise the input plane is copied, zero-padded, into
 * the worker workspace (so the row microkernel needs no bounds checks; the
 * zeros add nothing for finite filters, as in the GEMM form), then each
 * output row is one microkernel call. Both give the same bits. */
typedef struct dwconv {
  accy__uk_f32_dwconv_row_fn row;
  accy__uk_f32_dwconv_plane_fn plane; /* whole planes from the input (NULL: rows) */
  /* Small planes L at a time, one channel per lane (NULL: none); then an
   * item is an image's block of up to L channels. */
  accy__uk_f32_dwconv_lanes_fn lanes;
  int64_t L;           /* channels per call (the level's lanes) */
  int64_t lane_blocks; /* blocks of L channels per image */
  const float *wl;     /* per block, its filters tap-major (L floats a tap) */
  accy__uk_dw_geom g;     /* the plane's geometry */
  int64_t Hp, Wp;        /* padded plane: the rows and columns the outputs read */
  int64_t O, per_group;  /* output channels; outputs per input channel */
  int64_t in_ch;         /* input channels */
  epi e;                 /* fused epilogue, applied to each output row */
  bool has_epi;
} dwconv;

/* The channels item |it| of a lanes kernel covers: image n, channels o ..
 * o + nch (a block of L). */
static void dw_lane_block(const dwconv *d, uint64_t it, int64_t *n, int64_t *o, int64_t *nch) {
  *n = (int64_t)it / d->lane_blocks;
  *o = (int64_t)it % d->lane_blocks * d->L;
  *nch = d->O - *o < d->L ? d->O - *o : d->L;
}

static void dwconv_f32(const accy__kernel *k, void *const *bufs, uint64_t begin, uint64_t end) {
  const dwconv *d = k->params;
  float *out = bufs[0];
  const float *x = bufs[1], *w = bufs[2];
  const float *res = d->e.residual ? bufs[3] : NULL;
  float *pad = bufs[d->e.residual ? 4 : 3];
  if (d->lanes) {
    const int64_t HW = d->g.H * d->g.W, OHW = d->g.OH * d->g.OW, T = d->g.KH * d->g.KW;
    for (uint64_t it = begin; it < end; it++) {
      int64_t n, o, nch;
      dw_lane_block(d, it, &n, &o, &nch);
      const int64_t po = (n * d->O + o) * OHW;
      const accy__uk_row_epilogue ep = {d->e.bias ? d->e.bias + o : NULL, res ? res + po : NULL,
                                        d->e.clamp, d->e.lo, d->e.hi};
      d->lanes(&d->g, x + (n * d->in_ch + o) * HW, d->wl + o * T, out + po,
               d->has_epi ? &ep : NULL, (size_t)nch);
    }
    return;
  }
  for (uint64_t it = begin; it < end; it++) {
    const int64_t n = (int64_t)it / d->O, o = (int64_t)it % d->O, c = o / d->per_group;
    const float *plane = x + (n * d->in_ch + c) * d->g.H * d->g.W;
    if (d->plane) {
      const int64_t po = (n * d->O + o) * d->g.OH * d->g.OW;
      const accy__uk_row_epilogue ep = {d->e.bias ? d->e.bias + o : NULL, res ? res + po : NULL,
                                        d->e.clamp, d->e.lo, d->e.hi};
      d->plane(&d->g, plane, w + o * d->g.KH * d->g.KW, out + po, d->has_epi ? &ep : NULL);
      continue;
    }
    for (int64_t r = 0; r < d->Hp; r++) {
      float *pr = pad + r * d->Wp;
      const int64_t iy = r - d->g.ph;
      if (iy < 0 || iy >= d->g.H) {
        memset(pr, 0, (size_t)d->Wp * sizeof(float));
        continue;
      }
      /* zeros, the row's inputs that the plane's columns reach, zeros */
      const float *src = plane + iy * d->g.W;
      int64_t lo = d->g.pw < d->Wp ? d->g.pw : d->Wp;
      if (lo < 0) lo = 0; /* a negative pad crops the row */
      int64_t hi = d->g.pw + d->g.W < d->Wp ? d->g.pw + d->g.W : d->Wp;
      if (hi < lo) hi = lo;
      for (int64_t q = 0; q < lo; q++) pr[q] = 0.0f;
      if (hi > lo) memcpy(pr + lo, src + (lo - d->g.pw), (size_t)(hi - lo) * sizeof(float));
      for (int64_t q = hi; q < d->Wp; q++) pr[q] = 0.0f;
    }
    const float *wo = w + o * d->g.KH * d->g.KW;
    float *dst = out + (n * d->O + o) * d->g.OH * d->g.OW;
    for (int64_t oy = 0; oy < d->g.OH; oy++) {
      /* The epilogue runs on each vector before it is stored. */
      accy__uk_row_epilogue ep = {d->e.bias ? d->e.bias + o : NULL,
                                  res ? res + (n * d->O + o) * d->g.OH * d->g.OW + oy * d->g.OW : NULL,
                                  d->e.clamp, d->e.lo, d->e.hi};
      d->row((size_t)d->g.OW, pad + oy * d->g.sh * d->Wp, d->g.dh * d->Wp, (size_t)d->g.KH, (size_t)d->g.KW,
             d->g.dw, (size_t)d->g.sw, wo, dst + oy * d->g.OW, d->has_epi ? &ep : NULL);
    }
  }
}

static accy_status prepare_dwconv(const conv_gemm *geo, const float *w, int64_t N, int64_t O,
                                  int64_t in_ch, const epi *e, uint32_t node, accy__arena *arena,
                                  accy__kernel *k) {
  dwconv *d = accy__arena_alloc(arena, sizeof *d, 64);
  if (!d) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "kernel parameters");
  d->row = accy__uk_get()->f32_dwconv_row;
  d->g = (accy__uk_dw_geom){geo->H,  geo->W,  geo->KH, geo->KW, geo->sh, geo->sw,
                            geo->ph, geo->pw, geo->dh, geo->dw, geo->OH, geo->OW};
  d->Hp = d->g.OH ? (d->g.OH - 1) * d->g.sh + (d->g.KH - 1) * d->g.dh + 1 : 0;
  /* One column more than the outputs read: the stride-2 row kernel loads
   * pairs, and reads one element past the last it uses. */
  d->Wp = d->g.OW ? (d->g.OW - 1) * d->g.sw + (d->g.KW - 1) * d->g.dw + 2 : 0;
  d->O = O;
  d->per_group = O / in_ch;
  d->in_ch = in_ch;
  d->e = *e;
  d->has_epi = e->bias || e->residual || e->clamp;
  /* Whole planes where the level has the kernel (strides 1 and 2 along
   * rows): no padded copy, and one call per plane instead of per row.
   * MobileNetV2 at 1 thread (perf_prof, fastest of 50), the AVX2 kernel:
   * 14 x 14 x 576 0.167 -> 0.086 ms at avx2 (0.136 -> 0.086 at avx512),
   * 7 x 7 x 960 0.105 -> 0.054, 56 x 56 x 144 0.275 -> 0.255. */
  const bool fits = d->g.W < (INT64_C(1) << 30) && d->g.OW < (INT64_C(1) << 30); /* lane maths */
  d->plane = fits && (d->g.sw == 1 || d->g.sw == 2) ? accy__uk_get()->f32_dwconv_plane : NULL;
  /* Small planes (at most 64 outputs: 7 x 7) at unit stride a vector's
   * width of channels at a time, one per lane, where the level has the
   * kernel and each output channel reads its own input channel:
   * MobileNetV2 at 1 thread on a Zen 4 (perf_prof), 7 x 7 x 960 0.049 ->
   * 0.035 ms at AVX-512 (sixteen channels), 0.063 -> 0.047 at AVX2
   * (eight). At stride 2 only the geometry the kernels run with constant
   * loops (accy__uk_dw_lanes_fixed: 14 x 14 -> 7 x 7 x 576 0.034 -> 0.019
   * ms at AVX-512); other stride-2 planes were no faster at AVX-512 (0.038
   * -> 0.037 before the constant loops) and slower at AVX2 (0.044 ->
   * 0.049), and 14 x 14 planes at unit stride ran slower (0.032 -> 0.047),
   * where the plane kernel's rows are one full vector. The filters are
   * packed at compile time, tap-major per block. */
  const int64_t taps = d->g.KH * d->g.KW;
  /* The padded rows and columns the outputs read: Hp by Wp - 1 (Wp has the
   * row kernel's extra column). */
  const bool unit = d->g.sh == 1 && d->g.sw == 1;
  d->lanes = d->plane && d->per_group == 1 && (unit || accy__uk_dw_lanes_fixed(&d->g)) &&
                     d->g.ph >= 0 && d->g.pw >= 0 && taps >= 1 && d->g.OH * d->g.OW >= 1 &&
                     d->g.OH * d->g.OW <= ACCY__UK_DW_LANES_MAX_OUT &&
                     d->Hp * (d->Wp - 1) <= ACCY__UK_DW_LANES_MAX_IN
                 ? accy__uk_get()->f32_dwconv_lanes
                 : NULL;
  const int64_t L = d->lanes ? (int64_t)accy__uk_get()->f32_dwconv_lanes_n : 1;
  d->L = L;
  d->lane_blocks = (O + L - 1) / L;
  if (d->lanes) {
    float *wl = accy__arena_alloc(arena, (size_t)(d->lane_blocks * taps * L) * sizeof(float), 64);
    if (!wl) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "packed depthwise filters");
    for (int64_t b = 0; b < d->lane_blocks; b++)
      for (int64_t t = 0; t < taps; t++)
        for (int64_t c = 0; c < L; c++)
          wl[(b * taps + t) * L + c] = b * L + c < O ? w[(b * L + c) * taps + t] : 0.0f;
    d->wl = wl;
    accy__kernel_set_how(k, arena, "depthwise planes, %lld channels per vector (%s)", (long long)L,
                         accy__isa_name(accy__uk_get()->isa));
  } else {
    accy__kernel_set_how(k, arena, "depthwise %s (%s)", d->plane ? "planes" : "rows",
                         accy__isa_name(accy__uk_get()->isa));
  }
  k->run = dwconv_f32;
  k->params = d;
  k->n_items = d->lanes ? (uint64_t)(N * d->lane_blocks) : (uint64_t)(N * O);
  k->worker_bytes = d->plane ? 0 : ((uint64_t)(d->Hp * d->Wp) + 16) * sizeof(float);
  uint64_t cost = (uint64_t)(d->g.OH * d->g.OW * d->g.KH * d->g.KW) * (uint64_t)L;
  k->item_cost = cost ? cost : 1;
  return ACCY_STATUS_OK;
}

/* ---- Winograd F(2x2, 3x3) and F(4x4, 3x3) (f32, constant finite 3 x 3
 * filters, stride 1) --- */

/* A 3 x 3 convolution at unit stride and dilation computes each 2 x 2 block
 * of outputs (a tile) from the 4 x 4 input patch under it with 16
 * multiplies per channel pair instead of 36: with the transforms
 *   U = G g G^T (the filter, 4 x 4, at compile time),
 *   V = B^T d B (the patch),  Y = A^T (sum over input channels of U . V) A,
 *   G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1],
 *   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1],  A^T = [1 1 1 0; 0 1 -1 -1],
 * the sum over input channels of each of the 16 products is a GEMM
 * (output channels x input channels times input channels x tiles), 2.25x
 * fewer multiply-adds than the direct sum. Each transform is a fixed
 * sequence of additions (and exact halvings), so the bits depend on the
 * shapes and the level only; the error is bounded as docs/ops.md says (not
 * the direct sum's bound: the transforms add terms before the products).
 * Only above the portable level, which keeps the documented order.
 *
 * F(4x4, 3x3) is the same with 4 x 4 blocks of outputs from 6 x 6 patches:
 * 36 products per channel pair for 16 outputs (4x fewer multiply-adds than
 * the direct sum, 1.78x fewer than F(2x2, 3x3)), the matrices
 *   G = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6;
 *        1/24 -1/12 1/6; 0 0 1]  (U in double, rounded once),
 *   B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0;
 *          0 2 -1 -2 1 0; 0 4 0 -5 0 1],
 *   A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1],
 * each transform a fixed sequence of additions and fused multiply-adds by
 * exact constants (uk.h); larger coefficients, so a looser bound
 * (docs/ops.md). wino_tile picks the tile size.
 *
 * An item is one image, one block of nt tiles (row-major over the image's
 * tiles) and one block of mb output channels: it transforms the block's
 * patches of every input channel into its workspace (or takes them from
 * the pre-pass) as T (16 or 36) matrices of C rows of nt tiles, runs the T
 * GEMMs against the filters' packed U into T blocks of mb x nt (with the
 * tiles as rows, into nt x mb, then transposed), then transforms those
 * into the outputs and applies the epilogue. */
#define WINO_NT_MAX 64u   /* tiles per block, at most */
#define WINO_MB_MAX 128u  /* output channels per block, at most */
#define WINO_C_MAX 1024   /* input channels, at most (the workspace) */

typedef struct conv_wino {
  accy__gemm g;          /* batch T (one per product), K = C; M, N set per item */
  /* Per block of output channels, T products of packed panels: A panels
   * of C x mr, or with the tiles as rows U^T's B panels of C x nr. */
  const float *U;
  int64_t tile;          /* outputs per tile side: 2 (F(2x2, 3x3)) or 4 */
  uint64_t T;            /* products: (tile + 2)^2 */
  int64_t C, O, H, W, OH, OW, ph, pw;
  int64_t TW;            /* tiles per row of them */
  uint64_t P;            /* tiles per image */
  uint64_t nt, mb;       /* tiles and channels per block (nt a multiple of nr) */
  uint64_t vs, ms;       /* floats between the products' blocks of v and m */
  /* Transposed: the GEMMs' rows are the tiles and their columns the output
   * channels (mb of them a block, a multiple of nr; U^T packed as B
   * panels), into mt (mts floats a product, rows of mb), transposed into m
   * before the output transform: for few tiles (7 x 7 outputs: 16), which
   * the other way fill a fraction of a panel's columns. */
  bool trans;
  uint64_t mts;
  /* The patches transformed once per launch by a pre-pass (with few blocks
   * of tiles), so that blocks of channels do not each do it again. */
  bool pre;
  uint64_t n_tb, n_cb;   /* blocks of tiles and of channels per image */
  /* Blocks of the launch's tiles (image n's tile j is tile n P + j of the
   * launch): per image (N n_tb of them), or with |xi| cut from all the
   * images' tiles in a row (a block may then end in one image and go on in
   * the next), where an image has too few tiles to use each transformed
   * filter enough or pads the blocks more than all of them do (wino_xi). */
  bool xi;
  uint64_t nall, n_blk;  /* the launch's tiles (N P) and blocks of them */
  uint64_t bt;           /* tiles per block (nt, or whole rows of tiles: wino_block_tiles) */
  accy__uk_f32_wino_in_fn win;
  accy__uk_f32_wino_out_fn wout;
  accy__uk_f32_wino4_in_fn win4;   /* tile 4: the F(4x4, 3x3) kernels */
  accy__uk_f32_wino4_out_fn wout4;
  accy__uk_f32_wino4_out_pool_fn wpool4;
  accy__uk_f32_transpose_fn transpose; /* trans: the products into m's layout */
  /* With a fused 2 x 2 max pool (e.pool): the output is the pooled plane,
   * one value per tile, through wpool. */
  accy__uk_f32_wino_out_pool_fn wpool;
  epi e;
  bool has_epi;
} conv_wino;

/* Patch rows of the tiles of one output-tile row (f32_wino_in's or
 * f32_wino4_in's rows): rows[r][u] is input (t ty - ph + r, t tx0 - pw + u)
 * of plane |xc| (t the tile), zero outside it, for u < t n + 2, and zero up
 * to the kernel's read bound. */
#define WINO_ROW_FLOATS (4 * WINO_NT_MAX + 24)
/* Most floats of a block's strip of padded input rows (wino_in_block). */
#define WINO_STRIP_FLOATS 6144

/* The columns [lo, hi) of a row of len floats from input column x0 that
 * lie inside the plane's W columns. */
static void wino_span(const conv_wino *cw, int64_t x0, int64_t len, int64_t *lo, int64_t *hi) {
  *lo = x0 < 0 ? -x0 : 0;
  *hi = cw->W - x0 < len ? cw->W - x0 : len;
  if (*lo > len) *lo = len;
  if (*hi < *lo) *hi = *lo;
}

/* dst[u] = input (iy, x0 + u) of plane |xc| for u < len, zero outside the
 * plane. */
static void wino_pad_row(const conv_wino *cw, const float *xc, int64_t iy, int64_t x0,
                         int64_t len, float *dst) {
  int64_t lo = 0, hi = 0;
  if (iy >= 0 && iy < cw->H) wino_span(cw, x0, len, &lo, &hi);
  zero_run(dst, lo);
  copy_run(dst + lo, xc + iy * cw->W + x0 + lo, hi - lo);
  zero_run(dst + hi, len - hi);
}

static void wino_rows(const conv_wino *cw, const float *xc, int64_t ty, int64_t tx0, int64_t n,
                      float rows[6][WINO_ROW_FLOATS]) {
  /* Past t n + 2 floats the kernel's reads only feed values past n: the
   * input there (or zero) does as well as zeros. */
  const int64_t t = cw->tile;
  const int64_t bound = t * ((n + 7) / 8 * 8) + (t == 2 ? 18 : 8);
  for (int64_t r = 0; r < t + 2; r++)
    wino_pad_row(cw, xc, t * ty - cw->ph + r, t * tx0 - cw->pw, bound, rows[r]);
}

/* The input transform of one run of n tiles whose patch rows start at
 * rp[0 .. tile + 1]. */
static inline void wino_in_run(const conv_wino *cw, size_t n, const float *const rp[6], float *v) {
  if (cw->tile == 2)
    cw->win(n, rp, v, (size_t)cw->vs);
  else
    cw->win4(n, rp, v, (size_t)cw->vs);
}

/* B^T d B of input channels c0 .. c1 of image xn's tiles j0 .. j0 + cols
 * (a block, or its part in one image): product k's row c (the GEMM's B
 * rows, or A's columns with the tiles as rows) at v + k vs + c (nt + 8),
 * the columns from cols to zero_to zero (computed, never stored). */
static void wino_in_block(const conv_wino *cw, const float *xn, uint64_t j0, uint64_t cols,
                          uint64_t c0, uint64_t c1, float *v, uint64_t zero_to) {
  const int64_t TW = cw->TW, HW = cw->H * cw->W, t = cw->tile;
  const uint64_t nt = cw->nt, ntv = nt + 8, vs = cw->vs;
  /* The block's input rows, zero-padded, once per channel (a strip of
   * nrows x wb: column u is input column u - pw, wide enough for the
   * kernel's reads past a run); the patch rows of each tile row are then
   * pointers into it. Where the strip would not fit, each run's rows are
   * built alone (wino_rows). */
  /* (The kernels read up to t round_up(n, 8) + 18 (tile 2) or + 8 (tile
   * 4) floats from a run's first patch column, t tx0 of the strip.) */
  const int64_t ty_a = (int64_t)j0 / TW, ty_b = (int64_t)(j0 + cols - 1) / TW;
  const int64_t nrows = t * (ty_b - ty_a) + t + 2, wb = t * TW + (t == 2 ? 34 : 40);
  float strip[WINO_STRIP_FLOATS];
  const bool use_strip = nrows * wb <= (int64_t)WINO_STRIP_FLOATS;
  float rows[6][WINO_ROW_FLOATS];
  /* The strip's zeros are the same for every channel: the strip is zeroed
   * once; then each channel copies only its rows' spans inside the plane
   * (rows r_lo .. r_hi, columns lo .. hi of the strip). (Three library
   * calls a row per channel took 40% of F(4x4, 3x3)'s transform pre-pass
   * at 64 x 56 x 56.) */
  const int64_t y0 = t * ty_a - cw->ph; /* input row of strip row 0 */
  int64_t r_lo = 0, r_hi = 0, lo = 0, hi = 0;
  if (use_strip) {
    memset(strip, 0, (size_t)(nrows * wb) * sizeof(float));
    r_lo = y0 < 0 ? -y0 : 0;
    r_hi = cw->H - y0 < nrows ? cw->H - y0 : nrows;
    if (r_lo > nrows) r_lo = nrows;
    if (r_hi < r_lo) r_hi = r_lo;
    wino_span(cw, -cw->pw, wb, &lo, &hi);
  }
  for (uint64_t c = c0; c < c1; c++) {
    const float *xc = xn + (int64_t)c * HW;
    if (use_strip)
      for (int64_t r = r_lo; r < r_hi; r++)
        copy_run(strip + r * wb + lo, xc + (y0 + r) * cw->W + (lo - cw->pw), hi - lo);
    for (uint64_t jl = 0; jl < cols;) {
      const int64_t ty = (int64_t)(j0 + jl) / TW, tx0 = (int64_t)(j0 + jl) % TW;
      int64_t seg = TW - tx0;
      if (seg > (int64_t)(cols - jl)) seg = (int64_t)(cols - jl);
      const float *rp[6];
      if (use_strip) {
        const float *base = strip + t * (ty - ty_a) * wb + t * tx0;
        for (int64_t r = 0; r < t + 2; r++) rp[r] = base + r * wb;
      } else {
        wino_rows(cw, xc, ty, tx0, seg, rows);
        for (int64_t r = 0; r < t + 2; r++) rp[r] = rows[r];
      }
      wino_in_run(cw, (size_t)seg, rp, v + c * ntv + jl);
      jl += (uint64_t)seg;
    }
    if (cols < zero_to)
      for (uint64_t q = 0; q < cw->T; q++)
        memset(v + q * vs + c * ntv + cols, 0, (size_t)(zero_to - cols) * sizeof(float));
  }
}

/* Channels per item of the transform pre-pass. */
#define WINO_PRE_CH 32u

/* Block |b| of the launch's tiles: its first tile *g0 (n P + j: image n's
 * tile j) and its tiles *cols. */
static void wino_block_of(const conv_wino *cw, uint64_t b, uint64_t *g0, uint64_t *cols) {
  if (cw->xi) {
    *g0 = b * cw->bt;
    *cols = cw->nall - *g0 < cw->bt ? cw->nall - *g0 : cw->bt;
  } else {
    const uint64_t tb = b % cw->n_tb, j0 = tb * cw->bt;
    *g0 = b / cw->n_tb * cw->P + j0;
    *cols = cw->P - j0 < cw->bt ? cw->P - j0 : cw->bt;
  }
}

/* The block conv_wino_f32's item |it| computes: block b of the launch's
 * tiles (tiles g0 .. g0 + cols, wino_block_of), output channels o0 .. o0 +
 * nrow. */
typedef struct wino_item {
  uint64_t b, g0, cols, o0, nrow;
} wino_item;

static wino_item wino_item_of(const conv_wino *cw, uint64_t it) {
  wino_item w;
  const uint64_t cb = it % cw->n_cb;
  w.b = it / cw->n_cb;
  wino_block_of(cw, w.b, &w.g0, &w.cols);
  w.o0 = cb * cw->mb;
  w.nrow = (uint64_t)cw->O - w.o0 < cw->mb ? (uint64_t)cw->O - w.o0 : cw->mb;
  return w;
}

/* Transforms the patches of channels c0 .. c1 of the launch's tiles g0 ..
 * g0 + cols (one block) into v, image by image (wino_in_block), the block's
 * columns past |cols| zero. */
static void wino_in_tiles(const conv_wino *cw, const float *x, uint64_t g0, uint64_t cols,
                          uint64_t c0, uint64_t c1, float *v) {
  const int64_t HW = cw->H * cw->W;
  for (uint64_t s = 0; s < cols;) {
    const uint64_t n = (g0 + s) / cw->P, j = (g0 + s) % cw->P;
    const uint64_t seg = cw->P - j < cols - s ? cw->P - j : cols - s;
    wino_in_block(cw, x + (int64_t)n * cw->C * HW, j, seg, c0, c1, v + s,
                  s + seg == cols ? cw->nt - s : seg);
    s += seg;
  }
}

/* The transform pre-pass (with few blocks of tiles, several items per
 * block read the same transformed patches): item blk * chunks + q
 * transforms channels q WINO_PRE_CH .. of block blk of the launch's tiles
 * (wino_block_of) into that block's T vs floats of the launch buffer
 * (bufs[0]). */
static void conv_wino_pre_f32(const accy__kernel *k, void *const *bufs, uint64_t begin,
                              uint64_t end) {
  const conv_wino *cw = k->params;
  const uint64_t C = (uint64_t)cw->C, chunks = (C + WINO_PRE_CH - 1) / WINO_PRE_CH;
  for (uint64_t it = begin; it < end; it++) {
    const uint64_t q = it % chunks, blk = it / chunks;
    uint64_t g0, cols;
    wino_block_of(cw, blk, &g0, &cols);
    const uint64_t c0 = q * WINO_PRE_CH, c1 = c0 + WINO_PRE_CH < C ? c0 + WINO_PRE_CH : C;
    wino_in_tiles(cw, (const float *)bufs[1], g0, cols, c0, c1,
                  (float *)bufs[0] + blk * cw->T * cw->vs);
  }
}

static void conv_wino_f32(const accy__kernel *k, void *const *bufs, uint64_t begin,
                          uint64_t end) {
  const conv_wino *cw = k->params;
  float *out = bufs[0];
  const float *x = bufs[1];
  const float *res = cw->e.residual ? bufs[3] : NULL;
  float *ws = ws_of(k, bufs, cw->e.residual);
  const float *pre = cw->pre ? temp_of(bufs, cw->e.residual) : NULL;
  const uint64_t C = (uint64_t)cw->C, nt = cw->nt, mb = cw->mb, T = cw->T;
  const int64_t TW = cw->TW, OH = cw->OH, OW = cw->OW, t = cw->tile;
  const uint64_t vs = cw->vs, ms = cw->ms, P = cw->P;
  /* The workspace: v (unless the pre-pass made it), m, and with the tiles
   * as rows mt. */
  float *m = pre ? ws : ws + T * vs;
  const accy__uk_f32_wino_out_fn wout = cw->wout;
  for (uint64_t it = begin; it < end; it++) {
    const wino_item wi = wino_item_of(cw, it);
    const uint64_t g0 = wi.g0, cols = wi.cols, o0 = wi.o0, nrow = wi.nrow;
    const float *v;
    if (pre) {
      v = pre + wi.b * T * vs;
    } else {
      wino_in_tiles(cw, x, g0, cols, 0, C, ws);
      v = ws;
    }
    accy__gemm g = cw->g;
    if (!cw->trans) {
      g.M = nrow;
      g.mb = g.mb_sub = nrow;
      g.a_packed = cw->U + o0 * T * C; /* the blocks before it are whole panels */
      accy__gemm_run(&g, v, v, m, NULL, 0, T, NULL); /* A packed: v is an unused A */
    } else {
      float *mt = m + T * ms + 8;
      g.M = cols;
      g.mb = g.mb_sub = cols;
      g.N = nrow;
      g.b_packed = cw->U + o0 * T * C;
      accy__gemm_run(&g, v, NULL, mt, NULL, 0, T, NULL);
      /* mt (tile j, channel o at mt[k mts + j mb + o]) into m's layout
       * (the level's transpose kernel). */
      for (uint64_t q = 0; q < T; q++)
        cw->transpose((size_t)cols, (size_t)nrow, mt + (uint64_t)q * cw->mts, (ptrdiff_t)mb,
                      m + (uint64_t)q * ms, (ptrdiff_t)nt);
    }
    if (cw->e.pool) {
      /* A^T M A with the epilogue, pooled: tile (ty, tx) is pooled output
       * (ty, tx) of a plane of PH = OH / 2 x PW = OW / 2 (both even), or
       * with tiles of 4 its 2 x 2 block at (2 ty, 2 tx) (the last row or
       * column of blocks cut at PH and PW). */
      const int64_t PH = OH / 2, PW = OW / 2, PHW = PH * PW;
      for (uint64_t i = 0; i < nrow; i++) {
        const int64_t o = (int64_t)(o0 + i);
        const accy__uk_row_epilogue ep = {cw->e.bias ? cw->e.bias + o : NULL, NULL, cw->e.clamp,
                                          cw->e.lo, cw->e.hi};
        for (uint64_t jl = 0; jl < cols;) {
          /* (a row of tiles never spans two images: P is whole rows) */
          const uint64_t n = (g0 + jl) / P, jt = (g0 + jl) % P;
          float *outn = out + (int64_t)n * cw->O * PHW;
          const int64_t ty = (int64_t)jt / TW, tx0 = (int64_t)jt % TW;
          int64_t seg = TW - tx0;
          if (seg > (int64_t)(cols - jl)) seg = (int64_t)(cols - jl);
          if (t == 2) {
            cw->wpool((size_t)seg, m + i * nt + jl, (size_t)ms, outn + o * PHW + ty * PW + tx0,
                      cw->has_epi ? &ep : NULL);
          } else {
            const int64_t px1 = 2 * (tx0 + seg) < PW ? 2 * (tx0 + seg) : PW;
            float *p0 = outn + o * PHW + 2 * ty * PW + 2 * tx0;
            cw->wpool4((size_t)seg, m + i * nt + jl, (size_t)ms, p0,
                       2 * ty + 1 < PH ? p0 + PW : NULL, (size_t)(px1 - 2 * tx0),
                       cw->has_epi ? &ep : NULL);
          }
          jl += (uint64_t)seg;
        }
      }
      continue;
    }
    /* A^T M A into the outputs, then the epilogue on each output row's run. */
    for (uint64_t i = 0; i < nrow; i++) {
      const int64_t o = (int64_t)(o0 + i);
      for (uint64_t jl = 0; jl < cols;) {
        const uint64_t n = (g0 + jl) / P, jt = (g0 + jl) % P;
        float *plane = out + ((int64_t)n * cw->O + o) * OH * OW;
        const float *resn = res ? res + (int64_t)n * cw->O * OH * OW : NULL;
        const int64_t ty = (int64_t)jt / TW, tx0 = (int64_t)jt % TW;
        int64_t seg = TW - tx0;
        if (seg > (int64_t)(cols - jl)) seg = (int64_t)(cols - jl);
        const int64_t ox0 = t * tx0, ox1 = t * (tx0 + seg) < OW ? t * (tx0 + seg) : OW;
        const int64_t oy = t * ty;
        if (t == 4) {
          /* Rows oy .. oy + 3 (those inside the plane), each with its
           * epilogue. */
          float *o4[4];
          accy__uk_row_epilogue e4[4];
          const accy__uk_row_epilogue *ep4[4];
          for (int j = 0; j < 4; j++) {
            o4[j] = oy + j < OH ? plane + (oy + j) * OW + ox0 : NULL;
            e4[j] = (accy__uk_row_epilogue){
                cw->e.bias ? cw->e.bias + o : NULL,
                resn && o4[j] ? resn + o * OH * OW + (oy + j) * OW + ox0 : NULL, cw->e.clamp,
                cw->e.lo, cw->e.hi};
            ep4[j] = &e4[j];
          }
          cw->wout4((size_t)seg, m + i * nt + jl, (size_t)ms, o4, (size_t)(ox1 - ox0),
                    cw->has_epi ? ep4 : NULL);
          jl += (uint64_t)seg;
          continue;
        }
        float *d0 = plane + oy * OW + ox0, *d1 = oy + 1 < OH ? d0 + OW : NULL;
        if (cw->has_epi) {
          /* The epilogue in the transform's registers, before the store. */
          const float *r0 = resn ? resn + o * OH * OW + oy * OW + ox0 : NULL;
          const accy__uk_row_epilogue e0 = {cw->e.bias ? cw->e.bias + o : NULL, r0, cw->e.clamp,
                                            cw->e.lo, cw->e.hi};
          accy__uk_row_epilogue e1 = e0;
          if (r0) e1.res = r0 + OW;
          wout((size_t)seg, m + i * nt + jl, (size_t)ms, d0, d1, (size_t)(ox1 - ox0), &e0, &e1);
        } else {
          wout((size_t)seg, m + i * nt + jl, (size_t)ms, d0, d1, (size_t)(ox1 - ox0), NULL, NULL);
        }
        jl += (uint64_t)seg;
      }
    }
  }
}

/* Whether the convolution of |cg| (one group, f32, constant finite
 * filters) can run as Winograd F(2x2, 3x3). */
static bool wino_applies(const conv_gemm *cg, int64_t O) {
  /* The transformed filters (16 per channel pair) within the packing limit,
   * else another form (they never fail a compile the other forms pass). */
  return cg->groups == 1 && cg->KH == 3 && cg->KW == 3 && cg->sh == 1 && cg->sw == 1 &&
         cg->dh == 1 && cg->dw == 1 && cg->OH >= 1 && cg->OW >= 1 && cg->C >= 1 &&
         cg->C <= WINO_C_MAX && O >= 1 && (uint64_t)O <= DOT_PACK_MAX_FLOATS / 16 / (uint64_t)cg->C &&
         accy__uk_get()->isa != ACCY__ISA_PORTABLE;
}

/* Tiles per block: a multiple of nr up to WINO_NT_MAX, the largest whose
 * blocks pad the image's tiles at most 3% more than the least padding one
 * (small blocks cost a GEMM call per product for little work: at 8
 * lanes, 16-tile blocks ran 10% slower than 64-tile ones at 56 x 56). */
static uint64_t wino_nt(uint64_t P, uint64_t nr) {
  uint64_t least = UINT64_MAX;
  for (uint64_t nt = nr; nt <= WINO_NT_MAX; nt += nr) {
    const uint64_t cols = (P + nt - 1) / nt * nt;
    if (cols < least) least = cols;
  }
  uint64_t best = nr;
  for (uint64_t nt = nr; nt <= WINO_NT_MAX; nt += nr)
    if ((P + nt - 1) / nt * nt * 100 <= least * 103) best = nt;
  return best;
}

/* Tiles per block with the tiles as rows: up to WINO_NT_MAX, the blocks
 * as even as whole micro-panels of mr allow. */
static uint64_t wino_nt_t(uint64_t P, uint64_t mr) {
  const uint64_t blocks = (P + WINO_NT_MAX - 1) / WINO_NT_MAX, per = (P + blocks - 1) / blocks;
  const uint64_t nt = (per + mr - 1) / mr * mr;
  return nt < WINO_NT_MAX ? nt : per;
}

/* The GEMM extent P tiles pad to per output channel: as columns, in
 * blocks of wino_nt (whole panels of nr); as rows, in blocks of wino_nt_t
 * (whole micro-panels of mr). */
static void wino_padded(uint64_t P, uint64_t mr, uint64_t nr, uint64_t *as_cols,
                        uint64_t *as_rows) {
  const uint64_t nt = wino_nt(P, nr), ntt = wino_nt_t(P, mr);
  *as_cols = (P + nt - 1) / nt * nt;
  *as_rows = (P + ntt - 1) / ntt * ((ntt + mr - 1) / mr * mr);
}

/* Whether the GEMMs take the tiles as rows: ACCY_CONV_FORM=4 asks for it
 * (3: never), else where that pads them at least 30% less, or 10% with at
 * least 128 input channels (the transpose of the sums costs about what a
 * GEMM of 16 input channels does): 7 x 7 outputs (16 tiles, half of a
 * 32-column panel: 512 -> 512 channels 3.49 -> 1.84 ms) do, 14 x 14 (49
 * tiles, 12% less) with 256 channels (1.44 -> 1.36 ms), not with 64 (0.43
 * -> 0.62 ms). */
static bool wino_trans(uint64_t P, uint64_t O, uint64_t C, uint64_t mr, uint64_t nr) {
  const char *f = getenv("ACCY_CONV_FORM");
  if (f && (f[0] == '3' || f[0] == '4') && !f[1]) return f[0] == '4';
  uint64_t as_cols, as_rows;
  wino_padded(P, mr, nr, &as_cols, &as_rows);
  const uint64_t cols = as_cols * ((O + mr - 1) / mr * mr);
  const uint64_t rows = as_rows * ((O + nr - 1) / nr * nr);
  return rows * 100 < cols * 90 && (C >= 128 || rows * 100 < cols * 70);
}

/* Whether Winograd's transformed filters for tiles of |t| x |t| outputs
 * are used often enough. Each of the (t + 2)^2 C O transformed values an
 * item reads serves the tiles of its block, and the blocks are cut from
 * one image's P_t tiles (or, wino_xi, from all N images' N P_t); where the
 * filters are more than a quarter of a MiB they come from outside the L2
 * for every item (and a network's filters together outgrow the L3), so
 * with blocks cut from fewer than WINO_MIN_REUSE tiles the GEMMs wait on
 * memory instead of the FMAs. Shape only (never the CPU's caches), so
 * every machine at a level picks the same form. On the Zen 5, in ResNet-18
 * (one thread): 512 -> 512 at 7 x 7 as F(2x2, 3x3) with blocks of one
 * image's 16 tiles (16.8 MB of filters) 2.6-2.8 ms at batch 1 and 25-28 ms
 * at batch 8, against 1.32 and 12.5 in the direct form, and 5.2-5.7 ms at
 * batch 8 in blocks of 64 tiles across the images; 256 -> 256 at 14 x 14
 * as F(4x4, 3x3) (16 tiles, 9.4 MB) 1.46-1.56 ms at batch 1 against
 * 1.01-1.07 as F(2x2, 3x3) (49 tiles, 4.2 MB). */
#define WINO_MIN_REUSE 32u
#define WINO_SMALL_FILTERS (256u * 1024u)

/* The GEMM extent P tiles pad to per output channel, the smaller of
 * wino_padded's two ways. */
static uint64_t wino_padded_least(uint64_t P) {
  const uint64_t mr = accy__uk_get()->f32_gemm.mr, nr = accy__uk_get()->f32_gemm.nr;
  uint64_t cols, rows;
  wino_padded(P, mr, nr, &cols, &rows);
  return rows < cols ? rows : cols;
}

/* Tiles of |t| x |t| outputs per image. */
static uint64_t wino_tiles(const conv_gemm *cg, int64_t t) {
  return (uint64_t)(((cg->OH + t - 1) / t) * ((cg->OW + t - 1) / t));
}

/* Whether the blocks of tiles run on across the N images (conv_wino.xi):
 * where an image has fewer than WINO_MIN_REUSE tiles of |t|, so that each
 * block holds the tiles of several images and each transformed filter an
 * item reads serves all of them (ResNet-18 at batch 8: 128 tiles of 2 x 2
 * at 7 x 7, in two blocks of 64); and where the images' tiles together pad
 * the blocks at least 5% less than each image's alone (its 28 x 28 layers:
 * 8 x 49 tiles in blocks of 32 columns, 392 -> 416, against 8 x 56 rows;
 * 56 x 56: 8 x 196 in 49 panels of 32, against 8 x 224: 4.16-5.17 ->
 * 3.92-4.36 and 5.25-6.11 -> 4.92-5.68 ms a layer on the Zen 5). */
static bool wino_xi(const conv_gemm *cg, int64_t N, int64_t t) {
  if (N <= 1) return false;
  const uint64_t P = wino_tiles(cg, t);
  if (P < WINO_MIN_REUSE) return true;
  return wino_padded_least((uint64_t)N * P) * 100 < wino_padded_least(P) * (uint64_t)N * 95;
}

/* The tiles the blocks are cut from: one image's, or all N images' (xi). */
static uint64_t wino_seq(const conv_gemm *cg, int64_t N, int64_t t) {
  return wino_xi(cg, N, t) ? (uint64_t)N * wino_tiles(cg, t) : wino_tiles(cg, t);
}

static bool wino_reused(const conv_gemm *cg, int64_t N, int64_t O, int64_t t) {
  const uint64_t bytes = (uint64_t)((t + 2) * (t + 2)) * (uint64_t)cg->C * (uint64_t)O * 4;
  return bytes <= WINO_SMALL_FILTERS || wino_seq(cg, N, t) >= WINO_MIN_REUSE;
}

/* The GEMM extent a launch's N images of P tiles pad to per output channel
 * (wino_padded's smaller way), cut per image or as one run (xi). */
static uint64_t wino_padded_launch(const conv_gemm *cg, int64_t N, int64_t t) {
  const uint64_t P = wino_tiles(cg, t);
  return wino_xi(cg, N, t) ? wino_padded_least((uint64_t)N * P)
                           : wino_padded_least(P) * (uint64_t)N;
}

/* Whether a convolution Winograd applies to runs so: where ACCY_CONV_FORM
 * asks for it (3) or for another form (0, 1, 2: never), else by default
 * unless ACCY_WINOGRAD is 0, where at least 16 input and output channels
 * meet, its filters are reused enough (wino_reused) and its GEMMs' columns
 * (16 per tile, blocks padded to whole panels, the tiles as columns or as
 * rows) are under 70% of the direct sum's 9 per output position: 56 x 56
 * 45%, 28 x 28 51%, 14 x 14 51%, 13 x 13 61%, 7 x 7 58% (tiles as rows; as
 * columns 116%). */
static bool wino_chosen(const conv_gemm *cg, int64_t N, int64_t O) {
  const char *f = getenv("ACCY_CONV_FORM");
  if (f && f[0] >= '0' && f[0] <= '4' && !f[1]) return f[0] >= '3';
  const char *off = getenv("ACCY_WINOGRAD");
  if (off && off[0] == '0' && !off[1]) return false;
  if (cg->C < 16 || O < 16 || !wino_reused(cg, N, O, 2)) return false;
  return 16 * wino_padded_launch(cg, N, 2) * 100 <
         9 * (uint64_t)N * (uint64_t)(cg->OH * cg->OW) * 70;
}

/* The tile side of a convolution that runs as Winograd: 4 (F(4x4, 3x3))
 * or 2 (F(2x2, 3x3)) where ACCY_WINO_TILE asks for it, else 4 where its 36
 * GEMMs' columns (tiles of 4 x 4 outputs, padded as wino_padded pads them)
 * are under 80% of the 16 GEMMs' of F(2x2, 3x3): 56 x 56 and 28 x 28 56%,
 * 14 x 14 and 13 x 13 64-73%; not 7 x 7 (4 tiles, a whole micro-panel of 8
 * rows: 112%). */
static int64_t wino_tile(const conv_gemm *cg, int64_t N, int64_t O) {
  /* (36 transformed filters per channel pair within the packing limit.) */
  if ((uint64_t)O > DOT_PACK_MAX_FLOATS / 36 / (uint64_t)cg->C) return 2;
  const char *f = getenv("ACCY_WINO_TILE");
  if (f && (f[0] == '2' || f[0] == '4') && !f[1]) return f[0] - '0';
  if (!wino_reused(cg, N, O, 4)) return 2;
  return 36 * wino_padded_launch(cg, N, 4) * 100 < 16 * wino_padded_launch(cg, N, 2) * 80 ? 4
                                                                                           : 2;
}

/* Tiles per block of a convolution that runs as Winograd, from its shape
 * (the GEMMs' width nt, P tiles, TW a row): nt, or with a group after each
 * item (|post|) the most whole rows of tiles within nt, so that each output
 * channel's part of an item is one run of whole output rows; 0 (the group
 * cannot follow) where a row is wider than nt or such blocks would be more
 * than 5% more (each block runs GEMMs nt wide: 112 x 112 outputs in tiles
 * of 4, 28 a row, blocks of 28 instead of 32, ran 8% slower with a SiLU
 * after them than with the SiLU as a task of its own; 55 x 55, 14 a row,
 * the same number of blocks, 3% faster). */
static uint64_t wino_block_tiles(uint64_t nt, uint64_t P, uint64_t TW, bool post) {
  if (!post) return nt;
  if (TW > nt) return 0;
  const uint64_t bt = nt / TW * TW;
  return (P + bt - 1) / bt * 100 <= (P + nt - 1) / nt * 105 ? bt : 0;
}

/* The tile side, tiles per row, tiles per image, the tiles the blocks are
 * cut from (*seq: P, or N P where they run on across the images) and the
 * GEMMs' width of a convolution that runs as Winograd (prepare_conv_wino's
 * choices, from the shape only). */
static void wino_shape(const conv_gemm *geo, int64_t N, int64_t O, int64_t *tile, uint64_t *TW,
                       uint64_t *P, uint64_t *seq, uint64_t *nt, bool *trans) {
  const uint64_t mr = accy__uk_get()->f32_gemm.mr, nr = accy__uk_get()->f32_gemm.nr;
  *tile = wino_tile(geo, N, O);
  *TW = (uint64_t)((geo->OW + *tile - 1) / *tile);
  *P = (uint64_t)((geo->OH + *tile - 1) / *tile) * *TW;
  *seq = wino_seq(geo, N, *tile);
  *trans = wino_trans(*seq, (uint64_t)O, (uint64_t)geo->C, mr, nr);
  *nt = *trans ? wino_nt_t(*seq, mr) : wino_nt(*seq, nr);
}

static accy_status prepare_conv_wino(const conv_gemm *geo, const float *w, int64_t N, int64_t O,
                                     const epi *e, accy__arena *arena, accy__kernel *k) {
  conv_wino *cw = accy__arena_alloc(arena, sizeof *cw, 64);
  if (!cw) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "kernel parameters");
  memset(cw, 0, sizeof *cw);
  accy__gemm *g = &cw->g;
  g->uk = accy__uk_get()->f32_gemm;
  const uint64_t mr = g->uk.mr, nr = g->uk.nr;
  cw->C = geo->C, cw->O = O, cw->H = geo->H, cw->W = geo->W, cw->OH = geo->OH, cw->OW = geo->OW;
  cw->ph = geo->ph, cw->pw = geo->pw;
  uint64_t TWu, seq;
  wino_shape(geo, N, O, &cw->tile, &TWu, &cw->P, &seq, &cw->nt, &cw->trans);
  cw->T = (uint64_t)((cw->tile + 2) * (cw->tile + 2));
  const int64_t t = cw->tile;
  const uint64_t T = cw->T;
  cw->TW = (int64_t)TWu;
  cw->xi = wino_xi(geo, N, t);
  cw->nall = (uint64_t)N * cw->P;
  cw->bt = wino_block_tiles(cw->nt, seq, TWu, e->post);
  if (cw->bt == 0) return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "no group follows this Winograd form");
  if (!cw->trans) {
    const uint64_t mb_max = WINO_MB_MAX / mr * mr;
    const uint64_t op = ((uint64_t)O + mr - 1) / mr * mr;
    cw->mb = op < mb_max ? op : mb_max;
  } else {
    const uint64_t mb_max = WINO_MB_MAX / nr * nr;
    const uint64_t op = ((uint64_t)O + nr - 1) / nr * nr;
    cw->mb = op < mb_max ? op : mb_max;
  }
  cw->n_tb = (cw->P + cw->bt - 1) / cw->bt;
  cw->n_blk = cw->xi ? (cw->nall + cw->bt - 1) / cw->bt : (uint64_t)N * cw->n_tb;
  /* Fewer than 8 blocks of tiles (28 x 28: 7; 14 x 14 and 7 x 7: one)
   * would leave a second thread idle part of the time: a pre-pass
   * transforms the patches once per launch, and the blocks of channels
   * are halved (down to 32) until there are 8 items, and to 16 where
   * that still leaves one (never below the kernel's width of a block).
   * From the shape only, so the same for every thread count; a channel's
   * outputs never depend on the block it is in. The small CNN's second
   * convolution (32 channels of 16 x 16: one block of tiles) had one item,
   * half its launch's time on one thread: in two blocks of 16, 0.070 ->
   * 0.057-0.064 ms a launch at two threads (perf/ab.py --threads 2), the
   * same at one. SqueezeNet's 128-channel 27 x 27 layers in blocks of 16
   * instead of 32 (8 items, not 4) ran 1-3% slower: they stay at 32. */
  uint64_t nv = 0;
  if (cw->n_blk < 8) {
    const uint64_t unit = cw->trans ? nr : mr;
    uint64_t mb = cw->mb;
    for (;;) {
      const uint64_t half = (mb / 2 + unit - 1) / unit * unit;
      const uint64_t items = cw->n_blk * (((uint64_t)O + mb - 1) / mb);
      if (items >= 8 || half >= mb || half < 16 || (half < 32 && items >= 2)) break;
      mb = half;
    }
    if (mb < cw->mb) {
      cw->mb = mb;
      cw->pre = true;
    }
  }
  cw->n_cb = ((uint64_t)O + cw->mb - 1) / cw->mb;
  cw->e = *e;
  cw->has_epi = e->bias || e->residual || e->clamp;
  const uint64_t C = (uint64_t)cw->C;
  /* The GEMM of one item: T batch indices (the products), A the block's
   * packed U, B the workspace's transformed patches, C the workspace's T
   * blocks; M and A are set per item. */
  g->batch = T;
  g->N = cw->nt;
  g->K = C;
  g->kc = ACCY__GEMM_KC;
  g->nb = cw->nt;
  g->m_items = g->n_items = 1;
  /* The T products' blocks of v and m: an odd number of 64-byte lines
   * apart, so that the transforms' T streams fall into different sets of
   * the L1 (at 8 KiB apart, a power of two, they shared one set and ran
   * from the L2: the output transform took a third of a 16-channel layer). */
  cw->vs = (C * (cw->nt + 8) + 15) / 16 * 16;
  if (cw->vs / 16 % 2 == 0) cw->vs += 16;
  cw->ms = cw->mb * cw->nt;
  if (cw->ms / 16 % 2 == 0) cw->ms += 16;
  if (!cw->trans) {
    g->c_bs = (ptrdiff_t)cw->ms;
    g->c_rs = (ptrdiff_t)cw->nt;
    g->b_bs = (ptrdiff_t)cw->vs; /* B rows in the workspace (direct) */
    g->b_rs = (ptrdiff_t)(cw->nt + 8);
  } else {
    /* A = the workspace's transformed patches read across (a tile's
     * channels nt + 8 apart), B = U^T's panels, C = mt. */
    cw->mts = cw->nt * cw->mb;
    if (cw->mts / 16 % 2 == 0) cw->mts += 16;
    g->a_bs = (ptrdiff_t)cw->vs;
    g->a_rs = 1;
    g->a_cs = (ptrdiff_t)(cw->nt + 8);
    g->nb = cw->mb;
    g->c_bs = (ptrdiff_t)cw->mts;
    g->c_rs = (ptrdiff_t)cw->mb;
  }
  cw->win = accy__uk_get()->f32_wino_in;
  cw->wout = accy__uk_get()->f32_wino_out;
  cw->transpose = accy__uk_get()->f32_transpose;
  cw->wpool = accy__uk_get()->f32_wino_out_pool;
  cw->win4 = accy__uk_get()->f32_wino4_in;
  cw->wout4 = accy__uk_get()->f32_wino4_out;
  cw->wpool4 = accy__uk_get()->f32_wino4_out_pool;
  /* U = G g G^T for every output and input channel, then packed per block
   * of output channels as T batches of A panels. */
  uint64_t nu;
  if (!accy__mul_u64((uint64_t)O, C, &nu) || !accy__mul_u64(nu, T, &nu) ||
      nu > DOT_PACK_MAX_FLOATS)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "transformed filters too large");
  float *u16 = malloc((size_t)nu * sizeof(float));
  if (!u16) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "transformed filters");
  for (uint64_t oc = 0; t == 4 && oc < nu / T; oc++) {
    /* F(4x4, 3x3): G g G^T in double, each value rounded once. */
    static const double G4[6][3] = {{0.25, 0, 0},
                                    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                    {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                    {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                    {0, 0, 1}};
    const float *f = w + oc * 9;
    double gt[6][3];
    for (int a = 0; a < 6; a++)
      for (int j = 0; j < 3; j++)
        gt[a][j] = G4[a][0] * f[j] + G4[a][1] * f[3 + j] + G4[a][2] * f[6 + j];
    for (int a = 0; a < 6; a++)
      for (int b = 0; b < 6; b++)
        u16[(uint64_t)(6 * a + b) * (nu / T) + oc] =
            (float)(gt[a][0] * G4[b][0] + gt[a][1] * G4[b][1] + gt[a][2] * G4[b][2]);
  }
  for (uint64_t oc = 0; t == 2 && oc < nu / 16; oc++) {
    const float *f = w + oc * 9;
    float tg[4][3];
    for (int j = 0; j < 3; j++) {
      tg[0][j] = f[j];
      tg[1][j] = (f[j] + f[3 + j] + f[6 + j]) * 0.5f;
      tg[2][j] = (f[j] - f[3 + j] + f[6 + j]) * 0.5f;
      tg[3][j] = f[6 + j];
    }
    for (int a = 0; a < 4; a++) {
      const float uu[4] = {tg[a][0], (tg[a][0] + tg[a][1] + tg[a][2]) * 0.5f,
                           (tg[a][0] - tg[a][1] + tg[a][2]) * 0.5f, tg[a][2]};
      for (int b = 0; b < 4; b++) u16[(uint64_t)(4 * a + b) * (nu / 16) + oc] = uu[b];
    }
  }
  const uint64_t pw = cw->trans ? nr : mr;
  const uint64_t panels_total = ((uint64_t)O + pw - 1) / pw; /* blocks are whole panels */
  float *U = accy__arena_alloc(arena, (size_t)(T * panels_total * C * pw) * sizeof(float), 64);
  if (!U) {
    free(u16);
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "packed transformed filters");
  }
  for (uint64_t cb = 0; cb < cw->n_cb; cb++) {
    const uint64_t o0 = cb * cw->mb, rows = (uint64_t)O - o0 < cw->mb ? (uint64_t)O - o0 : cw->mb;
    accy__gemm pg = *g;
    if (!cw->trans) {
      pg.M = rows;
      pg.a_rs = (ptrdiff_t)C;
      pg.a_cs = 1;
      pg.a_bs = (ptrdiff_t)(nu / T);
      accy__gemm_pack_a(&pg, u16 + o0 * C, T, U + o0 * T * C);
    } else {
      pg.N = rows;
      accy__gemm_pack_b(&pg, u16 + o0 * C, (ptrdiff_t)(nu / T), 1, (ptrdiff_t)C,
                        U + o0 * T * C);
    }
  }
  free(u16);
  cw->U = U;
  uint64_t items;
  if (!accy__mul_u64(cw->n_blk, cw->n_cb, &items))
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "too many tiles");
  k->run = conv_wino_f32;
  k->params = cw;
  k->n_items = items;
  k->item_cost = T * cw->mb * cw->nt * C;
  /* v (rows of nt + 8), m (read up to 8 floats past its last row), and
   * transposed, mt. */
  k->worker_bytes = ((cw->pre ? 0 : T * cw->vs) + T * cw->ms + 8 + (cw->trans ? T * cw->mts : 0)) *
                    sizeof(float);
  if (cw->pre) {
    if (!accy__mul_u64(cw->n_blk, T * cw->vs, &nv) || nv > DOT_PACK_MAX_FLOATS)
      return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "transformed patches too large");
    k->pre_run = conv_wino_pre_f32;
    k->pre_items = cw->n_blk * ((C + WINO_PRE_CH - 1) / WINO_PRE_CH);
    k->pre_item_cost = T * WINO_PRE_CH * cw->nt;
    k->temp_bytes = nv * sizeof(float);
  }
  accy__kernel_set_how(k, arena,
                       "convolution as Winograd F(%dx%d,3x3), %d GEMMs %s per block of %llu tiles "
                       "x %llu channels%s%s%s%s",
                       (int)t, (int)t, (int)T, g->uk.name, (unsigned long long)cw->nt,
                       (unsigned long long)cw->mb,
                       cw->xi ? ", blocks across the images" : "",
                       cw->trans ? ", tiles as rows" : "",
                       cw->pre ? ", patches transformed per launch (pre-pass)" : "",
                       e->pool ? ", 2 x 2 max pool in the output transform" : "");
  return ACCY_STATUS_OK;
}

/* The GEMM forms of a convolution. */
enum {
  CONV_IM2COL,     /* channels as rows, im2col built per item (or read in place: pointwise) */
  CONV_TRANSPOSED, /* positions as rows */
  CONV_PADDED,     /* channels as rows, taps read in place from a padded copy */
};

/* Which form a convolution with |ohw| output positions and |og| channels
 * per group runs in. Transposed (positions as rows) when that pads the
 * tiles much less, as for the small late-network images (7 x 7: 49
 * positions in 4 panels of 16, 23% of the work wasted, against 9 tiles of 6
 * rows and 10%). Else padded when it may (|padded_cols|: the columns of the
 * padded grid, 0 when it may not), its copy of the input is much smaller
 * than im2col (|padded_pays|) and its columns past each output row waste
 * little: it builds no im2col, only a padded copy of the input.
 * ACCY_CONV_FORM forces a form (0, 1, 2: the enum; 2 only where it
 * applies), so that the tests run every convolution every way. */
static int conv_form(uint64_t mr, uint64_t nr, uint64_t ohw, uint64_t og, uint64_t padded_cols,
                     bool padded_pays) {
  const char *f = getenv("ACCY_CONV_FORM");
  if (f && f[0] >= '0' && f[0] <= '2' && !f[1] && (f[0] != '2' || padded_cols))
    return f[0] - '0';
  const uint64_t direct = (ohw + nr - 1) / nr * nr * ((og + mr - 1) / mr * mr);
  const uint64_t trans = (ohw + mr - 1) / mr * mr * ((og + nr - 1) / nr * nr);
  /* At least 12% less: the transposed form builds its im2col block once per
   * item of at most 256 channels and scatters it into 6-row panels, so a
   * small saving does not pay (14 x 14 positions and 256 channels, 5.5% less
   * padding, ran 45% slower). A pointwise convolution too: read in place
   * as the direct form's B it wastes the same quarter at 7 x 7, and the
   * transposed form builds its A panels once per launch (a pre-pass): 18-20%
   * faster there (MobileNetV2's 960 -> 320 channels). */
  if (trans * 100 < direct * 88) return CONV_TRANSPOSED;
  /* Padded when its panels are at most 10% more than im2col's: 3 x 3 over
   * 56 x 56 (3% more) ran 9-14% faster, 27 x 27 and 14 x 14 (6.5%, 7.7%)
   * 5-8%, 13 x 13 (18%) 2-3% slower. */
  if (padded_cols && padded_pays &&
      (padded_cols + nr - 1) / nr * 100 <= (ohw + nr - 1) / nr * 110)
    return CONV_PADDED;
  return CONV_IM2COL;
}

/* The geometry of convolution |node| for the GEMM, depthwise and Winograd
 * forms into *cg (N and O the images and output channels); false where
 * none applies (not f32, filters not a finite constant, more than two
 * spatial axes, lhs dilation): the direct path. */
static bool conv_geom(const accy__program *p, uint32_t node, conv_gemm *cg, int64_t *N,
                      int64_t *O) {
  const accy__node *nd = &p->nodes[node];
  const accy__node *wn = &p->nodes[nd->operands[1]];
  const accy__type *lt = &p->nodes[nd->operands[0]].type, *rt = &wn->type, *ot = &nd->type;
  const int64_t *at = nd->attrs;
  const uint32_t s = (uint32_t)at[0];
  if (nd->type.dtype != ACCY_DTYPE_F32 || wn->op != ACCY_OP_CONSTANT || s > 2) return false;
  for (uint32_t i = 0; i < s; i++)
    if (at[1 + 3 * s + i] != 1) return false; /* lhs dilation: direct path */
  uint64_t nw;
  if (!accy__type_elements(rt, &nw)) return false;
  const float *w = wn->payload;
  for (uint64_t i = 0; i < nw; i++)
    if (!(w[i] - w[i] == 0.0f)) return false; /* Inf or NaN */
  memset(cg, 0, sizeof *cg);
  *N = lt->dims[0], *O = rt->dims[0];
  cg->groups = (uint64_t)at[1 + 5 * s];
  cg->C = rt->dims[1];
  /* 1-D is 2-D with one row. */
  cg->H = s == 2 ? lt->dims[2] : 1;
  cg->W = lt->dims[s + 1];
  cg->KH = s == 2 ? rt->dims[2] : 1;
  cg->KW = rt->dims[s + 1];
  cg->OH = s == 2 ? ot->dims[2] : 1;
  cg->OW = ot->dims[s + 1];
  cg->sh = s == 2 ? at[1] : 1;
  cg->sw = at[s];
  cg->ph = s == 2 ? at[1 + s] : 0;
  cg->pw = at[2 * s];
  cg->dh = s == 2 ? at[1 + 4 * s] : 1;
  cg->dw = at[5 * s];
  cg->img_stride = lt->dims[1] * cg->H * cg->W;
  return true;
}

/* The padded form's plan for geometry |cg| of N images (the phases a tap
 * reads, the phase planes' extent, into cg): *padded_cols the GEMM's
 * columns, *padded_floats the pre-pass's buffer (a panel of nr floats of
 * slack), *pays whether it copies the input at least twice less than
 * im2col would; all 0 where it does not apply. */
static void conv_pad_plan(conv_gemm *cg, int64_t N, bool pointwise, uint64_t nr,
                          uint64_t *padded_cols, uint64_t *padded_floats, bool *pays) {
  *padded_cols = *padded_floats = 0;
  *pays = false;
  if (cg->sh >= 1 && cg->sw >= 1 && cg->sh <= CONV_PAD_MAX_STRIDE &&
      cg->sw <= CONV_PAD_MAX_STRIDE && !pointwise && cg->C >= 1 && cg->KH >= 1 && cg->KW >= 1 &&
      cg->OH >= 1 && cg->OW >= 1) {
    /* The padded extent the outputs reach, then its phases' extent. */
    const int64_t Hp = (cg->OH - 1) * cg->sh + (cg->KH - 1) * cg->dh + 1;
    const int64_t Wp = (cg->OW - 1) * cg->sw + (cg->KW - 1) * cg->dw + 1;
    cg->Hq = (Hp + cg->sh - 1) / cg->sh;
    cg->Wq = (Wp + cg->sw - 1) / cg->sw;
    /* The phases some tap reads, in (py, px) order. */
    bool ry[CONV_PAD_MAX_STRIDE] = {false}, rx[CONV_PAD_MAX_STRIDE] = {false};
    for (int64_t i = 0; i < cg->KH; i++) ry[i * cg->dh % cg->sh] = true;
    for (int64_t i = 0; i < cg->KW; i++) rx[i * cg->dw % cg->sw] = true;
    cg->nph = 0;
    for (int py = 0; py < cg->sh; py++)
      for (int px = 0; px < cg->sw; px++)
        if (ry[py] && rx[px]) {
          cg->py_of[cg->nph] = (int8_t)py;
          cg->px_of[cg->nph] = (int8_t)px;
          cg->nph++;
        }
    cg->planes = (uint64_t)N * cg->groups * (uint64_t)cg->C;
    uint64_t nf;
    if (accy__mul_u64(cg->planes, cg->nph, &nf) && accy__mul_u64(nf, (uint64_t)cg->Hq, &nf) &&
        accy__mul_u64(nf, (uint64_t)cg->Wq, &nf) && nf <= DOT_PACK_MAX_FLOATS) {
      *padded_cols = (uint64_t)((cg->OH - 1) * cg->Wq + cg->OW);
      *padded_floats = nf + nr;
      *pays = cg->KH * cg->KW >= 2 * cg->sh * cg->sw;
    }
  }
}

/* Whether geometry |cg| takes the depthwise row kernel (one input channel
 * per group). */
static bool conv_is_depthwise(const conv_gemm *cg) { return cg->C == 1 && cg->KH * cg->KW > 1; }

/* Whether geometry |cg| is a 1 x 1 convolution at unit stride, no padding. */
static bool conv_is_pointwise(const conv_gemm *cg) {
  return cg->KH == 1 && cg->KW == 1 && cg->sh == 1 && cg->sw == 1 && cg->ph == 0 && cg->pw == 0 &&
         cg->OH == cg->H && cg->OW == cg->W;
}

/* Whether the padded form of |cg| (N images, O output channels) can pool
 * 2 x 2 in its microkernel (ind_pool): it is the form chosen, at unit
 * strides (one phase), with K in one block. */
static bool conv_pad_pools(conv_gemm *cg, int64_t N, int64_t O) {
  const accy__uk_f32_gemm *uk = &accy__uk_get()->f32_gemm;
  if (conv_is_pointwise(cg) || cg->sh != 1 || cg->sw != 1) return false;
  uint64_t padded_cols, padded_floats;
  bool pays;
  conv_pad_plan(cg, N, false, uk->nr, &padded_cols, &padded_floats, &pays);
  const uint64_t Og = (uint64_t)O / cg->groups, Kg = (uint64_t)(cg->C * cg->KH * cg->KW);
  return conv_form(uk->mr, uk->nr, (uint64_t)(cg->OH * cg->OW), Og, padded_cols, pays) ==
             CONV_PADDED &&
         cg->nph == 1 && Kg <= ACCY__GEMM_KC;
}

bool accy__kernel_conv_pools(const accy__program *p, uint32_t node) {
  const accy__node *nd = &p->nodes[node];
  if (nd->op != ACCY_OP_CONVOLUTION || nd->n_operands != 2 || nd->n_attrs < 1 ||
      nd->attrs[0] != 2 || nd->type.rank != 4)
    return false;
  conv_gemm cg;
  int64_t N, O;
  if (!conv_geom(p, node, &cg, &N, &O) || conv_is_depthwise(&cg) || cg.OH % 2 || cg.OW % 2)
    return false;
  if (wino_applies(&cg, O) && wino_chosen(&cg, N, O)) return true;
  return conv_pad_pools(&cg, N, O);
}

bool accy__kernel_conv_takes_group(const accy__program *p, uint32_t node) {
  const accy__node *nd = &p->nodes[node];
  if (nd->op != ACCY_OP_CONVOLUTION || nd->n_operands != 2 || nd->type.dtype != ACCY_DTYPE_F32)
    return false;
  conv_gemm cg;
  int64_t N, O;
  if (!conv_geom(p, node, &cg, &N, &O)) return false; /* the direct loops: rows */
  if (conv_is_depthwise(&cg)) return true;
  if (wino_applies(&cg, O) && wino_chosen(&cg, N, O)) {
    int64_t tile;
    uint64_t TW, P, seq, nt;
    bool trans;
    wino_shape(&cg, N, O, &tile, &TW, &P, &seq, &nt, &trans);
    return wino_block_tiles(nt, seq, TW, true) != 0;
  }
  const accy__uk_f32_gemm *uk = &accy__uk_get()->f32_gemm;
  uint64_t padded_cols, padded_floats;
  bool pays;
  conv_pad_plan(&cg, N, conv_is_pointwise(&cg), uk->nr, &padded_cols, &padded_floats, &pays);
  return conv_form(uk->mr, uk->nr, (uint64_t)(cg.OH * cg.OW), (uint64_t)O / cg.groups,
                   padded_cols, pays) != CONV_PADDED;
}

/* Fills *k with the GEMM form of the convolution when it applies (sets
 * *used). Otherwise leaves the direct path to the caller. */
static accy_status prepare_conv_gemm(const accy__program *p, uint32_t node, const epi *e,
                                     accy__arena *arena, accy__kernel *k, bool *used) {
  *used = false;
  const accy__node *nd = &p->nodes[node];
  const accy__node *wn = &p->nodes[nd->operands[1]];
  const float *w = wn->payload;
  conv_gemm *cg = accy__arena_alloc(arena, sizeof *cg, 64);
  if (!cg) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "kernel parameters");
  int64_t N, O;
  if (!conv_geom(p, node, cg, &N, &O)) return ACCY_STATUS_OK;
  const int64_t G = (int64_t)cg->groups;
  const int64_t Og = O / G, Kg = cg->C * cg->KH * cg->KW, OHW = cg->OH * cg->OW;
  const bool wino = !conv_is_depthwise(cg) && wino_applies(cg, O) && wino_chosen(cg, N, O);
  if (e->pool && !wino) {
    /* The padded form pools in its microkernel (ind_pool) where it can. */
    conv_gemm cp = *cg;
    if (conv_is_depthwise(cg) || cg->OH % 2 || cg->OW % 2 || !conv_pad_pools(&cp, N, O))
      return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                       "a fused 2 x 2 pool needs the Winograd or the padded form");
  }
  if (conv_is_depthwise(cg)) {
    /* Depthwise (one input channel per group): the direct row kernel. */
    ACCY_TRY(prepare_dwconv(cg, w, N, O, G, e, node, arena, k));
    *used = true;
    return ACCY_STATUS_OK;
  }
  if (wino) {
    ACCY_TRY(prepare_conv_wino(cg, w, N, O, e, arena, k));
    *used = true;
    return ACCY_STATUS_OK;
  }
  accy__gemm *g = &cg->g;
  g->uk = accy__uk_get()->f32_gemm;
  g->batch = (uint64_t)(N * G);
  g->K = (uint64_t)Kg;
  const bool pointwise = conv_is_pointwise(cg);
  /* The padded form needs strides of at most CONV_PAD_MAX_STRIDE and its
   * phase planes of at most DOT_PACK_MAX_FLOATS. It copies the input about
   * once where im2col copies it KH KW / (sh sw) times, and pays off only
   * where that is at least 2 (the default choice; ACCY_CONV_FORM=2 takes
   * it wherever it applies): 7 x 7 at stride 2 (12x) ran 22-25% faster, at
   * stride 1 (9x) 5-14% faster; 3 x 3 at stride 2 (2.25x), with the AVX-512
   * kernels on an Intel Xeon, 15-20% faster than im2col (ResNet-18's 64 ->
   * 128 at 28 x 28 and 128 -> 256 at 14 x 14), where an AVX2 Zen 3 had
   * measured it 0-9% slower with the kernels of then. A 1 x 1 at stride 2
   * (0.25x) stays with im2col. */
  uint64_t padded_cols = 0, padded_floats = 0;
  bool pays = false;
  conv_pad_plan(cg, N, pointwise, g->uk.nr, &padded_cols, &padded_floats, &pays);
  const int form = conv_form(g->uk.mr, g->uk.nr, (uint64_t)OHW, (uint64_t)Og, padded_cols, pays);
  if (form == CONV_TRANSPOSED) {
    /* Transposed: C^T = im2col^T x W^T, the rows output positions (built
     * per block by conv_im2col_a), the columns the group's channels (the
     * filters packed once as B panels), the output stored through
     * conv_store_t with the epilogue. Each output is still one chain over
     * the same k order from +0, so the bits are the other form's. */
    g->M = (uint64_t)OHW;
    g->N = (uint64_t)Og;
    g->a_block = conv_im2col_a;
    g->a_block_ctx = cg;
    g->c_store = conv_store_t;
    g->c_store_ctx = cg;
    cg->transpose = accy__uk_get()->f32_transpose;
    g->b_batch_mod = (uint64_t)G;
    cg->e = *e;
    if (G == 1 && !e->residual && (e->bias || e->clamp)) {
      /* The bias (by channel: a column here) and the clamp in the
       * microkernel, before the consumer transposes the tile: the same
       * steps and bits as the epilogue kernel, without a call per output
       * row (960 rows of 49 at 7 x 7 took a quarter of the layer). */
      gemm_set_epilogue(g, e, false);
      g->ep_in_tile = true;
      cg->e.bias = NULL;
      cg->e.clamp = false;
    }
    accy__gemm gp = *g;
    gp.batch = (uint64_t)G;
    const uint64_t nb = accy__gemm_packed_floats(&gp);
    float *pb = nb ? accy__arena_alloc(arena, nb * sizeof(float), 64) : NULL;
    if (nb && !pb) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "packed filters (%llu bytes)",
                                    (unsigned long long)(nb * sizeof(float)));
    static const float kNoFilters[1];
    if (pb) accy__gemm_pack_b(&gp, w, Og * Kg, 1, Kg, pb);
    g->b_packed = pb ? pb : kNoFilters;
  } else {
    g->M = (uint64_t)Og;
    g->N = (uint64_t)OHW;
    g->a_rs = Kg;
    g->a_cs = 1;
    g->a_bs = Og * Kg;
    g->a_batch_mod = (uint64_t)G;
    g->c_rs = OHW;
    g->c_bs = Og * OHW;
    if (pointwise) {
      g->b_bs = cg->C * cg->H * cg->W; /* image n, group g: (n * G + g) * C/G * HW */
      g->b_rs = cg->H * cg->W;
    } else if (form == CONV_PADDED) {
      /* Column q = oy * Wq + ox of tap (c, ky, kx) is, with Y = ky dh and X
       * = kx dw, phase (Y % sh, X % sw) of padded plane c at q + (Y / sh)
       * Wq + X / sw; the consumer keeps the columns ox < OW and applies the
       * epilogue. */
      const int64_t phase = cg->Hq * cg->Wq, plane = (int64_t)cg->nph * phase;
      ptrdiff_t *off = accy__arena_alloc(arena, (size_t)Kg * sizeof *off + 1, 8);
      if (!off) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "kernel parameters");
      for (int64_t kk = 0; kk < Kg; kk++) {
        const conv_tap t = tap_at(cg, (uint64_t)kk);
        const int64_t Y = t.ky * cg->dh, X = t.kx * cg->dw;
        int64_t f = 0;
        while (cg->py_of[f] != Y % cg->sh || cg->px_of[f] != X % cg->sw) f++;
        off[kk] = (ptrdiff_t)(t.c * plane + f * phase + Y / cg->sh * cg->Wq + X / cg->sw);
      }
      g->N = padded_cols;
      g->b_bs = cg->C * plane;
      g->b_off = off;
      cg->e = *e;
      if (e->pool) {
        /* The 2 x 2 max pool in the microkernel (ind_pool): columns are the
         * top row of each pair of output rows, in blocks of nr / 2 per
         * row; C is the pooled plane (conv_pad_pools: one phase, one K
         * block). */
        const uint64_t half = g->uk.nr / 2, PW = (uint64_t)cg->OW / 2;
        g->pool = true;
        g->c_wq = (uint64_t)cg->Wq;
        g->c_ow = (uint64_t)cg->OW;
        g->c_pw = ((uint64_t)cg->OW + half - 1) / half * half;
        g->N = (uint64_t)cg->OH / 2 * g->c_pw;
        g->c_rs = (ptrdiff_t)((uint64_t)cg->OH / 2 * PW);
        g->c_bs = (ptrdiff_t)Og * g->c_rs;
        gemm_set_epilogue(g, e, true);
        cg->e.bias = NULL;
        cg->e.residual = false;
        cg->e.clamp = false;
      } else if (accy__gemm_runs_fit(g->uk.nr, (uint64_t)cg->Wq, (uint64_t)cg->OW)) {
        /* Each tile stored by the microkernel straight into the output's
         * rows (its columns' runs skip the padding), with the whole
         * epilogue: no copy through the workspace (cnn_b32's 3 -> 16
         * channels at 64 x 64 wrote its 8 MiB of output twice). */
        g->c_wq = (uint64_t)cg->Wq;
        g->c_ow = (uint64_t)cg->OW;
        gemm_set_epilogue(g, e, true);
        cg->e.bias = NULL;
        cg->e.residual = false;
        cg->e.clamp = false;
      } else {
        g->c_store = conv_store_pad;
        g->c_store_ctx = cg;
        /* The bias in the microkernel, and the clamp too unless a residual
         * (added before it) is left to the consumer. */
        cg->e.bias = NULL;
        cg->e.clamp = e->residual && e->clamp;
        if (e->bias || (e->clamp && !e->residual)) {
          g->ep_flags = ACCY__UK_EPILOGUE | (e->clamp && !e->residual ? ACCY__UK_CLAMP : 0u);
          g->ep.bias_row = e->bias;
          g->ep.lo = e->lo;
          g->ep.hi = e->hi;
        }
      }
    } else {
      g->b_block = conv_im2col_block;
      g->b_block_ctx = cg;
    }
    if (form != CONV_PADDED) gemm_set_epilogue(g, e, true);
    /* A group after each item (dot_post_wrap) runs best over long rows. */
    g->wide = e->post;
    g->bias_row_bs = Og; /* group g's channels start at g * O/G */
    /* The filters are a constant: pack them once into the microkernel's
     * row panels (the same sums, read from one stream). */
    const uint64_t na = accy__gemm_packed_a_floats(g, (uint64_t)G);
    if (na) {
      float *pa = accy__arena_alloc(arena, na * sizeof(float), 64);
      if (!pa) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "packed filters (%llu bytes)",
                                (unsigned long long)(na * sizeof(float)));
      accy__gemm_pack_a(g, w, (uint64_t)G, pa);
      g->a_packed = pa;
    }
  }
  accy__gemm_plan(g);
  if (g->a_block && g->n_items > 1) {
    /* Transposed, with more than one block of channels per block of
     * positions: each item would build the same rows of im2col^T again, so
     * a pre-pass builds them once per launch and the items read them as
     * packed A (the same panels, the same microkernel calls). */
    const uint64_t mr = g->uk.mr, panels = (g->M + mr - 1) / mr;
    uint64_t nf;
    if (accy__mul_u64(g->batch, panels, &nf) && accy__mul_u64(nf, g->K, &nf) &&
        accy__mul_u64(nf, mr, &nf) && nf && nf <= DOT_PACK_MAX_FLOATS) {
      static const float kRunPacked[1];
      g->a_block = NULL;
      g->a_block_ctx = NULL;
      g->a_packed = kRunPacked;
      g->a_run_packed = true;
      accy__gemm_plan(g);
      k->pre_run = conv_pack_a_f32;
      k->pre_items = g->batch * panels;
      k->pre_item_cost = g->K * mr;
      if (pointwise) {
        cg->pre_kb = CONV_PRE_KB;
        k->pre_items = g->batch * ((g->K + CONV_PRE_KB - 1) / CONV_PRE_KB);
        k->pre_item_cost = CONV_PRE_KB * panels * mr;
      }
      k->temp_bytes = nf * sizeof(float);
    }
  }
  if (pointwise && form == CONV_IM2COL && accy__gemm_b_reread(g) && g->m_items > 1) {
    /* A pointwise convolution's input is its B, read in place: with more
     * than one block of channels each item would pack the same panels
     * again, so a pre-pass packs them once per launch, as for dot_general
     * (the same panels, the same microkernel calls, the same bits). */
    const uint64_t nf = gemm_b_panel_floats(g);
    if (nf >= DOT_PACK_MIN_FLOATS && nf <= DOT_PACK_MAX_FLOATS)
      gemm_pack_b_per_launch(g, k, nf, conv_pack_b_f32);
  }
  if (g->b_off) {
    k->pre_run = conv_pad_f32;
    k->pre_items = cg->planes;
    k->pre_item_cost = (uint64_t)cg->nph * (uint64_t)(cg->Hq * cg->Wq);
    k->temp_bytes = padded_floats * sizeof(float);
  }
  switch (form) {
    case CONV_TRANSPOSED:
      accy__kernel_set_how(k, arena, "convolution as GEMM %s, transposed (positions as rows)%s", g->uk.name,
              g->a_run_packed ? ", im2col^T per launch (pre-pass)" : ", im2col^T per item");
      break;
    case CONV_PADDED:
      accy__kernel_set_how(k, arena,
              "convolution as GEMM %s, padded input (pre-pass, %u phase%s), taps in place, %s",
              g->uk.ind_name, cg->nph, cg->nph == 1 ? "" : "s",
              g->pool ? "2 x 2 max pool in the microkernel"
                      : g->c_wq ? "stored in place" : "stored through the workspace");
      break;
    default:
      if (pointwise)
        accy__kernel_set_how(k, arena, "convolution as GEMM %s, pointwise, input %s", g->uk.name,
                g->b_run_packed ? "packed per launch (pre-pass)" : "read in place");
      else
        accy__kernel_set_how(k, arena, "convolution as GEMM %s, im2col per item", g->uk.name);
  }
  k->run = conv_gemm_f32;
  k->params = cg;
  k->worker_bytes = accy__gemm_workspace_bytes(g);
  k->n_items = accy__gemm_items(g);
  k->item_cost = accy__gemm_item_cost(g);
  *used = true;
  return ACCY_STATUS_OK;
}

/* The direct convolution with a fused epilogue: the tile, then the
 * epilogue over each of its items (one output row of one channel). */
typedef struct conv_epi {
  accy__tile_fn inner;
  const void *inner_params;
  epi e;
  uint64_t row, n_out_ch; /* outputs per item; output channels */
  uint64_t rows_per_ch;   /* items per (image, channel) */
} conv_epi;

static void conv_epi_f32(const accy__kernel *k, void *const *bufs, uint64_t begin, uint64_t end) {
  const conv_epi *ce = k->params;
  accy__kernel inner = *k;
  inner.params = ce->inner_params;
  ce->inner(&inner, bufs, begin, end);
  float *out = bufs[0];
  const float *res = ce->e.residual ? bufs[3] : NULL;
  for (uint64_t it = begin; it < end; it++) {
    const uint64_t o = (it / ce->rows_per_ch) % ce->n_out_ch;
    epi_run(&ce->e, out + it * ce->row, res ? res + it * ce->row : NULL, (size_t)ce->row,
            ce->e.bias ? ce->e.bias + o : NULL, 0);
  }
}

static accy_status prepare_conv(const accy__program *p, uint32_t node, const epi *e,
                                accy__arena *arena, accy__kernel *k) {
  const accy__node *nd = &p->nodes[node];
  accy__tile_fn fn = conv_fn(nd->type.dtype);
  if (fn == NULL) return no_kernel(p, node);
  ACCY_TRY(check_operands(p, node));
  const accy__type *lt = &p->nodes[nd->operands[0]].type;
  const accy__type *rt = &p->nodes[nd->operands[1]].type;
  const accy__type *ot = &nd->type;

  const int64_t *at = nd->attrs;
  if (nd->n_attrs < 1 || at[0] < 1 || at[0] > 3 || nd->n_attrs != 2 + 5 * (uint64_t)at[0])
    goto bad_attrs;
  const uint32_t s = (uint32_t)at[0];
  const int64_t groups = at[1 + 5 * s];
  if (lt->rank != s + 2 || rt->rank != s + 2 || ot->rank != s + 2 || groups < 1)
    goto bad_attrs;
  const int64_t N = lt->dims[0], C = lt->dims[1], O = rt->dims[0], Cg = rt->dims[1];
  if (C != Cg * groups || O % groups != 0 || ot->dims[0] != N || ot->dims[1] != O)
    goto bad_attrs;
  bool gemm = false;
  ACCY_TRY(prepare_conv_gemm(p, node, e, arena, k, &gemm));
  if (gemm) return ACCY_STATUS_OK;
  if (e->pool)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "a fused 2 x 2 pool needs the Winograd form");

  conv_params *cp = accy__arena_alloc(arena, sizeof *cp, 64);
  if (cp == NULL)
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "kernel parameters");
  int64_t sl[ACCY_MAX_RANK], sr[ACCY_MAX_RANK];
  accy__type_strides(lt, sl);
  accy__type_strides(rt, sr);
  cp->n_out_ch = (uint64_t)O;
  cp->out_per_group = (uint64_t)(O / groups);
  cp->in_per_group = (uint64_t)Cg;
  cp->l_n = sl[0];
  cp->l_c = sl[1];
  cp->r_o = sr[0];
  cp->r_c = sr[1];

  static const conv_range kSingleTap = {0, 1, 0};
  uint64_t taps = (uint64_t)Cg; /* multiply-adds per output element, saturated below */
  for (uint32_t c = 0; c < 3; c++) {
    conv_axis *ax = &cp->ax[c];
    if (c < 3 - s) { /* dummy leading axis: one output, one tap at offset 0 */
      ax->out = 1;
      ax->kstep = ax->xstep = 1;
      ax->lstride = ax->rstride = 0;
      ax->r = &kSingleTap;
      continue;
    }
    const uint32_t i = c - (3 - s);
    conv_axis_attrs x = {lt->dims[2 + i], rt->dims[2 + i], at[1 + i], at[1 + s + i],
                         at[1 + 3 * s + i], at[1 + 4 * s + i]};
    if (x.stride < 1 || x.lhs_dil < 1 || x.rhs_dil < 1) goto bad_attrs;
    const int64_t g = gcd_i64(x.rhs_dil, x.lhs_dil);
    const int64_t q = x.lhs_dil / g;
    const int64_t inv = inv_mod(x.rhs_dil / g, q);
    ax->out = (uint64_t)ot->dims[2 + i];
    ax->kstep = q;
    ax->xstep = x.rhs_dil / g;
    ax->lstride = sl[2 + i];
    ax->rstride = sr[2 + i];
    if (ax->out > SIZE_MAX / sizeof(conv_range)) goto oom;
    conv_range *r = accy__arena_alloc(arena, (size_t)ax->out * sizeof *r + 1, 8);
    if (r == NULL) goto oom;
    for (uint64_t y = 0; y < ax->out; y++)
      if (!conv_range_for(&x, (int64_t)y, g, q, inv, &r[y]))
        return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                         "spatial axis %u: position of output %llu "
                         "overflows int64 (stride %lld, pad_low %lld)",
                         i, (unsigned long long)y, (long long)x.stride,
                         (long long)x.pad_low);
    ax->r = r;
    if (!accy__mul_u64(taps, (uint64_t)x.ksize, &taps)) taps = UINT64_MAX;
  }

  uint64_t elems;
  if (!accy__type_elements(ot, &elems))
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "result too large");
  k->run = fn;
  k->params = cp;
  if (e->bias || e->residual || e->clamp) {
    conv_epi *ce = accy__arena_alloc(arena, sizeof *ce, 8);
    if (!ce) goto oom;
    ce->inner = fn;
    ce->inner_params = cp;
    ce->e = *e;
    ce->row = cp->ax[2].out;
    ce->n_out_ch = cp->n_out_ch;
    ce->rows_per_ch = cp->ax[0].out * cp->ax[1].out;
    k->run = conv_epi_f32;
    k->params = ce;
  }
  /* Boundary: no result elements (any zero extent) means nothing to run. */
  k->n_items = elems == 0 ? 0 : elems / cp->ax[2].out;
  uint64_t cost;
  if (!accy__mul_u64(cp->ax[2].out, taps, &cost) || cost > (UINT64_C(1) << 62))
    cost = UINT64_C(1) << 62;
  k->item_cost = cost > 0 ? cost : cp->ax[2].out > 0 ? cp->ax[2].out : 1;
  accy__kernel_set_how(k, arena, "convolution by direct loops");
  return ACCY_STATUS_OK;

bad_attrs:
  return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                   "attributes (%u) do not match operand ranks %u, %u",
                   nd->n_attrs, lt->rank, rt->rank);
oom:
  return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "tap tables");
}

/* ---- a group after the product (accy__epilogue.post) ------------------------
 *
 * The product's (or convolution's) kernel runs one item at a time; after
 * each, the group runs over the item's block of the result, row by row,
 * reading the values the item just wrote (still in L1 or L2) and writing
 * its root's over them, in place: a flat group computes every element from
 * the leaves' values at that element only, each step reading its operands
 * before the root's store of the same elements, so the block is read
 * before it is overwritten. The group's kernel is the one its own task
 * would run, on the same values: the bits equal the unfused nodes'. A
 * convolution's items write different regions in each form, which
 * conv_post_item gives as rectangles of the output (the items of a form
 * partition its output, so each element gets the group once): for the
 * GEMM forms but the padded one, the depthwise kernels, and Winograd in
 * blocks of whole rows of tiles (wino_block_tiles;
 * accy__kernel_conv_takes_group). Winograd's blocks cut within rows of
 * tiles, the padded form's column blocks and the direct loops' items leave
 * rows of a few vectors, over which the group ran slower than as a task of
 * its own (16 -> 64 channels at 55 x 55 with a SiLU, Winograd blocks of 32
 * tiles: 0.40 -> 0.50 ms, in whole rows 0.40 -> 0.39; the 3 -> 32 stride-2
 * stem at 224 x 224, padded: 0.43 -> 0.55 ms). */
enum {
  POST_DOT,    /* a dot_general: its GEMM's or dot_params' blocks */
  POST_WINO,   /* Winograd in blocks of whole rows of tiles: per channel a run of rows */
  POST_GEMM,   /* channels as rows: channels x a run of positions */
  POST_GEMM_T, /* positions as rows: the same, transposed */
  POST_DW,     /* depthwise: whole planes */
};

typedef struct dot_post {
  accy__kernel inner;   /* the product's kernel as prepared */
  accy__kernel group;   /* the group's kernel, over the result's elements */
  int kind;             /* POST_* */
  const accy__gemm *g;  /* the GEMM path's items, or NULL: dot_params' */
  const dot_params *dp;
  uint64_t M, N;        /* result rows per batch index, columns */
  /* Convolutions: the kernel's parameters (conv_wino, conv_gemm, dwconv),
   * the output's channels, rows and columns, the channels per group. */
  const void *cp;
  uint64_t O, OH, OW, Og;
  uint32_t n_leaves;
  uint32_t ws_at;       /* bufs index of the worker workspace */
  size_t ws_off;        /* the group's part of it */
  const void *leaf[ACCY__EW_GROUP_MAX_LEAVES]; /* a constant's payload; NULL: the result */
} dot_post;

/* The group over the region convolution item |it| wrote (POST_* above),
 * as rectangles of the output: first element, rows, columns, row stride. */
static void conv_post_item(const dot_post *pp, void *const *gb, uint64_t it) {
  const accy__kernel *gk = &pp->group;
  const uint64_t OHW = pp->OH * pp->OW;
  switch (pp->kind) {
    case POST_WINO: {
      const conv_wino *cw = pp->cp;
      const wino_item wi = wino_item_of(cw, it);
      const uint64_t t = (uint64_t)cw->tile, TW = (uint64_t)cw->TW, P = cw->P;
      /* whole rows of tiles, in each image the block reaches (blocks across
       * the images: P is whole rows): output rows y0 .. y1 of each channel */
      for (uint64_t s = 0; s < wi.cols;) {
        const uint64_t n = (wi.g0 + s) / P, j0 = (wi.g0 + s) % P;
        const uint64_t seg = P - j0 < wi.cols - s ? P - j0 : wi.cols - s;
        const uint64_t y0 = t * (j0 / TW), y1e = t * ((j0 + seg) / TW);
        const uint64_t y1 = y1e < pp->OH ? y1e : pp->OH;
        for (uint64_t i = 0; i < wi.nrow; i++)
          accy__ew_group_run_rect(gk, gb, ((n * pp->O + wi.o0 + i) * pp->OH + y0) * pp->OW, 1,
                                  (y1 - y0) * pp->OW, (y1 - y0) * pp->OW);
        s += seg;
      }
      return;
    }
    case POST_GEMM:
    case POST_GEMM_T: {
      /* batch index bi: image bi / G, group bi % G, whose channels start at
       * (bi % G) Og: output channel plane bi Og + channel in group */
      const conv_gemm *cg = pp->cp;
      const accy__gemm_rect r = accy__gemm_item_rect(&cg->g, it);
      if (pp->kind == POST_GEMM)
        accy__ew_group_run_rect(gk, gb, (r.bi * pp->Og + r.m0) * OHW + r.n0, r.rows, r.cols, OHW);
      else
        accy__ew_group_run_rect(gk, gb, (r.bi * pp->Og + r.n0) * OHW + r.m0, r.cols, r.rows, OHW);
      return;
    }
    case POST_DW: {
      const dwconv *d = pp->cp;
      uint64_t p0, planes;
      if (d->lanes) {
        int64_t n, o, nch;
        dw_lane_block(d, it, &n, &o, &nch);
        p0 = (uint64_t)(n * d->O + o);
        planes = (uint64_t)nch;
      } else {
        p0 = it, planes = 1; /* (n, o): plane n O + o */
      }
      accy__ew_group_run_rect(gk, gb, p0 * OHW, 1, planes * OHW, planes * OHW);
      return;
    }
    default: /* POST_DOT: dot_post_f32's own blocks */
      return;
  }
}

static void dot_post_f32(const accy__kernel *k, void *const *bufs, uint64_t begin, uint64_t end) {
  const dot_post *pp = k->params;
  void *gb[2 + ACCY__EW_GROUP_MAX_LEAVES];
  gb[0] = bufs[0];
  for (uint32_t l = 0; l < pp->n_leaves; l++) gb[1 + l] = pp->leaf[l] ? (void *)pp->leaf[l] : bufs[0];
  gb[1 + pp->n_leaves] = pp->group.worker_bytes ? (char *)bufs[pp->ws_at] + pp->ws_off : NULL;
  for (uint64_t it = begin; it < end; it++) {
    pp->inner.run(&pp->inner, bufs, it, it + 1);
    if (pp->kind != POST_DOT) {
      conv_post_item(pp, gb, it);
      continue;
    }
    uint64_t b, m0, rows, n0, cols;
    if (pp->g) {
      const accy__gemm_rect r = accy__gemm_item_rect(pp->g, it);
      b = r.bi, m0 = r.m0, rows = r.rows, n0 = r.n0, cols = r.cols;
    } else {
      const dot_block blk = dot_item(pp->dp, it);
      b = blk.b, m0 = blk.m0, rows = blk.rows, n0 = blk.n0, cols = blk.w;
    }
    accy__ew_group_run_rect(&pp->group, gb, (b * pp->M + m0) * pp->N + n0, rows, cols, pp->N);
  }
}

static void dot_post_pre(const accy__kernel *k, void *const *bufs, uint64_t begin, uint64_t end) {
  const dot_post *pp = k->params;
  pp->inner.pre_run(&pp->inner, bufs, begin, end);
}

/* Wraps the product's or convolution's kernel *k (node |node|, prepared
 * for |ep|) so that the group ep->post follows each item. */
static accy_status dot_post_wrap(const accy__program *p, uint32_t node, const accy__epilogue *ep,
                                 accy__arena *arena, accy__kernel *k) {
  const accy__ew_group *gr = ep->post;
  const uint32_t root = gr->members[gr->n_members - 1];
  if (gr->row_len != 0 || gr->n_leaves > ACCY__EW_GROUP_MAX_LEAVES || ep->pool)
    return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "group %u cannot follow the product", root);
  dot_post *pp = accy__arena_alloc(arena, sizeof *pp, 64);
  if (!pp) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "kernel parameters");
  memset(pp, 0, sizeof *pp);
  pp->inner = *k;
  ACCY_TRY(accy__kernel_prepare_ew_group(p, gr, arena, &pp->group));
  pp->n_leaves = gr->n_leaves;
  for (uint32_t l = 0; l < gr->n_leaves; l++) {
    const accy__node *ln = &p->nodes[gr->leaves[l]];
    if (gr->leaves[l] == ep->post_in) continue; /* NULL: the product's block */
    if (ln->op != ACCY_OP_CONSTANT)
      return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                       "group %u reads node %u, neither the product nor a constant", root,
                       gr->leaves[l]);
    pp->leaf[l] = ln->payload;
  }
  const accy__node *nd = &p->nodes[node];
  if (nd->op == ACCY_OP_CONVOLUTION) {
    /* The form that prepare_conv chose, and the output's shape [N, O, OH,
     * OW] (every form that takes a group is a 2-D one). */
    const accy__type *ot = &nd->type;
    pp->cp = k->params;
    pp->O = (uint64_t)ot->dims[1];
    pp->OH = ot->rank == 4 ? (uint64_t)ot->dims[2] : 0;
    pp->OW = ot->rank == 4 ? (uint64_t)ot->dims[3] : 0;
    const conv_gemm *cg = k->run == conv_gemm_f32 ? k->params : NULL;
    if (k->run == conv_wino_f32 && !((const conv_wino *)k->params)->e.pool) {
      pp->kind = POST_WINO;
    } else if (cg && !cg->g.b_off) {
      pp->kind = cg->g.c_store == conv_store_t ? POST_GEMM_T : POST_GEMM;
      pp->Og = pp->O / cg->groups;
    } else if (k->run == dwconv_f32) {
      pp->kind = POST_DW;
    } else {
      return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED,
                       "group %u cannot follow convolution %u in this form", root, node);
    }
    /* The group's work per item: its per-element cost over an item's share
     * of the output. */
    uint64_t elems;
    if (!accy__type_elements(ot, &elems)) elems = 0;
    k->item_cost += (k->n_items ? elems / k->n_items : 0) * pp->group.item_cost;
  } else if (k->run == dot_gemm_f32) {
    pp->kind = POST_DOT;
    pp->g = &((const dot_pack *)k->params)->g;
    pp->M = pp->g->M;
    pp->N = pp->g->N;
  } else {
    pp->kind = POST_DOT;
    pp->dp = k->params;
    pp->M = pp->dp->m.count;
    pp->N = pp->dp->n.count;
  }
  pp->ws_at = (ep->residual >= 0 ? 4u : 3u) + (k->temp_bytes ? 1u : 0u);
  pp->ws_off = (size_t)accy__align_up((size_t)k->worker_bytes, 64);
  if (pp->group.worker_bytes) k->worker_bytes = pp->ws_off + pp->group.worker_bytes;
  if (pp->kind == POST_DOT) {
    /* The group's work per item: its per-element cost over the largest block. */
    const uint64_t bm = pp->g ? pp->g->mb : DOT_MR, bn = pp->g ? pp->g->nb : DOT_NB;
    k->item_cost += (pp->M < bm ? pp->M : bm) * (pp->N < bn ? pp->N : bn) * pp->group.item_cost;
  }
  k->params = pp;
  k->run = dot_post_f32;
  if (k->pre_run) k->pre_run = dot_post_pre;
  accy__kernel_set_how(k, arena, "%s, then group %%%u (%u nodes) on each item in cache",
                       pp->inner.how ? pp->inner.how : "the product", root, gr->n_members);
  return ACCY_STATUS_OK;
}

/* ---- entry point --------------------------------------------------------- */

accy_status accy__kernel_prepare_linalg(const accy__program *p, uint32_t node,
                                        const accy__epilogue *ep, accy__arena *arena,
                                        accy__kernel *k) {
  const epi e = epi_from(ep);
  switch (p->nodes[node].op) {
    case ACCY_OP_DOT_GENERAL:
      ACCY_TRY(prepare_dot(p, node, &e, arena, k));
      if (ep && ep->active && ep->post) return dot_post_wrap(p, node, ep, arena, k);
      return ACCY_STATUS_OK;
    case ACCY_OP_CONVOLUTION:
      ACCY_TRY(prepare_conv(p, node, &e, arena, k));
      if (ep && ep->active && ep->post) return dot_post_wrap(p, node, ep, arena, k);
      return ACCY_STATUS_OK;
    default:
      return ACCY_FAIL(ACCY_STATUS_COMPILE_FAILED, "not a linear-algebra op");
  }
}
