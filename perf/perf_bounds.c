/* perf/perf_bounds.c: the machine (CPU, ISA flags, caches) and the physical
 * bounds every workload is read against, measured in the same run:
 *   - FMA peak: independent FMA chains in registers, ymm (AVX2+FMA) and zmm
 *     (AVX-512F, only where the CPU has it, detected at run time), on
 *     1..N pthreads. GFLOP/s counts 2 per lane per FMA.
 *   - STREAM copy (c = a) and triad (a = b + s c), and a read-only sum (8
 *     ymm accumulators: a plain float sum would be latency-bound), 1..N
 *     pthreads, on arrays much larger than the L3 (DRAM) and on arrays that
 *     fit in it (cache). GB/s counts the STREAM way: bytes named by the
 *     kernel (read 4 B, copy 2 x 4 B, triad 3 x 4 B per element),
 *     write-allocate reads not counted. Best of the repetitions, as STREAM
 *     reports.
 * The kernels carry target attributes, so the file builds without -mavx2. */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/perf.h"

/* ---- machine ----------------------------------------------------------------------- */

static long read_cache_size(const char *dir) {
  char p[256], buf[64];
  snprintf(p, sizeof p, "%s/size", dir);
  FILE *f = fopen(p, "r");
  if (!f) return 0;
  long v = 0;
  if (fgets(buf, sizeof buf, f)) {
    char *end;
    v = strtol(buf, &end, 10);
    if (*end == 'K') v *= 1024;
    else if (*end == 'M') v *= 1024 * 1024;
  }
  fclose(f);
  return v;
}

static int read_int_file(const char *path) {
  FILE *f = fopen(path, "r");
  int v = -1;
  if (f) {
    if (fscanf(f, "%d", &v) != 1) v = -1;
    fclose(f);
  }
  return v;
}

void perf_machine_read(perf_machine *m) {
  memset(m, 0, sizeof *m);
  m->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
  FILE *f = fopen("/proc/cpuinfo", "r");
  char *line = NULL;
  size_t cap = 0;
  char flags[8192] = "";
  if (f) {
    while (getline(&line, &cap, f) > 0) {
      if (!m->cpu[0] && strncmp(line, "model name", 10) == 0) {
        char *c = strchr(line, ':');
        if (c) {
          snprintf(m->cpu, sizeof m->cpu, "%s", c + 2);
          m->cpu[strcspn(m->cpu, "\n")] = 0;
        }
      } else if (!flags[0] && strncmp(line, "flags", 5) == 0) {
        char *c = strchr(line, ':');
        if (c) snprintf(flags, sizeof flags, " %s ", c + 2);
        for (char *q = flags; *q; q++)
          if (*q == '\n') *q = ' ';
      }
    }
    free(line);
    fclose(f);
  }
  static const char *const notable[] = {"avx2", "fma", "avx512f", "avx512bw", "avx512vl",
                                        "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni",
                                        "amx_tile", "amx_bf16", NULL};
  for (int i = 0; notable[i]; i++) {
    char pat[32];
    snprintf(pat, sizeof pat, " %s ", notable[i]);
    if (strstr(flags, pat)) {
      size_t len = strlen(m->isa);
      snprintf(m->isa + len, sizeof m->isa - len, "%s%s", len ? " " : "", notable[i]);
    }
  }
  __builtin_cpu_init();
  m->has_avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  m->has_avx512f = __builtin_cpu_supports("avx512f");
  for (int i = 0; i < 8; i++) {
    char dir[128], p[160];
    snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu0/cache/index%d", i);
    snprintf(p, sizeof p, "%s/level", dir);
    int level = read_int_file(p);
    if (level < 0) break;
    if (level == 2) m->l2_bytes = read_cache_size(dir);
    if (level == 3) m->l3_bytes = read_cache_size(dir);
  }
}

/* ---- a team of pthreads that start together ------------------------------------------- */

typedef struct team {
  int n;
  pthread_barrier_t start, stop;
  void (*fn)(int id, int n, void *arg);
  void *arg;
} team;

typedef struct member {
  team *t;
  int id;
} member;

static void *member_main(void *p) {
  member *m = p;
  pthread_barrier_wait(&m->t->start);
  m->t->fn(m->id, m->t->n, m->t->arg);
  pthread_barrier_wait(&m->t->stop);
  return NULL;
}

/* Runs fn on n threads (the caller is member 0); returns the wall time from
 * the common start to the common end. */
static double team_run(int n, void (*fn)(int, int, void *), void *arg) {
  team t = {.n = n, .fn = fn, .arg = arg};
  pthread_barrier_init(&t.start, NULL, (unsigned)n);
  pthread_barrier_init(&t.stop, NULL, (unsigned)n);
  pthread_t th[PERF_MAX_THREADS];
  member ms[PERF_MAX_THREADS];
  for (int i = 1; i < n; i++) {
    ms[i] = (member){&t, i};
    pthread_create(&th[i], NULL, member_main, &ms[i]);
  }
  pthread_barrier_wait(&t.start);
  double t0 = perf_now();
  fn(0, n, arg);
  pthread_barrier_wait(&t.stop);
  double dt = perf_now() - t0;
  for (int i = 1; i < n; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&t.start);
  pthread_barrier_destroy(&t.stop);
  return dt;
}

/* ---- FMA peak --------------------------------------------------------------------------- */

typedef struct fma_arg {
  long iters;
  volatile float sink;
} fma_arg;

/* 12 (ymm) or 16 (zmm) independent chains in named registers (an array would
 * live in memory): more than FMA latency (4) x FMA ports (2) on current x86. */
#define CHAINS12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define CHAINS16(X) CHAINS12(X) X(12) X(13) X(14) X(15)

__attribute__((target("avx2,fma"))) static void fma_ymm(int id, int n, void *p) {
  fma_arg *a = p;
  __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
#define INIT(i) __m256 x##i = _mm256_set1_ps(1.0f + (float)(i) * 1e-3f + (float)id);
#define STEP(i) x##i = _mm256_fmadd_ps(x##i, m, c);
#define SUM(i) s = _mm256_add_ps(s, x##i);
  CHAINS12(INIT)
  for (long it = 0; it < a->iters; it++) {
    CHAINS12(STEP)
  }
  __m256 s = _mm256_setzero_ps();
  CHAINS12(SUM)
#undef INIT
#undef STEP
#undef SUM
  float out[8];
  _mm256_storeu_ps(out, s);
  a->sink = out[0];
}

__attribute__((target("avx512f"))) static void fma_zmm(int id, int n, void *p) {
  fma_arg *a = p;
  __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
#define INIT(i) __m512 x##i = _mm512_set1_ps(1.0f + (float)(i) * 1e-3f + (float)id);
#define STEP(i) x##i = _mm512_fmadd_ps(x##i, m, c);
#define SUM(i) s = _mm512_add_ps(s, x##i);
  CHAINS16(INIT)
  for (long it = 0; it < a->iters; it++) {
    CHAINS16(STEP)
  }
  __m512 s = _mm512_setzero_ps();
  CHAINS16(SUM)
#undef INIT
#undef STEP
#undef SUM
  a->sink = _mm512_reduce_add_ps(s);
}

static double fma_peak(int zmm, int threads, double seconds) {
  void (*fn)(int, int, void *) = zmm ? fma_zmm : fma_ymm;
  double flops_per_iter = zmm ? 16.0 * 16 * 2 : 12.0 * 8 * 2;
  fma_arg a = {.iters = 1000};
  double dt = team_run(1, fn, &a);
  a.iters = (long)(seconds / 7 / (dt > 1e-9 ? dt : 1e-9) * 1000);
  if (a.iters < 1000) a.iters = 1000;
  double best = 0;
  for (int rep = 0; rep < 7; rep++) { /* noise only slows it: keep the best */
    dt = team_run(threads, fn, &a);
    double g = flops_per_iter * (double)a.iters * threads / dt / 1e9;
    if (g > best) best = g;
  }
  return best;
}

/* ---- STREAM -------------------------------------------------------------------------------- */

typedef struct stream_arg {
  float *a, *b, *c;
  size_t n;
  int kind; /* 0 first touch, 1 copy, 2 triad, 3 read */
  int reps;
  volatile float sink[PERF_MAX_THREADS];
} stream_arg;

__attribute__((target("avx2"), optimize("no-tree-loop-distribute-patterns"))) static void
stream_part(int id, int n, void *p) {
  stream_arg *s = p;
  size_t lo = s->n * (size_t)id / (size_t)n, hi = s->n * (size_t)(id + 1) / (size_t)n;
  float *restrict a = s->a, *restrict b = s->b, *restrict c = s->c;
  for (int r = 0; r < s->reps; r++) {
    if (s->kind == 0) {
      for (size_t i = lo; i < hi; i++) a[i] = 1.0f, b[i] = 2.0f, c[i] = 0.5f;
    } else if (s->kind == 1) {
      for (size_t i = lo; i < hi; i++) c[i] = a[i];
    } else if (s->kind == 2) {
      for (size_t i = lo; i < hi; i++) a[i] = b[i] + 3.0f * c[i];
    } else {
      __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0,
             s7 = s0;
      size_t i = lo;
      for (; i + 64 <= hi; i += 64) {
        s0 = _mm256_add_ps(s0, _mm256_loadu_ps(a + i));
        s1 = _mm256_add_ps(s1, _mm256_loadu_ps(a + i + 8));
        s2 = _mm256_add_ps(s2, _mm256_loadu_ps(a + i + 16));
        s3 = _mm256_add_ps(s3, _mm256_loadu_ps(a + i + 24));
        s4 = _mm256_add_ps(s4, _mm256_loadu_ps(a + i + 32));
        s5 = _mm256_add_ps(s5, _mm256_loadu_ps(a + i + 40));
        s6 = _mm256_add_ps(s6, _mm256_loadu_ps(a + i + 48));
        s7 = _mm256_add_ps(s7, _mm256_loadu_ps(a + i + 56));
      }
      s0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)),
                         _mm256_add_ps(_mm256_add_ps(s4, s5), _mm256_add_ps(s6, s7)));
      float out[8], t = 0;
      _mm256_storeu_ps(out, s0);
      for (int k = 0; k < 8; k++) t += out[k];
      for (; i < hi; i++) t += a[i];
      s->sink[id] = t;
    }
  }
}

static void stream_measure(size_t array_bytes, int threads, double seconds, double *copy,
                           double *triad, double *read) {
  stream_arg s = {.n = array_bytes / 4, .kind = 0, .reps = 1};
  s.a = perf_alloc(array_bytes);
  s.b = perf_alloc(array_bytes);
  s.c = perf_alloc(array_bytes);
  if (!s.a || !s.b || !s.c) {
    free(s.a), free(s.b), free(s.c);
    *copy = *triad = *read = 0;
    return;
  }
  team_run(threads, stream_part, &s); /* first touch by the same threads */
  s.kind = 1;
  double one = team_run(threads, stream_part, &s);
  /* Cache-sized arrays repeat the kernel inside a sample to get above timer
   * and fork/join noise; aim each sample at ~seconds/12. */
  s.reps = (int)(seconds / 12 / (one > 1e-9 ? one : 1e-9));
  if (s.reps < 1) s.reps = 1;
  double best_c = 0, best_t = 0, best_r = 0;
  for (int rep = 0; rep < 5; rep++) {
    s.kind = 1;
    double dt = team_run(threads, stream_part, &s);
    double g = 2.0 * (double)array_bytes * s.reps / dt / 1e9;
    if (g > best_c) best_c = g;
    s.kind = 2;
    dt = team_run(threads, stream_part, &s);
    g = 3.0 * (double)array_bytes * s.reps / dt / 1e9;
    if (g > best_t) best_t = g;
    s.kind = 3;
    dt = team_run(threads, stream_part, &s);
    g = (double)array_bytes * s.reps / dt / 1e9;
    if (g > best_r) best_r = g;
  }
  *copy = best_c;
  *triad = best_t;
  *read = best_r;
  free(s.a);
  free(s.b);
  free(s.c);
}

void perf_bounds_measure(const perf_machine *m, int max_threads, double scale, perf_bounds *b) {
  memset(b, 0, sizeof *b);
  if (max_threads > PERF_MAX_THREADS) max_threads = PERF_MAX_THREADS;
  b->max_threads = max_threads;
  long l3 = m->l3_bytes > 0 ? m->l3_bytes : 32L << 20;
  /* DRAM: each array at least 64 MiB and at least the L3 (3 arrays > 3 x L3). */
  b->dram_array_bytes = (size_t)(l3 > (64L << 20) ? l3 : 64L << 20);
  /* Cache: all three arrays together in a quarter of the L3. */
  b->cache_array_bytes = (size_t)(l3 / 12) & ~(size_t)4095;
  if (scale < 1) b->dram_array_bytes = (size_t)((double)b->dram_array_bytes * scale) & ~(size_t)4095;
  for (int t = 1; t <= max_threads; t++) {
    if (m->has_avx2_fma) b->fma_ymm_gflops[t] = fma_peak(0, t, 0.15 * scale);
    if (m->has_avx512f) b->fma_zmm_gflops[t] = fma_peak(1, t, 0.15 * scale);
    if (!m->has_avx2_fma) continue; /* the kernels below are AVX2 */
    stream_measure(b->dram_array_bytes, t, 0.5 * scale, &b->copy_dram_gbps[t],
                   &b->triad_dram_gbps[t], &b->read_dram_gbps[t]);
    stream_measure(b->cache_array_bytes, t, 0.2 * scale, &b->copy_cache_gbps[t],
                   &b->triad_cache_gbps[t], &b->read_cache_gbps[t]);
  }
}

double perf_bounds_peak(const perf_bounds *b, int t) {
  if (t < 1 || t > b->max_threads) return 0;
  return b->fma_zmm_gflops[t] > 0 ? b->fma_zmm_gflops[t] : b->fma_ymm_gflops[t];
}

static double max3(double a, double b, double c) {
  double m = a > b ? a : b;
  return m > c ? m : c;
}

double perf_bounds_bw(const perf_bounds *b, const perf_machine *m, double bytes, int t,
                      const char **level) {
  if (t < 1 || t > b->max_threads) return 0;
  long l3 = m->l3_bytes > 0 ? m->l3_bytes : 32L << 20;
  /* The best of read, copy and triad at the level the working set lives in:
   * the bound is what no kernel can beat, whatever its mix of reads and writes. */
  if (bytes <= (double)l3 / 2) {
    *level = "cache";
    return max3(b->read_cache_gbps[t], b->copy_cache_gbps[t], b->triad_cache_gbps[t]);
  }
  *level = "dram";
  return max3(b->read_dram_gbps[t], b->copy_dram_gbps[t], b->triad_dram_gbps[t]);
}
