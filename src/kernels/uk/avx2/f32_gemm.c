/* src/kernels/uk/avx2/f32_gemm.c: accy__f32_gemm_6x16__avx2 (uk.h), built
 * with -mavx2 -mfma. Twelve ymm accumulators (6 rows x 2 vectors of 8);
 * per k, two loads of B, six broadcasts of A, twelve FMAs. Columns beyond
 * nr are masked on load and store; rows beyond mr repeat row 0 (always
 * readable) and are never stored. */
#include "src/internal.h"

#include <immintrin.h>

#include "src/kernels/uk/avx2/vmath.h"
#include "src/kernels/uk/uk.h"

#define MR 6
#define NR 16

/* The full tiles' k loops run as asm (UK_STEP_ASM), except under
 * AddressSanitizer, which cannot see the loads an asm statement makes: there
 * the same steps run as intrinsics (the same operations in the same order,
 * so the same bits), and every load of A and B is checked. */
#if defined(__SANITIZE_ADDRESS__)
#define UK_GEMM_ASM 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UK_GEMM_ASM 0
#endif
#endif
#ifndef UK_GEMM_ASM
#define UK_GEMM_ASM 1
#endif

/* Lane masks for the first n (0..8) lanes. */
static inline __m256i first_lanes(size_t n) {
  const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), idx);
}

/* What the epilogue of a tile needs, read once per call, and one row of
 * it: bias of the row, bias of the columns, the residual row, then the
 * clamp (minimum(maximum(v, lo), hi) with the ops' own rules, so a fused
 * clamp gives the unfused bits), in that order, one rounding each; then the
 * store. The GEMM, ind and GEMV kernels share it, so a row gets the same
 * bits from each. The rows are unrolled (TILE_FIN), so that the
 * accumulators are not indexed as an array through the stack: a pointwise
 * convolution of 16 input channels over 55 x 55 took 0.139 ms that way,
 * 0.121 ms unrolled (a Zen 4 capped at this level). */
typedef struct tile_fin {
  accy__uk_tile_ep e;
  vclamp8_plan cl;
} tile_fin;

static inline __attribute__((always_inline)) void tile_fin_init(tile_fin *f, uint32_t flags,
                                                                 const accy__uk_epilogue *ep,
                                                                 bool cols) {
  f->e = accy__uk_tile_ep_of(flags, ep, cols);
  f->cl = vclamp8_plan_for(f->e.lo, f->e.hi);
}

static inline __attribute__((always_inline)) void tile_fin_row(const tile_fin *f, size_t i,
                                                                __m256 v0, __m256 v1, float *c,
                                                                ptrdiff_t c_rs, bool full,
                                                                __m256i m0, __m256i m1) {
  if (f->e.on) {
    if (f->e.bias_row) {
      const __m256 br = _mm256_set1_ps(f->e.bias_row[i]);
      v0 = _mm256_add_ps(v0, br), v1 = _mm256_add_ps(v1, br);
    }
    if (f->e.bias_col) {
      v0 = _mm256_add_ps(v0, _mm256_maskload_ps(f->e.bias_col, m0));
      v1 = _mm256_add_ps(v1, _mm256_maskload_ps(f->e.bias_col + 8, m1));
    }
    if (f->e.residual) {
      const float *r = f->e.residual + (ptrdiff_t)i * f->e.res_rs;
      v0 = _mm256_add_ps(v0, _mm256_maskload_ps(r, m0));
      v1 = _mm256_add_ps(v1, _mm256_maskload_ps(r + 8, m1));
    }
    if (f->e.clamp) v0 = vclamp8_apply(v0, &f->cl), v1 = vclamp8_apply(v1, &f->cl);
  }
  float *ci = c + (ptrdiff_t)i * c_rs;
  if (full) {
    _mm256_storeu_ps(ci, v0);
    _mm256_storeu_ps(ci + 8, v1);
  } else { /* m0, m1: first-lanes masks (plain stores: vm_store_first8) */
    vm_store_first8(ci, v0, (size_t)__builtin_popcount(
                                (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(m0))));
    vm_store_first8(ci + 8, v1, (size_t)__builtin_popcount(
                                    (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(m1))));
  }
}

#define TILE_FIN(F, C, C_RS, MRV, FULL, M0, M1)                         \
  do {                                                                  \
    tile_fin_row(F, 0, c00, c01, C, C_RS, FULL, M0, M1);                \
    if ((MRV) > 1) tile_fin_row(F, 1, c10, c11, C, C_RS, FULL, M0, M1); \
    if ((MRV) > 2) tile_fin_row(F, 2, c20, c21, C, C_RS, FULL, M0, M1); \
    if ((MRV) > 3) tile_fin_row(F, 3, c30, c31, C, C_RS, FULL, M0, M1); \
    if ((MRV) > 4) tile_fin_row(F, 4, c40, c41, C, C_RS, FULL, M0, M1); \
    if ((MRV) > 5) tile_fin_row(F, 5, c50, c51, C, C_RS, FULL, M0, M1); \
  } while (0)

/* One k step of a full tile as one asm statement: two vectors of the B row
 * at |bp| (into ymm13, ymm14), a broadcast of each of the six A values
 * (AT&T operands A0..A5, into ymm15), twelve FMAs c += a * b, in the
 * intrinsics' order (so the same bits). In C, GCC 12 hoists the next
 * step's loads and spills an accumulator in the loop; the asm keeps the
 * twelve in registers. */
#define UK_ROW_ASM(A, C0, C1)                   \
  "vbroadcastss " A ", %%ymm15\n\t"             \
  "vfmadd231ps %%ymm13, %%ymm15, %[" C0 "]\n\t" \
  "vfmadd231ps %%ymm14, %%ymm15, %[" C1 "]\n\t"
#define UK_STEP_ASM(A0, A1, A2, A3, A4, A5, ...)                                          \
  __asm__("vmovups (%[bp]), %%ymm13\n\t"                                                  \
          "vmovups 32(%[bp]), %%ymm14\n\t" UK_ROW_ASM(A0, "c00", "c01")                   \
              UK_ROW_ASM(A1, "c10", "c11") UK_ROW_ASM(A2, "c20", "c21")                   \
                  UK_ROW_ASM(A3, "c30", "c31") UK_ROW_ASM(A4, "c40", "c41")               \
                      UK_ROW_ASM(A5, "c50", "c51")                                        \
          : [c00] "+x"(r00), [c01] "+x"(r01), [c10] "+x"(r10), [c11] "+x"(r11),           \
            [c20] "+x"(r20), [c21] "+x"(r21), [c30] "+x"(r30), [c31] "+x"(r31),           \
            [c40] "+x"(r40), [c41] "+x"(r41), [c50] "+x"(r50), [c51] "+x"(r51)            \
          : __VA_ARGS__                                                                   \
          : "xmm13", "xmm14", "xmm15")
/* The accumulators of an asm loop, pinned to ymm0-11 for its duration only
 * (a local register variable keeps its register only as an asm operand and
 * not across calls, so the rest of the kernel uses plain variables). */
#define UK_PIN_ACCUMULATORS()                                                             \
  register __m256 r00 __asm__("ymm0") = c00, r01 __asm__("ymm1") = c01;                   \
  register __m256 r10 __asm__("ymm2") = c10, r11 __asm__("ymm3") = c11;                   \
  register __m256 r20 __asm__("ymm4") = c20, r21 __asm__("ymm5") = c21;                   \
  register __m256 r30 __asm__("ymm6") = c30, r31 __asm__("ymm7") = c31;                   \
  register __m256 r40 __asm__("ymm8") = c40, r41 __asm__("ymm9") = c41;                   \
  register __m256 r50 __asm__("ymm10") = c50, r51 __asm__("ymm11") = c51
#define UK_UNPIN_ACCUMULATORS()                                                           \
  do {                                                                                    \
    c00 = r00, c01 = r01, c10 = r10, c11 = r11, c20 = r20, c21 = r21;                     \
    c30 = r30, c31 = r31, c40 = r40, c41 = r41, c50 = r50, c51 = r51;                     \
  } while (0)

static inline __attribute__((always_inline)) void gemm_6x16(
    size_t mr, size_t nr, size_t kc, const float *a, ptrdiff_t a_rs, ptrdiff_t a_cs,
    const float *b, ptrdiff_t b_rs, float *c, ptrdiff_t c_rs, uint32_t flags,
    const accy__uk_epilogue *ep) {
  const float *ar[MR];
  for (size_t i = 0; i < MR; i++) ar[i] = a + (ptrdiff_t)(i < mr ? i : 0) * a_rs;
  const bool full = nr == NR;
  const __m256i m0 = full ? _mm256_set1_epi32(-1) : first_lanes(nr < 8 ? nr : 8);
  const __m256i m1 = full ? _mm256_set1_epi32(-1) : first_lanes(nr > 8 ? nr - 8 : 0);
  __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
  if (flags & ACCY__UK_ACCUMULATE) {
    float *cr[MR];
    for (size_t i = 0; i < MR; i++) cr[i] = c + (ptrdiff_t)(i < mr ? i : 0) * c_rs;
    c00 = _mm256_maskload_ps(cr[0], m0), c01 = _mm256_maskload_ps(cr[0] + 8, m1);
    c10 = _mm256_maskload_ps(cr[1], m0), c11 = _mm256_maskload_ps(cr[1] + 8, m1);
    c20 = _mm256_maskload_ps(cr[2], m0), c21 = _mm256_maskload_ps(cr[2] + 8, m1);
    c30 = _mm256_maskload_ps(cr[3], m0), c31 = _mm256_maskload_ps(cr[3] + 8, m1);
    c40 = _mm256_maskload_ps(cr[4], m0), c41 = _mm256_maskload_ps(cr[4] + 8, m1);
    c50 = _mm256_maskload_ps(cr[5], m0), c51 = _mm256_maskload_ps(cr[5] + 8, m1);
  } else {
    c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = _mm256_setzero_ps();
  }
  const float *a0 = ar[0], *a1 = ar[1], *a2 = ar[2], *a3 = ar[3], *a4 = ar[4], *a5 = ar[5];
#define STEP(B0, B1, OFF)                                                   \
  do {                                                                      \
    __m256 av = _mm256_broadcast_ss(a0 + (OFF));                            \
    c00 = _mm256_fmadd_ps(av, B0, c00), c01 = _mm256_fmadd_ps(av, B1, c01); \
    av = _mm256_broadcast_ss(a1 + (OFF));                                   \
    c10 = _mm256_fmadd_ps(av, B0, c10), c11 = _mm256_fmadd_ps(av, B1, c11); \
    av = _mm256_broadcast_ss(a2 + (OFF));                                   \
    c20 = _mm256_fmadd_ps(av, B0, c20), c21 = _mm256_fmadd_ps(av, B1, c21); \
    av = _mm256_broadcast_ss(a3 + (OFF));                                   \
    c30 = _mm256_fmadd_ps(av, B0, c30), c31 = _mm256_fmadd_ps(av, B1, c31); \
    av = _mm256_broadcast_ss(a4 + (OFF));                                   \
    c40 = _mm256_fmadd_ps(av, B0, c40), c41 = _mm256_fmadd_ps(av, B1, c41); \
    av = _mm256_broadcast_ss(a5 + (OFF));                                   \
    c50 = _mm256_fmadd_ps(av, B0, c50), c51 = _mm256_fmadd_ps(av, B1, c51); \
  } while (0)
  if (UK_GEMM_ASM && full && a_rs == 1 && a_cs == MR && mr == MR) {
    /* Packed A (gemm.c's micro-panels): one pointer, MR floats per k. */
    const float *ap = a;
    const float *bk = b;
    UK_PIN_ACCUMULATORS();
    if (flags & (ACCY__UK_PREFETCH_NEXT | ACCY__UK_PREFETCH_A)) {
      /* B's row kc rows on, and A ahead on every other step (the AVX-512
       * level's PACKED_STEPS; B one line a row here). */
      const ptrdiff_t ahead = (flags & ACCY__UK_PREFETCH_NEXT) ? (ptrdiff_t)kc * b_rs : 0;
      const bool pfa = flags & ACCY__UK_PREFETCH_A;
      for (size_t k = 0; k < kc; k++) {
        if (ahead) __builtin_prefetch(bk + ahead, 0, 2);
        if (pfa && (k & 1) == 0) __builtin_prefetch(ap + ACCY__UK_PREFETCH_A_AHEAD, 0, 3);
        UK_STEP_ASM("(%[ap])", "4(%[ap])", "8(%[ap])", "12(%[ap])", "16(%[ap])", "20(%[ap])",
                    [ap] "r"(ap), [bp] "r"(bk));
        ap += MR;
        bk += b_rs;
      }
    } else {
      for (size_t k = 0; k < kc; k++) {
        UK_STEP_ASM("(%[ap])", "4(%[ap])", "8(%[ap])", "12(%[ap])", "16(%[ap])", "20(%[ap])",
                    [ap] "r"(ap), [bp] "r"(bk));
        ap += MR;
        bk += b_rs;
      }
    }
    UK_UNPIN_ACCUMULATORS();
  } else if (full && mr == 1) {
    /* One row (a matrix-vector product): only its two accumulators, in the
     * same order as a row of a full tile, so the bits are those a full tile
     * gives the row; bound by the loads of B rather than by twelve FMAs. */
    const float *bk = b;
    for (size_t k = 0; k < kc; k++) {
      const __m256 av = _mm256_broadcast_ss(a0 + (ptrdiff_t)k * a_cs);
      c00 = _mm256_fmadd_ps(av, _mm256_loadu_ps(bk), c00);
      c01 = _mm256_fmadd_ps(av, _mm256_loadu_ps(bk + 8), c01);
      bk += b_rs;
    }
  } else if (full && a_cs == 1 && mr <= 3) {
    /* At most three rows a_rs apart (a small batch, or a GEMM's last rows):
     * their six chains only, not the tile's twelve (the same chains as
     * those rows of a full tile, so the same bits). */
    const float *bk = b;
#pragma GCC unroll 4
    for (size_t k = 0; k < kc; k++, bk += b_rs) {
      const __m256 b0 = _mm256_loadu_ps(bk), b1 = _mm256_loadu_ps(bk + 8);
      __m256 av = _mm256_broadcast_ss(a0 + k);
      c00 = _mm256_fmadd_ps(av, b0, c00), c01 = _mm256_fmadd_ps(av, b1, c01);
      av = _mm256_broadcast_ss(a1 + k);
      c10 = _mm256_fmadd_ps(av, b0, c10), c11 = _mm256_fmadd_ps(av, b1, c11);
      av = _mm256_broadcast_ss(a2 + k);
      c20 = _mm256_fmadd_ps(av, b0, c20), c21 = _mm256_fmadd_ps(av, b1, c21);
    }
  } else if (full) {
    if (UK_GEMM_ASM && a_cs == 1 && mr == MR) {
      /* Rows a_rs apart: p walks row 0 and q row 3, r is a_rs in bytes. */
      const float *p = a0, *q = a3, *bk = b;
      const ptrdiff_t r = a_rs * (ptrdiff_t)sizeof(float);
      UK_PIN_ACCUMULATORS();
      for (size_t k = 0; k < kc; k++) {
        UK_STEP_ASM("(%[p])", "(%[p],%[r],1)", "(%[p],%[r],2)", "(%[q])", "(%[q],%[r],1)",
                    "(%[q],%[r],2)", [p] "r"(p), [q] "r"(q), [r] "r"(r), [bp] "r"(bk));
        p++, q++;
        bk += b_rs;
      }
      UK_UNPIN_ACCUMULATORS();
    } else if (a_cs == 1) {
      for (size_t k = 0; k < kc; k++) {
        const float *bk = b + (ptrdiff_t)k * b_rs;
        __m256 b0 = _mm256_loadu_ps(bk), b1 = _mm256_loadu_ps(bk + 8);
        STEP(b0, b1, (ptrdiff_t)k);
      }
    } else {
      for (size_t k = 0; k < kc; k++) {
        const float *bk = b + (ptrdiff_t)k * b_rs;
        __m256 b0 = _mm256_loadu_ps(bk), b1 = _mm256_loadu_ps(bk + 8);
        STEP(b0, b1, (ptrdiff_t)k * a_cs);
      }
    }
  } else if (nr <= 8) {
    /* A narrow last panel: the first vector of columns only (the second's
     * accumulators are never stored), each column the same chain. */
    for (size_t k = 0; k < kc; k++) {
      const __m256 b0 = _mm256_maskload_ps(b + (ptrdiff_t)k * b_rs, m0);
      const ptrdiff_t o = (ptrdiff_t)k * a_cs;
      c00 = _mm256_fmadd_ps(_mm256_broadcast_ss(a0 + o), b0, c00);
      c10 = _mm256_fmadd_ps(_mm256_broadcast_ss(a1 + o), b0, c10);
      c20 = _mm256_fmadd_ps(_mm256_broadcast_ss(a2 + o), b0, c20);
      c30 = _mm256_fmadd_ps(_mm256_broadcast_ss(a3 + o), b0, c30);
      c40 = _mm256_fmadd_ps(_mm256_broadcast_ss(a4 + o), b0, c40);
      c50 = _mm256_fmadd_ps(_mm256_broadcast_ss(a5 + o), b0, c50);
    }
  } else {
    for (size_t k = 0; k < kc; k++) {
      const float *bk = b + (ptrdiff_t)k * b_rs;
      __m256 b0 = _mm256_maskload_ps(bk, m0), b1 = _mm256_maskload_ps(bk + 8, m1);
      STEP(b0, b1, (ptrdiff_t)k * a_cs);
    }
  }
#undef STEP
  tile_fin f;
  tile_fin_init(&f, flags, ep, true);
  if (full && mr == MR)
    TILE_FIN(&f, c, c_rs, MR, true, m0, m1);
  else
    TILE_FIN(&f, c, c_rs, mr, full, m0, m1);
}

void accy__f32_gemm_6x16__avx2(size_t mr, size_t nr, size_t kc, const float *a, ptrdiff_t a_rs,
                               ptrdiff_t a_cs, const float *b, ptrdiff_t b_rs, float *c,
                               ptrdiff_t c_rs, uint32_t flags, const accy__uk_epilogue *ep) {
  gemm_6x16(mr, nr, kc, a, a_rs, a_cs, b, b_rs, c, c_rs, flags, ep);
}

/* accy__uk_f32_gemm_panels_fn: the kernel's full tiles with packed A, one
 * panel after another in one call (the same code per tile, so the same
 * bits as a call per panel). */
void accy__f32_gemm_6x16_panels__avx2(size_t np, size_t kc, const float *a, const float *b,
                                      ptrdiff_t b_rs, ptrdiff_t b_ps, float *c, ptrdiff_t c_rs,
                                      uint32_t flags, const accy__uk_epilogue *ep) {
  accy__uk_epilogue e = {0};
  if (flags & ACCY__UK_EPILOGUE) e = *ep; /* read only when applied, as the kernel does */
  for (size_t p = 0; p < np; p++, b += b_ps, c += NR) {
    gemm_6x16(MR, NR, kc, a, 1, MR, b, b_rs, c, c_rs, flags, &e);
    if (e.bias_col) e.bias_col += NR;
    if (e.residual) e.residual += NR;
  }
}

/* The runs of a tile (uk.h's accy__uk_cruns) as the lane masks of its two
 * vectors: for each run and vector, all lanes (a plain load or store), none
 * (skipped) or some (a masked one). */
typedef struct runs8 {
  uint32_t n;
  ptrdiff_t off[ACCY__UK_RUNS_MAX];
  uint8_t bits[ACCY__UK_RUNS_MAX][2];
  __m256i m[ACCY__UK_RUNS_MAX][2];
} runs8;

static inline void runs8_of(const accy__uk_cruns *rn, runs8 *q) {
  const __m256i lane = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  q->n = rn->n;
  for (uint32_t r = 0; r < rn->n; r++) {
    q->off[r] = rn->off[r];
    for (int h = 0; h < 2; h++) {
      const uint32_t b = rn->mask[r] >> (8 * h) & 0xffu;
      q->bits[r][h] = (uint8_t)b;
      q->m[r][h] = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)b), lane), lane);
    }
  }
}

/* Vector h of a tile row through the runs: each run's lanes from (to)
 * p + off[r] + 8 h; lanes in no run kept (loads) or not written (stores). */
static inline __m256 runs8_load(const runs8 *q, const float *p, int h, __m256 v) {
  for (uint32_t r = 0; r < q->n; r++) {
    const float *s = p + q->off[r] + 8 * h;
    if (q->bits[r][h] == 0xffu)
      v = _mm256_loadu_ps(s);
    else if (q->bits[r][h])
      v = _mm256_blendv_ps(v, _mm256_maskload_ps(s, q->m[r][h]), _mm256_castsi256_ps(q->m[r][h]));
  }
  return v;
}

static inline void runs8_store(const runs8 *q, float *p, int h, __m256 v) {
  for (uint32_t r = 0; r < q->n; r++) {
    float *d = p + q->off[r] + 8 * h;
    if (q->bits[r][h] == 0xffu)
      _mm256_storeu_ps(d, v);
    else if (q->bits[r][h])
      _mm256_maskstore_ps(d, q->m[r][h], v);
  }
}

/* tile_fin_row through the runs: bias of the row, the residual (gathered
 * through the same runs), the clamp, then the stores. */
static inline __attribute__((always_inline)) void tile_fin_row_runs(const tile_fin *f, size_t i,
                                                                     __m256 v0, __m256 v1,
                                                                     float *c, ptrdiff_t c_rs,
                                                                     const runs8 *q) {
  if (f->e.on) {
    if (f->e.bias_row) {
      const __m256 br = _mm256_set1_ps(f->e.bias_row[i]);
      v0 = _mm256_add_ps(v0, br), v1 = _mm256_add_ps(v1, br);
    }
    if (f->e.residual) {
      const float *r = f->e.residual + (ptrdiff_t)i * f->e.res_rs;
      v0 = _mm256_add_ps(v0, runs8_load(q, r, 0, _mm256_setzero_ps()));
      v1 = _mm256_add_ps(v1, runs8_load(q, r, 1, _mm256_setzero_ps()));
    }
    if (f->e.clamp) v0 = vclamp8_apply(v0, &f->cl), v1 = vclamp8_apply(v1, &f->cl);
  }
  float *ci = c + (ptrdiff_t)i * c_rs;
  runs8_store(q, ci, 0, v0);
  runs8_store(q, ci, 1, v1);
}

#define TILE_FIN_RUNS(F, C, C_RS, MRV, Q)                              \
  do {                                                                 \
    tile_fin_row_runs(F, 0, c00, c01, C, C_RS, Q);                     \
    if ((MRV) > 1) tile_fin_row_runs(F, 1, c10, c11, C, C_RS, Q);      \
    if ((MRV) > 2) tile_fin_row_runs(F, 2, c20, c21, C, C_RS, Q);      \
    if ((MRV) > 3) tile_fin_row_runs(F, 3, c30, c31, C, C_RS, Q);      \
    if ((MRV) > 4) tile_fin_row_runs(F, 4, c40, c41, C, C_RS, Q);      \
    if ((MRV) > 5) tile_fin_row_runs(F, 5, c50, c51, C, C_RS, Q);      \
  } while (0)

/* One k step of the intrinsics' full tile on packed A (ap, MR floats) and
 * B's two vectors: the asm step's operations in its order (the same bits). */
#define IND_STEP(B0, B1)                                                         \
  do {                                                                           \
    const __m256 b0 = (B0), b1 = (B1);                                           \
    __m256 av = _mm256_broadcast_ss(ap);                                         \
    c00 = _mm256_fmadd_ps(av, b0, c00), c01 = _mm256_fmadd_ps(av, b1, c01);      \
    av = _mm256_broadcast_ss(ap + 1);                                            \
    c10 = _mm256_fmadd_ps(av, b0, c10), c11 = _mm256_fmadd_ps(av, b1, c11);      \
    av = _mm256_broadcast_ss(ap + 2);                                            \
    c20 = _mm256_fmadd_ps(av, b0, c20), c21 = _mm256_fmadd_ps(av, b1, c21);      \
    av = _mm256_broadcast_ss(ap + 3);                                            \
    c30 = _mm256_fmadd_ps(av, b0, c30), c31 = _mm256_fmadd_ps(av, b1, c31);      \
    av = _mm256_broadcast_ss(ap + 4);                                            \
    c40 = _mm256_fmadd_ps(av, b0, c40), c41 = _mm256_fmadd_ps(av, b1, c41);      \
    av = _mm256_broadcast_ss(ap + 5);                                            \
    c50 = _mm256_fmadd_ps(av, b0, c50), c51 = _mm256_fmadd_ps(av, b1, c51);      \
  } while (0)

/* The full-tile loop of the GEMM kernel's packed-A path, with row k of B at
 * b + b_off[k]: the same steps (asm, or under AddressSanitizer the same
 * intrinsics in the same order) and the same tile epilogue, so the same
 * bits. */
void accy__f32_gemm_ind_6x16__avx2(size_t mr, size_t kc, const float *a, const float *b,
                                   const ptrdiff_t *b_off, float *c, ptrdiff_t c_rs,
                                   const accy__uk_cruns *runs, uint32_t flags,
                                   const accy__uk_epilogue *ep) {
  __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
  c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = _mm256_setzero_ps();
  runs8 q;
  q.n = 0;
  if (runs) runs8_of(runs, &q);
  if (flags & ACCY__UK_ACCUMULATE) {
    float *cr[MR];
    for (size_t i = 0; i < MR; i++) cr[i] = c + (ptrdiff_t)(i < mr ? i : 0) * c_rs;
    if (runs) {
#define LOAD_ROW_RUNS(I, V0, V1) V0 = runs8_load(&q, cr[I], 0, V0), V1 = runs8_load(&q, cr[I], 1, V1)
      LOAD_ROW_RUNS(0, c00, c01);
      LOAD_ROW_RUNS(1, c10, c11);
      LOAD_ROW_RUNS(2, c20, c21);
      LOAD_ROW_RUNS(3, c30, c31);
      LOAD_ROW_RUNS(4, c40, c41);
      LOAD_ROW_RUNS(5, c50, c51);
#undef LOAD_ROW_RUNS
    } else {
      c00 = _mm256_loadu_ps(cr[0]), c01 = _mm256_loadu_ps(cr[0] + 8);
      c10 = _mm256_loadu_ps(cr[1]), c11 = _mm256_loadu_ps(cr[1] + 8);
      c20 = _mm256_loadu_ps(cr[2]), c21 = _mm256_loadu_ps(cr[2] + 8);
      c30 = _mm256_loadu_ps(cr[3]), c31 = _mm256_loadu_ps(cr[3] + 8);
      c40 = _mm256_loadu_ps(cr[4]), c41 = _mm256_loadu_ps(cr[4] + 8);
      c50 = _mm256_loadu_ps(cr[5]), c51 = _mm256_loadu_ps(cr[5] + 8);
    }
  }
  const float *ap = a;
#if UK_GEMM_ASM
  UK_PIN_ACCUMULATORS();
  for (size_t k = 0; k < kc; k++) {
    const float *bk = b + b_off[k];
    UK_STEP_ASM("(%[ap])", "4(%[ap])", "8(%[ap])", "12(%[ap])", "16(%[ap])", "20(%[ap])",
                [ap] "r"(ap), [bp] "r"(bk));
    ap += MR;
  }
  UK_UNPIN_ACCUMULATORS();
#else
  for (size_t k = 0; k < kc; k++, ap += MR) {
    const float *bk = b + b_off[k];
    IND_STEP(_mm256_loadu_ps(bk), _mm256_loadu_ps(bk + 8));
  }
#endif
  tile_fin f;
  tile_fin_init(&f, flags, ep, false);
  if (runs) {
    if (mr >= MR)
      TILE_FIN_RUNS(&f, c, c_rs, MR, &q);
    else
      TILE_FIN_RUNS(&f, c, c_rs, mr, &q);
    return;
  }
  const __m256i all = _mm256_set1_epi32(-1);
  if (mr >= MR)
    TILE_FIN(&f, c, c_rs, MR, true, all, all);
  else
    TILE_FIN(&f, c, c_rs, mr, true, all, all);
}

/* Row |i| of a pooled tile: bias and clamp on both vectors (row y's eight
 * columns, row y + 1's), then each window's fold in row-major order
 * (associative under the rule), four pooled values, the first n_out
 * stored. */
static inline __attribute__((always_inline)) void pool_fin_row(const tile_fin *f, size_t i,
                                                                __m256 v0, __m256 v1, float *c,
                                                                ptrdiff_t c_rs, size_t n_out) {
  if (f->e.on) {
    if (f->e.bias_row) {
      const __m256 br = _mm256_set1_ps(f->e.bias_row[i]);
      v0 = _mm256_add_ps(v0, br), v1 = _mm256_add_ps(v1, br);
    }
    if (f->e.clamp) v0 = vclamp8_apply(v0, &f->cl), v1 = vclamp8_apply(v1, &f->cl);
  }
  /* Per 128-bit lane: (v0 even, v0 even, v1 even, v1 even) and the odd
   * ones: window q of row y at lane q of each half (0, 1 | 4, 5), of row y
   * + 1 at lanes 2, 3 | 6, 7. */
  const __m256 h = vm_fold8(_mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(2, 0, 2, 0)),
                            _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(3, 1, 3, 1)), true);
  const __m256 p = vm_fold8(h, _mm256_shuffle_ps(h, h, _MM_SHUFFLE(3, 2, 3, 2)), true);
  /* Lanes 0, 1, 4, 5 as one vector of four, its first n_out stored. */
  const __m128 q = _mm_movelh_ps(_mm256_castps256_ps128(p), _mm256_extractf128_ps(p, 1));
  vm_store_first8(c + (ptrdiff_t)i * c_rs, _mm256_castps128_ps256(q), n_out < 4 ? n_out : 4);
}

void accy__f32_gemm_ind_pool_6x16__avx2(size_t mr, size_t kc, const float *a, const float *b,
                                        const ptrdiff_t *b_off, ptrdiff_t b_row, float *c,
                                        ptrdiff_t c_rs, size_t n_out, uint32_t flags,
                                        const accy__uk_epilogue *ep) {
  __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
  c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = _mm256_setzero_ps();
  const float *ap = a;
  for (size_t k = 0; k < kc; k++, ap += MR) {
    const float *bk = b + b_off[k];
    IND_STEP(_mm256_loadu_ps(bk), _mm256_loadu_ps(bk + b_row));
  }
  tile_fin f;
  tile_fin_init(&f, flags, ep, false);
  pool_fin_row(&f, 0, c00, c01, c, c_rs, n_out);
  if (mr > 1) pool_fin_row(&f, 1, c10, c11, c, c_rs, n_out);
  if (mr > 2) pool_fin_row(&f, 2, c20, c21, c, c_rs, n_out);
  if (mr > 3) pool_fin_row(&f, 3, c30, c31, c, c_rs, n_out);
  if (mr > 4) pool_fin_row(&f, 4, c40, c41, c, c_rs, n_out);
  if (mr > 5) pool_fin_row(&f, 5, c50, c51, c, c_rs, n_out);
}

/* uk.h's gemv_split, one row at a time: at most sixteen columns in two
 * vectors of eight (loaded and stored under lane masks unless all sixteen
 * are there), four chains of two vectors in flight; the chains added (c0 +
 * c1) + (c2 + c3), then tile_fin_row's epilogue. */
void accy__f32_gemv_split_4x16__avx2(size_t mr, size_t n, size_t kc, const float *a,
                                     ptrdiff_t a_rs, ptrdiff_t a_cs, const float *b,
                                     ptrdiff_t b_rs, float *c, ptrdiff_t c_rs, uint32_t flags,
                                     const accy__uk_epilogue *ep) {
  const bool full = n == 16;
  const __m256i m0 = first_lanes(n < 8 ? n : 8), m1 = first_lanes(n > 8 ? n - 8 : 0);
  tile_fin f;
  tile_fin_init(&f, flags, ep, true);
  for (size_t i = 0; i < mr; i++) {
    const float *ai = a + (ptrdiff_t)i * a_rs;
    float *ci = c + (ptrdiff_t)i * c_rs;
    __m256 s00 = _mm256_setzero_ps(), s01 = s00, s10 = s00, s11 = s00, s20 = s00, s21 = s00,
           s30 = s00, s31 = s00;
    if (flags & ACCY__UK_ACCUMULATE)
      s00 = _mm256_maskload_ps(ci, m0), s01 = _mm256_maskload_ps(ci + 8, m1);
#define SPLIT_LOAD(p, h)                                                                   \
  (full ? _mm256_loadu_ps((p) + 8 * (h)) : _mm256_maskload_ps((p) + 8 * (h), (h) ? m1 : m0))
#define SPLIT_STEP(S0, S1, KK)                                                             \
  do {                                                                                     \
    const __m256 av = _mm256_broadcast_ss(ai + (ptrdiff_t)(KK) * a_cs);                   \
    const float *bq = b + (ptrdiff_t)(KK) * b_rs;                                          \
    S0 = _mm256_fmadd_ps(av, SPLIT_LOAD(bq, 0), S0);                                       \
    S1 = _mm256_fmadd_ps(av, SPLIT_LOAD(bq, 1), S1);                                       \
  } while (0)
    size_t k = 0;
    for (; k + 4 <= kc; k += 4) {
      SPLIT_STEP(s00, s01, k);
      SPLIT_STEP(s10, s11, k + 1);
      SPLIT_STEP(s20, s21, k + 2);
      SPLIT_STEP(s30, s31, k + 3);
    }
    if (k < kc) SPLIT_STEP(s00, s01, k);
    if (k + 1 < kc) SPLIT_STEP(s10, s11, k + 1);
    if (k + 2 < kc) SPLIT_STEP(s20, s21, k + 2);
#undef SPLIT_STEP
#undef SPLIT_LOAD
    const __m256 v0 = _mm256_add_ps(_mm256_add_ps(s00, s10), _mm256_add_ps(s20, s30));
    const __m256 v1 = _mm256_add_ps(_mm256_add_ps(s01, s11), _mm256_add_ps(s21, s31));
    tile_fin_row(&f, i, v0, v1, c, c_rs, full, m0, m1);
  }
}

/* One row against np (1..4) full panels of 16 columns: panel p's row k at
 * b + p * b_ps + k * b_rs, its C at c + 16 p. Each output is the same FMA
 * chain over k, from the same start, with the same epilogue, as the GEMM
 * kernel's mr == 1 path gives it, so the bits match; with up to eight
 * independent chains instead of two, it runs at the speed of the loads of
 * B instead of the FMA latency. */
void accy__f32_gemv_1x64__avx2(size_t np, size_t kc, const float *a, ptrdiff_t a_cs,
                               const float *b, ptrdiff_t b_rs, ptrdiff_t b_ps, float *c,
                               uint32_t flags, const accy__uk_epilogue *ep) {
  __m256 acc[4][2];
  const __m256i all = _mm256_set1_epi32(-1);
  for (size_t p = 0; p < 4; p++) {
    const size_t q = p < np ? p : 0; /* unused chains repeat panel 0, never stored */
    if (flags & ACCY__UK_ACCUMULATE) {
      acc[p][0] = _mm256_loadu_ps(c + 16 * q);
      acc[p][1] = _mm256_loadu_ps(c + 16 * q + 8);
    } else {
      acc[p][0] = acc[p][1] = _mm256_setzero_ps();
    }
  }
  const float *b0 = b, *b1 = b + (np > 1 ? 1 : 0) * b_ps, *b2 = b + (np > 2 ? 2 : 0) * b_ps,
              *b3 = b + (np > 3 ? 3 : 0) * b_ps;
  __m256 c00 = acc[0][0], c01 = acc[0][1], c10 = acc[1][0], c11 = acc[1][1];
  __m256 c20 = acc[2][0], c21 = acc[2][1], c30 = acc[3][0], c31 = acc[3][1];
  for (size_t k = 0; k < kc; k++) {
    const __m256 av = _mm256_broadcast_ss(a + (ptrdiff_t)k * a_cs);
    const ptrdiff_t o = (ptrdiff_t)k * b_rs;
    c00 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b0 + o), c00);
    c01 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b0 + o + 8), c01);
    c10 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b1 + o), c10);
    c11 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b1 + o + 8), c11);
    c20 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b2 + o), c20);
    c21 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b2 + o + 8), c21);
    c30 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b3 + o), c30);
    c31 = _mm256_fmadd_ps(av, _mm256_loadu_ps(b3 + o + 8), c31);
  }
  acc[0][0] = c00, acc[0][1] = c01, acc[1][0] = c10, acc[1][1] = c11;
  acc[2][0] = c20, acc[2][1] = c21, acc[3][0] = c30, acc[3][1] = c31;
  tile_fin f;
  tile_fin_init(&f, flags, ep, true);
  const float *bias_col = f.e.bias_col, *residual = f.e.residual;
  for (size_t p = 0; p < np; p++) {
    f.e.bias_col = bias_col ? bias_col + 16 * p : NULL;
    f.e.residual = residual ? residual + 16 * p : NULL;
    tile_fin_row(&f, 0, acc[p][0], acc[p][1], c + 16 * p, 0, true, all, all);
  }
}

/* Eight at a time; the tail through the same vector code on a copy. */
void accy__f32_epilogue__avx2(size_t n, float *dst, const float *src, const float *bias,
                              size_t bstride, const float *res, bool clamp, float lo, float hi) {
  const vclamp8_plan cl = vclamp8_plan_for(lo, hi);
  const __m256 b1 = bias && bstride == 0 ? _mm256_set1_ps(bias[0]) : _mm256_setzero_ps();
  size_t i = 0;
#define EPI8(V, BV, RV)                                  \
  do {                                                   \
    if (bias) V = _mm256_add_ps(V, BV);                  \
    if (res) V = _mm256_add_ps(V, RV);                   \
    if (clamp) V = vclamp8_apply(V, &cl);                \
  } while (0)
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(src + i);
    const __m256 bv = bias && bstride ? _mm256_loadu_ps(bias + i) : b1;
    const __m256 rv = res ? _mm256_loadu_ps(res + i) : b1;
    EPI8(v, bv, rv);
    _mm256_storeu_ps(dst + i, v);
  }
  if (i < n) {
    float td[8] = {0}, tb[8] = {0}, tr[8] = {0};
    for (size_t j = 0; j < n - i; j++) {
      td[j] = src[i + j];
      if (bias && bstride) tb[j] = bias[i + j];
      if (res) tr[j] = res[i + j];
    }
    __m256 v = _mm256_loadu_ps(td);
    const __m256 bv = bias && bstride ? _mm256_loadu_ps(tb) : b1;
    const __m256 rv = _mm256_loadu_ps(tr);
    EPI8(v, bv, rv);
    _mm256_storeu_ps(td, v);
    for (size_t j = 0; j < n - i; j++) dst[i + j] = td[j];
  }
#undef EPI8
}
