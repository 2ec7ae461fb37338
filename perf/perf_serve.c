/* perf/perf_serve.c: serving mode. K client threads call one shared handle
 * (or one shared ORT session) in a loop for a fixed time; every call is timed
 * on its own. Reports aggregate calls per second, p50/p99/p99.9/max latency,
 * the process's peak thread count while the clients run (/proc/self/status
 * Threads) and its RSS before and after (VmRSS). Issue 12 builds on this. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf/perf.h"


static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

long perf_proc_status(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  size_t n = strlen(key);
  long v = -1;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, key, n) == 0 && line[n] == ':') {
      v = strtol(line + n + 1, NULL, 10);
      break;
    }
  }
  fclose(f);
  return v;
}

typedef struct client {
  perf_client_fn fn;
  void *ctx;
  int id;
  double start, until;
  double *lat;
  size_t n, cap;
  int failed, count_only;
  char err[200];
  struct gate *go;
} client;

/* Clients wait here until every one exists and the deadline is set. */
typedef struct gate {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int open;
} gate;

static void gate_wait(gate *g) {
  pthread_mutex_lock(&g->mu);
  while (!g->open) pthread_cond_wait(&g->cv, &g->mu);
  pthread_mutex_unlock(&g->mu);
}

static void gate_open(gate *g) {
  pthread_mutex_lock(&g->mu);
  g->open = 1;
  pthread_cond_broadcast(&g->cv);
  pthread_mutex_unlock(&g->mu);
}

static void *client_main(void *p) {
  client *c = p;
  gate_wait(c->go);
  for (;;) {
    double t0 = perf_now();
    if (t0 >= c->until) break;
    if (c->fn(c->ctx, c->id, c->err, sizeof c->err) != 0) {
      c->failed = 1;
      break;
    }
    double dt = perf_now() - t0;
    if (c->count_only) {
      c->n++;
      continue;
    }
    if (c->n == c->cap) {
      size_t cap = c->cap ? c->cap * 2 : 4096;
      double *nl = realloc(c->lat, cap * sizeof *nl);
      if (!nl) {
        c->failed = 1;
        snprintf(c->err, sizeof c->err, "out of memory for latencies");
        break;
      }
      c->lat = nl;
      c->cap = cap;
    }
    c->lat[c->n++] = dt;
  }
  return NULL;
}

static void serve(perf_client_fn fn, void *ctx, int clients, double seconds, int count_only,
                  perf_serve_result *r) {
  memset(r, 0, sizeof *r);
  r->clients = clients;
  r->rss_before_kb = perf_proc_status("VmRSS");
  client *cs = calloc((size_t)clients, sizeof *cs);
  pthread_t *th = calloc((size_t)clients, sizeof *th);
  gate go = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  for (int i = 0; i < clients; i++) {
    cs[i] = (client){.fn = fn, .ctx = ctx, .id = i, .go = &go, .count_only = count_only};
  }
  int started = 0;
  for (; started < clients; started++) {
    if (pthread_create(&th[started], NULL, client_main, &cs[started]) != 0) break;
  }
  double t0 = perf_now();
  if (started < clients) { /* the clients that exist leave at once */
    snprintf(r->err, sizeof r->err, "could only start %d of %d client threads", started, clients);
    r->failed = 1;
  } else {
    for (int i = 0; i < clients; i++) cs[i].until = t0 + seconds;
  }
  gate_open(&go);
  long peak = perf_proc_status("Threads");
  while (started == clients && perf_now() < t0 + seconds) {
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    long n = perf_proc_status("Threads");
    if (n > peak) peak = n;
  }
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  double wall = perf_now() - t0;
  r->proc_threads = peak;
  r->rss_after_kb = perf_proc_status("VmRSS");
  size_t total = 0;
  for (int i = 0; i < started; i++) {
    total += cs[i].n;
    if (cs[i].failed && !r->failed) {
      r->failed = 1;
      snprintf(r->err, sizeof r->err, "client %d: %s", i, cs[i].err);
    }
  }
  if (count_only) {
    r->calls = (long)total;
    r->calls_per_s = wall > 0 ? (double)total / wall : 0;
    free(cs);
    free(th);
    return;
  }
  if (started > 0 && cs[0].n) {
    qsort(cs[0].lat, cs[0].n, sizeof(double), cmp_double);
    r->first_calls = (long)cs[0].n;
    r->first_p50_s = cs[0].lat[cs[0].n / 2];
    r->first_p99_s = cs[0].lat[(size_t)((double)(cs[0].n - 1) * 0.99)];
  }
  double *all = malloc((total ? total : 1) * sizeof *all);
  size_t k = 0;
  for (int i = 0; i < started; i++) {
    if (cs[i].n) memcpy(all + k, cs[i].lat, cs[i].n * sizeof *all);
    k += cs[i].n;
    free(cs[i].lat);
  }
  qsort(all, total, sizeof *all, cmp_double);
  r->calls = (long)total;
  r->calls_per_s = wall > 0 ? (double)total / wall : 0;
  if (total) {
    r->p50_s = all[total / 2];
    r->p99_s = all[(size_t)((double)(total - 1) * 0.99)];
    r->p999_s = all[(size_t)((double)(total - 1) * 0.999)];
    r->max_s = all[total - 1];
  }
  free(all);
  free(cs);
  free(th);
}

void perf_serve(perf_client_fn fn, void *ctx, int clients, double seconds, perf_serve_result *r) {
  serve(fn, ctx, clients, seconds, 0, r);
}

void perf_serve_count(perf_client_fn fn, void *ctx, int clients, double seconds,
                      perf_serve_result *r) {
  serve(fn, ctx, clients, seconds, 1, r);
}
