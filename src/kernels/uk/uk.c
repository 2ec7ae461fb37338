/* src/kernels/uk/uk.c: the microkernel table of each ISA level. */
#include "src/internal.h"

#include "src/kernels/uk/uk.h"

static const accy__uk kPortable = {
    .isa = ACCY__ISA_PORTABLE,
    .f32_gemm = {"f32_gemm_4x16__portable", 4, 16, accy__f32_gemm_4x16__portable, NULL, NULL,
                 accy__f32_gemm_ind_4x16__portable, "f32_gemm_ind_4x16__portable",
                 accy__f32_gemm_ind_pool_4x16__portable, 4, NULL, NULL, NULL,
                 accy__f32_transpose__portable},
    .f32_dwconv_row = accy__f32_dwconv_row__portable,
    .f32_epilogue = accy__f32_epilogue__portable,
    .f32_pool_row = accy__f32_pool_row__portable,
    .f32_reduce_rows = accy__f32_reduce_rows__portable,
    .h16_reduce_rows = accy__h16_reduce_rows__portable,
    .reduce_cols = accy__reduce_cols__portable,
    .f32_gather_rows = accy__f32_gather_rows__portable,
    .f32_transpose = accy__f32_transpose__portable,
    .f32_wino_in = accy__f32_wino_in__portable,
    .f32_wino_out = accy__f32_wino_out__portable,
    .f32_wino_out_pool = accy__f32_wino_out_pool__portable,
    .f32_wino4_in = accy__f32_wino4_in__portable,
    .f32_wino4_out = accy__f32_wino4_out__portable,
    .f32_wino4_out_pool = accy__f32_wino4_out_pool__portable,
    .ew = {accy__ew_map__portable, accy__ew_compare__portable, accy__ew_convert__portable,
           accy__ew_select__portable, accy__ew_map_x1__portable},
};

#if ACCY__BUILD_HAS_AVX2
static const accy__uk kAvx2 = {
    .isa = ACCY__ISA_AVX2,
    .f32_gemm = {"f32_gemm_6x16__avx2", 6, 16, accy__f32_gemm_6x16__avx2,
                 accy__f32_gemv_1x64__avx2, "f32_gemv_1x64__avx2", accy__f32_gemm_ind_6x16__avx2,
                 "f32_gemm_ind_6x16__avx2", accy__f32_gemm_ind_pool_6x16__avx2, 6,
                 accy__f32_gemv_split_4x16__avx2, "f32_gemv_split_4x16__avx2",
                 accy__f32_gemm_6x16_panels__avx2, accy__f32_transpose__avx2},
    .f32_dwconv_row = accy__f32_dwconv_row__avx2,
    .f32_dwconv_plane = accy__f32_dwconv_plane__avx2,
    .f32_dwconv_lanes = accy__f32_dwconv_lanes__avx2,
    .f32_dwconv_lanes_n = 8,
    .f32_epilogue = accy__f32_epilogue__avx2,
    .f32_pool_row = accy__f32_pool_row__avx2,
    .f32_pool3s2_rows = accy__f32_pool3s2_rows__avx2,
    .f32_reduce_rows = accy__f32_reduce_rows__avx2,
    .h16_reduce_rows = accy__h16_reduce_rows__avx2,
    .reduce_cols = accy__reduce_cols__avx2,
    .ew = {accy__ew_map__avx2, accy__ew_compare__avx2, accy__ew_convert__avx2,
           accy__ew_select__avx2, accy__ew_map_x1__avx2},
    .f32_chain = accy__f32_chain__avx2,
    .f32_gather_rows = accy__f32_gather_rows__avx2,
    .f32_transpose = accy__f32_transpose__avx2,
    .f32_wino_in = accy__f32_wino_in__avx2,
    .f32_wino_out = accy__f32_wino_out__avx2,
    .f32_wino_out_pool = accy__f32_wino_out_pool__avx2,
    .f32_wino4_in = accy__f32_wino4_in__avx2,
    .f32_wino4_out = accy__f32_wino4_out__avx2,
    .f32_wino4_out_pool = accy__f32_wino4_out_pool__avx2,
};
#endif

#if ACCY__BUILD_HAS_AVX512
/* The GEMM, depthwise-row, epilogue, max/min pooling and elementwise microkernels of
 * its own (the elementwise ones take the AVX2 level's spans for all but the
 * transcendentals, pooling the AVX2 kernel for sums, products and NaN); the others
 * are the AVX2 level's (every AVX-512 CPU runs them), so those kernels' bits
 * are the AVX2 bits, and so are the rest (the same FMA chains and the same
 * vector math operations, whatever the vector width). */
static const accy__uk kAvx512 = {
    .isa = ACCY__ISA_AVX512,
    .f32_gemm = {"f32_gemm_8x32__avx512", 8, 32, accy__f32_gemm_8x32__avx512,
                 accy__f32_gemv_1x128__avx512, "f32_gemv_1x128__avx512",
                 accy__f32_gemm_ind_8x32__avx512, "f32_gemm_ind_8x32__avx512",
                 accy__f32_gemm_ind_pool_8x32__avx512, 4, accy__f32_gemv_split_4x16__avx512,
                 "f32_gemv_split_4x16__avx512", accy__f32_gemm_8x32_panels__avx512,
                 accy__f32_transpose__avx512},
    .f32_dwconv_row = accy__f32_dwconv_row__avx512,
    .f32_dwconv_plane = accy__f32_dwconv_plane__avx512,
    .f32_dwconv_lanes = accy__f32_dwconv_lanes__avx512,
    .f32_dwconv_lanes_n = 16,
    .f32_epilogue = accy__f32_epilogue__avx512,
    .f32_pool_row = accy__f32_pool_row__avx512,
    .f32_pool3s2_rows = accy__f32_pool3s2_rows__avx512,
    .f32_reduce_rows = accy__f32_reduce_rows__avx512,
    .h16_reduce_rows = accy__h16_reduce_rows__avx2,
    .reduce_cols = accy__reduce_cols__avx2,
    .ew = {accy__ew_map__avx512, accy__ew_compare__avx512, accy__ew_convert__avx512,
           accy__ew_select__avx512, accy__ew_map_x1__avx512},
    .f32_chain = accy__f32_chain__avx512,
    .f32_gather_rows = accy__f32_gather_rows__avx2,
    .f32_transpose = accy__f32_transpose__avx512,
    .f32_wino_in = accy__f32_wino_in__avx512,
    .f32_wino_out = accy__f32_wino_out__avx512,
    .f32_wino_out_pool = accy__f32_wino_out_pool__avx512,
    .f32_wino4_in = accy__f32_wino4_in__avx512,
    .f32_wino4_out = accy__f32_wino4_out__avx512,
    .f32_wino4_out_pool = accy__f32_wino4_out_pool__avx512,
};
#endif

const accy__uk *accy__uk_for(accy__isa isa) {
  switch (isa) {
    case ACCY__ISA_PORTABLE: return &kPortable;
#if ACCY__BUILD_HAS_AVX2
    case ACCY__ISA_AVX2: return &kAvx2;
#endif
#if ACCY__BUILD_HAS_AVX512
    case ACCY__ISA_AVX512: return &kAvx512;
#endif
    default: return NULL;
  }
}

const accy__uk *accy__uk_get(void) {
  const accy__uk *t = accy__uk_for(accy__isa_level());
  return t ? t : &kPortable;
}
