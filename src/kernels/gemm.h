/* src/kernels/gemm.h: the f32 GEMM driver on top of the microkernels
 * (uk/uk.h). It knows nothing of the IR: a problem is C = A x B over a batch,
 * with A and C given by strides and B either given by strides (each row's
 * columns contiguous) or packed once into panels of the microkernel's width.
 *
 * Work is split into items, rectangles of C of mb rows by nb columns of one
 * batch index, whose size comes from the problem's shape and the
 * microkernel's tile only (never from the thread count). An item walks K in
 * blocks of kc, panels of nr columns, then tiles of mr rows: kc 256 (a kc x
 * nr panel of B stays in L1 across the row tiles, the item's B block and A
 * rows in L2), or, for a plain GEMM, as large as lets the B block fit in
 * this CPU's L2, rows outer (a row tile's A stays in L1 across the panels).
 * Every element of C is one chain over k in increasing order, whatever the
 * blocking, so the geometry decides speed only, never bits. */
#ifndef ACCY_KERNELS_GEMM_H
#define ACCY_KERNELS_GEMM_H

#include "src/internal.h"
#include "src/kernels/uk/uk.h"

/* Fills rows k0.. k0 + kcur and columns n0 .. n0 + cols of B (batch index
 * bi) at |dst| as panels of nr columns: column n0 + p * nr + j of row k0 + k
 * at dst[p * kcur * nr + k * nr + j], columns past |cols| zero up to the
 * last panel's end. Lets an operand that is not a matrix in memory (a
 * convolution's input, read as im2col) be B without being materialised:
 * the driver builds one item's K block at a time in the worker workspace,
 * exactly as it packs a direct B. */
/* The most columns of one item (a provider may keep a row of them on its
 * stack). */
#define ACCY__GEMM_NB_MAX 256u
/* The K block (a provider is asked for at most this many rows of k). */
#define ACCY__GEMM_KC 256u

typedef void (*accy__gemm_block_fn)(const void *ctx, const float *b, uint64_t bi, uint64_t k0,
                                    uint64_t kcur, uint64_t n0, uint64_t cols, float *dst);

/* Fills rows m0 .. m0 + rows and columns k0 .. k0 + kcur of A (batch index
 * bi) at |dst| as micro-panels of mr rows: element (m0 + t * mr + i, k0 + k)
 * at dst[t * kcur * mr + k * mr + i], rows past |rows| up to the last
 * panel's end any finite value (they are computed, never stored). The A
 * side's counterpart of accy__gemm_block_fn: a convolution read as im2col
 * with output positions as the rows. */
typedef void (*accy__gemm_a_block_fn)(const void *ctx, const float *a, uint64_t bi, uint64_t m0,
                                      uint64_t rows, uint64_t k0, uint64_t kcur, float *dst);

/* Takes one finished item of C: rows m0 .. m0 + rows and columns n0 .. n0
 * + cols of batch index bi, element (m0 + i, n0 + j) at tile[i * ld + j],
 * the plain sums (no epilogue applied), in the worker's workspace, which
 * the consumer may overwrite. |c| and |r| are those given to
 * accy__gemm_run. Lets C have a layout the microkernel cannot store (a
 * convolution's output read transposed) and applies the epilogue itself. */
typedef void (*accy__gemm_c_store_fn)(const void *ctx, uint64_t bi, uint64_t m0, uint64_t rows,
                                      uint64_t n0, uint64_t cols, float *tile, size_t ld,
                                      float *c, const float *r);

typedef struct accy__gemm {
  accy__uk_f32_gemm uk;
  uint64_t batch, M, N, K;
  /* A(b, i, k) = a[(b % a_batch_mod) * a_bs + i * a_rs + k * a_cs]
   * (a_batch_mod 0: no modulus), so that a convolution's filters repeat
   * over images while its groups step through them. */
  ptrdiff_t a_bs, a_rs, a_cs;
  uint64_t a_batch_mod;
  /* A packed once (a_packed != NULL, from accy__gemm_pack_a: per A batch
   * index, ceil(M / mr) micro-panels of K x mr floats, k outermost), read in
   * place of a; a constant convolution filter is packed at compile time. */
  const float *a_packed;
  /* A packed at run time, in a_packed's layout, into the buffer given to
   * accy__gemm_run as a (a pre-pass); a_packed is then only a non-NULL
   * marker. */
  bool a_run_packed;
  /* A from a block provider (then a, a_bs, a_rs, a_cs and a_packed are
   * unused): */
  accy__gemm_a_block_fn a_block;
  const void *a_block_ctx;
  /* B from a block provider (then b_bs, b_rs are unused): */
  accy__gemm_block_fn b_block;
  const void *b_block_ctx;
  /* B: packed (b_packed != NULL: per batch index, ceil(N / nr) panels of
   * K x nr floats, columns past N zero) or direct: B(b, k, j) =
   * b[b * b_bs + k * b_rs + j]. */
  const float *b_packed;
  /* The width of packed B's panels: 0 for nr; nr / 2 for B of at most nr /
   * 2 columns (a classifier's 10 outputs: one row of a panel then spans
   * one cache line instead of two, and the microkernel's loads of the
   * second vector are masked off). */
  uint64_t b_pnr;
  ptrdiff_t b_bs, b_rs;
  /* B packed at run time, in b_packed's layout, into the buffer given to
   * accy__gemm_run as b (a pre-pass: accy__gemm_pack_b_items); b_packed is
   * then only a non-NULL marker. */
  bool b_run_packed;
  /* Packed B's batch index is b % b_batch_mod (0: no modulus), so that
   * constant filters repeat over images. */
  uint64_t b_batch_mod;
  /* B read in place with scattered rows (b_off != NULL, K entries): B(b, k,
   * j) = b[b * b_bs + b_off[k] + j], through the microkernel's ind variant.
   * Needs A packed and either C to a consumer or C with padded rows
   * (c_wq); every tile is computed whole, so the caller makes B readable up
   * to the last panel's end. The epilogue has no bias_col; to a consumer
   * it is bias_row and the clamp only, which the microkernel applies
   * before the consumer gets the tile. */
  const ptrdiff_t *b_off;
  /* C with padded rows (c_wq > 0, with b_off, no consumer): column j of C
   * is the padded position (j / c_wq, j % c_wq), stored at column j - (j /
   * c_wq) (c_wq - c_ow) of C's row when j % c_wq < c_ow, and nowhere
   * otherwise; the microkernel stores each tile there through its column
   * runs (uk.h's accy__uk_cruns), with the whole epilogue. c_wq needs
   * accy__gemm_runs_fit. */
  uint64_t c_wq, c_ow;
  /* With c_wq: each tile pools 2 x 2 at stride 2 (the microkernel's
   * ind_pool, one K block): column j of the GEMM is padded position (2 (j /
   * c_pw), j % c_pw), the top row of a pair of rows (c_pw, c_ow rounded up
   * to whole half panels of nr / 2 columns), and C is the pooled plane,
   * row (j / c_pw) and column (j % c_pw) / 2 of c_ow / 2 per row. */
  bool pool;
  uint64_t c_pw;
  /* C to a consumer (then c_bs, c_rs and the epilogue fields are unused, and
   * the consumer applies any epilogue): an item's block of C lives in the
   * worker workspace until its last K block. */
  accy__gemm_c_store_fn c_store;
  const void *c_store_ctx;
  /* C(b, i, j) = c[b * c_bs + i * c_rs + j] */
  ptrdiff_t c_bs, c_rs;
  /* The epilogue: bias_row indexed by i (plus bias_row_bs per A batch
   * index, so a convolution's groups step through their channels), bias_col
   * by j (NULL: none); a residual with C's layout when has_residual; clamp
   * when ep_flags has ACCY__UK_CLAMP. */
  accy__uk_epilogue ep;
  ptrdiff_t bias_row_bs;
  bool has_residual;
  uint32_t ep_flags; /* 0, or ACCY__UK_EPILOGUE [| ACCY__UK_CLAMP] */
  /* With C to a consumer: the microkernel still applies the epilogue (a
   * bias and the clamp, no residual) before the consumer gets the tile, as
   * it always does where B has scattered rows (b_off). */
  bool ep_in_tile;
  /* Items as wide as they can be (rows halved first, down to two row
   * tiles): a group that follows each item (linalg.c) then runs over long
   * rows. */
  bool wide;
  /* Geometry, from accy__gemm_plan: items of mb rows and nb columns, walked
   * in sub-blocks of mb_sub rows (mb_sub == mb unless B comes from a
   * provider, whose items span more rows so that B is built fewer times). */
  uint64_t kc, mb, mb_sub, nb, m_items, n_items;
  /* Whether every K block is walked one row tile at a time over all the
   * item's panels (a plain GEMM's large K blocks, accy__gemm_plan_caches),
   * rather than panel by panel over the rows. */
  bool rows_outer;
  /* Whether an item copies its A block into the worker workspace, one K
   * block at a time, as micro-panels of mr rows with k outermost (so the
   * microkernel reads A contiguously); needs accy__gemm_workspace_bytes. */
  bool pack_a;
  /* Whether an item copies B into the worker workspace before its row tiles
   * use it, the whole kc x nb block of the item per K block in panels of nr
   * columns: a direct (unpacked) B read row by row contiguously, or what the
   * block provider builds. */
  bool pack_b;
  /* Whether more than GEMM_PACK_B_TILES tiles of rows read each panel of
   * B (gemm.c): what makes packing a direct B pay. Items pack it (pack_b)
   * only when K is large too; a pre-pass that packs it once per launch
   * asks accy__gemm_b_reread. */
  bool b_reread;
  /* A product of at most ACCY__UK_GEMV_SPLIT_MAX_M rows (one item) and
   * ACCY__UK_GEMV_SPLIT_N columns, K at least ACCY__UK_GEMV_SPLIT_MIN_K, B
   * one panel read in place or packed at compile time, C stored: each item
   * (one batch index) is calls of the level's gemv_split over all of K
   * (uk.h), four chains per output. */
  bool split;
} accy__gemm;

/* Whether every tile of nr columns of a C with padded rows of |wq|
 * positions (|ow| kept) has at most ACCY__UK_RUNS_MAX column runs. */
bool accy__gemm_runs_fit(uint64_t nr, uint64_t wq, uint64_t ow);

/* Chooses the item geometry from the shape, the microkernel in g->uk and
 * this CPU's L2 size; b_packed must already say whether B is packed (any
 * non-NULL pointer). */
void accy__gemm_plan(accy__gemm *g);
/* The same for an L2 of |l2_bytes| per core and an L3 of |l3_bytes| in
 * all (0: unknown): the L2 sizes a plain GEMM's K blocks, the L3 says
 * whether its B stays cached across the row blocks (tall items if not);
 * the geometry never changes bits, which tests check by planning for
 * several sizes. */
void accy__gemm_plan_caches(accy__gemm *g, uint64_t l2_bytes, uint64_t l3_bytes);
/* batch * m_items * n_items. */
uint64_t accy__gemm_items(const accy__gemm *g);
/* Work of one (full) item in multiply-adds, for the tile grain. */
uint64_t accy__gemm_item_cost(const accy__gemm *g);
/* The block of C that item |it| writes: rows m0 .. m0 + rows and columns
 * n0 .. n0 + cols of batch index bi (what accy__gemm_run computes for it). */
typedef struct accy__gemm_rect {
  uint64_t bi, m0, rows, n0, cols;
} accy__gemm_rect;
accy__gemm_rect accy__gemm_item_rect(const accy__gemm *g, uint64_t it);
/* Bytes of the per-worker workspace accy__gemm_run needs (0: none). */
uint64_t accy__gemm_workspace_bytes(const accy__gemm *g);
/* Runs items [begin, end). |b| is ignored when B is packed. |r| is the
 * residual (C's layout; read only when has_residual). |ws| is a 64-byte
 * aligned workspace of accy__gemm_workspace_bytes(g) bytes private to the
 * calling thread (may be NULL when that is 0). */
void accy__gemm_run(const accy__gemm *g, const float *a, const float *b, float *c,
                    const float *r, uint64_t begin, uint64_t end, void *ws);

/* Floats of packed A for g's shape and |a_batches| A batch indices. */
uint64_t accy__gemm_packed_a_floats(const accy__gemm *g, uint64_t a_batches);
/* Packs A(b, i, k) (g's a, a_bs, a_rs, a_cs) for b < a_batches into |dst|;
 * rows past M repeat the panel's first row (computed, never stored). */
void accy__gemm_pack_a(const accy__gemm *g, const float *a, uint64_t a_batches, float *dst);

/* Bytes of packed B for g's shape (batch x panels x K x nr floats). */
uint64_t accy__gemm_packed_floats(const accy__gemm *g);
/* Whether B would be worth packing whatever K: a direct B (not packed,
 * no scattered rows) that many tiles of rows read, or a block provider's.
 * linalg.c packs such a B once per launch by a pre-pass where it can. */
static inline bool accy__gemm_b_reread(const accy__gemm *g) {
  return !g->b_packed && !g->b_off && (g->b_reread || g->b_block);
}
/* Packs B(b, k, j) = src[b * bs + k * ks + j * js] into |dst|
 * (accy__gemm_packed_floats(g) floats). */
void accy__gemm_pack_b(const accy__gemm *g, const float *src, ptrdiff_t bs, ptrdiff_t ks,
                       ptrdiff_t js, float *dst);
/* The same in items, [begin, end) of accy__gemm_pack_b_item_count(g): a
 * pre-pass's tiles (each a block of rows of one batch index, all its
 * panels). */
uint64_t accy__gemm_pack_b_item_count(const accy__gemm *g);
void accy__gemm_pack_b_items(const accy__gemm *g, const float *src, ptrdiff_t bs, ptrdiff_t ks,
                             ptrdiff_t js, float *dst, uint64_t begin, uint64_t end);

#endif /* ACCY_KERNELS_GEMM_H */
