/* perf/perf_plot.c: renders the CSV of a run into charts with gnuplot, each
 * as PNG and SVG:
 *   latency_tT   median latency per workload, accy / ORT / best BLAS (log scale)
 *   ratio_tT     accy / ORT and accy / best BLAS per workload (below 1 = accy faster)
 *   gemm_tT      GEMM GFLOP/s against size: accy (inputs, constant B), ORT, each BLAS,
 *                and the measured FMA peak
 *   scaling      speedup over the smallest thread count, per workload, accy and ORT
 * The data files (.dat) and the script (plots.gp) stay beside the images. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perf/perf.h"

#define MAXW 64
#define MAXS 8
#define MAXT 8

typedef struct cell {
  double median_us, gflops;
} cell;

static const char *const systems[MAXS] = {"accy", "ort",    "blas_best", "openblas",
                                          "blis", "onednn", NULL,        NULL};

typedef struct table {
  char names[MAXW][64];
  int gemm_n[MAXW], gemm_const[MAXW];
  int n_w;
  int threads[MAXT], n_t;
  cell c[MAXW][MAXT][MAXS];
  double peak[MAXT];
} table;

static int index_of_thread(table *tb, int t) {
  for (int i = 0; i < tb->n_t; i++)
    if (tb->threads[i] == t) return i;
  if (tb->n_t == MAXT) return -1;
  tb->threads[tb->n_t] = t;
  return tb->n_t++;
}

static int index_of_workload(table *tb, const char *w) {
  for (int i = 0; i < tb->n_w; i++)
    if (!strcmp(tb->names[i], w)) return i;
  if (tb->n_w == MAXW) return -1;
  snprintf(tb->names[tb->n_w], 64, "%s", w);
  int n = 0;
  char rest[16] = "";
  tb->gemm_n[tb->n_w] = sscanf(w, "gemm_%d%15s", &n, rest) >= 1 ? n : 0;
  tb->gemm_const[tb->n_w] = strcmp(rest, "_const") == 0;
  return tb->n_w++;
}

/* Splits one CSV line in place (no quoting: the harness writes none). */
static int split(char *line, char **f, int max) {
  int n = 0;
  char *s = line;
  while (n < max) {
    f[n++] = s;
    char *c = strchr(s, ',');
    if (!c) break;
    *c = 0;
    s = c + 1;
  }
  s = f[n - 1];
  s[strcspn(s, "\n")] = 0;
  return n;
}

static int read_csv(const char *path, table *tb) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char *line = NULL;
  size_t cap = 0;
  char *fld[40];
  int col_kind = -1, col_w = -1, col_t = -1, col_sys = -1, col_med = -1, col_gf = -1;
  while (getline(&line, &cap, f) > 0) {
    if (line[0] == '#') continue;
    int n = split(line, fld, 40);
    if (col_kind < 0) {
      for (int i = 0; i < n; i++) {
        if (!strcmp(fld[i], "kind")) col_kind = i;
        else if (!strcmp(fld[i], "workload")) col_w = i;
        else if (!strcmp(fld[i], "threads")) col_t = i;
        else if (!strcmp(fld[i], "system")) col_sys = i;
        else if (!strcmp(fld[i], "median_us")) col_med = i;
        else if (!strcmp(fld[i], "gflops")) col_gf = i;
      }
      if (col_kind < 0 || col_w < 0 || col_t < 0 || col_sys < 0 || col_med < 0 || col_gf < 0)
        break;
      continue;
    }
    if (n <= col_gf) continue;
    int ti = index_of_thread(tb, atoi(fld[col_t]));
    if (ti < 0) continue;
    if (!strcmp(fld[col_kind], "bound")) {
      if (!strcmp(fld[col_w], "fma_zmm") || (!strcmp(fld[col_w], "fma_ymm") && tb->peak[ti] == 0))
        tb->peak[ti] = atof(fld[col_gf]);
      continue;
    }
    if (strcmp(fld[col_kind], "latency") != 0 || !fld[col_med][0]) continue;
    int si = -1;
    for (int i = 0; i < MAXS && systems[i]; i++)
      if (!strcmp(systems[i], fld[col_sys])) si = i;
    int wi = index_of_workload(tb, fld[col_w]);
    if (si < 0 || wi < 0) continue;
    tb->c[wi][ti][si].median_us = atof(fld[col_med]);
    tb->c[wi][ti][si].gflops = atof(fld[col_gf]);
  }
  free(line);
  fclose(f);
  return col_kind < 0 ? -1 : 0;
}

static void val(FILE *f, double v) {
  if (v > 0) fprintf(f, " %.6g", v);
  else fprintf(f, " -");
}

int perf_plot(const char *csv, const char *dir) {
  if (system("command -v gnuplot >/dev/null 2>&1") != 0) return 1;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) return -1;
  static table tb;
  memset(&tb, 0, sizeof tb);
  if (read_csv(csv, &tb) != 0) return -1;
  char path[1024];
  snprintf(path, sizeof path, "%s/plots.gp", dir);
  FILE *gp = fopen(path, "w");
  if (!gp) return -1;
  fprintf(gp,
          "# written by perf_harness --plot from %s; rerun: cd %s && gnuplot plots.gp\n"
          "set terminal unknown\nset datafile missing '-'\nset key outside top center horizontal\n"
          "set grid ytics\nset style fill solid 0.8 border -1\n"
          "termpng = (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) ? "
          "'pngcairo noenhanced size 1400,600 font \",10\"' : 'png noenhanced size 1400,600'\n"
          "termsvg = 'svg noenhanced size 1400,600 dynamic font \",10\"'\n"
          "render(name) = sprintf('set terminal %%s; set output \"%%s.png\"; replot; "
          "set terminal %%s; set output \"%%s.svg\"; replot; unset output; set terminal unknown', termpng, name, "
          "termsvg, name)\n",
          csv, dir);
  for (int ti = 0; ti < tb.n_t; ti++) {
    int t = tb.threads[ti];
    /* latency and ratio bars */
    snprintf(path, sizeof path, "%s/latency_t%d.dat", dir, t);
    FILE *f = fopen(path, "w");
    if (!f) continue;
    fprintf(f, "# workload accy_us ort_us blas_best_us accy/ort accy/blas\n");
    int rows = 0;
    for (int wi = 0; wi < tb.n_w; wi++) {
      cell *c = tb.c[wi][ti];
      if (c[0].median_us <= 0 && c[1].median_us <= 0) continue;
      fprintf(f, "%s", tb.names[wi]);
      val(f, c[0].median_us);
      val(f, c[1].median_us);
      val(f, c[2].median_us);
      val(f, c[0].median_us > 0 && c[1].median_us > 0 ? c[0].median_us / c[1].median_us : 0);
      val(f, c[0].median_us > 0 && c[2].median_us > 0 ? c[0].median_us / c[2].median_us : 0);
      fprintf(f, "\n");
      rows++;
    }
    fclose(f);
    if (rows == 0) continue;
    fprintf(gp,
            "reset; set datafile missing '-'; set key outside top center horizontal; set grid ytics\n"
            "set style data histograms; set style histogram clustered gap 1\n"
            "set style fill solid 0.8 border -1; set xtics rotate by -45 scale 0 font ',9'\n"
            "set logscale y; set ylabel 'median latency per call (us, log)'\n"
            "set title 'latency, %d thread(s): accy vs ONNX Runtime vs best BLAS (lower is better)'\n"
            "plot 'latency_t%d.dat' using 2:xtic(1) title 'accy', '' using 3 title 'onnxruntime', "
            "'' using 4 title 'best BLAS'\n"
            "eval render('latency_t%d')\n",
            t, t, t);
    fprintf(gp,
            "reset; set datafile missing '-'; set key outside top center horizontal; set grid ytics\n"
            "set style data histograms; set style histogram clustered gap 1\n"
            "set style fill solid 0.8 border -1; set xtics rotate by -45 scale 0 font ',9'\n"
            "set logscale y; set ylabel 'accy latency / peer latency (log; < 1: accy faster)'\n"
            "set title 'accy relative to its peers, %d thread(s)'\n"
            "plot 'latency_t%d.dat' using 5:xtic(1) title 'accy / onnxruntime', '' using 6 "
            "title 'accy / best BLAS', 1 with lines lw 2 lc rgb 'black' notitle\n"
            "eval render('ratio_t%d')\n",
            t, t, t);
    /* GEMM GFLOP/s against n */
    snprintf(path, sizeof path, "%s/gemm_t%d.dat", dir, t);
    f = fopen(path, "w");
    if (!f) continue;
    fprintf(f, "# n accy accy_const ort ort_const openblas blis onednn peak\n");
    int grows = 0;
    for (int n = 1; n <= 1 << 16; n <<= 1) {
      int wi = -1, wc = -1;
      for (int i = 0; i < tb.n_w; i++)
        if (tb.gemm_n[i] == n) {
          if (tb.gemm_const[i]) wc = i;
          else wi = i;
        }
      if (wi < 0 && wc < 0) continue;
      fprintf(f, "%d", n);
      val(f, wi >= 0 ? tb.c[wi][ti][0].gflops : 0);
      val(f, wc >= 0 ? tb.c[wc][ti][0].gflops : 0);
      val(f, wi >= 0 ? tb.c[wi][ti][1].gflops : 0);
      val(f, wc >= 0 ? tb.c[wc][ti][1].gflops : 0);
      for (int s = 3; s < 6; s++) val(f, wi >= 0 ? tb.c[wi][ti][s].gflops : 0);
      val(f, tb.peak[ti]);
      fprintf(f, "\n");
      grows++;
    }
    fclose(f);
    if (grows)
      fprintf(gp,
              "reset; set datafile missing '-'; set key outside top center horizontal; set grid\n"
              "set logscale x 2; set xlabel 'M = N = K'; set ylabel 'GFLOP/s'; set yrange [0:*]\n"
              "set title 'SGEMM, %d thread(s)'\n"
              "plot for [i=2:9] 'gemm_t%d.dat' using 1:i with linespoints lw 2 "
              "title word('accy accy-constB onnxruntime ort-constB openblas blis onednn "
              "FMA-peak', i-1)\n"
              "eval render('gemm_t%d')\n",
              t, t, t);
  }
  if (tb.n_t >= 2) {
    snprintf(path, sizeof path, "%s/scaling.dat", dir);
    FILE *f = fopen(path, "w");
    if (f) {
      fprintf(f, "# threads then, per workload, accy and ort speedup over the first count\n");
      for (int ti = 0; ti < tb.n_t; ti++) {
        fprintf(f, "%d", tb.threads[ti]);
        for (int wi = 0; wi < tb.n_w; wi++)
          for (int s = 0; s < 2; s++) {
            double base = tb.c[wi][0][s].median_us, now = tb.c[wi][ti][s].median_us;
            val(f, base > 0 && now > 0 ? base / now : 0);
          }
        fprintf(f, "\n");
      }
      fclose(f);
      fprintf(gp,
              "reset; set datafile missing '-'; set key outside right font ',8'; set grid\n"
              "set xlabel 'threads'; set ylabel 'speedup over %d thread(s)'\n"
              "set title 'thread scaling: accy (solid) and onnxruntime (dashed)'\n"
              "names = \"",
              tb.threads[0]);
      for (int wi = 0; wi < tb.n_w; wi++) fprintf(gp, "%s%s", wi ? " " : "", tb.names[wi]);
      fprintf(gp,
              "\"\nplot for [i=1:%d] 'scaling.dat' using 1:(column(2*i)) with linespoints lw 2 "
              "lc i title word(names, i), for [i=1:%d] '' using 1:(column(2*i+1)) with "
              "linespoints dt 2 lc i notitle, x with lines lc rgb 'black' title 'linear'\n"
              "eval render('scaling')\n",
              tb.n_w, tb.n_w);
    }
  }
  fclose(gp);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "cd '%s' && gnuplot plots.gp >gnuplot.log 2>&1", dir);
  return system(cmd) == 0 ? 0 : -1;
}
