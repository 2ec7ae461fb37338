/* tools/accy.c: the accy command. Assembles, disassembles, describes and
 * runs programs. Uses only the public API, as any user program would.
 *
 * Exit status: 0 success, 1 a failure (accy status or file error, reported
 * as "accy: <status name>: <cause>" or "accy: <message>"), 2 a usage error. */
#include <accy/accy.h>

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXIT_FAIL 1
#define EXIT_USAGE 2

/* Most --input options one run accepts. */
#define MAX_INPUT_FILES 64
/* Values shown per output in a run summary. */
#define FIRST_VALUES 6

static const char kUsage[] =
    "usage: accy <command> [options]\n"
    "\n"
    "commands:\n"
    "  asm FILE.txt -o OUT.accy      assemble program text into wire bytes\n"
    "  dis FILE.accy [-o OUT.txt]    print wire bytes as program text (stdout by default)\n"
    "  describe FILE                 print inputs, outputs, node count and wire version\n"
    "  run FILE [options]            compile, invoke on generated or given inputs, summarise\n"
    "      --threads N               worker threads (default: the library's default)\n"
    "      --iterations K            invoke K times and report min/median time (default 1)\n"
    "      --input NAME=PATH.bin     raw little-endian bytes for input NAME (repeatable)\n"
    "      --seed S                  seed for generated inputs (default 1)\n"
    "  --version                     print the library and wire format versions\n"
    "  --help                        print this help\n"
    "\n"
    "FILE may be wire bytes or program text (told apart by the magic bytes).\n";

/* ---- messages ------------------------------------------------------------ */

static int usage_error(const char *fmt, ...) {
  va_list ap;
  fputs("accy: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs("\n(run 'accy --help' for usage)\n", stderr);
  return EXIT_USAGE;
}

static int fail_message(const char *fmt, ...) {
  va_list ap;
  fputs("accy: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return EXIT_FAIL;
}

static int fail_status(accy_status s, const accy_session *session) {
  fprintf(stderr, "accy: %s: %s\n", accy_status_name(s), accy_session_last_cause(session));
  return EXIT_FAIL;
}

/* ---- files --------------------------------------------------------------- */

typedef struct blob {
  char *data; /* NUL-terminated for convenience; size excludes the NUL */
  size_t size;
} blob;

static bool read_file(const char *path, blob *out) {
  out->data = NULL;
  out->size = 0;
  FILE *f = fopen(path, "rb");
  if (!f) {
    fail_message("cannot open '%s': %s", path, strerror(errno));
    return false;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
    if (cap - n - 1 == 0) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
  }
  bool bad = !buf || ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    fail_message("cannot read '%s'%s", path, buf ? "" : ": out of memory");
    return false;
  }
  buf[n] = '\0';
  out->data = buf;
  out->size = n;
  return true;
}

static bool write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    fail_message("cannot create '%s': %s", path, strerror(errno));
    return false;
  }
  bool ok = fwrite(data, 1, size, f) == size;
  ok = (fclose(f) == 0) && ok;
  if (!ok) fail_message("cannot write '%s'", path);
  return ok;
}

/* Directory part of |path| (for constant files named relative to it). */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  if (slash == path) return strdup("/");
  size_t n = (size_t)(slash - path);
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, path, n);
    d[n] = '\0';
  }
  return d;
}

/* ---- loading programs ---------------------------------------------------- */

/* The magic is whatever this library writes first; learn it from a one-node
 * program instead of hard-coding the wire format here. */
static bool wire_magic(unsigned char magic[4]) {
  static const char kTiny[] = "%x = parameter \"x\" : f32[]\noutput %x \"x\"\n";
  void *bytes = NULL;
  size_t size = 0;
  if (accy_text_assemble(kTiny, sizeof kTiny - 1, NULL, &bytes, &size) != ACCY_STATUS_OK ||
      size < 4) {
    accy_free(bytes);
    return false;
  }
  memcpy(magic, bytes, 4);
  accy_free(bytes);
  return true;
}

static bool looks_like_wire(const blob *b) {
  unsigned char magic[4];
  if (b->size >= 4 && wire_magic(magic) && memcmp(b->data, magic, 4) == 0) return true;
  /* Program text never holds a NUL byte; binary headers nearly always do.
   * This lets a damaged or future-version file reach the decoder, whose
   * message is the useful one. */
  size_t n = b->size < 64 ? b->size : 64;
  return memchr(b->data, '\0', n) != NULL;
}

/* Program bytes and how to free them: files are read with malloc, the
 * assembler's output comes from the library and goes back via accy_free. */
typedef struct program_bytes {
  void *data;
  size_t size;
  bool from_library;
} program_bytes;

static void program_bytes_free(program_bytes *p) {
  if (p->from_library)
    accy_free(p->data);
  else
    free(p->data);
  p->data = NULL;
}

/* Reads |path| as wire bytes, assembling it first when it is text. On
 * failure reports and returns false. */
static bool load_program(const char *path, program_bytes *out) {
  blob b;
  memset(out, 0, sizeof *out);
  if (!read_file(path, &b)) return false;
  if (looks_like_wire(&b)) {
    out->data = b.data;
    out->size = b.size;
    return true;
  }
  char *dir = dir_of(path);
  accy_status s = accy_text_assemble(b.data, b.size, dir, &out->data, &out->size);
  free(dir);
  free(b.data);
  if (s != ACCY_STATUS_OK) {
    fail_status(s, NULL);
    return false;
  }
  out->from_library = true;
  return true;
}

/* ---- option parsing ------------------------------------------------------ */

static bool parse_u64(const char *s, uint64_t *out) {
  if (!s || !*s || *s == '-') return false;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (*end || errno) return false;
  *out = v;
  return true;
}

/* ---- asm, dis ------------------------------------------------------------ */

/* Parses "IN [-o OUT]" for asm and dis; returns 0 or the usage exit code. */
static int parse_in_out(const char *cmd, int argc, char **argv, const char **in,
                        const char **out) {
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "-o") == 0) {
      if (++i >= argc) return usage_error("%s: -o needs a file name", cmd);
      *out = argv[i];
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return usage_error("%s: unknown option '%s'", cmd, argv[i]);
    } else if (!*in) {
      *in = argv[i];
    } else {
      return usage_error("%s: more than one input file", cmd);
    }
  }
  if (!*in) return usage_error("%s: no input file", cmd);
  return 0;
}

static int cmd_asm(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  int rc = parse_in_out("asm", argc, argv, &in, &out);
  if (rc) return rc;
  if (!out) return usage_error("asm: no output file (-o OUT.accy)");
  blob b;
  if (!read_file(in, &b)) return EXIT_FAIL;
  char *dir = dir_of(in);
  void *bytes = NULL;
  size_t size = 0;
  accy_status s = accy_text_assemble(b.data, b.size, dir, &bytes, &size);
  free(dir);
  free(b.data);
  if (s != ACCY_STATUS_OK) return fail_status(s, NULL);
  bool ok = write_file(out, bytes, size);
  accy_free(bytes);
  return ok ? 0 : EXIT_FAIL;
}

static int cmd_dis(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  int rc = parse_in_out("dis", argc, argv, &in, &out);
  if (rc) return rc;
  blob b;
  if (!read_file(in, &b)) return EXIT_FAIL;
  char *text = NULL;
  accy_status s = accy_text_disassemble(b.data, b.size, &text);
  free(b.data);
  if (s != ACCY_STATUS_OK) return fail_status(s, NULL);
  bool ok = true;
  if (out)
    ok = write_file(out, text, strlen(text));
  else
    ok = fputs(text, stdout) >= 0 && fflush(stdout) == 0;
  accy_free(text);
  return ok ? 0 : EXIT_FAIL;
}

/* ---- describe ------------------------------------------------------------ */

static void format_dims(const accy_descriptor *d, char *buf, size_t cap) {
  size_t at = (size_t)snprintf(buf, cap, "%s[", accy_dtype_name(d->dtype) ? accy_dtype_name(d->dtype) : "?");
  for (uint32_t i = 0; i < d->rank && at < cap; i++)
    at += (size_t)snprintf(buf + at, cap - at, i ? ",%lld" : "%lld", (long long)d->dims[i]);
  if (at < cap) snprintf(buf + at, cap - at, "]");
}

static const char *format_flags(uint32_t flags, char *buf, size_t cap) {
  buf[0] = '\0';
  if (flags & ACCY_DESCRIPTOR_COPIED_INPUT) snprintf(buf, cap, "copied_input");
  if (flags & ACCY_DESCRIPTOR_COPIED_OUTPUT)
    snprintf(buf + strlen(buf), cap - strlen(buf), "%scopied_output", buf[0] ? "," : "");
  uint32_t rest = flags & ~(ACCY_DESCRIPTOR_COPIED_INPUT | ACCY_DESCRIPTOR_COPIED_OUTPUT);
  if (rest) snprintf(buf + strlen(buf), cap - strlen(buf), "%s0x%x", buf[0] ? "," : "", rest);
  if (!buf[0]) snprintf(buf, cap, "-");
  return buf;
}

static void print_descriptors(const char *title, const accy_descriptor *d, size_t n) {
  printf("%s: %zu\n", title, n);
  for (size_t i = 0; i < n; i++) {
    char dims[256], flags[64];
    format_dims(&d[i], dims, sizeof dims);
    printf("  [%zu] %-16s %-20s bytes=%llu align=%u flags=%s\n", i, d[i].name, dims,
           (unsigned long long)d[i].byte_size, d[i].alignment,
           format_flags(d[i].flags, flags, sizeof flags));
  }
}

static int cmd_describe(int argc, char **argv) {
  if (argc != 1 || (argv[0][0] == '-' && argv[0][1]))
    return usage_error("describe: expected exactly one FILE");
  program_bytes prog;
  if (!load_program(argv[0], &prog)) return EXIT_FAIL;
  /* The disassembler's first line carries the wire version and counts that
   * the session API does not expose. */
  char *text = NULL;
  accy_status s = accy_text_disassemble(prog.data, prog.size, &text);
  if (s != ACCY_STATUS_OK) {
    program_bytes_free(&prog);
    return fail_status(s, NULL);
  }
  unsigned major = 0, minor = 0, nodes = 0;
  if (sscanf(text, "# accy program: wire %u.%u, nodes %u", &major, &minor, &nodes) != 3)
    major = minor = nodes = 0;
  accy_free(text);
  accy_session_options opts;
  memset(&opts, 0, sizeof opts);
  opts.struct_size = sizeof opts;
  opts.num_threads = 1;
  accy_session *session = NULL;
  s = accy_session_create(&opts, &session);
  if (s != ACCY_STATUS_OK) {
    program_bytes_free(&prog);
    return fail_status(s, NULL);
  }
  accy_handle h;
  s = accy_session_compile(session, prog.data, prog.size, &h);
  program_bytes_free(&prog);
  int rc = 0;
  const accy_descriptor *in = NULL, *out = NULL;
  size_t n_in = 0, n_out = 0;
  if (s == ACCY_STATUS_OK) s = accy_session_inputs(session, h, &in, &n_in);
  if (s == ACCY_STATUS_OK) s = accy_session_outputs(session, h, &out, &n_out);
  if (s == ACCY_STATUS_OK) {
    printf("file: %s\n", argv[0]);
    printf("wire version: %u.%u\n", major, minor);
    printf("nodes: %u\n", nodes);
    print_descriptors("inputs", in, n_in);
    print_descriptors("outputs", out, n_out);
  } else {
    rc = fail_status(s, session);
  }
  accy_session_destroy(session);
  return rc;
}

/* ---- run ----------------------------------------------------------------- */

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

static void print_summary(const accy_descriptor *d, const unsigned char *buf) {
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
  char dims[256];
  format_dims(d, dims, sizeof dims);
  printf("output %s %s", d->name, dims);
  if (seen)
    printf(" min=%.6g max=%.6g mean=%.6g", mn, mx, sum / (double)seen);
  else
    printf(" min=- max=- mean=-");
  if (nans) printf(" nans=%zu", nans);
  printf(" checksum=%016llx first=[", (unsigned long long)h);
  for (size_t i = 0; i < n && i < FIRST_VALUES; i++)
    printf(i ? ", %.6g" : "%.6g", element(d->dtype, buf, i));
  printf("%s]\n", n > FIRST_VALUES ? ", ..." : "");
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
  size_t n = (size_t)((size + 63) / 64 * 64);
  return aligned_alloc(64, n ? n : 64);
}

typedef struct run_options {
  const char *file;
  uint64_t threads;
  uint64_t iterations;
  uint64_t seed;
  const char *input_names[MAX_INPUT_FILES];
  size_t input_name_len[MAX_INPUT_FILES];
  const char *input_paths[MAX_INPUT_FILES];
  bool input_used[MAX_INPUT_FILES];
  size_t n_input_files;
} run_options;

static int parse_run_options(int argc, char **argv, run_options *o) {
  memset(o, 0, sizeof *o);
  o->iterations = 1;
  o->seed = 1;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--threads") == 0) {
      if (!parse_u64(v, &o->threads) || o->threads == 0 || o->threads > 4096)
        return usage_error("run: --threads needs a number from 1 to 4096");
      i++;
    } else if (strcmp(a, "--iterations") == 0) {
      if (!parse_u64(v, &o->iterations) || o->iterations == 0 || o->iterations > 100000000)
        return usage_error("run: --iterations needs a number from 1 to 100000000");
      i++;
    } else if (strcmp(a, "--seed") == 0) {
      if (!parse_u64(v, &o->seed)) return usage_error("run: --seed needs a non-negative number");
      i++;
    } else if (strcmp(a, "--input") == 0) {
      const char *eq = v ? strchr(v, '=') : NULL;
      if (!eq || eq == v || !eq[1]) return usage_error("run: --input needs NAME=PATH");
      if (o->n_input_files >= MAX_INPUT_FILES)
        return usage_error("run: more than %d --input options", MAX_INPUT_FILES);
      o->input_names[o->n_input_files] = v;
      o->input_name_len[o->n_input_files] = (size_t)(eq - v);
      o->input_paths[o->n_input_files] = eq + 1;
      o->n_input_files++;
      i++;
    } else if (a[0] == '-' && a[1]) {
      return usage_error("run: unknown option '%s'", a);
    } else if (!o->file) {
      o->file = a;
    } else {
      return usage_error("run: more than one program file");
    }
  }
  if (!o->file) return usage_error("run: no program file");
  return 0;
}

static int cmd_run(int argc, char **argv) {
  run_options o;
  int rc = parse_run_options(argc, argv, &o);
  if (rc) return rc;
  program_bytes prog;
  if (!load_program(o.file, &prog)) return EXIT_FAIL;
  accy_session_options opts;
  memset(&opts, 0, sizeof opts);
  opts.struct_size = sizeof opts;
  opts.num_threads = (uint32_t)o.threads;
  accy_session *session = NULL;
  accy_status s = accy_session_create(&opts, &session);
  if (s != ACCY_STATUS_OK) {
    program_bytes_free(&prog);
    return fail_status(s, NULL);
  }
  accy_handle h;
  s = accy_session_compile(session, prog.data, prog.size, &h);
  program_bytes_free(&prog);
  const accy_descriptor *din = NULL, *dout = NULL;
  size_t n_in = 0, n_out = 0;
  if (s == ACCY_STATUS_OK) s = accy_session_inputs(session, h, &din, &n_in);
  if (s == ACCY_STATUS_OK) s = accy_session_outputs(session, h, &dout, &n_out);
  if (s != ACCY_STATUS_OK) {
    rc = fail_status(s, session);
    accy_session_destroy(session);
    return rc;
  }
  accy_input *inputs = calloc(n_in ? n_in : 1, sizeof *inputs);
  accy_output *outputs = calloc(n_out ? n_out : 1, sizeof *outputs);
  double *times = calloc((size_t)o.iterations, sizeof *times);
  if (!inputs || !outputs || !times) {
    rc = fail_message("out of memory");
    goto done;
  }
  for (size_t i = 0; i < n_in && rc == 0; i++) {
    void *buf = alloc_buffer(din[i].byte_size);
    if (!buf) {
      rc = fail_message("out of memory for input '%s'", din[i].name);
      break;
    }
    inputs[i].data = buf;
    inputs[i].size = (size_t)din[i].byte_size;
    size_t f = 0;
    while (f < o.n_input_files && !(strlen(din[i].name) == o.input_name_len[f] &&
                                    memcmp(din[i].name, o.input_names[f], o.input_name_len[f]) == 0))
      f++;
    if (f == o.n_input_files) {
      generate_input(&din[i], buf, o.seed, i);
      continue;
    }
    o.input_used[f] = true;
    blob b;
    if (!read_file(o.input_paths[f], &b)) {
      rc = EXIT_FAIL;
      break;
    }
    if (b.size != din[i].byte_size) {
      char dims[256];
      format_dims(&din[i], dims, sizeof dims);
      rc = fail_message("input '%s': '%s' has %zu bytes, %s needs %llu", din[i].name,
                        o.input_paths[f], b.size, dims, (unsigned long long)din[i].byte_size);
    } else {
      memcpy(buf, b.data, b.size);
    }
    free(b.data);
  }
  for (size_t f = 0; f < o.n_input_files && rc == 0; f++)
    if (!o.input_used[f])
      rc = fail_message("--input %.*s: the program has no input of that name",
                        (int)o.input_name_len[f], o.input_names[f]);
  for (size_t i = 0; i < n_out && rc == 0; i++) {
    outputs[i].data = alloc_buffer(dout[i].byte_size);
    outputs[i].size = (size_t)dout[i].byte_size;
    if (!outputs[i].data) rc = fail_message("out of memory for output '%s'", dout[i].name);
  }
  for (uint64_t k = 0; k < o.iterations && rc == 0; k++) {
    double t0 = now_seconds();
    s = accy_session_invoke(session, h, inputs, n_in, outputs, n_out);
    times[k] = now_seconds() - t0;
    if (s != ACCY_STATUS_OK) rc = fail_status(s, session);
  }
  if (rc == 0) {
    qsort(times, (size_t)o.iterations, sizeof *times, compare_doubles);
    printf("run %s: %llu iteration%s, min %.1f us, median %.1f us per call\n", o.file,
           (unsigned long long)o.iterations, o.iterations == 1 ? "" : "s", times[0] * 1e6,
           times[o.iterations / 2] * 1e6);
    for (size_t i = 0; i < n_out; i++) print_summary(&dout[i], outputs[i].data);
  }
done:
  for (size_t i = 0; inputs && i < n_in; i++) free((void *)inputs[i].data);
  for (size_t i = 0; outputs && i < n_out; i++) free(outputs[i].data);
  free(inputs);
  free(outputs);
  free(times);
  accy_session_destroy(session);
  return rc;
}

/* ---- main ---------------------------------------------------------------- */

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs(kUsage, stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    fputs(kUsage, stdout);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0) {
    printf("accy %s (wire format %d.%d)\n", accy_version(), ACCY_WIRE_VERSION_MAJOR,
           ACCY_WIRE_VERSION_MINOR);
    return 0;
  }
  if (strcmp(cmd, "asm") == 0) return cmd_asm(argc - 2, argv + 2);
  if (strcmp(cmd, "dis") == 0) return cmd_dis(argc - 2, argv + 2);
  if (strcmp(cmd, "describe") == 0) return cmd_describe(argc - 2, argv + 2);
  if (strcmp(cmd, "run") == 0) return cmd_run(argc - 2, argv + 2);
  return usage_error("unknown command '%s'", cmd);
}
