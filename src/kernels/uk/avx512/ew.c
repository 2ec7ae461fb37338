/* src/kernels/uk/avx512/ew.c: the elementwise microkernels at the avx512
 * level (uk/ew_body.h): the same loops built with the AVX-512 level's flags
 * (contraction stays off, so the exact ops give the portable bits in wider
 * vectors), f32 exp in sixteen lanes, and the AVX2 level's other vector
 * spans (maximum, minimum, clamp, power and the other transcendentals), so
 * that every op has the AVX2 level's bits. */
#include "src/internal.h"

#include <immintrin.h>

#include "src/kernels/uk/avx2/vmath.h" /* the coefficients (kExp) */
#include "src/kernels/uk/uk.h"

#define V16(x) _mm512_set1_ps(x)

/* vm_exp of avx2/vmath.h in sixteen lanes: the same operations in the same
 * order, so the same bits lane for lane. */
static inline __m512 vm_exp16(__m512 x) {
  const __m512 xc = _mm512_min_ps(_mm512_max_ps(x, V16(-104.0f)), V16(89.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, V16(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, V16(0.693359375f), xc);
  r = _mm512_fnmadd_ps(n, V16(-2.12194440e-4f), r);
  __m512 p = V16(kExp[6]);
  for (int i = 5; i >= 0; i--) p = _mm512_fmadd_ps(p, r, V16(kExp[i]));
  const __m512i ni = _mm512_cvtps_epi32(n);
  const __m512i n1 = _mm512_srai_epi32(ni, 1), n2 = _mm512_sub_epi32(ni, n1);
  const __m512i bias = _mm512_set1_epi32(127);
  const __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, bias), 23));
  const __m512 s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, bias), 23));
  const __m512 y = _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), y, x); /* NaN passes */
}

/* Sixteen at a time; the tail under a lane mask (lanes past it compute on
 * zeros and are not stored). */
static void v_exp16_f32(size_t n, void *o, const void *x0, const void *x1, const void *x2,
                        size_t s0, size_t s2) {
  (void)x1, (void)x2, (void)s0, (void)s2;
  float *y = o;
  const float *a = x0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, vm_exp16(_mm512_loadu_ps(a + i)));
  if (i < n) {
    const __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(y + i, m, vm_exp16(_mm512_maskz_loadu_ps(m, a + i)));
  }
}

static accy__uk_ew_fn avx512_override(uint16_t op, int32_t dt) {
  if (dt != ACCY_DTYPE_F32) return NULL;
  switch (op) {
    case ACCY_OP_EXP: return v_exp16_f32;
    case ACCY_OP_MAXIMUM:
    case ACCY_OP_MINIMUM:
    case ACCY_OP_CLAMP:
    case ACCY_OP_POWER:
    case ACCY_OP_LOG:
    case ACCY_OP_TANH:
    case ACCY_OP_LOGISTIC:
    case ACCY_OP_ERF: return accy__ew_map__avx2(op, dt);
    default: return NULL;
  }
}

#define EW_OVERRIDE_MAP(op, dt) avx512_override(op, dt)
#define EW_EXPORT(name) accy__##name##__avx512
#include "src/kernels/uk/ew_body.h"
