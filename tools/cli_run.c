/* tools/cli_run.c: the run command of accy: compile a program, invoke it on
 * generated inputs or the bytes of files, summarise each output and write
 * the outputs asked for to files. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Values shown per output in a run summary. */
#define FIRST_VALUES 6
/* Most --input and most --output options: a program's most parameters and
 * outputs (ACCY_MAX_PARAMETERS, ACCY_MAX_OUTPUTS in docs/limits.md). */
#define MAX_NAMED_FILES 4096

/* ---- generated inputs and summaries ---------------------------------------------- */

static uint64_t splitmix(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* Exact f32 -> f16 for the values generate_input makes (k/64, |k| <= 64:
 * all normal in f16 or zero, no rounding needed). */
static uint16_t small_f32_to_f16(float f) {
  uint32_t u = f32_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  if ((u & 0x7fffffffu) == 0) return sign;
  uint32_t exp = (u >> 23) & 0xffu;
  return (uint16_t)(sign | ((exp - 127 + 15) << 10) | ((u & 0x7fffffu) >> 13));
}

static double f16_to_double(uint16_t h) {
  int exp = (h >> 10) & 0x1f;
  double mant = h & 0x3ff;
  double v;
  if (exp == 0)
    v = mant * (1.0 / 16777216.0); /* 2^-24 */
  else if (exp == 31)
    v = mant ? __builtin_nan("") : __builtin_inf();
  else {
    v = 1.0 + mant / 1024.0;
    for (int e = exp - 15; e > 0; e--) v *= 2;
    for (int e = exp - 15; e < 0; e++) v /= 2;
  }
  return (h & 0x8000) ? -v : v;
}

static double element(int32_t dtype, const unsigned char *p, size_t i) {
  switch (dtype) {
    case ACCY_DTYPE_F32: { float f; memcpy(&f, p + 4 * i, 4); return f; }
    case ACCY_DTYPE_F64: { double d; memcpy(&d, p + 8 * i, 8); return d; }
    case ACCY_DTYPE_F16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return f16_to_double(h); }
    case ACCY_DTYPE_BF16: {
      uint16_t h;
      memcpy(&h, p + 2 * i, 2);
      uint32_t u = (uint32_t)h << 16;
      float f;
      memcpy(&f, &u, 4);
      return f;
    }
    case ACCY_DTYPE_I8: return ((const int8_t *)p)[i];
    case ACCY_DTYPE_I16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case ACCY_DTYPE_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case ACCY_DTYPE_I64: { int64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
    case ACCY_DTYPE_U8: return p[i];
    case ACCY_DTYPE_U16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case ACCY_DTYPE_U32: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case ACCY_DTYPE_U64: { uint64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
    case ACCY_DTYPE_BOOL: return p[i] ? 1 : 0;
  }
  return 0;
}

/* Deterministic inputs: floats k/64 in [-1, 1], signed ints in [-8, 8],
 * unsigned in [0, 15], bools 0/1 -- small enough that typical programs stay
 * finite and exactly representable in every dtype. */
static void generate_input(const accy_descriptor *d, unsigned char *buf, uint64_t seed,
                           size_t index) {
  size_t esize = accy_dtype_size(d->dtype);
  size_t n = esize ? (size_t)(d->byte_size / esize) : 0;
  uint64_t state = seed * 0x100000001b3ull + index + 1;
  for (size_t i = 0; i < n; i++) {
    uint64_t r = splitmix(&state);
    int k = (int)(r % 129) - 64;
    float f = (float)k / 64.0f;
    int64_t si = (int64_t)(r % 17) - 8;
    uint64_t ui = r % 16;
    unsigned char *p = buf + i * esize;
    switch (d->dtype) {
      case ACCY_DTYPE_F32: memcpy(p, &f, 4); break;
      case ACCY_DTYPE_F64: { double v = f; memcpy(p, &v, 8); break; }
      case ACCY_DTYPE_F16: { uint16_t h = small_f32_to_f16(f); memcpy(p, &h, 2); break; }
      case ACCY_DTYPE_BF16: { uint16_t h = (uint16_t)(f32_bits(f) >> 16); memcpy(p, &h, 2); break; }
      case ACCY_DTYPE_I8: { int8_t v = (int8_t)si; memcpy(p, &v, 1); break; }
      case ACCY_DTYPE_I16: { int16_t v = (int16_t)si; memcpy(p, &v, 2); break; }
      case ACCY_DTYPE_I32: { int32_t v = (int32_t)si; memcpy(p, &v, 4); break; }
      case ACCY_DTYPE_I64: memcpy(p, &si, 8); break;
      case ACCY_DTYPE_U8: { uint8_t v = (uint8_t)ui; memcpy(p, &v, 1); break; }
      case ACCY_DTYPE_U16: { uint16_t v = (uint16_t)ui; memcpy(p, &v, 2); break; }
      case ACCY_DTYPE_U32: { uint32_t v = (uint32_t)ui; memcpy(p, &v, 4); break; }
      case ACCY_DTYPE_U64: memcpy(p, &ui, 8); break;
      case ACCY_DTYPE_BOOL: *p = (unsigned char)(r & 1); break;
    }
  }
}

static void print_summary(FILE *f, const accy_descriptor *d, const unsigned char *buf) {
  size_t esize = accy_dtype_size(d->dtype);
  size_t n = esize ? (size_t)(d->byte_size / esize) : 0;
  double mn = 0, mx = 0, sum = 0;
  size_t nans = 0, seen = 0;
  for (size_t i = 0; i < n; i++) {
    double v = element(d->dtype, buf, i);
    if (v != v) {
      nans++;
      continue;
    }
    if (!seen || v < mn) mn = v;
    if (!seen || v > mx) mx = v;
    sum += v;
    seen++;
  }
  uint64_t h = 1469598103934665603ull; /* FNV-1a over the raw bytes */
  for (uint64_t i = 0; i < d->byte_size; i++) h = (h ^ buf[i]) * 1099511628211ull;
  char name[256], type[256];
  cli_format_name(d->name, name, sizeof name);
  cli_format_type(d, type, sizeof type);
  fprintf(f, "output %s %s", name, type);
  if (seen)
    fprintf(f, " min=%.6g max=%.6g mean=%.6g", mn, mx, sum / (double)seen);
  else
    fprintf(f, " min=- max=- mean=-");
  if (nans) fprintf(f, " nans=%zu", nans);
  fprintf(f, " checksum=%016llx first=[", (unsigned long long)h);
  for (size_t i = 0; i < n && i < FIRST_VALUES; i++)
    fprintf(f, i ? ", %.6g" : "%.6g", element(d->dtype, buf, i));
  fprintf(f, "%s]\n", n > FIRST_VALUES ? ", ..." : "");
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Memory the descriptors' alignment is met by (64 covers every dtype). */
static void *alloc_buffer(uint64_t size) {
  if (size > SIZE_MAX - 64) return NULL;
  size_t n = (size_t)((size + 63) / 64 * 64);
  return aligned_alloc(64, n ? n : 64);
}

/* ---- options ----------------------------------------------------------------------- */

/* Indices into the command's option table (accy_main.c kRunOptions). */
enum { RUN_OPT_THREADS, RUN_OPT_ITERATIONS, RUN_OPT_SEED, RUN_OPT_INPUT, RUN_OPT_OUTPUT };

/* One --input or --output NAME=FILE. */
typedef struct named_file {
  const char *name; /* not NUL-terminated: name_len bytes */
  size_t name_len;
  const char *path;
  size_t index; /* of the descriptor it names, once matched */
} named_file;

typedef struct run_options {
  const char *file;
  uint64_t threads, iterations, seed;
  bool seen[RUN_OPT_SEED + 1];
  named_file *inputs, *outputs;
  size_t n_inputs, n_outputs;
} run_options;

static void run_options_free(run_options *o) {
  free(o->inputs);
  free(o->outputs);
}

static int add_named_file(const cli_command *cmd, const char *what, const char *option,
                          const char *v, named_file *list, size_t *n) {
  const char *eq = strchr(v, '=');
  if (!eq || eq == v || !eq[1]) return cli_usage_error(cmd, "%s needs NAME=FILE", option);
  size_t len = (size_t)(eq - v);
  for (size_t i = 0; i < *n; i++)
    if (list[i].name_len == len && memcmp(list[i].name, v, len) == 0)
      return cli_usage_error(cmd, "%s '%.*s' given twice", what, (int)len, v);
  if (*n >= MAX_NAMED_FILES)
    return cli_usage_error(cmd, "more than %d %s options", MAX_NAMED_FILES, option);
  list[*n].name = v;
  list[*n].name_len = len;
  list[*n].path = eq + 1;
  (*n)++;
  return 0;
}

/* Returns -1 to go on, or the exit code. */
static int parse_run_options(const cli_command *cmd, int argc, char **argv, run_options *o) {
  memset(o, 0, sizeof *o);
  o->iterations = 1;
  o->seed = 1;
  size_t cap = (size_t)argc / 2 + 1;
  o->inputs = calloc(cap, sizeof *o->inputs);
  o->outputs = calloc(cap, sizeof *o->outputs);
  if (!o->inputs || !o->outputs) return cli_fail("out of memory");
  cli_args a;
  cli_args_init(&a, cmd, argc, argv);
  const char *v;
  for (;;) {
    int k = cli_args_next(&a, &v);
    if (k == CLI_ARG_END) break;
    if (k == CLI_ARG_HELP) return cli_command_help(cmd);
    if (k == CLI_ARG_ERROR) return CLI_EXIT_USAGE;
    if (k == CLI_ARG_OPERAND) {
      if (o->file) return cli_usage_error(cmd, "more than one program file");
      o->file = v;
      continue;
    }
    if (k <= RUN_OPT_SEED) {
      if (o->seen[k]) return cli_usage_error(cmd, "%s given twice", cmd->options[k].name);
      o->seen[k] = true;
    }
    int rc = 0;
    switch (k) {
      case RUN_OPT_THREADS:
        if (!cli_parse_u64(v, &o->threads) || o->threads == 0 || o->threads > ACCY_MAX_THREADS)
          rc = cli_usage_error(cmd, "--threads needs a number from 1 to ACCY_MAX_THREADS (1024)");
        break;
      case RUN_OPT_ITERATIONS:
        if (!cli_parse_u64(v, &o->iterations) || o->iterations == 0 ||
            o->iterations > 100000000)
          rc = cli_usage_error(cmd, "--iterations needs a number from 1 to 100000000");
        break;
      case RUN_OPT_SEED:
        if (!cli_parse_u64(v, &o->seed))
          rc = cli_usage_error(cmd, "--seed needs a non-negative number");
        break;
      case RUN_OPT_INPUT:
        rc = add_named_file(cmd, "input", "--input", v, o->inputs, &o->n_inputs);
        break;
      case RUN_OPT_OUTPUT:
        rc = add_named_file(cmd, "output", "--output", v, o->outputs, &o->n_outputs);
        break;
    }
    if (rc) return rc;
  }
  if (!o->file) return cli_usage_error(cmd, "no program file");
  size_t readers = cli_is_stdio(o->file), writers = 0;
  for (size_t i = 0; i < o->n_inputs; i++) readers += cli_is_stdio(o->inputs[i].path);
  for (size_t i = 0; i < o->n_outputs; i++) writers += cli_is_stdio(o->outputs[i].path);
  if (readers > 1)
    return cli_usage_error(cmd, "standard input ('-') can be read only once, for the program "
                                "or for one --input");
  if (writers > 1)
    return cli_usage_error(cmd, "standard output ('-') can take only one --output");
  return -1;
}

/* Index of the descriptor |f| names: its name as given, else the name as
 * cli_format_name prints it (describe's form); n when none. */
static size_t find_name(const named_file *f, const accy_descriptor *d, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strlen(d[i].name) == f->name_len && memcmp(d[i].name, f->name, f->name_len) == 0)
      return i;
  static char printed[CLI_NAME_CAP];
  for (size_t i = 0; i < n; i++) {
    cli_format_name(d[i].name, printed, sizeof printed);
    if (strlen(printed) == f->name_len && memcmp(printed, f->name, f->name_len) == 0) return i;
  }
  return n;
}

/* Matches each named file to a descriptor. Reports the first that names
 * none, with the names there are, and returns CLI_EXIT_FAIL; two that name
 * the same one are a usage error. Returns 0 when all match. */
static int match_names(const cli_command *cmd, const char *what, named_file *files,
                       size_t n_files, const accy_descriptor *d, size_t n) {
  for (size_t f = 0; f < n_files; f++) {
    size_t i = find_name(&files[f], d, n);
    files[f].index = i;
    if (i < n) {
      for (size_t g = 0; g < f; g++)
        if (files[g].index == i) {
          char name[256];
          cli_format_name(d[i].name, name, sizeof name);
          return cli_usage_error(cmd, "%s '%s' given twice", what, name);
        }
      continue;
    }
    char names[512];
    size_t at = 0;
    names[0] = '\0';
    for (size_t k = 0; k < n && at + 80 < sizeof names; k++) {
      char name[64];
      cli_format_name(d[k].name, name, sizeof name);
      at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", k ? ", " : "", name);
    }
    if (n && at + 80 >= sizeof names) snprintf(names + at, sizeof names - at, ", ...");
    return cli_fail("--%s %.*s: the program has no %s of that name (its %ss: %s)", what,
                    (int)files[f].name_len, files[f].name, what, what, n ? names : "none");
  }
  return 0;
}

/* Fills input |i| from its file; reports and returns false on failure. */
static bool read_input(const accy_descriptor *d, const char *path, void *buf) {
  uint64_t found = 0;
  cli_read_exact_result r = cli_read_exact(path, buf, d->byte_size, &found);
  if (r == CLI_READ_EXACT_OK) return true;
  if (r == CLI_READ_EXACT_FAILED) return false;
  char name[256], type[256];
  cli_format_name(d->name, name, sizeof name);
  cli_format_type(d, type, sizeof type);
  if (r == CLI_READ_EXACT_LONG && found == 0)
    cli_fail("input '%s': %s has more than %llu bytes, %s needs %llu", name, cli_in_name(path),
             (unsigned long long)d->byte_size, type, (unsigned long long)d->byte_size);
  else
    cli_fail("input '%s': %s has %llu bytes, %s needs %llu", name, cli_in_name(path),
             (unsigned long long)found, type, (unsigned long long)d->byte_size);
  return false;
}

/* ---- run ---------------------------------------------------------------------------- */

int cli_run(const cli_command *cmd, int argc, char **argv) {
  run_options o;
  int rc = parse_run_options(cmd, argc, argv, &o);
  if (rc >= 0) {
    run_options_free(&o);
    return rc;
  }
  rc = CLI_EXIT_OK;
  cli_program prog;
  if (!cli_load_program(o.file, &prog)) {
    run_options_free(&o);
    return CLI_EXIT_FAIL;
  }
  accy_session *session = cli_session((uint32_t)o.threads);
  if (!session) {
    cli_program_free(&prog);
    run_options_free(&o);
    return CLI_EXIT_FAIL;
  }
  accy_handle h;
  accy_status s = accy_session_compile(session, prog.data, prog.size, &h);
  cli_program_free(&prog);
  const accy_descriptor *din = NULL, *dout = NULL;
  size_t n_in = 0, n_out = 0;
  if (s == ACCY_STATUS_OK) s = accy_session_inputs(session, h, &din, &n_in);
  if (s == ACCY_STATUS_OK) s = accy_session_outputs(session, h, &dout, &n_out);
  if (s != ACCY_STATUS_OK) {
    rc = cli_fail_status(s);
    accy_session_destroy(session);
    run_options_free(&o);
    return rc;
  }
  accy_input *inputs = calloc(n_in ? n_in : 1, sizeof *inputs);
  accy_output *outputs = calloc(n_out ? n_out : 1, sizeof *outputs);
  const char **input_paths = calloc(n_in ? n_in : 1, sizeof *input_paths);
  double *times = calloc((size_t)o.iterations, sizeof *times);
  if (!inputs || !outputs || !input_paths || !times) {
    rc = cli_fail("out of memory");
    goto done;
  }
  /* Every name is checked before any file is read. */
  rc = match_names(cmd, "input", o.inputs, o.n_inputs, din, n_in);
  if (rc == 0) rc = match_names(cmd, "output", o.outputs, o.n_outputs, dout, n_out);
  if (rc) goto done;
  for (size_t f = 0; f < o.n_inputs; f++) input_paths[o.inputs[f].index] = o.inputs[f].path;
  for (size_t i = 0; i < n_in && rc == 0; i++) {
    void *buf = alloc_buffer(din[i].byte_size);
    if (!buf) {
      char name[256];
      cli_format_name(din[i].name, name, sizeof name);
      rc = cli_fail("out of memory for input '%s' (%llu bytes)", name,
                    (unsigned long long)din[i].byte_size);
      break;
    }
    inputs[i].data = buf;
    inputs[i].size = (size_t)din[i].byte_size;
    if (!input_paths[i])
      generate_input(&din[i], buf, o.seed, i);
    else if (!read_input(&din[i], input_paths[i], buf))
      rc = CLI_EXIT_FAIL;
  }
  for (size_t i = 0; i < n_out && rc == 0; i++) {
    outputs[i].data = alloc_buffer(dout[i].byte_size);
    outputs[i].size = (size_t)dout[i].byte_size;
    if (!outputs[i].data) {
      char name[256];
      cli_format_name(dout[i].name, name, sizeof name);
      rc = cli_fail("out of memory for output '%s' (%llu bytes)", name,
                    (unsigned long long)dout[i].byte_size);
    }
  }
  for (uint64_t k = 0; k < o.iterations && rc == 0; k++) {
    double t0 = now_seconds();
    s = accy_session_invoke(session, h, inputs, n_in, outputs, n_out);
    times[k] = now_seconds() - t0;
    if (s != ACCY_STATUS_OK) rc = cli_fail_status(s);
  }
  if (rc == 0) {
    /* Raw bytes on stdout leave the summary to stderr. */
    FILE *summary = stdout;
    for (size_t f = 0; f < o.n_outputs; f++)
      if (cli_is_stdio(o.outputs[f].path)) summary = stderr;
    qsort(times, (size_t)o.iterations, sizeof *times, compare_doubles);
    fprintf(summary, "run %s: %llu iteration%s, min %.1f us, median %.1f us per call\n",
            cli_is_stdio(o.file) ? "-" : o.file, (unsigned long long)o.iterations,
            o.iterations == 1 ? "" : "s", times[0] * 1e6, times[o.iterations / 2] * 1e6);
    fprintf(summary, "runtime: isa=%s scratch=%s\n", accy_info("isa"), accy_info("scratch.backend"));
    for (size_t i = 0; i < n_out; i++) print_summary(summary, &dout[i], outputs[i].data);
    if (!cli_flush(summary)) rc = CLI_EXIT_FAIL;
    for (size_t f = 0; f < o.n_outputs && rc == 0; f++) {
      size_t i = o.outputs[f].index;
      if (!cli_write_file(o.outputs[f].path, outputs[i].data, outputs[i].size))
        rc = CLI_EXIT_FAIL;
    }
  }
done:
  for (size_t i = 0; inputs && i < n_in; i++) free((void *)inputs[i].data);
  for (size_t i = 0; outputs && i < n_out; i++) free(outputs[i].data);
  free(inputs);
  free(outputs);
  free(input_paths);
  free(times);
  accy_session_destroy(session);
  run_options_free(&o);
  return rc;
}
