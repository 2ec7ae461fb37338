/* perf/perf_invoke.c: the perf harness. Measures accy per-call time for a
 * few workloads at several thread counts, and a peer measured in the same
 * run: a plain C implementation of the same computation (naive loops at the
 * same optimisation level, one thread). Prints one line per measurement:
 *
 *   name=mlp_b1 threads=2 accy_ns=... peer_ns=... ratio=...   (ratio = accy / peer)
 *   name=concurrent_mlp_b1 callers=8 threads=2 calls_per_s=... peer_calls_per_s=...
 *
 * Usage: perf_invoke [--quick] [--threads 1,2,4] [--filter NAME]
 * Medians over repeated samples; machines here are noisy, so compare ratios
 * from the same run, never absolute numbers across runs. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "accy/accy.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void die(const char *what, accy_status st) {
  fprintf(stderr, "perf_invoke: %s: %s: %s\n", what, accy_status_name(st),
          accy_session_last_cause(NULL));
  exit(1);
}

#define CHECK(what, expr)                          \
  do {                                             \
    accy_status st_ = (expr);                      \
    if (st_ != ACCY_STATUS_OK) die((what), st_);   \
  } while (0)

static float *random_floats(size_t n, unsigned seed) {
  float *p = malloc(n * sizeof(float) + 64);
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
  }
  return p;
}

/* ---- workloads ----------------------------------------------------------- */

typedef struct workload {
  const char *name;
  void *bytes;
  size_t size;
  int n_in, n_out;
  float *in[4];
  size_t in_bytes[4];
  float *out[4];
  size_t out_bytes[4];
  void (*peer)(struct workload *w);
  float *peer_out;
  /* shapes for the peer */
  int64_t m, k, n, h;
} workload;

static uint32_t dense(accy_builder *b, uint32_t x, int64_t m, int64_t k, int64_t n,
                      const char *wname, const char *bname, int relu, unsigned seed) {
  int64_t wd[2] = {k, n}, bd[1] = {n};
  float *w = random_floats((size_t)(k * n), seed), *bias = random_floats((size_t)n, seed + 1);
  uint32_t wv, bv, d, bb, s;
  CHECK("constant", accy_builder_constant(b, wname, ACCY_DTYPE_F32, 2, wd, w,
                                          (size_t)(k * n) * 4, &wv));
  CHECK("constant", accy_builder_constant(b, bname, ACCY_DTYPE_F32, 1, bd, bias, (size_t)n * 4, &bv));
  free(w);
  free(bias);
  int64_t dot[] = {0, 1, 1, 0};
  uint32_t ops[2] = {x, wv};
  CHECK("dot", accy_builder_op(b, ACCY_OP_DOT_GENERAL, ops, 2, dot, 4, NULL, &d));
  accy_type t = {ACCY_DTYPE_F32, 2, {m, n}};
  int64_t bdims[] = {1};
  CHECK("broadcast", accy_builder_op(b, ACCY_OP_BROADCAST_IN_DIM, &bv, 1, bdims, 1, &t, &bb));
  CHECK("add", accy_builder_binary(b, ACCY_OP_ADD, d, bb, &s));
  if (!relu) return s;
  float z = 0;
  uint32_t zc, zb, r;
  char zname[32];
  snprintf(zname, sizeof zname, "%s_zero", wname);
  CHECK("constant", accy_builder_constant(b, zname, ACCY_DTYPE_F32, 0, NULL, &z, 4, &zc));
  CHECK("broadcast", accy_builder_op(b, ACCY_OP_BROADCAST_IN_DIM, &zc, 1, NULL, 0, &t, &zb));
  CHECK("max", accy_builder_binary(b, ACCY_OP_MAXIMUM, s, zb, &r));
  return r;
}

/* The peer's weights: generated once with the same seeds as the program's
 * constants, read-only afterwards so concurrent peer calls may share them. */
typedef struct peer_layer {
  float *w, *bias;
} peer_layer;
static peer_layer peer_layers[3];

static void peer_layer_init(peer_layer *l, int64_t k, int64_t n, unsigned seed) {
  l->w = random_floats((size_t)(k * n), seed);
  l->bias = random_floats((size_t)n, seed + 1);
}

static void peer_dense(const peer_layer *l, const float *x, float *y, int64_t m, int64_t k,
                       int64_t n, int relu) {
  for (int64_t i = 0; i < m; i++) {
    float *yr = y + i * n;
    for (int64_t j = 0; j < n; j++) yr[j] = 0;
    for (int64_t q = 0; q < k; q++) {
      float a = x[i * k + q];
      const float *wr = l->w + q * n;
      for (int64_t j = 0; j < n; j++) yr[j] += a * wr[j];
    }
    for (int64_t j = 0; j < n; j++) {
      float v = yr[j] + l->bias[j];
      yr[j] = relu && v < 0 ? 0 : v;
    }
  }
}

static void mlp_peer(workload *w) {
  /* Per-thread hidden buffers: concurrent peer callers must not share them. */
  static _Thread_local float *h1, *h2;
  static _Thread_local int64_t cap;
  if (cap < w->m * w->h) {
    free(h1);
    free(h2);
    cap = w->m * w->h;
    h1 = malloc((size_t)cap * 4);
    h2 = malloc((size_t)cap * 4);
  }
  peer_dense(&peer_layers[0], w->in[0], h1, w->m, w->k, w->h, 1);
  peer_dense(&peer_layers[1], h1, h2, w->m, w->h, w->h, 1);
  peer_dense(&peer_layers[2], h2, w->peer_out, w->m, w->h, w->n, 0);
}

static void make_mlp(workload *w, const char *name, int64_t batch) {
  /* 784-1024-1024-10 ReLU MLP, as in shared/notes/peers.md. */
  w->name = name;
  w->m = batch;
  w->k = 784;
  w->h = 1024;
  w->n = 10;
  accy_builder *b;
  CHECK("builder", accy_builder_create(&b));
  int64_t xd[2] = {batch, 784};
  uint32_t x;
  CHECK("param", accy_builder_parameter(b, "x", ACCY_DTYPE_F32, 2, xd, &x));
  uint32_t h1 = dense(b, x, batch, 784, 1024, "w1", "b1", 1, 11);
  uint32_t h2 = dense(b, h1, batch, 1024, 1024, "w2", "b2", 1, 21);
  uint32_t y = dense(b, h2, batch, 1024, 10, "w3", "b3", 0, 31);
  CHECK("output", accy_builder_output(b, y, "y"));
  CHECK("finish", accy_builder_finish(b, &w->bytes, &w->size));
  accy_builder_destroy(b);
  w->n_in = 1;
  w->in_bytes[0] = (size_t)(batch * 784) * 4;
  w->in[0] = random_floats((size_t)(batch * 784), 5);
  w->n_out = 1;
  w->out_bytes[0] = (size_t)(batch * 10) * 4;
  w->out[0] = malloc(w->out_bytes[0]);
  w->peer_out = malloc(w->out_bytes[0]);
  w->peer = mlp_peer;
  if (!peer_layers[0].w) {
    peer_layer_init(&peer_layers[0], 784, 1024, 11);
    peer_layer_init(&peer_layers[1], 1024, 1024, 21);
    peer_layer_init(&peer_layers[2], 1024, 10, 31);
  }
}

static void chain_peer(workload *w) {
  const float *a = w->in[0], *b = w->in[1];
  float *o = w->peer_out;
  for (int64_t i = 0; i < w->m; i++) o[i] = tanhf(a[i] * b[i] + a[i]) * b[i];
}

static void make_chain(workload *w, const char *name, int64_t n) {
  /* Mul -> Add -> Tanh -> Mul over n elements. */
  w->name = name;
  w->m = n;
  accy_builder *b;
  CHECK("builder", accy_builder_create(&b));
  int64_t d[1] = {n};
  uint32_t x, y, m1, a1, t, m2;
  CHECK("param", accy_builder_parameter(b, "a", ACCY_DTYPE_F32, 1, d, &x));
  CHECK("param", accy_builder_parameter(b, "b", ACCY_DTYPE_F32, 1, d, &y));
  CHECK("mul", accy_builder_binary(b, ACCY_OP_MULTIPLY, x, y, &m1));
  CHECK("add", accy_builder_binary(b, ACCY_OP_ADD, m1, x, &a1));
  CHECK("tanh", accy_builder_unary(b, ACCY_OP_TANH, a1, &t));
  CHECK("mul", accy_builder_binary(b, ACCY_OP_MULTIPLY, t, y, &m2));
  CHECK("output", accy_builder_output(b, m2, "y"));
  CHECK("finish", accy_builder_finish(b, &w->bytes, &w->size));
  accy_builder_destroy(b);
  w->n_in = 2;
  for (int i = 0; i < 2; i++) {
    w->in_bytes[i] = (size_t)n * 4;
    w->in[i] = random_floats((size_t)n, 7 + (unsigned)i);
  }
  w->n_out = 1;
  w->out_bytes[0] = (size_t)n * 4;
  w->out[0] = malloc(w->out_bytes[0]);
  w->peer_out = malloc(w->out_bytes[0]);
  w->peer = chain_peer;
}

static void tiny_peer(workload *w) {
  for (int i = 0; i < 4; i++) w->peer_out[i] = w->in[0][i] + w->in[1][i];
}

static void make_tiny(workload *w) {
  /* Launch overhead: a 4-element add. */
  w->name = "tiny_add";
  accy_builder *b;
  CHECK("builder", accy_builder_create(&b));
  int64_t d[1] = {4};
  uint32_t x, y, s;
  CHECK("param", accy_builder_parameter(b, "x", ACCY_DTYPE_F32, 1, d, &x));
  CHECK("param", accy_builder_parameter(b, "y", ACCY_DTYPE_F32, 1, d, &y));
  CHECK("add", accy_builder_binary(b, ACCY_OP_ADD, x, y, &s));
  CHECK("output", accy_builder_output(b, s, "s"));
  CHECK("finish", accy_builder_finish(b, &w->bytes, &w->size));
  accy_builder_destroy(b);
  w->n_in = 2;
  for (int i = 0; i < 2; i++) {
    w->in_bytes[i] = 16;
    w->in[i] = random_floats(4, 3 + (unsigned)i);
  }
  w->n_out = 1;
  w->out_bytes[0] = 16;
  w->out[0] = malloc(16);
  w->peer_out = malloc(16);
  w->peer = tiny_peer;
}

/* ---- measurement ------------------------------------------------------------ */

static int quick;

static double median_ns(void (*fn)(void *), void *arg) {
  /* Calibrate the repetitions per sample to ~quick? 2 : 20 ms. */
  double t0 = now_ns();
  fn(arg);
  double one = now_ns() - t0;
  double target = quick ? 2e6 : 2e7;
  int reps = one > 0 ? (int)(target / one) : 1000;
  if (reps < 1) reps = 1;
  if (reps > 100000) reps = 100000;
  enum { SAMPLES = 9 };
  double s[SAMPLES];
  int n_samples = quick ? 3 : SAMPLES;
  for (int i = 0; i < n_samples; i++) {
    t0 = now_ns();
    for (int r = 0; r < reps; r++) fn(arg);
    s[i] = (now_ns() - t0) / reps;
  }
  qsort(s, (size_t)n_samples, sizeof s[0], cmp_double);
  return s[n_samples / 2];
}

typedef struct run_ctx {
  accy_session *s;
  accy_handle h;
  workload *w;
  accy_input ins[4];
  accy_output outs[4];
} run_ctx;

static void run_accy(void *arg) {
  run_ctx *c = arg;
  accy_status st = accy_session_invoke(c->s, c->h, c->ins, (size_t)c->w->n_in, c->outs,
                                       (size_t)c->w->n_out);
  if (st != ACCY_STATUS_OK) die("invoke", st);
}

static void run_peer(void *arg) {
  workload *w = arg;
  w->peer(w);
}

static double max_rel_diff(const float *a, const float *b, size_t n) {
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - b[i]) / (fabs((double)b[i]) + 1e-3);
    if (d > worst) worst = d;
  }
  return worst;
}

typedef struct caller {
  run_ctx ctx;
  int calls;
  double until;
} caller;

static void *caller_main(void *arg) {
  caller *c = arg;
  while (now_ns() < c->until) {
    run_accy(&c->ctx);
    c->calls++;
  }
  return NULL;
}

static void *peer_caller_main(void *arg) {
  caller *c = arg;
  workload local = *c->ctx.w;
  local.peer_out = malloc(local.out_bytes[0]);
  while (now_ns() < c->until) {
    local.peer(&local);
    c->calls++;
  }
  free(local.peer_out);
  return NULL;
}

static double throughput(accy_session *s, accy_handle h, workload *w, int callers, int peer) {
  caller *cs = calloc((size_t)callers, sizeof(caller));
  pthread_t *th = calloc((size_t)callers, sizeof(pthread_t));
  double t0 = now_ns(), dur = quick ? 2e8 : 1e9;
  for (int i = 0; i < callers; i++) {
    cs[i].ctx = (run_ctx){.s = s, .h = h, .w = w};
    for (int k = 0; k < w->n_in; k++) cs[i].ctx.ins[k] = (accy_input){w->in[k], w->in_bytes[k]};
    for (int k = 0; k < w->n_out; k++) {
      cs[i].ctx.outs[k] = (accy_output){malloc(w->out_bytes[k]), w->out_bytes[k]};
    }
    cs[i].until = t0 + dur;
    pthread_create(&th[i], NULL, peer ? peer_caller_main : caller_main, &cs[i]);
  }
  long total = 0;
  for (int i = 0; i < callers; i++) {
    pthread_join(th[i], NULL);
    total += cs[i].calls;
    for (int k = 0; k < w->n_out; k++) free(cs[i].ctx.outs[k].data);
  }
  double secs = (now_ns() - t0) / 1e9;
  free(cs);
  free(th);
  return (double)total / secs;
}

int main(int argc, char **argv) {
  uint32_t threads[8] = {1, 2};
  int n_threads = 2;
  const char *filter = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) {
      quick = 1;
    } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      n_threads = 0;
      for (char *p = strtok(argv[++i], ","); p && n_threads < 8; p = strtok(NULL, ","))
        threads[n_threads++] = (uint32_t)atoi(p);
    } else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
      filter = argv[++i];
    } else {
      fprintf(stderr, "usage: perf_invoke [--quick] [--threads 1,2,4] [--filter NAME]\n");
      return 2;
    }
  }
  workload ws[5];
  memset(ws, 0, sizeof ws);
  make_tiny(&ws[0]);
  make_chain(&ws[1], "chain_64k", 1 << 16);
  make_chain(&ws[2], "chain_4m", 1 << 22);
  make_mlp(&ws[3], "mlp_b1", 1);
  make_mlp(&ws[4], "mlp_b64", 64);
  int n_ws = 5;

  printf("# accy %s perf_invoke; peer = plain C loops, 1 thread, same run\n", accy_version());
  for (int wi = 0; wi < n_ws; wi++) {
    workload *w = &ws[wi];
    if (filter && !strstr(w->name, filter)) continue;
    double peer = median_ns(run_peer, w);
    for (int ti = 0; ti < n_threads; ti++) {
      accy_session_options o = {sizeof o, threads[ti]};
      run_ctx c = {.w = w};
      CHECK("create", accy_session_create(&o, &c.s));
      CHECK("compile", accy_session_compile(c.s, w->bytes, w->size, &c.h));
      for (int k = 0; k < w->n_in; k++) c.ins[k] = (accy_input){w->in[k], w->in_bytes[k]};
      for (int k = 0; k < w->n_out; k++) c.outs[k] = (accy_output){w->out[k], w->out_bytes[k]};
      run_accy(&c);
      w->peer(w);
      double diff = max_rel_diff(w->out[0], w->peer_out, w->out_bytes[0] / 4);
      double ns = median_ns(run_accy, &c);
      printf("name=%s threads=%u accy_ns=%.0f peer_ns=%.0f ratio=%.3f max_rel_diff=%.1e\n",
             w->name, threads[ti], ns, peer, ns / peer, diff);
      fflush(stdout);
      if (wi == 3) {
        int callers = 8;
        double tp = throughput(c.s, c.h, w, callers, 0);
        double ptp = throughput(c.s, c.h, w, callers, 1);
        printf("name=concurrent_%s callers=%d threads=%u calls_per_s=%.0f peer_calls_per_s=%.0f "
               "ratio=%.3f\n",
               w->name, callers, threads[ti], tp, ptp, ptp / tp);
        fflush(stdout);
      }
      accy_session_destroy(c.s);
    }
  }
  for (int wi = 0; wi < n_ws; wi++) {
    accy_free(ws[wi].bytes);
    for (int k = 0; k < ws[wi].n_in; k++) free(ws[wi].in[k]);
    for (int k = 0; k < ws[wi].n_out; k++) free(ws[wi].out[k]);
    free(ws[wi].peer_out);
  }
  return 0;
}
