/* tests/testutil.c: see testutil.h. */
#include "tests/testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/base/half.h"
#include "src/kernels/kernels.h"

void tu_rng_seed(tu_rng *r, uint64_t seed) { r->state = seed; }

uint64_t tu_rng_next(tu_rng *r) {
  uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int64_t tu_rng_range(tu_rng *r, int64_t lo, int64_t hi) {
  uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
  if (span == 0) return (int64_t)tu_rng_next(r);
  return (int64_t)((uint64_t)lo + tu_rng_next(r) % span);
}

double tu_rng_unit(tu_rng *r) { return (double)(tu_rng_next(r) >> 11) * 0x1.0p-53; }

static double float_edge(tu_rng *r, int32_t dtype) {
  double big = dtype == ACCY_DTYPE_F64 ? 1.7976931348623157e308
               : dtype == ACCY_DTYPE_F32 ? 3.4028234663852886e38
               : dtype == ACCY_DTYPE_F16 ? 65504.0 : 3.3895313892515355e38;
  double tiny = dtype == ACCY_DTYPE_F64 ? 4.9406564584124654e-324
                : dtype == ACCY_DTYPE_F32 ? 1.4012984643248171e-45
                : dtype == ACCY_DTYPE_F16 ? 5.9604644775390625e-08 : 9.183549615799121e-41;
  switch (tu_rng_next(r) % 10) {
    case 0: return 0.0;
    case 1: return -0.0;
    case 2: return 1.0;
    case 3: return -1.0;
    case 4: return NAN;
    case 5: return INFINITY;
    case 6: return -INFINITY;
    case 7: return big;
    case 8: return -big;
    default: return tiny;
  }
}

void tu_fill_random(tu_rng *r, int32_t dtype, void *dst, size_t n, bool edges, double range) {
  if (range == 0) range = 8;
  for (size_t i = 0; i < n; i++) {
    bool edge = edges && (tu_rng_next(r) % 8 == 0);
    switch (dtype) {
      case ACCY_DTYPE_F32: case ACCY_DTYPE_F64: case ACCY_DTYPE_F16: case ACCY_DTYPE_BF16: {
        double v = edge ? float_edge(r, dtype) : (tu_rng_unit(r) * 2 - 1) * range;
        tu_set_f64(dtype, dst, i, v);
        break;
      }
      case ACCY_DTYPE_BOOL:
        ((uint8_t *)dst)[i] = (uint8_t)(tu_rng_next(r) & 1);
        break;
      default: {
        uint64_t bits = tu_rng_next(r);
        int64_t v;
        if (edge) {
          static const int64_t e[] = {0, 1, -1, INT64_MIN, INT64_MAX, 2, -2};
          v = e[bits % 7];
        } else {
          v = (int64_t)(bits % 201) - 100;
        }
        tu_set_i64(dtype, dst, i, v);
        break;
      }
    }
  }
}

double tu_get_f64(int32_t dtype, const void *buf, size_t i) {
  switch (dtype) {
    case ACCY_DTYPE_F32: return ((const float *)buf)[i];
    case ACCY_DTYPE_F64: return ((const double *)buf)[i];
    case ACCY_DTYPE_F16: return accy__f16_to_f32(((const uint16_t *)buf)[i]);
    case ACCY_DTYPE_BF16: return accy__bf16_to_f32(((const uint16_t *)buf)[i]);
    case ACCY_DTYPE_U64: return (double)((const uint64_t *)buf)[i];
    default: return (double)tu_get_i64(dtype, buf, i);
  }
}

int64_t tu_get_i64(int32_t dtype, const void *buf, size_t i) {
  switch (dtype) {
    case ACCY_DTYPE_I8: return ((const int8_t *)buf)[i];
    case ACCY_DTYPE_I16: return ((const int16_t *)buf)[i];
    case ACCY_DTYPE_I32: return ((const int32_t *)buf)[i];
    case ACCY_DTYPE_I64: return ((const int64_t *)buf)[i];
    case ACCY_DTYPE_U8: return ((const uint8_t *)buf)[i];
    case ACCY_DTYPE_U16: return ((const uint16_t *)buf)[i];
    case ACCY_DTYPE_U32: return ((const uint32_t *)buf)[i];
    case ACCY_DTYPE_U64: return (int64_t)((const uint64_t *)buf)[i];
    case ACCY_DTYPE_BOOL: return ((const uint8_t *)buf)[i] != 0;
    default: return (int64_t)tu_get_f64(dtype, buf, i);
  }
}

void tu_set_f64(int32_t dtype, void *buf, size_t i, double v) {
  switch (dtype) {
    case ACCY_DTYPE_F32: ((float *)buf)[i] = (float)v; break;
    case ACCY_DTYPE_F64: ((double *)buf)[i] = v; break;
    case ACCY_DTYPE_F16: ((uint16_t *)buf)[i] = accy__f32_to_f16((float)v); break;
    case ACCY_DTYPE_BF16: ((uint16_t *)buf)[i] = accy__f32_to_bf16((float)v); break;
    case ACCY_DTYPE_BOOL: ((uint8_t *)buf)[i] = v != 0; break;
    default: tu_set_i64(dtype, buf, i, (int64_t)v); break;
  }
}

void tu_set_i64(int32_t dtype, void *buf, size_t i, int64_t v) {
  switch (dtype) {
    case ACCY_DTYPE_I8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case ACCY_DTYPE_I16: ((int16_t *)buf)[i] = (int16_t)v; break;
    case ACCY_DTYPE_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case ACCY_DTYPE_I64: ((int64_t *)buf)[i] = v; break;
    case ACCY_DTYPE_U8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case ACCY_DTYPE_U16: ((uint16_t *)buf)[i] = (uint16_t)v; break;
    case ACCY_DTYPE_U32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
    case ACCY_DTYPE_U64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
    case ACCY_DTYPE_BOOL: ((uint8_t *)buf)[i] = v != 0; break;
    default: tu_set_f64(dtype, buf, i, (double)v); break;
  }
}

size_t tu_first_difference(int32_t dtype, const void *a, const void *b, size_t n) {
  size_t es = accy_dtype_size(dtype);
  for (size_t i = 0; i < n; i++) {
    const unsigned char *pa = (const unsigned char *)a + i * es;
    const unsigned char *pb = (const unsigned char *)b + i * es;
    if (memcmp(pa, pb, es) == 0) continue;
    if (dtype == ACCY_DTYPE_F32 || dtype == ACCY_DTYPE_F64 || dtype == ACCY_DTYPE_F16 ||
        dtype == ACCY_DTYPE_BF16) {
      if (isnan(tu_get_f64(dtype, a, i)) && isnan(tu_get_f64(dtype, b, i))) continue;
    }
    return i;
  }
  return SIZE_MAX;
}

const char *tu_srcdir_path(const char *rel) {
  static char buf[4096];
  const char *dir = getenv("ACCY_TEST_SRCDIR");
  snprintf(buf, sizeof buf, "%s/%s", dir && *dir ? dir : ".", rel);
  return buf;
}

accy__type tu_type(int32_t dtype, uint32_t rank, const int64_t *dims) {
  accy__type t;
  memset(&t, 0, sizeof t);
  t.dtype = dtype;
  t.rank = rank;
  for (uint32_t i = 0; dims && i < rank; i++) t.dims[i] = dims[i];
  return t;
}

uint64_t tu_elems(const accy__type *t) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < t->rank; i++) n *= (uint64_t)t->dims[i];
  return n;
}

/* ---- kernel tiles ---------------------------------------------------------- */

static void shuffle_u64(tu_rng *r, uint64_t *a, uint64_t n) {
  for (uint64_t i = n; i > 1; i--) {
    uint64_t j = tu_rng_next(r) % i, x = a[i - 1];
    a[i - 1] = a[j];
    a[j] = x;
  }
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Runs [0, n_items) as tiles in shuffled order: each item alone (mode 0,
 * small spaces) or a random cut into up to 16 tiles, some possibly empty. */
void tu_run_kernel_split(const accy__kernel *k, void *const *bufs, tu_rng *r, int mode) {
  uint64_t n = k->n_items;
  if (mode == 0 && n <= 4096) {
    uint64_t *order = malloc((n + 1) * sizeof *order);
    for (uint64_t i = 0; i < n; i++) order[i] = i;
    shuffle_u64(r, order, n);
    for (uint64_t i = 0; i < n; i++) k->run(k, bufs, order[i], order[i] + 1);
    free(order);
    return;
  }
  uint64_t m = 1 + tu_rng_next(r) % 16;
  uint64_t cuts[18], tiles[17];
  cuts[0] = 0;
  cuts[m] = n;
  for (uint64_t i = 1; i < m; i++) cuts[i] = n ? tu_rng_next(r) % (n + 1) : 0;
  qsort(cuts + 1, m - 1, sizeof cuts[0], cmp_u64);
  for (uint64_t i = 0; i < m; i++) tiles[i] = i;
  shuffle_u64(r, tiles, m);
  for (uint64_t i = 0; i < m; i++) k->run(k, bufs, cuts[tiles[i]], cuts[tiles[i] + 1]);
}
