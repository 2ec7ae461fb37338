/* perf/perf_harness.c: the perf harness (perf/README.md).
 *
 * Runs every workload of a model cache (written by perf/models.py) on accy and,
 * in the same run, on ONNX Runtime and -- for GEMM -- the BLAS libraries,
 * alternating between them block by block so that drift on a shared machine
 * hits every system alike. Every call is timed on its own. Each output is
 * checked against the workload's reference with the tolerance the generator
 * wrote (argued there from the computation). The machine's FMA peak and
 * STREAM bandwidth are measured in the same run, and each line reports its
 * fraction of the roofline bound.
 *
 *   perf_harness --models DIR [--threads 1,2] [--quick] [--filter REGEX]
 *                [--time S] [--csv FILE] [--plot DIR] [--ort PATH | --no-ort]
 *                [--blas all|none|openblas,blis,onednn] [--no-bounds]
 *                [--serve NAME [--clients 1,2,4,8,16,64] [--serve-time S]]
 *
 * Exit status: 0; 1 when accy failed a check, a compile or a call (or a
 * workload's files are missing); 2 for bad usage. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "accy/accy.h"
#include "perf/perf.h"

#define MAX_WORKLOADS 64
#define MAX_RUNNERS 8

/* ---- small utilities ------------------------------------------------------------------ */

double perf_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void *perf_alloc(size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) return NULL;
  memset(p, 0, bytes);
  return p;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *p = perf_alloc(n > 0 ? (size_t)n : 1);
  if (p && n > 0 && fread(p, 1, (size_t)n, f) != (size_t)n) {
    free(p);
    p = NULL;
  }
  fclose(f);
  if (p) *size = (size_t)n;
  return p;
}

static int parse_list(const char *s, int *out, int max) {
  int n = 0;
  while (s && *s && n < max) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 1) return -1;
    out[n++] = (int)v;
    s = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return -1;
  }
  return n;
}

/* Sleeps until no thread of this process burns CPU (spinning pools of the
 * system measured before: ORT's, OpenBLAS's, libgomp's), at most max_s:
 * the process's CPU time grows by under 10% of one core over a 2 ms nap. */
static double quiet_waited_s; /* summed, for -v */
static int quiet_timeouts;

static double quiesce(double max_s) {
  double t0 = perf_now();
  for (;;) {
    struct timespec c0, c1, nap = {0, 2 * 1000 * 1000};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    double w0 = perf_now();
    nanosleep(&nap, NULL);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    double w = perf_now() - w0;
    double busy = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9;
    if (busy < 0.1 * w) break;
    if (perf_now() - t0 > max_s) {
      quiet_timeouts++;
      break;
    }
  }
  quiet_waited_s += perf_now() - t0;
  return perf_now() - t0;
}

/* ---- options ------------------------------------------------------------------------------ */

typedef struct options {
  const char *models, *filter, *csv, *plot, *ort_path, *blas, *serve, *replot, *serve_mix;
  int threads[PERF_MAX_THREADS], n_threads;
  int clients[16], n_clients;
  double time_s, block_s, serve_s;
  int serve_async;
  long serve_memory; /* --serve-memory N: invokes of the RSS check, 0: none */
  int quick, no_ort, bounds, verbose, ort_spin;
} options;

static void usage(FILE *f) {
  fprintf(f,
          "usage: perf_harness --models DIR [options]   (perf/README.md; perf/run drives it)\n"
          "  --models DIR        model cache written by perf/models.py (manifest.txt)\n"
          "  --threads LIST      thread counts, e.g. 1,2 (default 1,<CPUs>)\n"
          "  --quick             every workload twice, check results, judge no timing\n"
          "  --filter REGEX      only workloads whose name matches\n"
          "  --time S            seconds of timed calls per system and thread count (0.5)\n"
          "  --block S           length of one alternation block (0.05)\n"
          "  --csv FILE          write every measurement as CSV\n"
          "  --plot DIR          render PNG + SVG charts with gnuplot (needs --csv)\n"
          "  --replot CSV        only render the charts of an earlier run's CSV (with --plot)\n"
          "  --ort PATH          libonnxruntime.so.1, or a directory with it or an npm install\n"
          "                      of onnxruntime-node (default: $ACCY_PERF_ORT, then\n"
          "                      ~/.cache/accy-perf/ort, then the system search)\n"
          "  --no-ort            no ONNX Runtime\n"
          "  --ort-spin 0|1      ORT intra-op spinning (default: ORT's default, on)\n"
          "  --blas LIST         all (default), none, or some of openblas,blis,onednn\n"
          "  --no-bounds         do not measure the FMA peak and STREAM bandwidth\n"
          "  --serve NAME        serving mode on workload NAME instead of the latency runs\n"
          "  --clients LIST      client threads for --serve (1,2,4,8,16,64)\n"
          "  --serve-time S      seconds per client count (1.0)\n"
          "  --serve-async       also time accy_session_submit + an eventfd wait per call\n"
          "  --serve-mix NAME    also time one NAME client alone and beside the --serve clients\n"
          "  --serve-memory N    also check RSS: after 10^3 and after N invokes of one client,\n"
          "                      then after a burst of the largest --clients count and a trim\n"
          "  -v                  more detail\n");
}

static void need_value(const char *opt, const char *v) {
  if (v) return;
  fprintf(stderr, "perf_harness: %s needs a value\n", opt);
  exit(2);
}

static int parse_options(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  o->time_s = 0.5;
  o->block_s = 0.05;
  o->serve_s = 1.0;
  o->bounds = 1;
  o->blas = "all";
  o->ort_spin = -1;
  o->ort_path = getenv("ACCY_PERF_ORT");
  static const int default_clients[] = {1, 2, 4, 8, 16, 64};
  memcpy(o->clients, default_clients, sizeof default_clients);
  o->n_clients = 6;
  int cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
  o->threads[0] = 1;
  o->n_threads = 1;
  if (cpus > 1) o->threads[o->n_threads++] = cpus > PERF_MAX_THREADS ? PERF_MAX_THREADS : cpus;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define VALUE() (need_value(a, v), i++)
    if (!strcmp(a, "--models")) VALUE(), o->models = v;
    else if (!strcmp(a, "--filter")) VALUE(), o->filter = v;
    else if (!strcmp(a, "--csv")) VALUE(), o->csv = v;
    else if (!strcmp(a, "--plot")) VALUE(), o->plot = v;
    else if (!strcmp(a, "--replot")) VALUE(), o->replot = v;
    else if (!strcmp(a, "--ort")) VALUE(), o->ort_path = v;
    else if (!strcmp(a, "--blas")) VALUE(), o->blas = v;
    else if (!strcmp(a, "--serve")) VALUE(), o->serve = v;
    else if (!strcmp(a, "--time")) VALUE(), o->time_s = atof(v);
    else if (!strcmp(a, "--block")) VALUE(), o->block_s = atof(v);
    else if (!strcmp(a, "--serve-time")) VALUE(), o->serve_s = atof(v);
    else if (!strcmp(a, "--serve-async")) o->serve_async = 1;
    else if (!strcmp(a, "--serve-mix")) VALUE(), o->serve_mix = v;
    else if (!strcmp(a, "--serve-memory")) VALUE(), o->serve_memory = atol(v);
    else if (!strcmp(a, "--ort-spin")) VALUE(), o->ort_spin = atoi(v) ? 1 : 0;
    else if (!strcmp(a, "--threads")) {
      VALUE();
      o->n_threads = parse_list(v, o->threads, PERF_MAX_THREADS);
      if (o->n_threads <= 0) return -1;
      for (int k = 0; k < o->n_threads; k++)
        if (o->threads[k] > PERF_MAX_THREADS) o->threads[k] = PERF_MAX_THREADS;
    } else if (!strcmp(a, "--clients")) {
      VALUE();
      o->n_clients = parse_list(v, o->clients, 16);
      if (o->n_clients <= 0) return -1;
    } else if (!strcmp(a, "--quick")) o->quick = 1;
    else if (!strcmp(a, "--no-ort")) o->no_ort = 1;
    else if (!strcmp(a, "--no-bounds")) o->bounds = 0;
    else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) o->verbose = 1;
    else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      exit(0);
    } else {
      fprintf(stderr, "perf_harness: unknown argument '%s'\n", a);
      return -1;
    }
#undef VALUE
  }
  if (o->replot) {
    if (!o->plot) {
      fprintf(stderr, "perf_harness: --replot CSV needs --plot DIR\n");
      return -1;
    }
    return 0;
  }
  if (!o->models) {
    fprintf(stderr, "perf_harness: --models DIR is required (perf/run writes the models)\n");
    return -1;
  }
  if (o->plot && !o->csv) {
    fprintf(stderr, "perf_harness: --plot needs --csv\n");
    return -1;
  }
  return 0;
}

/* ---- workloads (manifest.txt) ------------------------------------------------------------- */

typedef struct workload {
  char name[64], group[32], skip[64];
  char onnx[512], accyb[512];
  char inputs[PERF_MAX_IO][512], refs[PERF_MAX_IO][512], bounds[PERF_MAX_IO][512];
  int n_inputs, n_refs, n_bounds;
  double atol[PERF_MAX_IO], rtol;
  double flops, bytes;
  int gemm_m, gemm_n, gemm_k, const_b;
} workload;

static int split_list(const char *dir, const char *v, char out[][512], int max) {
  int n = 0;
  const char *s = v;
  while (*s && n < max) {
    size_t len = strcspn(s, ",");
    snprintf(out[n++], 512, "%s/%.*s", dir, (int)len, s);
    s += len;
    if (*s == ',') s++;
  }
  return n;
}

static int read_manifest(const char *dir, workload *ws, int max) {
  char path[600];
  snprintf(path, sizeof path, "%s/manifest.txt", dir);
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "perf_harness: cannot read %s: %s (run perf/run, or perf/models.py)\n", path,
            strerror(errno));
    return -1;
  }
  int n = 0;
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0 && n < max) {
    workload *w = &ws[n];
    memset(w, 0, sizeof *w);
    for (char *tok = strtok(line, " \n"); tok; tok = strtok(NULL, " \n")) {
      char *eq = strchr(tok, '=');
      if (!eq) continue;
      *eq = 0;
      const char *k = tok, *v = eq + 1;
      if (!strcmp(k, "name")) snprintf(w->name, sizeof w->name, "%s", v);
      else if (!strcmp(k, "group")) snprintf(w->group, sizeof w->group, "%s", v);
      else if (!strcmp(k, "skip")) snprintf(w->skip, sizeof w->skip, "%s", v);
      else if (!strcmp(k, "onnx")) snprintf(w->onnx, sizeof w->onnx, "%s/%s", dir, v);
      else if (!strcmp(k, "accyb")) snprintf(w->accyb, sizeof w->accyb, "%s/%s", dir, v);
      else if (!strcmp(k, "inputs")) w->n_inputs = split_list(dir, v, w->inputs, PERF_MAX_IO);
      else if (!strcmp(k, "refs")) w->n_refs = split_list(dir, v, w->refs, PERF_MAX_IO);
      else if (!strcmp(k, "bounds")) w->n_bounds = split_list(dir, v, w->bounds, PERF_MAX_IO);
      else if (!strcmp(k, "rtol")) w->rtol = atof(v);
      else if (!strcmp(k, "flops")) w->flops = atof(v);
      else if (!strcmp(k, "bytes")) w->bytes = atof(v);
      else if (!strcmp(k, "const_b")) w->const_b = atoi(v);
      else if (!strcmp(k, "gemm")) sscanf(v, "%d,%d,%d", &w->gemm_m, &w->gemm_n, &w->gemm_k);
      else if (!strcmp(k, "atol")) {
        int i = 0;
        for (const char *s = v; *s && i < PERF_MAX_IO; i++) {
          w->atol[i] = atof(s);
          s += strcspn(s, ",");
          if (*s == ',') s++;
        }
      }
    }
    if (w->name[0]) n++;
  }
  free(line);
  fclose(f);
  return n;
}

/* ---- runners: one system measured on one workload at one thread count ---------------------- */

typedef struct check {
  double max_abs, max_rel, tol_ratio;
  int ok, done;
} check;

typedef struct runner {
  char system[24], detail[160];
  int threads;
  int (*call)(struct runner *r, char *err, size_t n);
  void (*before)(struct runner *r);
  void *ctx;
  float *outs[PERF_MAX_IO];
  size_t out_bytes[PERF_MAX_IO];
  int n_out;
  double *t;
  size_t n, cap;
  double setup_s;
  int failed;
  char err[600];
  check chk;
  double median, min, max, p90;
} runner;

typedef struct data {
  float *in[PERF_MAX_IO];
  size_t in_bytes[PERF_MAX_IO];
  float *ref[PERF_MAX_IO], *bound[PERF_MAX_IO];
  size_t ref_bytes[PERF_MAX_IO];
} data;

static void record(runner *r, double dt) {
  if (r->n == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 256;
    r->t = realloc(r->t, r->cap * sizeof *r->t);
  }
  r->t[r->n++] = dt;
}

static void check_outputs(runner *r, const workload *w, const data *d) {
  check c = {0, 0, 0, 1, 1};
  if (r->n_out != w->n_refs) {
    c.ok = 0;
    snprintf(r->err, sizeof r->err, "%d outputs, %d references", r->n_out, w->n_refs);
  }
  for (int i = 0; i < r->n_out && i < w->n_refs; i++) {
    size_t n = r->out_bytes[i] / 4;
    if (d->ref_bytes[i] != r->out_bytes[i]) {
      c.ok = 0;
      snprintf(r->err, sizeof r->err, "output %d has %zu bytes, reference %zu", i,
               r->out_bytes[i], d->ref_bytes[i]);
      continue;
    }
    const float *y = r->outs[i], *ref = d->ref[i], *bd = d->bound[i];
    for (size_t j = 0; j < n; j++) {
      double diff = fabs((double)y[j] - (double)ref[j]);
      double tol = bd ? (double)bd[j] : w->atol[i] + w->rtol * fabs((double)ref[j]);
      if (!(diff <= tol)) c.ok = 0; /* NaN fails too */
      if (isnan(diff)) {
        c.max_abs = c.max_rel = c.tol_ratio = INFINITY;
        continue;
      }
      if (diff > c.max_abs) c.max_abs = diff;
      double rel = diff / (fabs((double)ref[j]) + (bd ? (double)bd[j] : w->atol[i]) + 1e-30);
      if (rel > c.max_rel) c.max_rel = rel;
      double ratio = tol > 0 ? diff / tol : (diff > 0 ? INFINITY : 0);
      if (ratio > c.tol_ratio) c.tol_ratio = ratio;
    }
  }
  if (!r->chk.done || c.tol_ratio > r->chk.tol_ratio || !c.ok) {
    int was_ok = r->chk.done ? r->chk.ok : 1;
    r->chk = c;
    r->chk.ok = c.ok && was_ok;
  }
}

static int run_once(runner *r, double *dt) {
  double t0 = perf_now();
  int rc = r->call(r, r->err, sizeof r->err);
  *dt = perf_now() - t0;
  if (rc != 0) r->failed = 1;
  return rc;
}

/* The measurement. Every runner makes a first call (checked), then a second
 * (its time sets the block length). Then rounds: in each, every runner in
 * turn (the order rotates) waits for the process to go quiet, makes one
 * untimed warm-up call (short calls only), and runs one block of calls, each
 * timed on its own. It stops when every runner has --time seconds of timed
 * calls and at least 3 rounds were run (2 when every call is longer than
 * --time). Quick mode: two calls, both kept. */
static void measure(runner *rs, int n, const workload *w, const data *d, const options *o) {
  double est[MAX_RUNNERS] = {0};
  long reps[MAX_RUNNERS] = {0};
  for (int i = 0; i < n; i++) {
    runner *r = &rs[i];
    if (r->failed) continue;
    quiesce(0.3);
    if (r->before) r->before(r);
    double dt;
    if (run_once(r, &dt) != 0) continue;
    check_outputs(r, w, d);
    if (o->quick) record(r, dt);
    if (run_once(r, &dt) != 0) continue;
    record(r, dt);
    est[i] = dt;
  }
  if (!o->quick) {
    double spent[MAX_RUNNERS] = {0};
    int min_rounds = 2; /* 3 unless every call lasts longer than --time */
    for (int i = 0; i < n; i++) {
      /* The first call warmed up; the second is kept only for calls longer
       * than a block, which get no warm-up call per block either. */
      if (est[i] < o->block_s) rs[i].n = 0;
      else spent[i] = est[i];
      double b = est[i] > 0 ? o->block_s / est[i] : 1;
      reps[i] = b < 1 ? 1 : b > 1e6 ? 1000000 : (long)b;
      if (!rs[i].failed && est[i] < o->time_s) min_rounds = 3;
    }
    for (int round = 0; round < 1000; round++) {
      int done = round >= min_rounds;
      for (int i = 0; i < n; i++)
        if (!rs[i].failed && spent[i] < o->time_s) done = 0;
      if (done) break;
      for (int k = 0; k < n; k++) {
        int i = (k + round) % n;
        runner *r = &rs[i];
        if (r->failed || (round >= min_rounds && spent[i] >= o->time_s)) continue;
        quiesce(0.3);
        if (r->before) r->before(r);
        double dt;
        if (est[i] < o->block_s && run_once(r, &dt) != 0) continue;
        for (long j = 0; j < reps[i]; j++) {
          if (run_once(r, &dt) != 0) break;
          record(r, dt);
          spent[i] += dt;
        }
      }
    }
  }
  for (int i = 0; i < n; i++) {
    runner *r = &rs[i];
    if (r->failed || r->n == 0) continue;
    check_outputs(r, w, d); /* the last call's results too */
    qsort(r->t, r->n, sizeof *r->t, cmp_double);
    r->median = r->t[r->n / 2];
    r->min = r->t[0];
    r->max = r->t[r->n - 1];
    r->p90 = r->t[(size_t)((double)(r->n - 1) * 0.9)];
  }
}

/* -- accy -- */
typedef struct accy_ctx {
  accy_session *s;
  accy_handle h;
  accy_input ins[PERF_MAX_IO];
  accy_output outs[PERF_MAX_IO];
  size_t n_in, n_out;
} accy_ctx;

static int accy_call(runner *r, char *err, size_t n) {
  accy_ctx *c = r->ctx;
  accy_status st = accy_session_invoke(c->s, c->h, c->ins, c->n_in, c->outs, c->n_out);
  if (st == ACCY_STATUS_OK) return 0;
  snprintf(err, n, "invoke: %s: %s", accy_status_name(st), accy_session_last_cause(c->s));
  return -1;
}

/* Descriptor shapes, shared with ORT (which runs the same model). */
typedef struct shapes {
  int n_in, n_out;
  const int64_t *in_dims[PERF_MAX_IO], *out_dims[PERF_MAX_IO];
  uint32_t in_rank[PERF_MAX_IO], out_rank[PERF_MAX_IO];
  size_t in_bytes[PERF_MAX_IO], out_bytes[PERF_MAX_IO];
} shapes;

static int accy_open(runner *r, const workload *w, const data *d, const void *wire,
                     size_t wire_size, int threads, shapes *sh) {
  accy_ctx *c = calloc(1, sizeof *c);
  r->ctx = c;
  snprintf(r->system, sizeof r->system, "accy");
  snprintf(r->detail, sizeof r->detail, "accy %s", accy_version());
  r->threads = threads;
  r->call = accy_call;
  accy_session_options so = {.struct_size = sizeof so, .num_threads = (uint32_t)threads};
  double t0 = perf_now();
  accy_status st = accy_session_create(&so, &c->s);
  if (st == ACCY_STATUS_OK) st = accy_session_compile(c->s, wire, wire_size, &c->h);
  r->setup_s = perf_now() - t0;
  if (st != ACCY_STATUS_OK) {
    snprintf(r->err, sizeof r->err, "compile: %s: %s", accy_status_name(st),
             accy_session_last_cause(c->s));
    return -1;
  }
  const accy_descriptor *in, *out;
  accy_session_inputs(c->s, c->h, &in, &c->n_in);
  accy_session_outputs(c->s, c->h, &out, &c->n_out);
  if ((int)c->n_in != w->n_inputs || c->n_in > PERF_MAX_IO || c->n_out > PERF_MAX_IO) {
    snprintf(r->err, sizeof r->err, "program has %zu inputs, %zu outputs; workload %d inputs",
             c->n_in, c->n_out, w->n_inputs);
    return -1;
  }
  sh->n_in = (int)c->n_in;
  sh->n_out = (int)c->n_out;
  for (size_t i = 0; i < c->n_in; i++) {
    if (in[i].dtype != ACCY_DTYPE_F32 || in[i].byte_size != d->in_bytes[i]) {
      snprintf(r->err, sizeof r->err, "input %zu '%s': %s, %llu bytes; file has %zu bytes", i,
               in[i].name, accy_dtype_name(in[i].dtype), (unsigned long long)in[i].byte_size,
               d->in_bytes[i]);
      return -1;
    }
    c->ins[i] = (accy_input){d->in[i], d->in_bytes[i]};
    sh->in_dims[i] = in[i].dims;
    sh->in_rank[i] = in[i].rank;
    sh->in_bytes[i] = d->in_bytes[i];
  }
  r->n_out = (int)c->n_out;
  for (size_t i = 0; i < c->n_out; i++) {
    if (out[i].dtype != ACCY_DTYPE_F32) {
      snprintf(r->err, sizeof r->err, "output %zu '%s' is %s, only f32 is checked", i, out[i].name,
               accy_dtype_name(out[i].dtype));
      return -1;
    }
    r->outs[i] = perf_alloc(out[i].byte_size);
    r->out_bytes[i] = out[i].byte_size;
    c->outs[i] = (accy_output){r->outs[i], out[i].byte_size};
    sh->out_dims[i] = out[i].dims;
    sh->out_rank[i] = out[i].rank;
    sh->out_bytes[i] = out[i].byte_size;
  }
  return 0;
}

static void accy_close(runner *r) {
  accy_ctx *c = r->ctx;
  if (c) accy_session_destroy(c->s); /* releases the program */
  free(c);
}

/* -- ONNX Runtime -- */
static int ort_call(runner *r, char *err, size_t n) { return perf_ort_call(r->ctx, err, n); }

static int ort_open(runner *r, perf_ort *ort, const workload *w, const data *d, int threads,
                    const shapes *sh, int spin) {
  snprintf(r->system, sizeof r->system, "ort");
  snprintf(r->detail, sizeof r->detail, "onnxruntime %s", perf_ort_version(ort));
  r->threads = threads;
  r->call = ort_call;
  r->n_out = sh->n_out;
  for (int i = 0; i < sh->n_out; i++) {
    r->outs[i] = perf_alloc(sh->out_bytes[i]);
    r->out_bytes[i] = sh->out_bytes[i];
  }
  double t0 = perf_now();
  r->ctx = perf_ort_open(ort, w->onnx, threads, spin, sh->n_in, (void *const *)d->in,
                         sh->in_bytes, sh->in_dims, sh->in_rank, sh->n_out,
                         (void *const *)r->outs, sh->out_bytes, sh->out_dims, sh->out_rank,
                         r->err, sizeof r->err);
  r->setup_s = perf_now() - t0;
  return r->ctx ? 0 : -1;
}

/* -- BLAS -- */
typedef struct blas_runner_ctx {
  perf_blas *b;
  int m, n, k;
  const float *a, *bm;
} blas_runner_ctx;

static int blas_gemm_call(runner *r, char *err, size_t n) {
  blas_runner_ctx *c = r->ctx;
  c->b->sgemm(c->b, c->m, c->n, c->k, c->a, c->bm, r->outs[0]);
  return 0;
}

static void blas_before(runner *r) {
  blas_runner_ctx *c = r->ctx;
  c->b->set_threads(c->b, r->threads);
}

static void blas_open(runner *r, perf_blas *b, const workload *w, const data *d, int threads) {
  blas_runner_ctx *c = calloc(1, sizeof *c);
  *c = (blas_runner_ctx){b, w->gemm_m, w->gemm_n, w->gemm_k, d->in[0], d->in[1]};
  r->ctx = c;
  snprintf(r->system, sizeof r->system, "%s", b->name);
  snprintf(r->detail, sizeof r->detail, "%s", b->detail);
  r->threads = threads;
  r->call = blas_gemm_call;
  r->before = blas_before;
  r->n_out = 1;
  r->out_bytes[0] = (size_t)w->gemm_m * (size_t)w->gemm_n * 4;
  r->outs[0] = perf_alloc(r->out_bytes[0]);
}

static void runner_free(runner *r) {
  for (int i = 0; i < PERF_MAX_IO; i++) free(r->outs[i]);
  free(r->t);
}

/* ---- output --------------------------------------------------------------------------------- */

typedef struct summary {
  char workload[64];
  int threads;
  double accy, ort, blas, frac;
  char blas_name[16];
  int ok;
  char note[64];
} summary;

static FILE *csv;
static summary sums[MAX_WORKLOADS * PERF_MAX_THREADS];
static int n_sums;

static void csv_clean(char *s) {
  for (; *s; s++)
    if (*s == ',' || *s == '\n' || *s == '"') *s = ';';
}

static void csv_header(void) {
  if (!csv) return;
  fprintf(csv,
          "kind,workload,group,threads,clients,system,detail,calls,median_us,min_us,p90_us,"
          "p99_us,p999_us,max_us,calls_per_s,gflops,gbps,accy_over_this,frac_bound,bound,"
          "max_abs_diff,max_rel_diff,tol_ratio,check,setup_ms,proc_threads,rss_before_mb,"
          "rss_after_mb,note\n");
}

typedef struct row {
  const char *kind, *workload, *group, *system;
  char detail[160], note[700], check[8], bound[8];
  int threads, clients;
  long calls;
  double median, min, p90, p99, p999, max, calls_per_s, gflops, gbps, accy_over, frac;
  double max_abs, max_rel, tol_ratio, setup_ms, rss_before, rss_after;
  long proc_threads;
} row;

static void g(FILE *f, double v, const char *fmt) {
  if (v != v || v == 0) fputs(",", f);
  else fprintf(f, fmt, v);
}

static void csv_row(row *r) {
  if (!csv) return;
  csv_clean(r->detail);
  csv_clean(r->note);
  fprintf(csv, "%s,%s,%s,%d,%d,%s,%s,%ld", r->kind, r->workload, r->group ? r->group : "",
          r->threads, r->clients, r->system, r->detail, r->calls);
  g(csv, r->median * 1e6, ",%.3f");
  g(csv, r->min * 1e6, ",%.3f");
  g(csv, r->p90 * 1e6, ",%.3f");
  g(csv, r->p99 * 1e6, ",%.3f");
  g(csv, r->p999 * 1e6, ",%.3f");
  g(csv, r->max * 1e6, ",%.3f");
  g(csv, r->calls_per_s, ",%.1f");
  g(csv, r->gflops, ",%.3f");
  g(csv, r->gbps, ",%.3f");
  g(csv, r->accy_over, ",%.4f");
  g(csv, r->frac, ",%.4f");
  fprintf(csv, ",%s", r->bound);
  if (r->check[0]) fprintf(csv, ",%.3g,%.3g,%.3g,%s", r->max_abs, r->max_rel, r->tol_ratio, r->check);
  else fputs(",,,,", csv);
  g(csv, r->setup_ms, ",%.1f");
  if (r->proc_threads > 0) fprintf(csv, ",%ld", r->proc_threads);
  else fputs(",", csv);
  g(csv, r->rss_before, ",%.1f");
  g(csv, r->rss_after, ",%.1f");
  fprintf(csv, ",%s\n", r->note);
  fflush(csv);
}

static const char *fmt_time(double s, char *buf, size_t n) {
  if (s <= 0) snprintf(buf, n, "-");
  else if (s < 1e-3) snprintf(buf, n, "%.2f us", s * 1e6);
  else if (s < 1) snprintf(buf, n, "%.3f ms", s * 1e3);
  else snprintf(buf, n, "%.3f s", s);
  return buf;
}

/* ---- one workload -------------------------------------------------------------------------- */

typedef struct env {
  options *o;
  perf_machine m;
  perf_bounds b;
  int have_bounds;
  perf_ort *ort;
  perf_blas blas[3];
  int n_blas;
  /* best BLAS per GEMM size and thread count, for the _const variants */
  struct {
    int n, t;
    double s;
    char name[16];
  } best[64];
  int n_best;
  int failures;
  const struct workload *mix_w; /* --serve-mix */
} env;

static int load_data(const workload *w, data *d, char *err, size_t n) {
  memset(d, 0, sizeof *d);
  for (int i = 0; i < w->n_inputs; i++) {
    if (!(d->in[i] = read_file(w->inputs[i], &d->in_bytes[i]))) {
      snprintf(err, n, "cannot read %s", w->inputs[i]);
      return -1;
    }
  }
  for (int i = 0; i < w->n_refs; i++) {
    if (!(d->ref[i] = read_file(w->refs[i], &d->ref_bytes[i]))) {
      snprintf(err, n, "cannot read %s", w->refs[i]);
      return -1;
    }
  }
  for (int i = 0; i < w->n_bounds; i++) {
    size_t bytes;
    if (!(d->bound[i] = read_file(w->bounds[i], &bytes)) || bytes != d->ref_bytes[i]) {
      snprintf(err, n, "cannot read %s (or its size differs from the reference)", w->bounds[i]);
      return -1;
    }
  }
  return 0;
}

static void free_data(data *d) {
  for (int i = 0; i < PERF_MAX_IO; i++) free(d->in[i]), free(d->ref[i]), free(d->bound[i]);
}

static void fill_rates(env *e, const workload *w, row *rw, double median, int t) {
  if (median <= 0) return;
  if (w->flops > 0) rw->gflops = w->flops / median / 1e9;
  if (w->bytes > 0) rw->gbps = w->bytes / median / 1e9;
  if (!e->have_bounds) return;
  double peak = perf_bounds_peak(&e->b, t);
  const char *level = "dram";
  double bw = perf_bounds_bw(&e->b, &e->m, w->bytes, t, &level);
  double tc = peak > 0 && w->flops > 0 ? w->flops / (peak * 1e9) : 0;
  double tm = bw > 0 && w->bytes > 0 ? w->bytes / (bw * 1e9) : 0;
  if (tc < 1e-6 && tm < 1e-6) return; /* per-call overhead workloads: no bound */
  rw->frac = (tc > tm ? tc : tm) / median;
  snprintf(rw->bound, sizeof rw->bound, "%s", tc > tm ? "fma" : level);
}

static void report_runner(env *e, const workload *w, runner *r, double accy_median) {
  row rw = {.kind = "latency", .workload = w->name, .group = w->group, .system = r->system};
  rw.threads = r->threads;
  snprintf(rw.detail, sizeof rw.detail, "%s", r->detail);
  rw.setup_ms = r->setup_s * 1e3;
  char a[32], b[32], c[32], line[512];
  if (r->failed) {
    snprintf(rw.note, sizeof rw.note, "FAILED: %s", r->err);
    snprintf(rw.check, sizeof rw.check, "error");
    rw.max_abs = rw.max_rel = rw.tol_ratio = NAN;
    printf("  %-9s t=%-2d FAILED: %s\n", r->system, r->threads, r->err);
    csv_row(&rw);
    return;
  }
  rw.calls = (long)r->n;
  rw.median = r->median;
  rw.min = r->min;
  rw.p90 = r->p90;
  rw.max = r->max;
  rw.accy_over = accy_median > 0 ? accy_median / r->median : 0;
  fill_rates(e, w, &rw, r->median, r->threads);
  rw.max_abs = r->chk.max_abs;
  rw.max_rel = r->chk.max_rel;
  rw.tol_ratio = r->chk.tol_ratio;
  snprintf(rw.check, sizeof rw.check, "%s", r->chk.ok ? "ok" : "FAIL");
  if (!r->chk.ok && r->err[0]) snprintf(rw.note, sizeof rw.note, "%s", r->err);
  int len = snprintf(line, sizeof line, "  %-9s t=%-2d %11s [%s .. %s] n=%-6zu", r->system,
                     r->threads, fmt_time(r->median, a, sizeof a), fmt_time(r->min, b, sizeof b),
                     fmt_time(r->max, c, sizeof c), r->n);
  if (rw.gflops > 0)
    len += snprintf(line + len, sizeof line - (size_t)len, " %8.2f GFLOP/s", rw.gflops);
  else if (rw.gbps >= 0.01)
    len += snprintf(line + len, sizeof line - (size_t)len, " %8.2f GB/s   ", rw.gbps);
  if (rw.frac > 0)
    len += snprintf(line + len, sizeof line - (size_t)len, " %5.1f%% of %s", rw.frac * 100,
                    rw.bound);
  if (strcmp(r->system, "accy") != 0 && rw.accy_over > 0)
    len += snprintf(line + len, sizeof line - (size_t)len, "  accy/%s %.2f", r->system,
                    rw.accy_over);
  snprintf(line + len, sizeof line - (size_t)len, "  %s (tol %.2g)", rw.check, rw.tol_ratio);
  puts(line);
  if (e->o->verbose) printf("             %s; setup %.1f ms\n", r->detail, rw.setup_ms);
  csv_row(&rw);
}

static void run_workload(env *e, const workload *w) {
  options *o = e->o;
  printf("%s  (%s", w->name, w->group);
  if (w->flops > 0) printf(", %.3g MFLOP", w->flops / 1e6);
  if (w->bytes > 0) printf(", %.3g MB", w->bytes / 1e6);
  printf(")\n");
  if (w->skip[0]) {
    printf("  skipped: %s\n", w->skip);
    row rw = {.kind = "latency", .workload = w->name, .group = w->group, .system = "accy"};
    snprintf(rw.note, sizeof rw.note, "skipped: %s", w->skip);
    snprintf(rw.check, sizeof rw.check, "skip");
    csv_row(&rw);
    return;
  }
  data d;
  char err[600];
  size_t wire_size = 0;
  void *wire = read_file(w->accyb, &wire_size);
  if (!wire) snprintf(err, sizeof err, "cannot read %s (the accy import failed?)", w->accyb);
  if (!wire || load_data(w, &d, err, sizeof err) != 0) {
    printf("  FAILED: %s\n", err);
    row rw = {.kind = "latency", .workload = w->name, .group = w->group, .system = "accy"};
    snprintf(rw.note, sizeof rw.note, "FAILED: %s", err);
    snprintf(rw.check, sizeof rw.check, "error");
    csv_row(&rw);
    e->failures++;
    free(wire);
    if (wire) free_data(&d);
    return;
  }
  for (int ti = 0; ti < o->n_threads; ti++) {
    int t = o->threads[ti];
    runner rs[MAX_RUNNERS];
    memset(rs, 0, sizeof rs);
    int n = 0;
    shapes sh;
    memset(&sh, 0, sizeof sh);
    runner *ra = &rs[n++];
    int accy_ok = accy_open(ra, w, &d, wire, wire_size, t, &sh) == 0;
    if (!accy_ok) ra->failed = 1;
    if (e->ort && accy_ok) {
      if (ort_open(&rs[n], e->ort, w, &d, t, &sh, o->ort_spin) != 0) rs[n].failed = 1;
      n++;
    }
    int blas_first = n;
    if (w->gemm_m > 0 && !w->const_b && w->n_inputs == 2)
      for (int i = 0; i < e->n_blas; i++) blas_open(&rs[n++], &e->blas[i], w, &d, t);
    quiet_waited_s = 0;
    quiet_timeouts = 0;
    double m0 = perf_now();
    measure(rs, n, w, &d, o);
    if (o->verbose)
      printf("  (t=%d: %.2f s in all, %.3f s waiting for quiet, %d waits timed out)\n", t,
             perf_now() - m0, quiet_waited_s, quiet_timeouts);
    double am = ra->failed ? 0 : ra->median;
    if (ra->failed || !ra->chk.ok) e->failures++;
    summary *s = &sums[n_sums < (int)(sizeof sums / sizeof sums[0]) ? n_sums++ : n_sums - 1];
    memset(s, 0, sizeof *s);
    snprintf(s->workload, sizeof s->workload, "%.63s", w->name);
    s->threads = t;
    s->accy = am;
    s->ok = !ra->failed && ra->chk.ok;
    if (ra->failed) snprintf(s->note, sizeof s->note, "accy failed");
    int best = -1;
    for (int i = 0; i < n; i++) {
      report_runner(e, w, &rs[i], am);
      if (i > 0 && !rs[i].failed && !strcmp(rs[i].system, "ort")) s->ort = rs[i].median;
      if (i >= blas_first && !rs[i].failed && (best < 0 || rs[i].median < rs[best].median))
        best = i;
    }
    if (best >= 0) {
      runner *rb = &rs[best];
      row rw = {.kind = "latency", .workload = w->name, .group = w->group, .system = "blas_best"};
      rw.threads = t;
      snprintf(rw.detail, sizeof rw.detail, "%s", rb->system);
      rw.calls = (long)rb->n;
      rw.median = rb->median, rw.min = rb->min, rw.p90 = rb->p90, rw.max = rb->max;
      rw.accy_over = am > 0 ? am / rb->median : 0;
      fill_rates(e, w, &rw, rb->median, t);
      rw.max_abs = rb->chk.max_abs, rw.max_rel = rb->chk.max_rel, rw.tol_ratio = rb->chk.tol_ratio;
      snprintf(rw.check, sizeof rw.check, "%s", rb->chk.ok ? "ok" : "FAIL");
      csv_row(&rw);
      s->blas = rb->median;
      snprintf(s->blas_name, sizeof s->blas_name, "%s", rb->system);
      if (e->n_best < 64) {
        e->best[e->n_best].n = w->gemm_n;
        e->best[e->n_best].t = t;
        e->best[e->n_best].s = rb->median;
        snprintf(e->best[e->n_best].name, 16, "%s", rb->system);
        e->n_best++;
      }
    } else if (w->const_b) { /* the same GEMM with both operands as inputs, same run */
      for (int i = 0; i < e->n_best; i++)
        if (e->best[i].n == w->gemm_n && e->best[i].t == t) {
          s->blas = e->best[i].s;
          snprintf(s->blas_name, sizeof s->blas_name, "%s*", e->best[i].name);
        }
    }
    if (am > 0 && e->have_bounds) {
      row tmp = {0};
      fill_rates(e, w, &tmp, am, t);
      s->frac = tmp.frac;
    }
    for (int i = 0; i < n; i++) {
      if (!strcmp(rs[i].system, "accy")) accy_close(&rs[i]);
      else if (!strcmp(rs[i].system, "ort")) perf_ort_close(rs[i].ctx);
      else free(rs[i].ctx);
      runner_free(&rs[i]);
    }
    fflush(stdout);
  }
  free(wire);
  free_data(&d);
}

/* ---- serving mode ------------------------------------------------------------------------------ */

typedef struct serve_ctx {
  accy_session *s;
  accy_handle h;
  const accy_input *ins;
  size_t n_in, n_out;
  accy_output (*outs)[PERF_MAX_IO]; /* per client */
  perf_ort_run *ort;
  void *(*ort_vals)[PERF_MAX_IO]; /* per client */
  int *efd;                       /* per client, for accy-async */
  accy_ctx *big;                  /* --serve-mix: client 0 runs this instead */
} serve_ctx;

/* The share of the calls since |before| that ran in batched launches
 * (docs/threading.md, "Coalescing"), for the report line. */
static accy_program_stats serve_stats(const serve_ctx *c) {
  accy_program_stats ps = {.struct_size = sizeof ps};
  if (accy_session_program_stats(c->s, c->h, &ps) != ACCY_STATUS_OK) memset(&ps, 0, sizeof ps);
  return ps;
}
static const char *batched_note(const serve_ctx *c, const accy_program_stats *before, char *buf,
                                size_t n) {
  const accy_program_stats now = serve_stats(c);
  const uint64_t calls = now.invokes - before->invokes;
  const uint64_t batched = now.batched_calls - before->batched_calls;
  const uint64_t launches = now.batched_launches - before->batched_launches;
  if (!calls || !batched) return NULL;
  snprintf(buf, n, "  batched %.0f%% (%.1f calls a launch)", 100.0 * (double)batched / (double)calls,
           launches ? (double)batched / (double)launches : 0.0);
  return buf;
}

static int serve_accy(void *p, int client, char *err, size_t n) {
  serve_ctx *c = p;
  accy_status st = accy_session_invoke(c->s, c->h, c->ins, c->n_in, c->outs[client], c->n_out);
  if (st == ACCY_STATUS_OK) return 0;
  snprintf(err, n, "invoke: %s: %s", accy_status_name(st), accy_session_last_cause(c->s));
  return -1;
}

/* Submits and waits for the completion on the client's own eventfd: the
 * latency an event loop sees, queueing and the pool thread's pickup
 * included. */
static int serve_accy_async(void *p, int client, char *err, size_t n) {
  serve_ctx *c = p;
  accy_completion done = {sizeof done, c->efd[client], NULL, NULL};
  accy_status st =
      accy_session_submit(c->s, c->h, c->ins, c->n_in, c->outs[client], c->n_out, &done);
  if (st != ACCY_STATUS_OK) {
    snprintf(err, n, "submit: %s: %s", accy_status_name(st), accy_session_last_cause(c->s));
    return -1;
  }
  uint64_t v;
  while (read(c->efd[client], &v, sizeof v) != (ssize_t)sizeof v) {
    if (errno != EINTR) {
      snprintf(err, n, "eventfd read: %s", strerror(errno));
      return -1;
    }
  }
  return 0;
}

/* --serve-mix: client 0 calls the large workload, the others the small. */
static int serve_accy_mixed(void *p, int client, char *err, size_t n) {
  serve_ctx *c = p;
  if (client != 0) return serve_accy(p, client, err, n);
  accy_ctx *b = c->big;
  accy_status st = accy_session_invoke(b->s, b->h, b->ins, b->n_in, b->outs, b->n_out);
  if (st == ACCY_STATUS_OK) return 0;
  snprintf(err, n, "invoke (large): %s: %s", accy_status_name(st), accy_session_last_cause(b->s));
  return -1;
}

static int serve_ort(void *p, int client, char *err, size_t n) {
  serve_ctx *c = p;
  return perf_ort_call_values(c->ort, c->ort_vals[client], err, n);
}

static void serve_report(const workload *w, const char *system, int t, perf_serve_result *r,
                         const char *extra) {
  row rw = {.kind = "serve", .workload = w->name, .group = w->group, .system = system};
  rw.threads = t;
  rw.clients = r->clients;
  rw.calls = r->calls;
  rw.median = r->p50_s, rw.p99 = r->p99_s, rw.p999 = r->p999_s, rw.max = r->max_s;
  rw.calls_per_s = r->calls_per_s;
  rw.proc_threads = r->proc_threads;
  rw.rss_before = (double)r->rss_before_kb / 1024;
  rw.rss_after = (double)r->rss_after_kb / 1024;
  if (r->failed) snprintf(rw.note, sizeof rw.note, "FAILED: %s", r->err);
  char a[32], b[32], c[32], d[32];
  printf("  %-5s t=%-2d clients=%-3d %9.0f calls/s  p50 %s p99 %s p99.9 %s max %s  threads %ld  "
         "RSS %.0f -> %.0f MB%s%s%s\n",
         system, t, r->clients, r->calls_per_s, fmt_time(r->p50_s, a, sizeof a),
         fmt_time(r->p99_s, b, sizeof b), fmt_time(r->p999_s, c, sizeof c),
         fmt_time(r->max_s, d, sizeof d), r->proc_threads, rw.rss_before, rw.rss_after,
         extra ? extra : "", r->failed ? "  FAILED: " : "", r->failed ? r->err : "");
  csv_row(&rw);
  fflush(stdout);
}

/* VmRSS in MB after the harness's own heap gave back what it could (the
 * latency arrays of earlier runs), so that what remains is the process's
 * steady memory: accy's own arena is not touched by this. */
static double rss_mb(void) {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
  return (double)perf_proc_status("VmRSS") / 1024;
}

static uint64_t accy_held_mb(accy_session *s) {
  accy_session_stats st = {.struct_size = sizeof st};
  if (accy_session_stats_get(s, &st) != ACCY_STATUS_OK) return 0;
  return st.memory_held_bytes >> 20;
}

/* --serve-memory N (issue 12's memory targets): one client's RSS after 10^3
 * invokes (the baseline) and after N; then a burst of |burst| clients, and
 * RSS after accy_session_trim, against the baseline. */
static void run_serve_memory(env *e, const workload *w, int t, serve_ctx *c, int burst) {
  options *o = e->o;
  char err[300] = "";
  long done = 0;
  double t0 = perf_now();
  for (; done < 1000; done++)
    if (serve_accy(c, 0, err, sizeof err) != 0) break;
  const double base = rss_mb();
  const uint64_t held0 = accy_held_mb(c->s);
  for (; !err[0] && done < o->serve_memory; done++)
    if (serve_accy(c, 0, err, sizeof err) != 0) break;
  const double after_n = rss_mb();
  const double secs = perf_now() - t0;
  perf_serve_result r;
  memset(&r, 0, sizeof r);
  quiesce(0.3);
  if (!err[0]) perf_serve_count(serve_accy, c, burst, o->serve_s, &r);
  const double after_burst = rss_mb();
  const uint64_t held_burst = accy_held_mb(c->s);
  uint64_t freed = 0;
  if (accy_session_trim(c->s, &freed) != ACCY_STATUS_OK) snprintf(err, sizeof err, "trim failed");
  const double after_trim = rss_mb();
  if (err[0] || r.failed) e->failures++;
  printf("  memory t=%-2d RSS after 10^3 invokes %.1f MB, after %ld (%.1f s) %.1f MB (%+.1f%%); "
         "after %d clients %.1f s %.1f MB (accy holds %llu -> %llu MB), after trim %.1f MB "
         "(%+.1f%% of the first; %llu KB freed)%s%s\n",
         t, base, done, secs, after_n, base > 0 ? (after_n / base - 1) * 100 : 0, burst, o->serve_s,
         after_burst, (unsigned long long)held0, (unsigned long long)held_burst, after_trim,
         base > 0 ? (after_trim / base - 1) * 100 : 0, (unsigned long long)(freed >> 10),
         err[0] ? "  FAILED: " : "", err[0] ? err : (r.failed ? r.err : ""));
  row rw = {.kind = "serve-memory", .workload = w->name, .group = w->group, .system = "accy"};
  rw.threads = t;
  rw.clients = burst;
  rw.calls = done;
  rw.rss_before = base;
  rw.rss_after = after_trim;
  snprintf(rw.note, sizeof rw.note, "RSS after %ld invokes %.1f MB, after the burst %.1f MB", done,
           after_n, after_burst);
  csv_row(&rw);
  fflush(stdout);
}

/* One large client (e->mix_w, e.g. mlp_b256) alone, then beside K clients of
 * the small workload: how much its latency rises when small callers share
 * the machine, and what the small ones get meanwhile. */
static void run_serve_mix(env *e, const workload *small, int t, serve_ctx *c) {
  options *o = e->o;
  const workload *w = e->mix_w;
  data d;
  char err[600];
  size_t wire_size = 0;
  void *wire = read_file(w->accyb, &wire_size);
  runner rb;
  memset(&rb, 0, sizeof rb);
  shapes sh;
  memset(&sh, 0, sizeof sh);
  if (!wire || load_data(w, &d, err, sizeof err) != 0 ||
      accy_open(&rb, w, &d, wire, wire_size, t, &sh) != 0) {
    printf("  mix %s t=%d FAILED: cannot open it: %s\n", w->name, t, rb.err);
    e->failures++;
    free(wire);
    return;
  }
  c->big = rb.ctx;
  perf_serve_result alone, mixed;
  quiesce(0.3);
  perf_serve(serve_accy_mixed, c, 1, o->serve_s, &alone);
  for (int ci = 0; ci < o->n_clients; ci++) {
    int k = o->clients[ci];
    quiesce(0.3);
    perf_serve(serve_accy_mixed, c, k + 1, o->serve_s, &mixed);
    if (alone.failed || mixed.failed) e->failures++;
    char a[32], b[32], d1[32], d2[32];
    printf("  mix   t=%-2d %s alone p50 %s; beside %d %s clients p50 %s (x%.2f), p99 %s; "
           "%s calls/s %.0f%s%s\n",
           t, w->name, fmt_time(alone.first_p50_s, a, sizeof a), k, small->name,
           fmt_time(mixed.first_p50_s, b, sizeof b),
           alone.first_p50_s > 0 ? mixed.first_p50_s / alone.first_p50_s : 0,
           fmt_time(mixed.first_p99_s, d1, sizeof d1), small->name,
           (double)(mixed.calls - mixed.first_calls) / o->serve_s,
           mixed.failed ? "  FAILED: " : "", mixed.failed ? mixed.err : "");
    (void)d2;
    row rw = {.kind = "serve-mix", .workload = small->name, .group = small->group,
              .system = "accy"};
    rw.threads = t;
    rw.clients = k;
    rw.median = mixed.first_p50_s, rw.p99 = mixed.first_p99_s;
    rw.calls = mixed.first_calls;
    snprintf(rw.note, sizeof rw.note, "large %s alone p50 %.6g s", w->name, alone.first_p50_s);
    csv_row(&rw);
    fflush(stdout);
  }
  c->big = NULL;
  accy_close(&rb);
  runner_free(&rb);
  free(wire);
  free_data(&d);
}

static void run_serve(env *e, const workload *w) {
  options *o = e->o;
  printf("serve %s: %d client count(s), %.1f s each, one shared handle / session\n", w->name,
         o->n_clients, o->serve_s);
  data d;
  char err[600];
  size_t wire_size = 0;
  void *wire = read_file(w->accyb, &wire_size);
  if (!wire || load_data(w, &d, err, sizeof err) != 0) {
    printf("  FAILED: cannot read the workload's files\n");
    e->failures++;
    free(wire);
    return;
  }
  int max_clients = 1;
  for (int i = 0; i < o->n_clients; i++)
    if (o->clients[i] > max_clients) max_clients = o->clients[i];
  if (e->mix_w) max_clients++; /* the mixed runs' small clients are 1..K */
  for (int ti = 0; ti < o->n_threads; ti++) {
    int t = o->threads[ti];
    runner ra;
    memset(&ra, 0, sizeof ra);
    shapes sh;
    memset(&sh, 0, sizeof sh);
    if (accy_open(&ra, w, &d, wire, wire_size, t, &sh) != 0) {
      printf("  accy t=%d FAILED: %s\n", t, ra.err);
      e->failures++;
      accy_close(&ra);
      runner_free(&ra);
      continue;
    }
    accy_ctx *ac = ra.ctx;
    serve_ctx c = {.s = ac->s, .h = ac->h, .ins = ac->ins, .n_in = ac->n_in, .n_out = ac->n_out};
    c.outs = calloc((size_t)max_clients, sizeof *c.outs);
    for (int k = 0; k < max_clients; k++)
      for (size_t i = 0; i < ac->n_out; i++)
        c.outs[k][i] = (accy_output){perf_alloc(sh.out_bytes[i]), sh.out_bytes[i]};
    if (o->serve_async) {
      c.efd = calloc((size_t)max_clients, sizeof *c.efd);
      for (int k = 0; k < max_clients && c.efd; k++) c.efd[k] = eventfd(0, EFD_CLOEXEC);
    }
    runner ro;
    memset(&ro, 0, sizeof ro);
    if (e->ort && ort_open(&ro, e->ort, w, &d, t, &sh, o->ort_spin) == 0) {
      c.ort = ro.ctx;
      c.ort_vals = calloc((size_t)max_clients, sizeof *c.ort_vals);
      for (int k = 0; k < max_clients; k++) {
        void *bufs[PERF_MAX_IO];
        for (size_t i = 0; i < ac->n_out; i++) bufs[i] = perf_alloc(sh.out_bytes[i]);
        if (perf_ort_wrap_outputs(c.ort, bufs, c.ort_vals[k], err, sizeof err) != 0) {
          printf("  ort: %s\n", err);
          c.ort = NULL;
          break;
        }
      }
    } else if (e->ort) {
      printf("  ort t=%d FAILED: %s\n", t, ro.err);
    }
    for (int ci = 0; ci < o->n_clients; ci++) {
      perf_serve_result r;
      char note[96];
      quiesce(0.3);
      accy_program_stats before = serve_stats(&c);
      perf_serve(serve_accy, &c, o->clients[ci], o->serve_s, &r);
      if (r.failed) e->failures++;
      serve_report(w, "accy", t, &r, batched_note(&c, &before, note, sizeof note));
      if (o->serve_async && c.efd) {
        quiesce(0.3);
        before = serve_stats(&c);
        perf_serve(serve_accy_async, &c, o->clients[ci], o->serve_s, &r);
        if (r.failed) e->failures++;
        serve_report(w, "async", t, &r, batched_note(&c, &before, note, sizeof note));
      }
      if (c.ort) {
        quiesce(0.3);
        perf_serve(serve_ort, &c, o->clients[ci], o->serve_s, &r);
        serve_report(w, "ort", t, &r, NULL);
      }
    }
    if (e->mix_w) run_serve_mix(e, w, t, &c);
    if (o->serve_memory > 0) run_serve_memory(e, w, t, &c, max_clients - (e->mix_w ? 1 : 0));
    /* The output buffers of every client, ORT's included, are leaked at the
     * end of the mode on purpose: the process exits right after. */
    if (ro.ctx) perf_ort_close(ro.ctx);
    accy_close(&ra);
    runner_free(&ra);
    runner_free(&ro);
  }
  free(wire);
  free_data(&d);
}

/* ---- main ---------------------------------------------------------------------------------------- */

static void print_bounds(env *e) {
  perf_bounds *b = &e->b;
  printf("bounds (measured now; GB/s counted as STREAM does):\n");
  for (int t = 1; t <= b->max_threads; t++) {
    printf("  t=%-2d FMA ymm %7.1f GFLOP/s", t, b->fma_ymm_gflops[t]);
    if (b->fma_zmm_gflops[t] > 0) printf("  zmm %7.1f", b->fma_zmm_gflops[t]);
    printf("   DRAM read %5.1f copy %5.1f triad %5.1f GB/s   cache read %5.1f copy %5.1f triad "
           "%5.1f GB/s\n",
           b->read_dram_gbps[t], b->copy_dram_gbps[t], b->triad_dram_gbps[t],
           b->read_cache_gbps[t], b->copy_cache_gbps[t], b->triad_cache_gbps[t]);
    struct {
      const char *name;
      double v;
      int is_gflops;
    } items[] = {{"fma_ymm", b->fma_ymm_gflops[t], 1},      {"fma_zmm", b->fma_zmm_gflops[t], 1},
                 {"read_dram", b->read_dram_gbps[t], 0},    {"copy_dram", b->copy_dram_gbps[t], 0},
                 {"triad_dram", b->triad_dram_gbps[t], 0},  {"read_cache", b->read_cache_gbps[t], 0},
                 {"copy_cache", b->copy_cache_gbps[t], 0},  {"triad_cache", b->triad_cache_gbps[t], 0}};
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
      if (items[i].v <= 0) continue;
      row rw = {.kind = "bound", .workload = items[i].name, .group = "bound", .system = "machine"};
      rw.threads = t;
      if (items[i].is_gflops) rw.gflops = items[i].v;
      else rw.gbps = items[i].v;
      if (i >= 2)
        snprintf(rw.detail, sizeof rw.detail, "%zu bytes per array",
                 i < 5 ? b->dram_array_bytes : b->cache_array_bytes);
      csv_row(&rw);
    }
  }
}

static void print_summary(env *e) {
  printf("\nsummary (median latency; ratio = accy / peer, below 1 = accy faster; "
         "bound = accy's fraction of the roofline)\n");
  printf("%-22s %3s %12s %12s %7s %12s %-9s %7s %6s %s\n", "workload", "t", "accy", "ort",
         "acc/ort", "best blas", "", "acc/bls", "bound", "check");
  for (int i = 0; i < n_sums; i++) {
    summary *s = &sums[i];
    char a[32], b[32], c[32], r1[16] = "-", r2[16] = "-", fr[16] = "-";
    if (s->accy > 0 && s->ort > 0) snprintf(r1, sizeof r1, "%.2f", s->accy / s->ort);
    if (s->accy > 0 && s->blas > 0) snprintf(r2, sizeof r2, "%.2f", s->accy / s->blas);
    if (s->frac > 0) snprintf(fr, sizeof fr, "%.1f%%", s->frac * 100);
    printf("%-22s %3d %12s %12s %7s %12s %-9s %7s %6s %s\n", s->workload, s->threads,
           fmt_time(s->accy, a, sizeof a), fmt_time(s->ort, b, sizeof b), r1,
           fmt_time(s->blas, c, sizeof c), s->blas_name, r2, fr, s->ok ? "ok" : "FAIL");
  }
  if (e->n_best) printf("(blas name*: measured on the same GEMM with both operands as inputs)\n");
}

int main(int argc, char **argv) {
  options o;
  if (parse_options(argc, argv, &o) != 0) {
    usage(stderr);
    return 2;
  }
  if (o.replot) {
    int rc = perf_plot(o.replot, o.plot);
    if (rc == 1) printf("plots: skipped (no gnuplot; Debian: gnuplot-nox)\n");
    else printf("plots: %s%s\n", o.plot, rc < 0 ? ": gnuplot failed (see gnuplot.log there)" : "");
    return rc < 0 ? 1 : 0;
  }
  regex_t re;
  if (o.filter && regcomp(&re, o.filter, REG_EXTENDED | REG_NOSUB) != 0) {
    fprintf(stderr, "perf_harness: bad --filter regex '%s'\n", o.filter);
    return 2;
  }
  static workload ws[MAX_WORKLOADS];
  int n_ws = read_manifest(o.models, ws, MAX_WORKLOADS);
  if (n_ws < 0) return 1;
  static env e;
  e.o = &o;
  if (o.csv && !(csv = fopen(o.csv, "w"))) {
    fprintf(stderr, "perf_harness: cannot write %s: %s\n", o.csv, strerror(errno));
    return 2;
  }
  csv_header();

  perf_machine_read(&e.m);
  printf("# accy %s perf harness%s\n", accy_version(), o.quick ? " (quick: correctness only)" : "");
  printf("machine: %s; %d CPUs; %s; L2 %ld KiB, L3 %ld KiB\n", e.m.cpu[0] ? e.m.cpu : "?",
         e.m.cores, e.m.isa[0] ? e.m.isa : "no avx2/avx512", e.m.l2_bytes >> 10,
         e.m.l3_bytes >> 10);
  if (csv)
    fprintf(csv, "# machine: %s; %d CPUs; %s; L2 %ld KiB; L3 %ld KiB\n", e.m.cpu, e.m.cores,
            e.m.isa, e.m.l2_bytes >> 10, e.m.l3_bytes >> 10);
  printf("threads:");
  int max_t = 1;
  for (int i = 0; i < o.n_threads; i++) {
    printf(" %d", o.threads[i]);
    if (o.threads[i] > max_t) max_t = o.threads[i];
  }
  printf("; %s\n", o.quick ? "two calls per system" : "timed calls alternate between systems");

  if (!o.no_ort) {
    char why[512] = "", def[600];
    if (!o.ort_path || !*o.ort_path) { /* where perf/run --install-peers puts it */
      const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
      struct stat st;
      if (xdg && *xdg) snprintf(def, sizeof def, "%s/accy-perf/ort", xdg);
      else snprintf(def, sizeof def, "%s/.cache/accy-perf/ort", home ? home : "");
      if (stat(def, &st) == 0 && S_ISDIR(st.st_mode)) o.ort_path = def;
    }
    e.ort = perf_ort_load(o.ort_path, why, sizeof why);
    if (e.ort)
      printf("peer ort: ONNX Runtime %s (%s); intra-op = t, inter-op 1, sequential, "
             "ORT_ENABLE_ALL, spinning %s; outputs pre-allocated OrtValues passed to Run\n",
             perf_ort_version(e.ort), perf_ort_library(e.ort),
             o.ort_spin < 0 ? "default" : o.ort_spin ? "on" : "off");
    else
      printf("peer ort: ABSENT: %s\n", why);
  } else {
    printf("peer ort: not used (--no-ort)\n");
  }
  e.n_blas = perf_blas_load(o.blas, e.blas, o.verbose);
  for (int i = 0; i < e.n_blas; i++) printf("peer %s: %s\n", e.blas[i].name, e.blas[i].detail);
  if (!e.n_blas) printf("peer blas: none (--blas %s)\n", o.blas);

  if (o.bounds) {
    perf_bounds_measure(&e.m, max_t, o.quick ? 0.15 : 1.0, &e.b);
    e.have_bounds = 1;
    print_bounds(&e);
  }
  fflush(stdout);

  if (o.serve) {
    int found = 0;
    if (o.serve_mix) {
      for (int i = 0; i < n_ws; i++)
        if (!strcmp(ws[i].name, o.serve_mix)) e.mix_w = &ws[i];
      if (!e.mix_w) {
        fprintf(stderr, "perf_harness: --serve-mix %s: no such workload in %s\n", o.serve_mix,
                o.models);
        return 2;
      }
    }
    for (int i = 0; i < n_ws; i++)
      if (!strcmp(ws[i].name, o.serve)) {
        run_serve(&e, &ws[i]);
        found = 1;
      }
    if (!found) {
      fprintf(stderr, "perf_harness: --serve %s: no such workload in %s\n", o.serve, o.models);
      return 2;
    }
  } else {
    printf("\n");
    for (int i = 0; i < n_ws; i++) {
      if (o.filter && regexec(&re, ws[i].name, 0, NULL, 0) != 0) continue;
      run_workload(&e, &ws[i]);
    }
    print_summary(&e);
    if (e.have_bounds && !o.quick) {
      /* The machine is shared: measure again, so that a noisy start shows. */
      perf_bounds end;
      perf_bounds_measure(&e.m, max_t, 1.0, &end);
      printf("bounds again at the end (FMA GFLOP/s, DRAM triad GB/s; start -> end):");
      int noisy = 0;
      for (int t = 1; t <= end.max_threads; t++) {
        double p0 = perf_bounds_peak(&e.b, t), p1 = perf_bounds_peak(&end, t);
        printf("  t=%d %.1f -> %.1f, %.1f -> %.1f", t, p0, p1, e.b.triad_dram_gbps[t],
               end.triad_dram_gbps[t]);
        if (p1 > 1.1 * p0 || p1 < 0.9 * p0) noisy = 1;
        row rw = {.kind = "bound", .workload = "fma_end", .group = "bound", .system = "machine"};
        rw.threads = t;
        rw.gflops = p1;
        snprintf(rw.note, sizeof rw.note, "FMA peak measured again at the end of the run");
        csv_row(&rw);
      }
      printf("\n%s", noisy ? "  the FMA peak moved by more than 10%: the machine was busy; "
                             "read the fractions of the bound with care\n" : "");
    }
  }
  if (csv) fclose(csv);
  if (o.plot) {
    int rc = perf_plot(o.csv, o.plot);
    if (rc == 1) printf("plots: skipped (no gnuplot; Debian: gnuplot-nox)\n");
    else if (rc < 0) printf("plots: gnuplot failed (see %s/gnuplot.log)\n", o.plot);
    else printf("plots: %s\n", o.plot);
  }
  if (!o.serve) {
    int ok = 0;
    for (int i = 0; i < n_sums; i++) ok += sums[i].ok;
    printf("accy checks: %d of %d workload x thread runs ok\n", ok, n_sums);
  }
  if (e.failures) printf("%d accy failure(s)\n", e.failures);
  return e.failures ? 1 : 0;
}
