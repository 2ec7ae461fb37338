/* tools/cli_convert.c: the asm, dis and describe commands of accy, and the
 * formatting of types and names they share with run. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- formatting ------------------------------------------------------------------ */

void cli_format_type(const accy_descriptor *d, char *buf, size_t cap) {
  const char *dt = accy_dtype_name(d->dtype);
  size_t at = (size_t)snprintf(buf, cap, "%s[", dt ? dt : "?");
  for (uint32_t i = 0; i < d->rank && at < cap; i++)
    at += (size_t)snprintf(buf + at, cap - at, i ? ",%lld" : "%lld", (long long)d->dims[i]);
  if (at < cap) snprintf(buf + at, cap - at, "]");
}

void cli_format_name(const char *name, char *buf, size_t cap) {
  static const char kHex[] = "0123456789abcdef";
  size_t at = 0;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
    if (at + 8 >= cap) { /* room for "\xHH" or "..." and the NUL */
      memcpy(buf + at, "...", 4);
      return;
    }
    if (*p > 0x20 && *p < 0x7f && *p != '\\' && *p != '=') {
      buf[at++] = (char)*p;
    } else {
      buf[at++] = '\\';
      buf[at++] = 'x';
      buf[at++] = kHex[*p >> 4];
      buf[at++] = kHex[*p & 15];
    }
  }
  buf[at] = '\0';
}

bool cli_parse_u64(const char *s, uint64_t *out) {
  if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') return false;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (*end || errno) return false;
  *out = v;
  return true;
}

/* ---- asm, dis ---------------------------------------------------------------------- */

/* Parses "FILE [-o OUT]"; returns -1 to go on, or the exit code. */
static int parse_in_out(const cli_command *cmd, int argc, char **argv, const char **in,
                        const char **out) {
  cli_args a;
  cli_args_init(&a, cmd, argc, argv);
  const char *v;
  for (;;) {
    int k = cli_args_next(&a, &v);
    if (k == CLI_ARG_END) break;
    if (k == CLI_ARG_HELP) return cli_command_help(cmd);
    if (k == CLI_ARG_ERROR) return CLI_EXIT_USAGE;
    if (k == CLI_ARG_OPERAND) {
      if (*in) return cli_usage_error(cmd, "more than one input file");
      *in = v;
    } else {
      /* -o is the only option of asm and dis. */
      if (*out) return cli_usage_error(cmd, "-o given twice");
      if (!*v) return cli_usage_error(cmd, "-o needs a file name");
      *out = v;
    }
  }
  if (!*in) return cli_usage_error(cmd, "no input file");
  return -1;
}

/* FILE.accy -> FILE.accyb; any other name gets .accyb appended. */
static char *default_wire_name(const char *in) {
  size_t n = strlen(in);
  if (n > 5 && strcmp(in + n - 5, ".accy") == 0) n -= 5;
  char *out = malloc(n + 7);
  if (out) {
    memcpy(out, in, n);
    memcpy(out + n, ".accyb", 7);
  }
  return out;
}

/* Compiles |prog| in a one-thread session, as describe and run would.
 * Reports and returns false when it does not compile. */
static bool check_compiles(const cli_program *prog) {
  accy_session *session = cli_session(1);
  if (!session) return false;
  accy_handle h;
  accy_status s = accy_session_compile(session, prog->data, prog->size, &h);
  if (s != ACCY_STATUS_OK) cli_fail_status(s);
  accy_session_destroy(session);
  return s == ACCY_STATUS_OK;
}

int cli_asm(const cli_command *cmd, int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  int rc = parse_in_out(cmd, argc, argv, &in, &out);
  if (rc >= 0) return rc;
  char *derived = NULL;
  if (!out) {
    if (cli_is_stdio(in)) {
      out = "-";
    } else {
      if (!(derived = default_wire_name(in))) return cli_fail("out of memory");
      out = derived;
    }
  }
  cli_program prog;
  bool ok = cli_load_program(in, &prog);
  if (ok && !prog.was_text) ok = check_compiles(&prog);
  if (ok) ok = cli_write_file(out, prog.data, prog.size);
  if (prog.data) cli_program_free(&prog);
  free(derived);
  return ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

int cli_dis(const cli_command *cmd, int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  int rc = parse_in_out(cmd, argc, argv, &in, &out);
  if (rc >= 0) return rc;
  cli_program prog;
  if (!cli_load_program(in, &prog)) return CLI_EXIT_FAIL;
  char *text = NULL;
  accy_status s = accy_text_disassemble(prog.data, prog.size, &text);
  cli_program_free(&prog);
  if (s != ACCY_STATUS_OK) return cli_fail_status(s);
  bool ok = cli_write_file(out ? out : "-", text, strlen(text));
  accy_free(text);
  return ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

/* ---- describe ------------------------------------------------------------------------ */

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
    char name[256], type[256], flags[64];
    cli_format_name(d[i].name, name, sizeof name);
    cli_format_type(&d[i], type, sizeof type);
    printf("  [%zu] %-16s %-20s bytes=%llu align=%u flags=%s\n", i, name, type,
           (unsigned long long)d[i].byte_size, d[i].alignment,
           format_flags(d[i].flags, flags, sizeof flags));
  }
}

static uint32_t le16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const unsigned char *p) { return le16(p) | le16(p + 2) << 16; }

int cli_describe(const cli_command *cmd, int argc, char **argv) {
  cli_args a;
  cli_args_init(&a, cmd, argc, argv);
  const char *file = NULL, *v;
  bool plan = false;
  for (;;) {
    int k = cli_args_next(&a, &v);
    if (k == CLI_ARG_END) break;
    if (k == CLI_ARG_HELP) return cli_command_help(cmd);
    if (k == CLI_ARG_ERROR) return CLI_EXIT_USAGE;
    if (k == 0) { /* --plan */
      plan = true;
      continue;
    }
    if (file) return cli_usage_error(cmd, "expected exactly one FILE");
    file = v;
  }
  if (!file) return cli_usage_error(cmd, "expected exactly one FILE");
  cli_program prog;
  if (!cli_load_program(file, &prog)) return CLI_EXIT_FAIL;
  accy_session *session = cli_session(1);
  if (!session) {
    cli_program_free(&prog);
    return CLI_EXIT_FAIL;
  }
  accy_handle h;
  accy_status s = accy_session_compile(session, prog.data, prog.size, &h);
  /* Once compiled, the bytes are known to be well formed (docs/wire-format.md):
   * the header (accy_wire_probe reads its version), then the nodes section
   * (u32 id 1, u64 length, u32 n_nodes). */
  const unsigned char *p = prog.data;
  uint32_t major = 0, minor = 0, nodes = 0;
  if (s == ACCY_STATUS_OK && accy_wire_probe(p, prog.size, &major, &minor) == ACCY_STATUS_OK &&
      prog.size >= ACCY_WIRE_HEADER_BYTES + 16 && le32(p + ACCY_WIRE_HEADER_BYTES) == 1)
    nodes = le32(p + ACCY_WIRE_HEADER_BYTES + 12);
  cli_program_free(&prog);
  const accy_descriptor *in = NULL, *out = NULL;
  size_t n_in = 0, n_out = 0;
  if (s == ACCY_STATUS_OK) s = accy_session_inputs(session, h, &in, &n_in);
  if (s == ACCY_STATUS_OK) s = accy_session_outputs(session, h, &out, &n_out);
  int rc = CLI_EXIT_OK;
  if (s == ACCY_STATUS_OK) {
    printf("file: %s\n", cli_is_stdio(file) ? "-" : file);
    printf("wire version: %u.%u\n", major, minor);
    printf("nodes: %u\n", nodes);
    print_descriptors("inputs", in, n_in);
    print_descriptors("outputs", out, n_out);
    printf("runtime: isa=%s scratch=%s\n", accy_info("isa"), accy_info("scratch.backend"));
    char *text = NULL;
    if (plan && (s = accy_session_describe_plan(session, h, &text)) == ACCY_STATUS_OK)
      fputs(text, stdout);
    accy_free(text);
    if (s != ACCY_STATUS_OK) rc = cli_fail_status(s);
  } else {
    rc = cli_fail_status(s);
  }
  accy_session_destroy(session);
  return rc;
}
