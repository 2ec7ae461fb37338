/* perf/perf.h: the perf harness's internal interface (perf/README.md).
 *
 * perf_harness.c  options, the workload manifest, the measurement loop, output
 * perf_ort.c      ONNX Runtime through its C API (dlopen, no headers needed)
 * perf_blas.c     OpenBLAS, BLIS and oneDNN sgemm (dlopen)
 * perf_bounds.c   the machine, the FMA peak and STREAM bandwidth
 * perf_serve.c    serving mode: K client threads on one handle
 * perf_plot.c     gnuplot rendering of the results */
#ifndef ACCY_PERF_H
#define ACCY_PERF_H

#include <stddef.h>
#include <stdint.h>

#define PERF_MAX_IO 8
#define PERF_MAX_THREADS 16

double perf_now(void); /* CLOCK_MONOTONIC seconds */
void *perf_alloc(size_t bytes); /* 64-byte aligned, zeroed; free() */

/* ---- machine and bounds (perf_bounds.c) ---- */
typedef struct perf_machine {
  char cpu[128];
  char isa[128]; /* flags of note: "avx2 fma avx512f ..." */
  int has_avx2_fma, has_avx512f;
  int cores; /* online CPUs */
  long l2_bytes, l3_bytes; /* per instance, from sysfs; 0 if unknown */
} perf_machine;

typedef struct perf_bounds {
  int max_threads;
  /* index t = thread count (1..max_threads); 0 where not measured */
  double fma_ymm_gflops[PERF_MAX_THREADS + 1];
  double fma_zmm_gflops[PERF_MAX_THREADS + 1];
  double copy_dram_gbps[PERF_MAX_THREADS + 1], triad_dram_gbps[PERF_MAX_THREADS + 1];
  double copy_cache_gbps[PERF_MAX_THREADS + 1], triad_cache_gbps[PERF_MAX_THREADS + 1];
  double read_dram_gbps[PERF_MAX_THREADS + 1], read_cache_gbps[PERF_MAX_THREADS + 1];
  size_t dram_array_bytes, cache_array_bytes;
} perf_bounds;

void perf_machine_read(perf_machine *m);
/* Measures every bound at 1..max_threads threads; |scale| < 1 shortens it. */
void perf_bounds_measure(const perf_machine *m, int max_threads, double scale, perf_bounds *b);
/* The FMA peak at t threads: zmm where the CPU has AVX-512, else ymm; 0 unknown. */
double perf_bounds_peak(const perf_bounds *b, int t);
/* The bandwidth bound for a working set of |bytes| at t threads: the best of
 * read, copy and triad, cache-resident (|bytes| <= L3/2) or DRAM. */
double perf_bounds_bw(const perf_bounds *b, const perf_machine *m, double bytes, int t,
                      const char **level);

/* ---- ONNX Runtime (perf_ort.c) ---- */
typedef struct perf_ort perf_ort;        /* the loaded library and its env */
typedef struct perf_ort_run perf_ort_run; /* one session with bound buffers */

/* Loads libonnxruntime from |path| (a file, or a directory holding it or an
 * npm install of onnxruntime-node), else from the default search. NULL with
 * a reason in |why| when absent. */
perf_ort *perf_ort_load(const char *path, char *why, size_t why_size);
const char *perf_ort_version(const perf_ort *o);
const char *perf_ort_library(const perf_ort *o);
/* One session on |onnx_path| with intra-op threads |threads|, inter-op 1,
 * sequential, ORT_ENABLE_ALL. Inputs wrap the caller's buffers; outputs are
 * OrtValues over |outs| (pre-allocated by the caller), passed to every Run.
 * dims[i] / rank[i] give each tensor's shape (float32 only). |spin| < 0 leaves
 * ORT's spinning default. */
perf_ort_run *perf_ort_open(perf_ort *o, const char *onnx_path, int threads, int spin,
                            int n_in, void *const *ins, const size_t *in_bytes,
                            const int64_t *const *in_dims, const uint32_t *in_rank,
                            int n_out, void *const *outs, const size_t *out_bytes,
                            const int64_t *const *out_dims, const uint32_t *out_rank,
                            char *err, size_t err_size);
/* One Run into the buffers given at open; 0 on success, else -1 with the
 * message in |err|. */
int perf_ort_call(perf_ort_run *r, char *err, size_t err_size);
/* For several threads running one session at once, each with its own output
 * buffers: wrap them once (|values|: PERF_MAX_IO slots), Run with them, free. */
int perf_ort_wrap_outputs(perf_ort_run *r, void *const *bufs, void **values, char *err,
                          size_t err_size);
int perf_ort_call_values(perf_ort_run *r, void *const *values, char *err, size_t err_size);
void perf_ort_free_values(perf_ort_run *r, void **values);
void perf_ort_close(perf_ort_run *r);

/* ---- BLAS (perf_blas.c) ---- */
typedef struct perf_blas {
  const char *name; /* "openblas", "blis", "onednn" */
  char detail[160]; /* version, kernel/core chosen */
  void *lib;
  void (*set_threads)(struct perf_blas *b, int t);
  /* C = A B, row-major, A MxK, B KxN, C MxN, alpha 1, beta 0 */
  void (*sgemm)(struct perf_blas *b, int m, int n, int k, const float *a, const float *bm,
                float *c);
  void *fn, *fn2;
} perf_blas;

/* Loads the libraries named in |list| ("openblas,blis,onednn", "all" or
 * "none"); returns how many loaded into |out| (at most 3); reports each
 * absent one on stderr. */
int perf_blas_load(const char *list, perf_blas *out, int verbose);

/* ---- serving mode (perf_serve.c) ---- */
/* One call by client |client|; 0 on success, else -1 with a message. */
typedef int (*perf_client_fn)(void *ctx, int client, char *err, size_t err_size);

typedef struct perf_serve_result {
  int clients;
  long calls;
  double calls_per_s;
  double p50_s, p99_s, p999_s, max_s;
  long proc_threads;                /* peak while the clients ran */
  /* Client 0 alone (the mixed mode's large client): its calls and latency. */
  long first_calls;
  double first_p50_s, first_p99_s;
  long rss_before_kb, rss_after_kb; /* VmRSS */
  int failed;
  char err[240];
} perf_serve_result;

/* Runs |clients| threads calling fn for |seconds| (all start together). */
void perf_serve(perf_client_fn fn, void *ctx, int clients, double seconds, perf_serve_result *r);
/* The same without timing each call (calls and calls/s only; nothing is
 * stored per call, so the run adds no memory of the harness's own). */
void perf_serve_count(perf_client_fn fn, void *ctx, int clients, double seconds,
                      perf_serve_result *r);
/* A numeric field of /proc/self/status ("Threads", "VmRSS"), or -1. */
long perf_proc_status(const char *key);

/* ---- plots (perf_plot.c) ---- */
/* Renders PNG and SVG charts from |csv| into |dir| with gnuplot; 0 done,
 * 1 skipped (no gnuplot), -1 failed. */
int perf_plot(const char *csv, const char *dir);

#endif /* ACCY_PERF_H */
