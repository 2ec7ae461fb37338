/* tests/check_vmath.c: the error of every vector transcendental of every ISA
 * level this CPU has (the f32 exp, expm1, log, log1p, tanh, logistic, erf,
 * sin, cos and tan spans of the level's elementwise table, src/kernels/uk/avx2/vmath.h and
 * avx2/ew.c), measured against
 * a double-precision reference over the whole f32 range:
 *  - a sweep of bit patterns (every 61st of all 2^32 by default; every one
 *    with ACCY_VMATH_EXHAUSTIVE=1, a few minutes per function and level;
 *    ACCY_VMATH_ONLY=tanh measures that function alone), through the
 *    same span code the kernels run;
 *  - the error of a result is |got - ref| in f32 units in the last place
 *    of the reference (2^-149 below the normal range), and the largest must
 *    stay within the bound docs/ops.md ("Vector math") documents;
 *  - special values: NaN in gives NaN out, infinities and zeros map as the
 *    C library maps them, saturation is exact (tanh, logistic and erf reach
 *    +-1 and 0 exactly; exp overflows to +Inf and underflows to +0).
 * The largest error and where it occurs are printed, for the docs table.
 * The portable level uses the C library itself and is not measured here. */
#include "src/internal.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/base/cpu.h"
#include "src/base/half.h"
#include "src/kernels/uk/uk.h"

typedef struct vfun {
  uint16_t op;
  const char *name;
  double (*ref)(double);
  double bound_ulps; /* docs/ops.md */
} vfun;

static double ref_logistic(double x) { return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x)); }

static const vfun kFuns[] = {
    {ACCY_OP_EXP, "exp", exp, 1.5},
    {ACCY_OP_LOG, "log", log, 1.5},
    {ACCY_OP_TANH, "tanh", tanh, 3.0},
    {ACCY_OP_LOGISTIC, "logistic", ref_logistic, 3.0},
    {ACCY_OP_ERF, "erf", erf, 3.0},
    {ACCY_OP_SIN, "sin", sin, 1.0},
    {ACCY_OP_COS, "cos", cos, 1.0},
    {ACCY_OP_TAN, "tan", tan, 1.5},
    {ACCY_OP_EXPM1, "expm1", expm1, 1.0},
    {ACCY_OP_LOG1P, "log1p", log1p, 1.0},
};

static float f32_of_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* One f32 ulp at |v| (v finite, as a double). */
static double ulp_at(double v) {
  double a = fabs(v);
  if (a < 0x1p-126) return 0x1p-149;
  int e;
  frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
  return ldexp(1.0, e - 24);
}

/* Error of |got| against |ref| in ulps; 0 when both are the same special. */
static double err_ulps(float got, double ref) {
  if (isnan(ref)) return isnan(got) ? 0 : INFINITY;
  if (isnan(got)) return INFINITY;
  if (fabs(ref) > 3.4028234663852886e38) {
    /* Beyond f32: the correctly rounded result is +-Inf or +-FLT_MAX. */
    return isinf(got) && (got > 0) == (ref > 0) ? 0 : fabs((double)got - ref) / ulp_at(3.4e38);
  }
  if (isinf(got)) return INFINITY;
  return fabs((double)got - ref) / ulp_at(ref);
}

#define BATCH 4096

static void measure(const accy__uk *t, const vfun *f, uint32_t step) {
  accy__uk_ew_fn fn = t->ew.map(f->op, ACCY_DTYPE_F32);
  ck_assert_ptr_nonnull(fn);
  float *in = malloc(BATCH * 4), *out = malloc(BATCH * 4);
  double worst = 0;
  float worst_x = 0;
  uint64_t n = 0;
  uint64_t u = 0;
  while (u <= UINT32_MAX) {
    size_t m = 0;
    for (; m < BATCH && u <= UINT32_MAX; m++, u += step) in[m] = f32_of_bits((uint32_t)u);
    fn(m, out, in, NULL, NULL, 0, 0);
    for (size_t i = 0; i < m; i++) {
      double e = err_ulps(out[i], f->ref((double)in[i]));
      if (e > worst) worst = e, worst_x = in[i];
    }
    n += m;
  }
  fprintf(stderr, "check_vmath: %s %s: largest error %.3f ulp at x = %.9g (%llu inputs, every %u-th)\n",
          accy__isa_name(t->isa), f->name, worst, (double)worst_x, (unsigned long long)n, step);
  ck_assert_msg(worst <= f->bound_ulps, "%s %s: %.3f ulp at x = %.9g, documented bound %.1f",
                accy__isa_name(t->isa), f->name, worst, (double)worst_x, f->bound_ulps);
  free(in);
  free(out);
}

/* Special values and exact saturation. */
static void specials(const accy__uk *t, const vfun *f) {
  accy__uk_ew_fn fn = t->ew.map(f->op, ACCY_DTYPE_F32);
  const float in[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-45f, -1e-45f, 1e-30f,
                      88.72283f, 88.7229f, -87.3365f, -103.9720f, -104.0f, 9.1f, -9.1f, 10.0f,
                      -20.0f, 3.93f, -4.5f, 1e30f, -1e30f, 3.4028235e38f};
  enum { N = sizeof in / sizeof in[0] };
  float out[N];
  fn(N, out, in, NULL, NULL, 0, 0);
  for (size_t i = 0; i < N; i++) {
    double ref = f->ref((double)in[i]);
    if (isnan(ref)) {
      ck_assert_msg(isnan(out[i]), "%s(%g) = %g, want NaN", f->name, (double)in[i], (double)out[i]);
      continue;
    }
    float want = (float)ref; /* saturated and special cases are exactly representable */
    if (isinf(ref) || ref == 0 || fabs(ref) == 1.0 || want == 1.0f || want == -1.0f || want == 0.0f)
      ck_assert_msg(out[i] == want && signbit(out[i]) == signbit(want),
                    "%s(%.9g) = %.9g, want exactly %.9g", f->name, (double)in[i], (double)out[i],
                    (double)want);
    else
      ck_assert_msg(err_ulps(out[i], ref) <= f->bound_ulps, "%s(%.9g) = %.9g, ref %.17g", f->name,
                    (double)in[i], (double)out[i], ref);
  }
}

START_TEST(test_vector_math_error) {
  const accy__cpu *cpu = accy__cpu_get();
  const char *ex = getenv("ACCY_VMATH_EXHAUSTIVE");
  uint32_t step = ex && ex[0] == '1' ? 1u : 61u;
  int measured = 0;
  for (int l = ACCY__ISA_PORTABLE + 1; l < ACCY__ISA_COUNT; l++) {
    const accy__uk *t = accy__uk_for((accy__isa)l);
    if (!t || l > (int)cpu->detected) {
      fprintf(stderr, "check_vmath: level %s %s: skipped\n", accy__isa_name((accy__isa)l),
              t ? "is built but this CPU lacks it" : "is not in this build");
      continue;
    }
    const vfun *f = &kFuns[_i];
    const char *only = getenv("ACCY_VMATH_ONLY");
    if (only && *only && strcmp(only, f->name) != 0) return;
    specials(t, f);
    measure(t, f, step);
    measured++;
  }
  if (!measured) fprintf(stderr, "check_vmath: no level above portable to measure\n");
}
END_TEST

/* f16 and bf16 (uk/avx2/ew.c): every value of the type through the level's
 * span, which widens to f32, runs the f32 vector math and rounds once.
 * Within the f32 bound B of the function the f32 result lies in
 * [ref - B ulp, ref + B ulp], and rounding is monotone, so the result must
 * lie between the roundings of those two ends: the correctly rounded value
 * or, where a rounding boundary falls within B f32 ulps of the exact
 * result, its neighbour (docs/ops.md). NaN gives NaN, infinities are exact.
 * How many results are not the correctly rounded one is printed. */
static double widen_half(uint16_t h, bool bf) {
  return bf ? (double)accy__bf16_to_f32(h) : (double)accy__f16_to_f32(h);
}

static double round_half(double v, bool bf) {
  const float o = accy__f64_to_f32_odd(v); /* round to odd, then once to the type */
  return widen_half(bf ? accy__f32_to_bf16(o) : accy__f32_to_f16(o), bf);
}

START_TEST(test_half_math_error) {
  const accy__cpu *cpu = accy__cpu_get();
  const vfun *f = &kFuns[_i];
  const char *only = getenv("ACCY_VMATH_ONLY");
  if (only && *only && strcmp(only, f->name) != 0) return;
  static uint16_t in[65536], out[65536];
  for (uint32_t i = 0; i < 65536; i++) in[i] = (uint16_t)i;
  int measured = 0;
  for (int l = ACCY__ISA_PORTABLE + 1; l < ACCY__ISA_COUNT; l++) {
    const accy__uk *t = accy__uk_for((accy__isa)l);
    if (!t || l > (int)cpu->detected) continue;
    for (int b = 0; b < 2; b++) {
      const bool bf = b == 1;
      accy__uk_ew_fn fn = t->ew.map(f->op, bf ? ACCY_DTYPE_BF16 : ACCY_DTYPE_F16);
      ck_assert_ptr_nonnull(fn);
      fn(65536, out, in, NULL, NULL, 0, 0);
      unsigned off = 0;
      for (uint32_t i = 0; i < 65536; i++) {
        const double x = widen_half(in[i], bf), ref = f->ref(x), got = widen_half(out[i], bf);
        const char *tn = bf ? "bf16" : "f16";
        if (isnan(ref) || isinf(ref)) {
          ck_assert_msg(isnan(ref) ? isnan(got) : got == ref, "%s %s %s(%.9g) = %.9g, want %.9g",
                        accy__isa_name(t->isa), tn, f->name, x, got, ref);
          continue;
        }
        const double e = f->bound_ulps * ulp_at(ref);
        const double lo = round_half(ref - e, bf), hi = round_half(ref + e, bf);
        ck_assert_msg(got >= lo && got <= hi,
                      "%s %s %s(%.9g) = %.9g, outside [%.9g, %.9g] (exact %.17g)",
                      accy__isa_name(t->isa), tn, f->name, x, got, lo, hi, ref);
        off += got != round_half(ref, bf);
      }
      fprintf(stderr, "check_vmath: %s %s %s: %u of 65536 results not the correctly rounded one\n",
              accy__isa_name(t->isa), bf ? "bf16" : "f16", f->name, off);
    }
    measured++;
  }
  if (!measured) fprintf(stderr, "check_vmath: no level above portable to measure\n");
}
END_TEST

int main(void) {
  Suite *s = suite_create("vmath");
  TCase *tc = tcase_create("error");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, test_vector_math_error, 0, (int)(sizeof kFuns / sizeof kFuns[0]));
  tcase_add_loop_test(tc, test_half_math_error, 0, (int)(sizeof kFuns / sizeof kFuns[0]));
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
