/* perf/perf_blas.c: the BLAS peers for the GEMM workloads, each loaded with
 * dlopen (RTLD_LOCAL: OpenBLAS and BLIS both export cblas_sgemm) so none is
 * needed to build:
 *   openblas  Debian libopenblas0-pthread: cblas_sgemm, openblas_set_num_threads.
 *             Its DYNAMIC_ARCH kernel choice is printed (openblas_get_corename):
 *             0.3.21 picks the generic "Prescott" on CPUs it does not know
 *             (Emerald Rapids); OPENBLAS_CORETYPE=SkylakeX/Cooperlake/Haswell
 *             overrides it (shared/notes/peers.md), set before the run.
 *   blis      Debian libblis4 (OpenMP or pthreads build): cblas_sgemm,
 *             bli_thread_set_num_threads; BLIS_ARCH_TYPE overrides its choice.
 *   onednn    Debian libdnnl2/3: dnnl_sgemm (row-major); OpenMP build, so its
 *             thread count is omp_set_num_threads() on the calling thread.
 * All compute C = A B with alpha 1, beta 0, row-major, no transposes. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf/perf.h"

enum { CblasRowMajor = 101, CblasNoTrans = 111 };
typedef void (*cblas_sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha,
                               const float *a, int lda, const float *b, int ldb, float beta,
                               float *c, int ldc);
typedef int (*dnnl_sgemm_fn)(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha,
                             const float *a, int64_t lda, const float *b, int64_t ldb,
                             float beta, float *c, int64_t ldc);
typedef struct {
  int major, minor, patch;
  const char *hash;
  unsigned cpu_runtime, gpu_runtime;
} dnnl_version_t;

static void *open_first(const char *const *names, const char **which) {
  for (int i = 0; names[i]; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) {
      *which = names[i];
      return h;
    }
  }
  return NULL;
}

static void cblas_call(perf_blas *b, int m, int n, int k, const float *a, const float *bm,
                       float *c) {
  ((cblas_sgemm_fn)b->fn)(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, bm, n,
                          0.0f, c, n);
}

static void openblas_threads(perf_blas *b, int t) { ((void (*)(int))b->fn2)(t); }
static void blis_threads(perf_blas *b, int t) { ((void (*)(int64_t))b->fn2)(t); }

static void dnnl_call(perf_blas *b, int m, int n, int k, const float *a, const float *bm,
                      float *c) {
  ((dnnl_sgemm_fn)b->fn)('N', 'N', m, n, k, 1.0f, a, k, bm, n, 0.0f, c, n);
}

static void omp_threads(perf_blas *b, int t) {
  if (b->fn2) ((void (*)(int))b->fn2)(t);
}

static const char *isa_name(unsigned v) {
  switch (v) {
    case 0x1: return "sse41";
    case 0x3: return "avx";
    case 0x7: return "avx2";
    case 0x407: return "avx2_vnni";
    case 0x27: return "avx512_core";
    case 0x67: return "avx512_core_vnni";
    case 0xe7: return "avx512_core_bf16";
    case 0x3e7: return "avx512_core_amx";
    default: return "?";
  }
}

static int load_openblas(perf_blas *b, int verbose) {
  static const char *const names[] = {"libopenblas.so.0", "libopenblasp.so.0", NULL};
  const char *which;
  void *h = open_first(names, &which);
  if (!h) {
    fprintf(stderr, "# openblas: absent (%s; Debian: libopenblas0-pthread)\n", names[0]);
    return 0;
  }
  b->name = "openblas";
  b->lib = h;
  b->fn = dlsym(h, "cblas_sgemm");
  b->fn2 = dlsym(h, "openblas_set_num_threads");
  if (!b->fn || !b->fn2) {
    fprintf(stderr, "# openblas: %s lacks cblas_sgemm/openblas_set_num_threads\n", which);
    return 0;
  }
  const char *(*core)(void) = (const char *(*)(void))dlsym(h, "openblas_get_corename");
  const char *(*config)(void) = (const char *(*)(void))dlsym(h, "openblas_get_config");
  const char *env = getenv("OPENBLAS_CORETYPE");
  snprintf(b->detail, sizeof b->detail, "%s core=%s%s%s", config ? config() : which,
           core ? core() : "?", env ? " OPENBLAS_CORETYPE=" : "", env ? env : "");
  if (core && (strcmp(core(), "Prescott") == 0 || strcmp(core(), "Katmai") == 0 ||
               strcmp(core(), "Core2") == 0 || strcmp(core(), "Nehalem") == 0))
    fprintf(stderr,
            "# openblas: WARNING generic kernel '%s' picked for this CPU; set OPENBLAS_CORETYPE "
            "(SkylakeX or Cooperlake on AVX-512 Xeons, Haswell on AVX2) for a fair peer\n",
            core());
  b->sgemm = cblas_call;
  b->set_threads = openblas_threads;
  (void)verbose;
  return 1;
}

static int load_blis(perf_blas *b, int verbose) {
  static const char *const names[] = {"libblis.so.4", "libblis.so.3", "libblis.so", NULL};
  const char *which;
  void *h = open_first(names, &which);
  if (!h) {
    fprintf(stderr, "# blis: absent (%s; Debian: libblis4-openmp)\n", names[0]);
    return 0;
  }
  b->name = "blis";
  b->lib = h;
  b->fn = dlsym(h, "cblas_sgemm");
  b->fn2 = dlsym(h, "bli_thread_set_num_threads");
  if (!b->fn || !b->fn2) {
    fprintf(stderr, "# blis: %s lacks cblas_sgemm/bli_thread_set_num_threads\n", which);
    return 0;
  }
  const char *(*ver)(void) = (const char *(*)(void))dlsym(h, "bli_info_get_version_str");
  int (*arch_id)(void) = (int (*)(void))dlsym(h, "bli_arch_query_id");
  const char *(*arch_str)(int) = (const char *(*)(int))dlsym(h, "bli_arch_string");
  const char *env = getenv("BLIS_ARCH_TYPE");
  snprintf(b->detail, sizeof b->detail, "BLIS %s arch=%s%s%s", ver ? ver() : "?",
           arch_id && arch_str ? arch_str(arch_id()) : "?", env ? " BLIS_ARCH_TYPE=" : "",
           env ? env : "");
  b->sgemm = cblas_call;
  b->set_threads = blis_threads;
  (void)verbose;
  return 1;
}

static int load_onednn(perf_blas *b, int verbose) {
  static const char *const names[] = {"libdnnl.so.3", "libdnnl.so.2", NULL};
  const char *which;
  void *h = open_first(names, &which);
  if (!h) {
    fprintf(stderr, "# onednn: absent (%s; Debian: libdnnl2)\n", names[1]);
    return 0;
  }
  b->name = "onednn";
  b->lib = h;
  b->fn = dlsym(h, "dnnl_sgemm");
  /* Its OpenMP runtime is the process's libgomp (libaccy's too). */
  b->fn2 = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
  if (!b->fn) {
    fprintf(stderr, "# onednn: %s lacks dnnl_sgemm\n", which);
    return 0;
  }
  const dnnl_version_t *(*ver)(void) = (const dnnl_version_t *(*)(void))dlsym(h, "dnnl_version");
  unsigned (*isa)(void) = (unsigned (*)(void))dlsym(h, "dnnl_get_effective_cpu_isa");
  const dnnl_version_t *v = ver ? ver() : NULL;
  unsigned i = isa ? isa() : 0;
  snprintf(b->detail, sizeof b->detail, "oneDNN %d.%d.%d isa=%s", v ? v->major : 0,
           v ? v->minor : 0, v ? v->patch : 0, isa ? isa_name(i) : "?");
  if (!b->fn2) fprintf(stderr, "# onednn: no omp_set_num_threads: thread count not set\n");
  b->sgemm = dnnl_call;
  b->set_threads = omp_threads;
  (void)verbose;
  return 1;
}

int perf_blas_load(const char *list, perf_blas *out, int verbose) {
  if (!list || strcmp(list, "none") == 0) return 0;
  int all = strcmp(list, "all") == 0, n = 0;
  static const struct {
    const char *name;
    int (*load)(perf_blas *, int);
  } libs[] = {{"openblas", load_openblas}, {"blis", load_blis}, {"onednn", load_onednn}};
  for (int i = 0; i < 3; i++) {
    if (!all && !strstr(list, libs[i].name)) continue;
    memset(&out[n], 0, sizeof out[n]);
    if (libs[i].load(&out[n], verbose)) n++;
  }
  return n;
}
