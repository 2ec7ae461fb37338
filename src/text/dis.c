/* src/text/dis.c: wire bytes -> the text form (docs/text-format.md).
 *
 * The output is meant to be read by people and to assemble back to the very
 * same bytes: every node prints its full result type, every attribute by
 * name (or as raw attrs=[...] when its layout is not the one this printer
 * knows), and every constant inline with each element written so that it
 * parses back to identical bits. */
#include "src/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/base/alloc.h"
#include "src/base/half.h"
#include "src/ir/ir.h"
#include "src/ir/verify.h"
#include "src/text/text.h"
#include "src/wire/wire.h"


/* Constants with more elements than this are wrapped, 8 values a line. */
#define ONE_LINE_ELEMENTS 16
#define VALUES_PER_LINE 8

/* ---- growable text buffer ------------------------------------------------- */

typedef struct sbuf {
  char *p;
  size_t n;
  size_t cap;
  bool oom; /* sticky: once set, appends are dropped and the caller fails */
} sbuf;

static void sb_putn(sbuf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->n + n + 1 > b->cap) {
    size_t ncap = b->cap ? b->cap : 4096;
    while (ncap < b->n + n + 1) ncap *= 2;
    char *np = accy__realloc(b->p, ncap);
    if (!np) {
      b->oom = true;
      return;
    }
    b->p = np;
    b->cap = ncap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

static void sb_printf(sbuf *b, const char *fmt, ...) ACCY_PRINTF(2, 3);
static void sb_printf(sbuf *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  /* Every caller formats short pieces (numbers, keywords); longer strings
   * go through sb_puts. */
  sb_putn(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* ---- pieces --------------------------------------------------------------- */

static void print_string(sbuf *b, const char *s) {
  sb_putn(b, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') {
      char e[2] = {'\\', (char)*p};
      sb_putn(b, e, 2);
    } else if (*p < 0x20 || *p >= 0x7f) {
      sb_printf(b, "\\x%02x", *p);
    } else {
      sb_putn(b, (const char *)p, 1);
    }
  }
  sb_putn(b, "\"", 1);
}

static void print_type(sbuf *b, const accy__type *t) {
  sb_puts(b, accy__dtype_name(t->dtype));
  sb_putn(b, "[", 1);
  for (uint32_t i = 0; i < t->rank; i++) sb_printf(b, i ? ",%lld" : "%lld", (long long)t->dims[i]);
  sb_putn(b, "]", 1);
}

static void print_list(sbuf *b, const char *name, const int64_t *v, uint32_t n) {
  sb_printf(b, " %s=[", name);
  for (uint32_t i = 0; i < n; i++) sb_printf(b, i ? ",%lld" : "%lld", (long long)v[i]);
  sb_putn(b, "]", 1);
}

/* Prints an optional list attribute only when it differs from the
 * assembler's default (every entry |def|), keeping common cases short. */
static void print_list_opt(sbuf *b, const char *name, const int64_t *v, uint32_t n, int64_t def) {
  for (uint32_t i = 0; i < n; i++)
    if (v[i] != def) {
      print_list(b, name, v, n);
      return;
    }
}

static uint64_t load_le(const uint8_t *p, size_t size) {
  uint64_t v = 0;
  for (size_t i = 0; i < size; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static double float_value(int32_t dtype, uint64_t bits) {
  switch (dtype) {
    case ACCY_DTYPE_F64: {
      double d;
      memcpy(&d, &bits, 8);
      return d;
    }
    case ACCY_DTYPE_F32:
      return (double)accy__bits_f32((uint32_t)bits);
    case ACCY_DTYPE_F16:
      return (double)accy__f16_to_f32((uint16_t)bits);
    default:
      return (double)accy__bf16_to_f32((uint16_t)bits);
  }
}

/* Formats one float element so that the assembler maps it back to |bits|:
 * the shortest %g that does, nan/inf by name, and any NaN other than the
 * canonical quiet one as bits(0x...). */
static void format_float(int32_t dtype, uint64_t bits, char *buf, size_t cap) {
  size_t size = accy__dtype_size(dtype);
  unsigned width = (unsigned)(8 * size);
  uint64_t sign_bit = 1ull << (width - 1);
  uint64_t abs_mask = sign_bit - 1; /* all but the sign */
  unsigned mant_bits = dtype == ACCY_DTYPE_F64 ? 52 : dtype == ACCY_DTYPE_F32 ? 23
                       : dtype == ACCY_DTYPE_F16 ? 10 : 7;
  uint64_t exp_mask = abs_mask & ~((1ull << mant_bits) - 1);
  uint64_t mag = bits & abs_mask;
  const char *sign = (bits & sign_bit) ? "-" : "";
  if (mag > exp_mask) {
    if (mag == (exp_mask | (1ull << (mant_bits - 1))))
      snprintf(buf, cap, "%snan", sign);
    else
      snprintf(buf, cap, "bits(0x%0*llx)", (int)(2 * size), (unsigned long long)bits);
    return;
  }
  if (mag == exp_mask) {
    snprintf(buf, cap, "%sinf", sign);
    return;
  }
  double v = float_value(dtype, bits);
  int max_digits = dtype == ACCY_DTYPE_F64 ? 17 : 9;
  for (int digits = 1; digits <= max_digits; digits++) {
    snprintf(buf, cap, "%.*g", digits, v);
    if (accy__text_float_bits(dtype, strtod(buf, NULL)) == bits) return;
  }
  /* Unreachable: 9 (17) significant digits always round-trip f32 (f64). */
  snprintf(buf, cap, "bits(0x%0*llx)", (int)(2 * size), (unsigned long long)bits);
}

static void format_element(int32_t dtype, const uint8_t *p, char *buf, size_t cap) {
  size_t size = accy__dtype_size(dtype);
  uint64_t bits = load_le(p, size);
  if (dtype == ACCY_DTYPE_BOOL) {
    snprintf(buf, cap, "%s", bits ? "true" : "false");
  } else if (accy__dtype_is_float(dtype)) {
    format_float(dtype, bits, buf, cap);
  } else if (accy__dtype_is_unsigned(dtype)) {
    snprintf(buf, cap, "%llu", (unsigned long long)bits);
  } else {
    /* Sign-extend from the element width. */
    unsigned shift = (unsigned)(64 - 8 * size);
    int64_t v = (int64_t)(bits << shift) >> shift;
    snprintf(buf, cap, "%lld", (long long)v);
  }
}

static void print_values(sbuf *b, const accy__node *n) {
  uint64_t count = 0;
  (void)accy__type_elements(&n->type, &count);
  size_t size = accy__dtype_size(n->type.dtype);
  const uint8_t *data = n->payload;
  bool wrap = count > ONE_LINE_ELEMENTS;
  char buf[64];
  sb_puts(b, wrap ? " [\n  " : " [");
  for (uint64_t i = 0; i < count && !b->oom; i++) {
    if (i) sb_puts(b, wrap && i % VALUES_PER_LINE == 0 ? ",\n  " : ", ");
    format_element(n->type.dtype, data + i * size, buf, sizeof buf);
    sb_puts(b, buf);
  }
  sb_puts(b, wrap ? "\n]" : "]");
}

/* ---- value names ---------------------------------------------------------- */

/* Parameters and constants print as %<their name> when that name is a valid
 * identifier not starting with a digit and no other node took it; every
 * other node is %<index>. Indices start with a digit, so they never clash. */
typedef struct namer {
  const char **names; /* per node: the chosen name, or NULL for the index */
  const char **set;   /* open-addressing set of taken names */
  uint32_t set_cap;   /* power of two */
} namer;

static bool is_plain_name(const char *s) {
  if (!s || !*s) return false;
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_' || *s == '.'))
      return false;
  return true;
}

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static accy_status namer_init(namer *nm, const accy__program *p) {
  memset(nm, 0, sizeof *nm);
  nm->names = accy__calloc(p->n_nodes ? p->n_nodes : 1, sizeof(char *));
  uint32_t leaves = 0;
  for (uint32_t i = 0; i < p->n_nodes; i++)
    if (p->nodes[i].name) leaves++;
  nm->set_cap = 16;
  while (nm->set_cap < 2 * leaves + 2) nm->set_cap *= 2;
  nm->set = accy__calloc(nm->set_cap, sizeof(char *));
  if (!nm->names || !nm->set)
    return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory naming values");
  uint32_t mask = nm->set_cap - 1;
  for (uint32_t i = 0; i < p->n_nodes; i++) {
    const char *name = p->nodes[i].name;
    if (!is_plain_name(name)) continue;
    uint32_t k = (uint32_t)hash_str(name) & mask;
    while (nm->set[k] && strcmp(nm->set[k], name) != 0) k = (k + 1) & mask;
    if (nm->set[k]) continue; /* taken by an earlier node: use the index */
    nm->set[k] = name;
    nm->names[i] = name;
  }
  return ACCY_STATUS_OK;
}

static void namer_free(namer *nm) {
  accy__free(nm->names);
  accy__free(nm->set);
}

static void print_ref(sbuf *b, const namer *nm, uint32_t i) {
  if (nm->names[i]) {
    sb_putn(b, "%", 1);
    sb_puts(b, nm->names[i]);
  } else {
    sb_printf(b, "%%%u", i);
  }
}

/* ---- attributes ----------------------------------------------------------- */

/* Prints the named attributes of |n| into |out| and the keyword (compare
 * direction, reduce kind, scatter mode) into *keyword, walking the op's
 * attribute schema (src/ir/op_traits.c) the way the assembler builds the
 * attrs from it (src/text/attrs.c). A field is left out when it is optional
 * and equals its default. Returns false when the attrs do not have the
 * schema's layout, so the caller prints them raw and the text still
 * assembles to the same bytes. */
static bool format_attrs(const accy__program *p, const accy__node *n, sbuf *out,
                         const char **keyword) {
  const int64_t *a = n->attrs;
  const uint32_t na = n->n_attrs;
  const uint32_t r = n->n_operands ? p->nodes[n->operands[0]].type.rank : 0;
  const accy__op_trait *trait = accy__op_trait_of(n->op);
  *keyword = NULL;
  if (!trait) return false;
  const accy__attr_schema *schema = trait->attrs;
  uint32_t at = 0, spatial = 0;
  for (uint32_t i = 0; i < schema->n_fields; i++) {
    const accy__attr_field *f = &schema->fields[i];
    const bool shown = f->required || f->always_shown;
    switch (f->kind) {
      case ACCY__ATTR_KEYWORD:
        if (at >= na || a[at] < 0 || a[at] >= (int64_t)f->words->n) return false;
        *keyword = f->words->words[a[at]];
        at++;
        break;
      case ACCY__ATTR_SCALAR:
        if (at >= na) return false;
        if (shown || a[at] != f->def) sb_printf(out, " %s=%lld", f->name, (long long)a[at]);
        at++;
        break;
      case ACCY__ATTR_LIST: {
        uint32_t count = f->len == ACCY__LEN_RANK      ? r
                         : f->len == ACCY__LEN_SPATIAL ? spatial
                                                       : na - at;
        if (count > na - at) return false;
        const int64_t *v = count ? a + at : NULL; /* attrs is NULL when there are none */
        if (shown)
          print_list(out, f->name, v, count);
        else
          print_list_opt(out, f->name, v, count, f->def);
        at += count;
        break;
      }
      case ACCY__ATTR_PAIR: {
        if (at >= na || a[at] < 0 || (uint64_t)a[at] > (na - at - 1) / 2) return false;
        uint32_t count = (uint32_t)a[at];
        if (shown || count) {
          print_list(out, f->name, a + at + 1, count);
          print_list(out, f->name2, a + at + 1 + count, count);
        }
        at += 1 + 2 * count;
        break;
      }
      case ACCY__ATTR_SPATIAL:
        if (r < 3 || r > 5 || at >= na || a[at] != (int64_t)(r - 2)) return false;
        spatial = r - 2;
        at++;
        break;
    }
  }
  return at == na;
}

/* ---- program -------------------------------------------------------------- */

static void print_node(sbuf *b, sbuf *tmp, const accy__program *p, const namer *nm, uint32_t i) {
  const accy__node *n = &p->nodes[i];
  const char *op_name = accy__op_name(n->op);
  print_ref(b, nm, i);
  sb_puts(b, " = ");
  sb_puts(b, op_name ? op_name : "?");
  if (n->op == ACCY_OP_PARAMETER || n->op == ACCY_OP_CONSTANT) {
    sb_putn(b, " ", 1);
    print_string(b, n->name ? n->name : "");
    sb_puts(b, " : ");
    print_type(b, &n->type);
    if (n->op == ACCY_OP_CONSTANT) print_values(b, n);
    sb_putn(b, "\n", 1);
    return;
  }
  const char *keyword = NULL;
  tmp->n = 0;
  if (tmp->p) tmp->p[0] = '\0';
  bool named = format_attrs(p, n, tmp, &keyword);
  if (named && keyword) {
    sb_putn(b, " ", 1);
    sb_puts(b, keyword);
  }
  for (uint32_t k = 0; k < n->n_operands; k++) {
    sb_puts(b, k ? ", " : " ");
    print_ref(b, nm, n->operands[k]);
  }
  if (named) {
    if (tmp->n) sb_putn(b, tmp->p, tmp->n);
  } else {
    print_list(b, "attrs", n->attrs, n->n_attrs);
  }
  sb_puts(b, " : ");
  print_type(b, &n->type);
  sb_putn(b, "\n", 1);
}

accy_status accy_text_disassemble(const void *bytes, size_t size, char **out_text) {
  if (out_text) *out_text = NULL;
  if (!out_text || (!bytes && size))
    return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER, "accy_text_disassemble: bytes or out_text is NULL");
  accy__program p;
  ACCY_TRY(accy__wire_decode(bytes ? bytes : "", size, &p));
  accy_status s = accy__verify(&p);
  if (s != ACCY_STATUS_OK) {
    accy__program_free(&p);
    return s;
  }
  namer nm;
  sbuf b = {0}, tmp = {0};
  s = namer_init(&nm, &p);
  if (s == ACCY_STATUS_OK) {
    sb_printf(&b, "# accy program: wire %d.%u, nodes %u, parameters %u, outputs %u\n",
              ACCY_WIRE_VERSION_MAJOR, (unsigned)p.wire_minor, p.n_nodes, p.n_params,
              p.n_outputs);
    for (uint32_t i = 0; i < p.n_nodes && !b.oom && !tmp.oom; i++) print_node(&b, &tmp, &p, &nm, i);
    for (uint32_t i = 0; i < p.n_outputs && !b.oom; i++) {
      sb_puts(&b, "output ");
      print_ref(&b, &nm, p.outputs[i]);
      sb_putn(&b, " ", 1);
      print_string(&b, p.output_names[i]);
      sb_putn(&b, "\n", 1);
    }
    if (b.oom || tmp.oom || !b.p)
      s = ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory printing the program");
  }
  namer_free(&nm);
  accy__free(tmp.p);
  accy__program_free(&p);
  if (s != ACCY_STATUS_OK) {
    accy__free(b.p);
    return s;
  }
  *out_text = b.p;
  return ACCY_STATUS_OK;
}
