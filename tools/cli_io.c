/* tools/cli_io.c: messages, bounded file reading and writing, and loading a
 * program file (telling wire bytes, program text and everything else apart)
 * for the accy command. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- messages ----------------------------------------------------------------- */

int cli_usage_error(const cli_command *cmd, const char *fmt, ...) {
  va_list ap;
  fputs("accy: ", stderr);
  if (cmd) fprintf(stderr, "%s: ", cmd->name);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  if (cmd)
    fprintf(stderr, "\n(run 'accy %s --help' for usage)\n", cmd->name);
  else
    fputs("\n(run 'accy --help' for usage)\n", stderr);
  return CLI_EXIT_USAGE;
}

int cli_fail(const char *fmt, ...) {
  va_list ap;
  fputs("accy: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return CLI_EXIT_FAIL;
}

int cli_fail_status(accy_status s) {
  /* accy/session.h: a full table, a stale handle and a count mismatch are
   * returned directly and leave the cause of an older failure in place. The
   * command never passes a wrong count, so only the first two are direct. */
  const char *cause = (s == ACCY_STATUS_TOO_MANY_PROGRAMS || s == ACCY_STATUS_INVALID_HANDLE)
                          ? accy_status_message(s)
                          : accy_session_last_cause(NULL);
  if (!cause[0]) cause = accy_status_message(s);
  fprintf(stderr, "accy: %s: %s\n", accy_status_name(s), cause);
  return CLI_EXIT_FAIL;
}

bool cli_is_stdio(const char *path) { return strcmp(path, "-") == 0; }

static const char *quoted(const char *path, const char *stdio) {
  static char bufs[4][512];
  static unsigned next;
  if (cli_is_stdio(path)) return stdio;
  char *b = bufs[next++ % 4];
  size_t n = strlen(path);
  if (n > sizeof bufs[0] - 8)
    snprintf(b, sizeof bufs[0], "'%.*s...'", (int)(sizeof bufs[0] - 8), path);
  else
    snprintf(b, sizeof bufs[0], "'%s'", path);
  return b;
}

const char *cli_in_name(const char *path) { return quoted(path, "standard input"); }
const char *cli_out_name(const char *path) { return quoted(path, "standard output"); }

/* ---- reading ---------------------------------------------------------------------- */

/* An open file to read: stdin for "-". */
typedef struct source {
  int fd;
  bool regular;
  uint64_t size; /* st_size of a regular file: a hint, files in /proc say 0 */
} source;

static bool source_open(const char *path, source *s) {
  s->fd = -1;
  if (cli_is_stdio(path)) {
    s->fd = STDIN_FILENO;
  } else {
    do
      s->fd = open(path, O_RDONLY | O_CLOEXEC);
    while (s->fd < 0 && errno == EINTR);
    if (s->fd < 0) {
      cli_fail("cannot open %s: %s", cli_in_name(path), strerror(errno));
      return false;
    }
  }
  struct stat st;
  if (fstat(s->fd, &st) != 0) {
    cli_fail("cannot read %s: %s", cli_in_name(path), strerror(errno));
    goto fail;
  }
  if (S_ISDIR(st.st_mode)) {
    cli_fail("%s is a directory", cli_in_name(path));
    goto fail;
  }
  s->regular = S_ISREG(st.st_mode);
  s->size = s->regular && st.st_size > 0 ? (uint64_t)st.st_size : 0;
  return true;
fail:
  if (s->fd != STDIN_FILENO) close(s->fd);
  s->fd = -1;
  return false;
}

static void source_close(source *s) {
  if (s->fd >= 0 && s->fd != STDIN_FILENO) close(s->fd);
  s->fd = -1;
}

/* Reads until |n| bytes are in or the file ends; returns the count, or
 * (size_t)-1 on a read error (errno set). */
static size_t read_full(int fd, unsigned char *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    size_t chunk = n - got > (1u << 30) ? (1u << 30) : n - got;
    ssize_t r = read(fd, buf + got, chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return (size_t)-1;
    if (r == 0) break;
    got += (size_t)r;
  }
  return got;
}

bool cli_read_file(const char *path, uint64_t limit, const char *limit_name,
                   bool (*sniff)(const char *path, const unsigned char *p, size_t n, bool eof,
                                 void *ctx),
                   void *ctx, cli_blob *out) {
  out->data = NULL;
  out->size = 0;
  if (limit > SIZE_MAX - 1) limit = SIZE_MAX - 1;
  source src;
  if (!source_open(path, &src)) return false;
  if (src.regular && src.size > limit) {
    cli_fail("%s has %llu bytes, more than %s %llu", cli_in_name(path),
             (unsigned long long)src.size, limit_name, (unsigned long long)limit);
    source_close(&src);
    return false;
  }
  /* One byte beyond the limit tells a file at the limit from a longer one. */
  size_t max_cap = (size_t)limit + 1;
  size_t cap = src.regular && src.size ? (size_t)src.size + 1 : (size_t)1 << 16;
  if (cap < CLI_SNIFF_BYTES) cap = CLI_SNIFF_BYTES;
  if (cap > max_cap) cap = max_cap;
  unsigned char *buf = malloc(cap);
  size_t n = 0;
  bool ok = buf != NULL, sniffed = !sniff;
  if (!buf) cli_fail("out of memory reading %s", cli_in_name(path));
  while (ok) {
    /* Read the sniffed prefix on its own, so a refused file is not read on. */
    size_t want = sniffed ? cap - n : (cap < CLI_SNIFF_BYTES ? cap : CLI_SNIFF_BYTES) - n;
    size_t got = read_full(src.fd, buf + n, want);
    if (got == (size_t)-1) {
      ok = false;
      cli_fail("cannot read %s: %s", cli_in_name(path), strerror(errno));
      break;
    }
    n += got;
    bool eof = got < want;
    if (!sniffed) {
      sniffed = true;
      if (!sniff(path, buf, n, eof, ctx)) {
        ok = false;
        break;
      }
    }
    if (eof) break;
    if (n < cap) continue;
    if (cap == max_cap) {
      ok = false;
      cli_fail("%s has more than %s %llu bytes", cli_in_name(path), limit_name,
               (unsigned long long)limit);
      break;
    }
    size_t next = cap > max_cap / 2 ? max_cap : cap * 2;
    unsigned char *nb = realloc(buf, next);
    if (!nb) {
      ok = false;
      cli_fail("out of memory reading %s (more than %zu bytes)", cli_in_name(path), cap);
      break;
    }
    buf = nb;
    cap = next;
  }
  source_close(&src);
  if (!ok) {
    free(buf);
    return false;
  }
  out->data = buf;
  out->size = n;
  return true;
}

cli_read_exact_result cli_read_exact(const char *path, void *buf, uint64_t size,
                                     uint64_t *found) {
  *found = 0;
  source src;
  if (!source_open(path, &src)) return CLI_READ_EXACT_FAILED;
  cli_read_exact_result r;
  if (src.regular && src.size > size) {
    *found = src.size;
    r = CLI_READ_EXACT_LONG;
  } else {
    size_t got = read_full(src.fd, buf, (size_t)size);
    unsigned char extra;
    size_t more = got == (size_t)size ? read_full(src.fd, &extra, 1) : 0;
    if (got == (size_t)-1 || more == (size_t)-1) {
      cli_fail("cannot read %s: %s", cli_in_name(path), strerror(errno));
      r = CLI_READ_EXACT_FAILED;
    } else if (got < size) {
      *found = got;
      r = CLI_READ_EXACT_SHORT;
    } else {
      r = more ? CLI_READ_EXACT_LONG : CLI_READ_EXACT_OK;
    }
  }
  source_close(&src);
  return r;
}

/* ---- writing ------------------------------------------------------------------------ */

static bool write_all(int fd, const unsigned char *p, size_t n) {
  while (n) {
    size_t chunk = n > (1u << 30) ? (1u << 30) : n;
    ssize_t w = write(fd, p, chunk);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

bool cli_flush(FILE *f) {
  errno = 0;
  if (fflush(f) == 0 && !ferror(f)) return true;
  int err = errno;
  if (f != stderr)
    cli_fail("cannot write %s%s%s", f == stdout ? "standard output" : "a file", err ? ": " : "",
             err ? strerror(err) : "");
  return false;
}

bool cli_write_stdout(const void *data, size_t size) {
  if (fwrite(data, 1, size, stdout) != size || fflush(stdout) != 0) {
    cli_fail("cannot write standard output: %s", strerror(errno));
    return false;
  }
  return true;
}

bool cli_write_file(const char *path, const void *data, size_t size) {
  if (cli_is_stdio(path)) return cli_write_stdout(data, size);
  int fd;
  do
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    cli_fail("cannot create %s: %s", cli_out_name(path), strerror(errno));
    return false;
  }
  bool ok = write_all(fd, data, size);
  int err = errno;
  struct stat st;
  bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    cli_fail("cannot write %s: %s", cli_out_name(path), strerror(err));
    /* Never leave a truncated output behind; devices are left alone. */
    if (regular) unlink(path);
  }
  return ok;
}

/* ---- what a file holds ---------------------------------------------------------------- */

static bool has_suffix(const char *path, const char *suffix) {
  size_t n = strlen(path), m = strlen(suffix);
  if (n < m) return false;
  for (size_t i = 0; i < m; i++) {
    char c = path[n - m + i];
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != suffix[i]) return false;
  }
  return true;
}

/* An ONNX model is a protobuf ModelProto, which exporters start with field
 * 1 (ir_version, a small varint: bytes 08 NN) followed by another field's
 * tag: producer_name (0x12) nearly always, or one of the other fields. */
static bool looks_like_onnx(const unsigned char *p, size_t n) {
  static const unsigned char kTags[] = {0x12, 0x1a, 0x22, 0x28, 0x32, 0x3a, 0x42, 0x72, 0xa2, 0xca};
  if (n < 2 || p[0] != 0x08 || p[1] == 0 || p[1] > 0x7f) return false;
  if (n == 2) return true;
  return memchr(kTags, p[2], sizeof kTags) != NULL;
}

/* Finds the first byte of |p| that program text cannot start with: a NUL,
 * a control byte other than tab, LF, VT, FF and CR, or invalid UTF-8 (a
 * sequence cut off by the end of the prefix counts as valid unless |eof|).
 * Returns its offset, or n when there is none. */
static size_t first_non_text(const unsigned char *p, size_t n, bool eof) {
  size_t i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      if (c < 0x20 && !(c >= '\t' && c <= '\r')) return i;
      i++;
      continue;
    }
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf; /* range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c == 0xe0) lo = 0xa0; /* no overlong forms */
      if (c == 0xed) hi = 0x9f; /* no surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f; /* nothing above U+10FFFF */
    } else {
      return i;
    }
    for (size_t k = 1; k < len; k++) {
      if (i + k >= n) return eof ? i : n;
      unsigned char d = p[i + k];
      if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xbf)) return i;
    }
    i += len;
  }
  return n;
}

typedef struct sniff_result {
  bool wire;
} sniff_result;

static bool sniff_program(const char *path, const unsigned char *p, size_t n, bool eof,
                          void *ctx) {
  sniff_result *r = ctx;
  const char *name = cli_in_name(path);
  r->wire = accy_wire_probe(p, n, NULL, NULL) == ACCY_STATUS_OK;
  if (r->wire) return true;
  if (looks_like_onnx(p, n) || (!cli_is_stdio(path) && has_suffix(path, ".onnx"))) {
    cli_fail("%s is not an accy program (it looks like an ONNX model); convert it with "
             "'python3 -m accy.onnx %s -o OUT.accyb'",
             name, cli_is_stdio(path) ? "MODEL.onnx" : path);
    return false;
  }
  if (n == 0) {
    cli_fail("%s is not an accy program (the file is empty)", name);
    return false;
  }
  if (n < ACCY_WIRE_MAGIC_BYTES && memcmp(p, ACCY_WIRE_MAGIC, n) == 0) {
    cli_fail("%s is not an accy program (%zu byte%s, shorter than the 8-byte wire header)", name,
             n, n == 1 ? "" : "s");
    return false;
  }
  size_t bad = first_non_text(p, n, eof);
  if (bad < n) {
    cli_fail("%s is not an accy program (neither wire bytes nor program text: byte 0x%02x at "
             "offset %zu); for ONNX models use 'python3 -m accy.onnx FILE.onnx'",
             name, p[bad], bad);
    return false;
  }
  return true;
}

/* Directory part of |path| (for constant files named relative to it). */
static char *dir_of(const char *path) {
  if (cli_is_stdio(path)) return strdup(".");
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

bool cli_load_program(const char *path, cli_program *out) {
  memset(out, 0, sizeof *out);
  sniff_result kind = {false};
  cli_blob b;
  if (!cli_read_file(path, CLI_MAX_PROGRAM_BYTES, CLI_MAX_PROGRAM_BYTES_NAME, sniff_program,
                     &kind, &b))
    return false;
  if (kind.wire) {
    out->data = b.data;
    out->size = b.size;
    return true;
  }
  /* A UTF-8 byte order mark is not part of the program. */
  size_t skip = b.size >= 3 && memcmp(b.data, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
  char *dir = dir_of(path);
  if (!dir) {
    free(b.data);
    cli_fail("out of memory");
    return false;
  }
  accy_status s = accy_text_assemble((const char *)b.data + skip, b.size - skip, dir, &out->data,
                                     &out->size);
  free(dir);
  free(b.data);
  if (s != ACCY_STATUS_OK) {
    cli_fail_status(s);
    return false;
  }
  out->from_library = true;
  out->was_text = true;
  return true;
}

void cli_program_free(cli_program *p) {
  if (p->from_library)
    accy_free(p->data);
  else
    free(p->data);
  p->data = NULL;
}

accy_session *cli_session(uint32_t threads) {
  accy_session_options opts;
  memset(&opts, 0, sizeof opts);
  opts.struct_size = sizeof opts;
  opts.num_threads = threads;
  accy_session *session = NULL;
  accy_status s = accy_session_create(&opts, &session);
  if (s != ACCY_STATUS_OK) {
    cli_fail_status(s);
    return NULL;
  }
  return session;
}
