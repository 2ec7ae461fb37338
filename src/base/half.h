/* src/base/half.h: f16 and bf16 <-> f32 conversions. Narrowing rounds to
 * nearest, ties to even; NaN stays NaN (quiet); overflow gives infinity.
 * Pure functions, header-only so kernels inline them; the text form uses
 * them too. */
#ifndef ACCY_BASE_HALF_H
#define ACCY_BASE_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t accy__f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static inline float accy__bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static inline float accy__bf16_to_f32(uint16_t h) { return accy__bits_f32((uint32_t)h << 16); }

static inline uint16_t accy__f32_to_bf16(float f) {
  uint32_t u = accy__f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
  uint32_t lsb = (u >> 16) & 1u;
  u += 0x7fffu + lsb;
  return (uint16_t)(u >> 16);
}

static inline float accy__f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t u;
  if (exp == 0) {
    if (mant == 0) {
      u = sign;
    } else { /* subnormal: normalise */
      int e = -1;
      do {
        e++;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      mant &= 0x3ffu;
      u = sign | ((uint32_t)(127 - 15 - e) << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000u | (mant << 13) | (mant ? 0x00400000u : 0);
  } else {
    u = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return accy__bits_f32(u);
}

static inline uint16_t accy__f32_to_f16(float f) {
  uint32_t u = accy__f32_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); /* NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: inf */
  if (a < 0x38800000u) {                                   /* below 2^-14: subnormal or 0 */
    if (a < 0x33000000u) return sign;                      /* below half the smallest: 0 */
    uint32_t e = a >> 23;
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e; /* 14..24: bits dropped beyond the 13 of f32->f16 */
    uint32_t half_m = m >> (shift - 0);
    /* value = m * 2^(e-150); f16 subnormal unit 2^-24: q = m * 2^(e-126) */
    uint32_t rem = m & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_m & 1u))) half_m++;
    return (uint16_t)(sign | half_m);
  }
  uint32_t r = a + 0x0fffu + ((a >> 13) & 1u) - 0x38000000u; /* rebias, round */
  return (uint16_t)(sign | (r >> 13));
}

/* Rounds |d| to f32 with round-to-odd: the result carries a sticky low bit
 * when inexact, so a second rounding to f16/bf16 (11 or 8 significant bits,
 * far fewer than 24) rounds as if straight from |d|. NaN and infinities
 * pass through; a finite |d| beyond the f32 range gives FLT_MAX (odd). */
static inline float accy__f64_to_f32_odd(double d) {
  float f = (float)d;
  if (__builtin_isnan(d) || __builtin_isinf(d) || (double)f == d) return f;
  uint32_t u = accy__f32_bits(f);
  double af = (double)f < 0 ? -(double)f : (double)f;
  double ad = d < 0 ? -d : d;
  if (af > ad) u -= 1; /* one step toward zero (sign-magnitude) */
  return accy__bits_f32(u | 1u);
}

#endif /* ACCY_BASE_HALF_H */
