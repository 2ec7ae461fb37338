/* tests/testutil.h: helpers shared by the Check suites: a deterministic
 * random generator, random tensor data per dtype (with edge values mixed in),
 * bitwise comparison, and IR construction shorthands. */
#ifndef ACCY_TESTS_TESTUTIL_H
#define ACCY_TESTS_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accy/accy.h"
#include "src/ir/ir.h"

/* splitmix64: deterministic, seedable. */
typedef struct tu_rng {
  uint64_t state;
} tu_rng;

void tu_rng_seed(tu_rng *r, uint64_t seed);
uint64_t tu_rng_next(tu_rng *r);
/* Uniform in [lo, hi] (inclusive). */
int64_t tu_rng_range(tu_rng *r, int64_t lo, int64_t hi);
/* Uniform double in [0, 1). */
double tu_rng_unit(tu_rng *r);

/* Fills |n| elements of |dtype| at |dst| with random values. With |edges|
 * true, about one element in eight is an edge value for the dtype: 0, -0,
 * +-1, NaN, +-Inf, the largest/smallest finite, denormals, INT_MIN/INT_MAX,
 * all-ones. Booleans are always 0 or 1. Floats are otherwise drawn from
 * [-range, range] (range 0 means 8). */
void tu_fill_random(tu_rng *r, int32_t dtype, void *dst, size_t n, bool edges, double range);

/* Element i of |buf| (of |dtype|) widened to double (f16/bf16 via f32). */
double tu_get_f64(int32_t dtype, const void *buf, size_t i);
/* Element i as int64 (integers and bool; unsigned 64-bit reinterpreted). */
int64_t tu_get_i64(int32_t dtype, const void *buf, size_t i);
/* Stores |v| into element i, converting as C does for integers (wrapping)
 * and rounding to nearest even for f16/bf16. */
void tu_set_f64(int32_t dtype, void *buf, size_t i, double v);
void tu_set_i64(int32_t dtype, void *buf, size_t i, int64_t v);

/* Compares |n| elements bitwise, except that any two NaNs compare equal.
 * Returns the index of the first difference or SIZE_MAX when equal. */
size_t tu_first_difference(int32_t dtype, const void *a, const void *b, size_t n);

/* A type of |rank| dims (|dims| may be NULL for rank 0); unused dims are 0. */
accy__type tu_type(int32_t dtype, uint32_t rank, const int64_t *dims);
/* Product of the dims (the test shapes never overflow). */
uint64_t tu_elems(const accy__type *t);

/* Runs a kernel's items [0, n_items) as tiles in shuffled order: each item
 * alone (mode 0, spaces of at most 4096 items) or a random cut into up to 16
 * tiles, some possibly empty. For the kernel suites: any split must give the
 * same bytes. */
struct accy__kernel;
void tu_run_kernel_split(const struct accy__kernel *k, void *const *bufs, tu_rng *r, int mode);

/* Path of a file under the source tree: $ACCY_TEST_SRCDIR/rel (or "./rel").
 * Returns a static buffer. */
const char *tu_srcdir_path(const char *rel);

#endif /* ACCY_TESTS_TESTUTIL_H */
