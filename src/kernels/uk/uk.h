/* src/kernels/uk/uk.h: the microkernel layer. Microkernels know nothing of
 * the IR: they compute on pointers, strides and counts, one variant per
 * ISA level, each in a translation unit built with that level's flags
 * (portable/ with the baseline flags, avx2/ with -mavx2 -mfma). Names say
 * dtype, op, tile and level, as XNNPACK's and BLIS's do:
 * accy__f32_gemm_6x16__avx2.
 *
 * A level's microkernels are gathered in one table (accy__uk). The compiler
 * takes the table of the process's ISA level (src/base/cpu.h) when it
 * prepares a kernel and stores the function pointers it needs in the plan,
 * so invoke never dispatches. Tests take every table the CPU can run and
 * compare it with the portable one (tests/check_uk.c). */
#ifndef ACCY_KERNELS_UK_UK_H
#define ACCY_KERNELS_UK_UK_H

#include <stddef.h>
#include <stdint.h>

#include "src/base/cpu.h"

/* ---- f32 GEMM -------------------------------------------------------------- */

/* What a GEMM microkernel does after the sum, on the tile in registers. */
typedef struct accy__uk_epilogue {
  const float *bias_row; /* + bias_row[i] for tile row i (NULL: none) */
  const float *bias_col; /* + bias_col[j] for tile column j (NULL: none) */
  float lo, hi;          /* then clamped to [lo, hi] (ReLU: [0, +inf]); only with CLAMP */
} accy__uk_epilogue;

/* Flags of a GEMM microkernel call. */
#define ACCY__UK_ACCUMULATE 1u /* start from C instead of 0 */
#define ACCY__UK_EPILOGUE 2u   /* apply the bias of ep (the last K block) */
#define ACCY__UK_CLAMP 4u      /* and clamp to [ep->lo, ep->hi] */

/* C[0:mr, 0:nr] = (C or 0) + A[0:mr, 0:kc] x B[0:kc, 0:nr], mr <= MR, nr <= NR.
 * A(i, k) is a[i * a_rs + k * a_cs]; row k of B is nr contiguous floats at
 * b + k * b_rs (nothing right of column nr is read); C(i, j) is
 * c[i * c_rs + j] (nothing outside the mr x nr tile is written).
 * Each C element is one chain over k = 0, 1, ..., kc - 1 from its start
 * value: acc = acc + a * b (portable: rounded product, then sum; above it a
 * fused multiply-add), so splitting K into blocks that accumulate gives the
 * same bits as one call over all of K. */
typedef void (*accy__uk_f32_gemm_fn)(size_t mr, size_t nr, size_t kc, const float *a,
                                     ptrdiff_t a_rs, ptrdiff_t a_cs, const float *b,
                                     ptrdiff_t b_rs, float *c, ptrdiff_t c_rs, uint32_t flags,
                                     const accy__uk_epilogue *ep);

typedef struct accy__uk_f32_gemm {
  const char *name;
  uint32_t mr, nr;
  accy__uk_f32_gemm_fn fn;
} accy__uk_f32_gemm;

/* ---- the table of one level -------------------------------------------------- */

typedef struct accy__uk {
  accy__isa isa;
  accy__uk_f32_gemm f32_gemm;
} accy__uk;

/* The table of |isa|, or NULL when this build has no such level. The CPU
 * must have it before any of its functions is called. */
const accy__uk *accy__uk_for(accy__isa isa);
/* The table of the process's ISA level (never NULL). */
const accy__uk *accy__uk_get(void);

/* Per-level microkernels (their own translation units). */
void accy__f32_gemm_4x16__portable(size_t mr, size_t nr, size_t kc, const float *a,
                                   ptrdiff_t a_rs, ptrdiff_t a_cs, const float *b, ptrdiff_t b_rs,
                                   float *c, ptrdiff_t c_rs, uint32_t flags,
                                   const accy__uk_epilogue *ep);
void accy__f32_gemm_6x16__avx2(size_t mr, size_t nr, size_t kc, const float *a, ptrdiff_t a_rs,
                               ptrdiff_t a_cs, const float *b, ptrdiff_t b_rs, float *c,
                               ptrdiff_t c_rs, uint32_t flags, const accy__uk_epilogue *ep);

#endif /* ACCY_KERNELS_UK_UK_H */
