/* src/text/asm.c: the text form -> wire bytes (docs/text-format.md).
 *
 * A hand-written lexer and a recursive-descent parser build an accy__program
 * node by node, inferring each node's type as it goes (so a mistake is
 * reported at its own line), then verify and encode it. Every failure is
 * INVALID_PROGRAM "line N: ..." (or OUT_OF_MEMORY); the text is untrusted
 * and is only ever read within |length|. */
#include "src/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/base/alloc.h"
#include "src/base/half.h"
#include "src/ir/ir.h"
#include "src/ir/verify.h"
#include "src/text/files.h"
#include "src/wire/wire.h"

/* Shared with src/text/dis.c (declared there as well: the text module has no
 * header of its own). Converts |d| to the bit pattern of a float dtype,
 * rounding to nearest even exactly once. The disassembler prints the
 * shortest decimal that this function maps back to the same bits, so both
 * sides must use this one conversion. */
uint64_t accy__text_float_bits(int32_t dtype, double d);

/* Longest number token and string accepted (file paths included). */
#define NUMBER_CHARS 80
#define STRING_BYTES 4096
/* Most key=value attributes on one line. */
#define MAX_NAMED_ATTRS 16

/* ---- float narrowing ----------------------------------------------------- */

static uint32_t f32_bits(float f) { return accy__f32_bits(f); }

/* Rounds |d| to f32 with round-to-odd: the result carries a sticky low bit
 * when inexact, so a second rounding to f16/bf16 (11 or 8 significant bits,
 * far fewer than 24) rounds as if straight from |d|. */
static float f32_round_odd(double d) {
  float f = (float)d;
  if (__builtin_isnan(d) || __builtin_isinf(d) || (double)f == d) return f;
  uint32_t u = f32_bits(f);
  double af = (double)f < 0 ? -(double)f : (double)f;
  double ad = d < 0 ? -d : d;
  if (af > ad) u -= 1; /* one step toward zero (sign-magnitude) */
  return accy__bits_f32(u | 1u);
}

uint64_t accy__text_float_bits(int32_t dtype, double d) {
  switch (dtype) {
    case ACCY_DTYPE_F64: {
      uint64_t u;
      memcpy(&u, &d, 8);
      return u;
    }
    case ACCY_DTYPE_F32:
      return f32_bits((float)d);
    case ACCY_DTYPE_F16:
      return accy__f32_to_f16(f32_round_odd(d));
    case ACCY_DTYPE_BF16:
      return accy__f32_to_bf16(f32_round_odd(d));
  }
  return 0;
}

/* ---- lexer ---------------------------------------------------------------- */

typedef enum tok_kind {
  TOK_EOF,
  TOK_NEWLINE,
  TOK_IDENT,  /* [A-Za-z_][A-Za-z0-9_.]* */
  TOK_VALUE,  /* %name */
  TOK_NUMBER, /* sign, digits, letters, '.', exponent signs */
  TOK_STRING, /* "..." (s/n: the raw bytes between the quotes) */
  TOK_PUNCT   /* one of = , [ ] : ( ) */
} tok_kind;

typedef struct token {
  tok_kind kind;
  const char *s;
  size_t n;
  uint32_t line;
} token;

typedef struct lexer {
  const char *text;
  size_t length;
  size_t pos;
  uint32_t line;
  int depth; /* open '[' and '(': newlines inside them do not end a statement */
  bool has_peek;
  token peeked;
} lexer;

static bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c) || c == '.'; }

static accy_status lex_next(lexer *lx, token *t) {
  if (lx->has_peek) {
    *t = lx->peeked;
    lx->has_peek = false;
    return ACCY_STATUS_OK;
  }
  const char *s = lx->text;
  for (;;) {
    if (lx->pos >= lx->length) {
      t->kind = TOK_EOF;
      t->s = s + lx->length;
      t->n = 0;
      t->line = lx->line;
      return ACCY_STATUS_OK;
    }
    char c = s[lx->pos];
    if (c == ' ' || c == '\t' || c == '\r') {
      lx->pos++;
    } else if (c == '#') {
      while (lx->pos < lx->length && s[lx->pos] != '\n') lx->pos++;
    } else if (c == '\n') {
      t->line = lx->line;
      lx->pos++;
      lx->line++;
      if (lx->depth == 0) {
        t->kind = TOK_NEWLINE;
        t->s = s + lx->pos - 1;
        t->n = 1;
        return ACCY_STATUS_OK;
      }
    } else {
      break;
    }
  }
  size_t start = lx->pos;
  char c = s[start];
  t->s = s + start;
  t->line = lx->line;
  if (is_ident_start(c)) {
    while (lx->pos < lx->length && is_ident_char(s[lx->pos])) lx->pos++;
    t->kind = TOK_IDENT;
  } else if (c == '%') {
    lx->pos++;
    while (lx->pos < lx->length && is_ident_char(s[lx->pos])) lx->pos++;
    if (lx->pos == start + 1)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: '%%' must be followed by a name",
                       lx->line);
    t->kind = TOK_VALUE;
  } else if (is_digit(c) || ((c == '-' || c == '+' || c == '.') && start + 1 < lx->length &&
                             (is_ident_char(s[start + 1])))) {
    lx->pos++;
    size_t digits = (c == '-' || c == '+') ? start + 1 : start;
    bool hex = digits + 1 < lx->length && s[digits] == '0' &&
               (s[digits + 1] == 'x' || s[digits + 1] == 'X');
    while (lx->pos < lx->length) {
      char d = s[lx->pos];
      char prev = s[lx->pos - 1];
      /* A sign continues the number only right after an exponent letter:
       * e/E in decimal, p/P in hex (where e is a digit). */
      bool exp_sign = (d == '+' || d == '-') &&
                      (hex ? (prev == 'p' || prev == 'P') : (prev == 'e' || prev == 'E'));
      if (is_ident_char(d) || exp_sign)
        lx->pos++;
      else
        break;
    }
    t->kind = TOK_NUMBER;
  } else if (c == '"') {
    lx->pos++;
    for (;;) {
      if (lx->pos >= lx->length || s[lx->pos] == '\n')
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: unterminated string", lx->line);
      if (s[lx->pos] == '\\' && lx->pos + 1 < lx->length && s[lx->pos + 1] != '\n') {
        lx->pos += 2;
        continue;
      }
      if (s[lx->pos] == '"') break;
      lx->pos++;
    }
    t->kind = TOK_STRING;
    t->s = s + start + 1;
    t->n = lx->pos - start - 1;
    lx->pos++;
    return ACCY_STATUS_OK;
  } else if (strchr("=,[]:()", c) && c != '\0') {
    lx->pos++;
    t->kind = TOK_PUNCT;
    if (c == '[' || c == '(') lx->depth++;
    if ((c == ']' || c == ')') && lx->depth > 0) lx->depth--;
  } else {
    unsigned char u = (unsigned char)c;
    if (u >= 0x21 && u < 0x7f)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: unexpected character '%c'",
                       lx->line, c);
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: unexpected byte 0x%02x", lx->line,
                     u);
  }
  t->n = lx->pos - start;
  return ACCY_STATUS_OK;
}

static accy_status lex_peek(lexer *lx, token *t) {
  if (!lx->has_peek) {
    ACCY_TRY(lex_next(lx, &lx->peeked));
    lx->has_peek = true;
  }
  *t = lx->peeked;
  return ACCY_STATUS_OK;
}

static bool tok_is(const token *t, tok_kind kind, const char *text) {
  size_t n = strlen(text);
  return t->kind == kind && t->n == n && memcmp(t->s, text, n) == 0;
}
static bool tok_punct(const token *t, char c) {
  return t->kind == TOK_PUNCT && t->n == 1 && t->s[0] == c;
}

/* A short printable description of a token for messages. Bounded because
 * the text is the caller's. */
static const char *tok_describe(const token *t, char *buf, size_t size) {
  switch (t->kind) {
    case TOK_EOF:
      return "end of text";
    case TOK_NEWLINE:
      return "end of line";
    case TOK_STRING:
      snprintf(buf, size, "string \"%.*s\"", (int)(t->n > 32 ? 32 : t->n), t->s);
      return buf;
    default:
      snprintf(buf, size, "'%.*s'", (int)(t->n > 32 ? 32 : t->n), t->s);
      return buf;
  }
}

static accy_status expect_punct(lexer *lx, char c, const char *context) {
  token t;
  ACCY_TRY(lex_next(lx, &t));
  if (!tok_punct(&t, c)) {
    char buf[64];
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: expected '%c' %s, found %s", t.line,
                     c, context, tok_describe(&t, buf, sizeof buf));
  }
  return ACCY_STATUS_OK;
}

/* Decodes a string token's escapes into |buf| (NUL-terminated). */
static accy_status decode_string(const token *t, char *buf, size_t cap, size_t *out_len) {
  size_t n = 0;
  for (size_t i = 0; i < t->n; i++) {
    unsigned char c = (unsigned char)t->s[i];
    if (c == '\\') {
      char e = t->s[++i]; /* the lexer guarantees a character follows */
      switch (e) {
        case 'n': c = '\n'; break;
        case 't': c = '\t'; break;
        case 'r': c = '\r'; break;
        case '\\': c = '\\'; break;
        case '"': c = '"'; break;
        case 'x': {
          int v = 0;
          for (int k = 0; k < 2; k++) {
            char h = i + 1 < t->n ? t->s[i + 1] : '\0';
            int d = (h >= '0' && h <= '9') ? h - '0'
                    : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                    : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
            if (d < 0)
              return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                               "line %u: '\\x' needs two hex digits in a string", t->line);
            v = v * 16 + d;
            i++;
          }
          c = (unsigned char)v;
          break;
        }
        default:
          return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: unknown escape '\\%c'",
                           t->line, e);
      }
    }
    if (c == 0)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: NUL byte in a string", t->line);
    if (n + 1 >= cap)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: string longer than %zu bytes",
                       t->line, cap - 1);
    buf[n++] = (char)c;
  }
  buf[n] = '\0';
  *out_len = n;
  return ACCY_STATUS_OK;
}

/* ---- numbers -------------------------------------------------------------- */

/* Copies a number or identifier token into a NUL-terminated buffer. */
static accy_status tok_cstr(const token *t, char *buf, size_t cap) {
  if (t->n >= cap)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: number '%.32s...' is too long",
                     t->line, t->s);
  memcpy(buf, t->s, t->n);
  buf[t->n] = '\0';
  return ACCY_STATUS_OK;
}

/* Parses an integer token: decimal or 0x hex, optional sign. The magnitude
 * goes to *mag (up to UINT64_MAX), the sign to *neg. */
static accy_status parse_int_token(const token *t, bool *neg, uint64_t *mag) {
  char buf[NUMBER_CHARS];
  if (t->kind != TOK_NUMBER) {
    char d[64];
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: expected an integer, found %s",
                     t->line, tok_describe(t, d, sizeof d));
  }
  ACCY_TRY(tok_cstr(t, buf, sizeof buf));
  const char *p = buf;
  *neg = false;
  if (*p == '-' || *p == '+') *neg = *p++ == '-';
  int base = 10;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    base = 16;
    p += 2;
  }
  if (!*p || !(is_digit(*p) || (base == 16 && strchr("abcdefABCDEF", *p))))
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: '%s' is not an integer", t->line,
                     buf);
  errno = 0;
  char *end = NULL;
  unsigned long long v = strtoull(p, &end, base);
  if (*end)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: '%s' is not an integer", t->line,
                     buf);
  if (errno == ERANGE)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: integer '%s' is out of range",
                     t->line, buf);
  *mag = v;
  return ACCY_STATUS_OK;
}

static accy_status parse_i64_token(const token *t, int64_t *out) {
  bool neg;
  uint64_t mag;
  ACCY_TRY(parse_int_token(t, &neg, &mag));
  if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: '%.*s' does not fit in int64",
                     t->line, (int)t->n, t->s);
  *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
  return ACCY_STATUS_OK;
}

static accy_status next_i64(lexer *lx, int64_t *out) {
  token t;
  ACCY_TRY(lex_next(lx, &t));
  return parse_i64_token(&t, out);
}

/* Parses '[' int (',' int)* ']' (possibly empty) into |out| (cap |cap|). */
static accy_status parse_int_list(lexer *lx, int64_t *out, uint32_t cap, uint32_t *n_out,
                                  const char *what) {
  token t;
  uint32_t n = 0;
  ACCY_TRY(expect_punct(lx, '[', what));
  ACCY_TRY(lex_peek(lx, &t));
  if (tok_punct(&t, ']')) {
    ACCY_TRY(lex_next(lx, &t));
    *n_out = 0;
    return ACCY_STATUS_OK;
  }
  for (;;) {
    ACCY_TRY(lex_next(lx, &t));
    if (n >= cap)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: more than %u values in %s",
                       t.line, cap, what);
    ACCY_TRY(parse_i64_token(&t, &out[n]));
    n++;
    ACCY_TRY(lex_next(lx, &t));
    if (tok_punct(&t, ']')) break;
    if (!tok_punct(&t, ',')) {
      char d[64];
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: expected ',' or ']' in %s, found %s",
                       t.line, what, tok_describe(&t, d, sizeof d));
    }
  }
  *n_out = n;
  return ACCY_STATUS_OK;
}

/* ---- types ---------------------------------------------------------------- */

static int32_t dtype_from_token(const token *t) {
  for (int32_t d = 1; d <= ACCY_DTYPE_BOOL; d++) {
    const char *name = accy__dtype_name(d);
    if (strlen(name) == t->n && memcmp(name, t->s, t->n) == 0) return d;
  }
  return 0;
}

/* Parses dtype ['[' dims ']']. *has_dims false means a bare dtype. */
static accy_status parse_type(lexer *lx, accy__type *out, bool *has_dims) {
  token t;
  ACCY_TRY(lex_next(lx, &t));
  memset(out, 0, sizeof *out);
  out->dtype = t.kind == TOK_IDENT ? dtype_from_token(&t) : 0;
  if (!out->dtype) {
    char d[64];
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "line %u: bad type: %s is not a dtype (f32 f64 f16 bf16 i8 i16 i32 i64 u8 "
                     "u16 u32 u64 bool)",
                     t.line, tok_describe(&t, d, sizeof d));
  }
  ACCY_TRY(lex_peek(lx, &t));
  *has_dims = tok_punct(&t, '[');
  if (!*has_dims) return ACCY_STATUS_OK;
  int64_t dims[ACCY_MAX_RANK];
  uint32_t n = 0;
  token open = t;
  accy_status s = parse_int_list(lx, dims, ACCY_MAX_RANK, &n, "type dims");
  if (s != ACCY_STATUS_OK) {
    /* Rank overflow reads better as a type error than as a list error. */
    if (strstr(accy__cause(), "more than"))
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: bad type: rank exceeds %d",
                       open.line, ACCY_MAX_RANK);
    return s;
  }
  for (uint32_t i = 0; i < n; i++) {
    if (dims[i] < 0 || dims[i] > ACCY_MAX_DIM)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "line %u: bad type: dims[%u] = %lld is outside 0..%lld", open.line, i,
                       (long long)dims[i], (long long)ACCY_MAX_DIM);
    out->dims[i] = dims[i];
  }
  out->rank = n;
  uint64_t elems;
  if (!accy__type_elements(out, &elems))
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "line %u: bad type: more than ACCY_MAX_ELEMENTS %llu elements", open.line,
                     (unsigned long long)ACCY_MAX_ELEMENTS);
  return ACCY_STATUS_OK;
}

/* ---- assembler state ------------------------------------------------------ */

typedef struct symbol {
  const char *name; /* into the text, without the '%'; NULL = empty slot */
  size_t len;
  uint32_t node;
  uint32_t line;
} symbol;

typedef struct attr_item {
  const char *name;
  size_t name_len;
  uint32_t line;
  bool is_list;
  bool used;
  int64_t value;       /* scalar */
  const int64_t *list; /* into the attr pool */
  uint32_t n;
} attr_item;

typedef struct attr_set {
  attr_item items[MAX_NAMED_ATTRS];
  uint32_t n_items;
  int64_t pool[ACCY_MAX_ATTRS];
  uint32_t pool_used;
  int64_t keyword; /* -1: none */
  token keyword_tok;
} attr_set;

typedef struct asm_state {
  lexer lx;
  const char *base_dir;
  uint32_t flags; /* ACCY_TEXT_* */
  accy__program program;
  symbol *syms;
  uint32_t sym_cap; /* power of two */
  uint32_t n_syms;
  uint32_t *node_line; /* text line of each node, for verifier messages */
  uint32_t cap_lines;
  uint32_t operands[ACCY_MAX_OPERANDS];
  int64_t attrs[ACCY_MAX_ATTRS];
  attr_set aset;
} asm_state;

static uint64_t hash_bytes(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static symbol *sym_find(asm_state *st, const char *name, size_t len) {
  if (!st->sym_cap) return NULL;
  uint32_t mask = st->sym_cap - 1;
  for (uint32_t i = (uint32_t)hash_bytes(name, len) & mask;; i = (i + 1) & mask) {
    symbol *s = &st->syms[i];
    if (!s->name) return s;
    if (s->len == len && memcmp(s->name, name, len) == 0) return s;
  }
}

static accy_status sym_define(asm_state *st, const token *t, uint32_t node) {
  if ((st->n_syms + 1) * 2 > st->sym_cap) {
    uint32_t ncap = st->sym_cap ? st->sym_cap * 2 : 64;
    symbol *old = st->syms;
    uint32_t old_cap = st->sym_cap;
    st->syms = accy__calloc(ncap, sizeof(symbol));
    if (!st->syms) {
      st->syms = old;
      return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for the symbol table");
    }
    st->sym_cap = ncap;
    for (uint32_t i = 0; i < old_cap; i++)
      if (old[i].name) *sym_find(st, old[i].name, old[i].len) = old[i];
    accy__free(old);
  }
  symbol *s = sym_find(st, t->s + 1, t->n - 1);
  if (s->name)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: %.*s is already defined on line %u",
                     t->line, (int)(t->n > 64 ? 64 : t->n), t->s, s->line);
  s->name = t->s + 1;
  s->len = t->n - 1;
  s->node = node;
  s->line = t->line;
  st->n_syms++;
  return ACCY_STATUS_OK;
}

static accy_status sym_lookup(asm_state *st, const token *t, uint32_t *node) {
  symbol *s = sym_find(st, t->s + 1, t->n - 1);
  if (!s || !s->name)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: undefined value %.*s", t->line,
                     (int)(t->n > 64 ? 64 : t->n), t->s);
  *node = s->node;
  return ACCY_STATUS_OK;
}

/* Records the line of the node just added (index n_nodes - 1). */
static accy_status note_line(asm_state *st, uint32_t line) {
  uint32_t idx = st->program.n_nodes - 1;
  if (idx >= st->cap_lines) {
    uint32_t ncap = st->cap_lines ? st->cap_lines * 2 : 64;
    uint32_t *n = accy__realloc(st->node_line, (size_t)ncap * sizeof(uint32_t));
    if (!n) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for line numbers");
    st->node_line = n;
    st->cap_lines = ncap;
  }
  st->node_line[idx] = line;
  return ACCY_STATUS_OK;
}

/* ---- constants ------------------------------------------------------------ */

static void store_le(uint8_t *dst, uint64_t bits, size_t size) {
  for (size_t i = 0; i < size; i++) dst[i] = (uint8_t)(bits >> (8 * i));
}

/* Parses one element of |dtype| from |t| (and the tokens after it, for
 * bits(...)) into little-endian bytes at |dst|. */
static accy_status parse_element(lexer *lx, const token *t, int32_t dtype, uint8_t *dst) {
  size_t size = accy__dtype_size(dtype);
  char buf[NUMBER_CHARS];
  if (dtype == ACCY_DTYPE_BOOL) {
    if (tok_is(t, TOK_IDENT, "true") || tok_is(t, TOK_NUMBER, "1")) {
      dst[0] = 1;
    } else if (tok_is(t, TOK_IDENT, "false") || tok_is(t, TOK_NUMBER, "0")) {
      dst[0] = 0;
    } else {
      char d[64];
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "line %u: bad bool value %s (use true, false, 1 or 0)", t->line,
                       tok_describe(t, d, sizeof d));
    }
    return ACCY_STATUS_OK;
  }
  if (accy__dtype_is_float(dtype)) {
    if (tok_is(t, TOK_IDENT, "bits")) {
      token v;
      ACCY_TRY(expect_punct(lx, '(', "after bits"));
      ACCY_TRY(lex_next(lx, &v));
      bool neg;
      uint64_t mag;
      ACCY_TRY(parse_int_token(&v, &neg, &mag));
      if (neg || (size < 8 && mag >> (8 * size)))
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                         "line %u: bits(%.*s) does not fit in %zu bytes of %s", v.line,
                         (int)(v.n > 32 ? 32 : v.n), v.s, size, accy__dtype_name(dtype));
      ACCY_TRY(expect_punct(lx, ')', "after bits(..."));
      store_le(dst, mag, size);
      return ACCY_STATUS_OK;
    }
    double d;
    uint64_t bits;
    if (t->kind != TOK_NUMBER && t->kind != TOK_IDENT) {
      char dd[64];
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: expected a number, found %s",
                       t->line, tok_describe(t, dd, sizeof dd));
    }
    ACCY_TRY(tok_cstr(t, buf, sizeof buf));
    const char *p = buf;
    bool neg = false;
    if (*p == '-' || *p == '+') neg = *p++ == '-';
    if (strcmp(p, "nan") == 0) {
      /* The canonical quiet NaN of each dtype; other NaNs are bits(...). */
      bits = dtype == ACCY_DTYPE_F64   ? 0x7ff8000000000000ull
             : dtype == ACCY_DTYPE_F32 ? 0x7fc00000u
             : dtype == ACCY_DTYPE_F16 ? 0x7e00u : 0x7fc0u;
      if (neg) bits |= 1ull << (8 * size - 1);
    } else if (strcmp(p, "inf") == 0) {
      d = neg ? -__builtin_inf() : __builtin_inf();
      bits = accy__text_float_bits(dtype, d);
    } else {
      char *end = NULL;
      if (!(is_digit(*p) || *p == '.')) {
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: '%s' is not a number", t->line,
                         buf);
      }
      d = strtod(buf, &end);
      if (*end)
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: '%s' is not a number", t->line,
                         buf);
      bits = accy__text_float_bits(dtype, d);
      /* A finite literal that rounds to infinity is almost surely a typo. */
      uint64_t exp_mask = dtype == ACCY_DTYPE_F64   ? 0x7ff0000000000000ull
                          : dtype == ACCY_DTYPE_F32 ? 0x7f800000u
                          : dtype == ACCY_DTYPE_F16 ? 0x7c00u : 0x7f80u;
      uint64_t abs_mask = dtype == ACCY_DTYPE_F64 ? 0x7fffffffffffffffull
                          : ((1ull << (8 * size - 1)) - 1);
      if ((bits & abs_mask) == exp_mask)
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: %s is out of range for %s",
                         t->line, buf, accy__dtype_name(dtype));
    }
    store_le(dst, bits, size);
    return ACCY_STATUS_OK;
  }
  /* Integers. */
  bool neg;
  uint64_t mag;
  ACCY_TRY(parse_int_token(t, &neg, &mag));
  int bitsz = (int)(8 * size);
  uint64_t stored;
  if (accy__dtype_is_signed(dtype)) {
    uint64_t max_pos = (bitsz == 64) ? (uint64_t)INT64_MAX : ((1ull << (bitsz - 1)) - 1);
    if (neg ? mag > max_pos + 1 : mag > max_pos)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: %.*s is out of range for %s",
                       t->line, (int)t->n, t->s, accy__dtype_name(dtype));
    stored = neg ? 0 - mag : mag;
  } else {
    uint64_t max = (bitsz == 64) ? UINT64_MAX : ((1ull << bitsz) - 1);
    if ((neg && mag != 0) || mag > max)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: %.*s is out of range for %s",
                       t->line, (int)t->n, t->s, accy__dtype_name(dtype));
    stored = mag;
  }
  store_le(dst, stored, size);
  return ACCY_STATUS_OK;
}

/* Parses '[' values ']' into |payload| (|count| elements). One value fills
 * every element (splat). */
static accy_status parse_values(lexer *lx, int32_t dtype, uint8_t *payload, uint64_t count,
                                const char *name) {
  size_t size = accy__dtype_size(dtype);
  uint8_t first[8] = {0};
  uint64_t n = 0;
  token t, open;
  ACCY_TRY(lex_next(lx, &open)); /* the caller peeked '[' */
  ACCY_TRY(lex_next(lx, &t));
  if (!tok_punct(&t, ']')) {
    for (;;) {
      uint8_t *dst = n < count ? payload + n * size : (n == 0 ? first : NULL);
      if (!dst) {
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                         "line %u: constant '%.64s': more than %llu values", t.line, name,
                         (unsigned long long)count);
      }
      ACCY_TRY(parse_element(lx, &t, dtype, dst));
      if (n == 0 && dst != first) memcpy(first, dst, size);
      n++;
      ACCY_TRY(lex_next(lx, &t));
      if (tok_punct(&t, ']')) break;
      if (!tok_punct(&t, ',')) {
        char d[64];
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                         "line %u: expected ',' or ']' in the values of '%.64s', found %s",
                         t.line, name, tok_describe(&t, d, sizeof d));
      }
      ACCY_TRY(lex_next(lx, &t));
    }
  }
  if (n == 1 && count != 1) {
    for (uint64_t i = 0; i < count; i++) memcpy(payload + i * size, first, size);
  } else if (n != count) {
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "line %u: constant '%.64s': %llu values, its type has %llu elements (or "
                     "give 1 value to fill them all)",
                     open.line, name, (unsigned long long)n, (unsigned long long)count);
  }
  return ACCY_STATUS_OK;
}

static accy_status read_constant_file(asm_state *st, const token *path_tok, bool has_offset,
                                      int64_t offset, uint8_t *payload, uint64_t need,
                                      const char *name) {
  char rel[STRING_BYTES];
  size_t rel_len;
  uint32_t line = path_tok->line;
  ACCY_TRY(decode_string(path_tok, rel, sizeof rel, &rel_len));
  if (st->flags & ACCY_TEXT_NO_FILES)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "line %u: constant '%.64s': file constants are not allowed here "
                     "(ACCY_TEXT_NO_FILES)",
                     line, name);
  if (offset < 0)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: negative offset %lld", line,
                     (long long)offset);
  int fd;
  uint64_t file_size;
  ACCY_TRY(accy__text_open_confined(st->base_dir, rel, rel_len, line, &fd, &file_size));
  accy_status s = ACCY_STATUS_OK;
  /* Without an offset the file is exactly the constant; with one, several
   * constants may share a file, so only enough bytes are required. */
  if (!has_offset && file_size != need)
    s = ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                  "line %u: constant '%.64s': '%.200s' has %llu bytes, the type needs %llu",
                  line, name, rel, (unsigned long long)file_size, (unsigned long long)need);
  else if (has_offset && ((uint64_t)offset > file_size || file_size - (uint64_t)offset < need))
    s = ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                  "line %u: constant '%.64s': '%.200s' has %llu bytes, offset %lld + %llu "
                  "bytes runs past its end",
                  line, name, rel, (unsigned long long)file_size, (long long)offset,
                  (unsigned long long)need);
  else if (!accy__text_read_at(fd, (uint64_t)offset, payload, need))
    s = ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: cannot read '%.200s'", line, rel);
  close(fd);
  return s;
}

/* ---- statements ----------------------------------------------------------- */

static accy_status parse_name_string(lexer *lx, char *buf, size_t *len, const char *what) {
  token t;
  ACCY_TRY(lex_next(lx, &t));
  if (t.kind != TOK_STRING) {
    char d[64];
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: expected the %s name as \"...\", found %s",
                     t.line, what, tok_describe(&t, d, sizeof d));
  }
  ACCY_TRY(decode_string(&t, buf, ACCY_MAX_NAME_BYTES + 1, len));
  if (*len == 0) return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: empty %s name", t.line, what);
  return ACCY_STATUS_OK;
}

static accy_status parse_leaf(asm_state *st, const token *def, uint16_t op) {
  lexer *lx = &st->lx;
  const char *what = op == ACCY_OP_PARAMETER ? "parameter" : "constant";
  char name[ACCY_MAX_NAME_BYTES + 1];
  size_t name_len;
  ACCY_TRY(parse_name_string(lx, name, &name_len, what));
  token t;
  ACCY_TRY(lex_next(lx, &t));
  if (!tok_punct(&t, ':'))
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: %s '%.64s' needs a type (': f32[2,3]')",
                     t.line, what, name);
  accy__type type;
  bool has_dims;
  ACCY_TRY(parse_type(lx, &type, &has_dims));
  if (!has_dims)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "line %u: bad type: %s '%.64s' needs dims, e.g. %s[] for a scalar", t.line,
                     what, name, accy__dtype_name(type.dtype));
  accy__program *p = &st->program;
  accy__type inferred;
  ACCY_TRY_CTX(accy__infer_type(p, op, NULL, 0, NULL, 0, &type, &inferred),
               "line %u: %s '%.64s': ", def->line, what, name);
  if (op == ACCY_OP_PARAMETER) {
    for (uint32_t i = 0; i < p->n_params; i++)
      if (strcmp(p->nodes[p->params[i]].name, name) == 0)
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                         "line %u: parameter name \"%.64s\" is already used on line %u",
                         def->line, name, st->node_line[p->params[i]]);
    ACCY_TRY(accy__program_add_node(p, op, &inferred, NULL, 0, NULL, 0, name, name_len, NULL, 0,
                                    NULL));
    return ACCY_STATUS_OK;
  }
  /* Constant: values inline or from a file. */
  uint64_t count = 0;
  (void)accy__type_elements(&type, &count); /* parse_type checked the limit */
  uint64_t need = accy__type_bytes(&type);
  if (need > ACCY_MAX_CONSTANT_BYTES)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "line %u: constant '%.64s': %llu bytes exceed ACCY_MAX_CONSTANT_BYTES",
                     def->line, name, (unsigned long long)need);
  ACCY_TRY(lex_peek(lx, &t));
  uint8_t *payload = accy__malloc(need ? (size_t)need : 1);
  if (!payload) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for constant data");
  accy_status st_ok = ACCY_STATUS_OK;
  if (tok_punct(&t, '[')) {
    st_ok = parse_values(lx, type.dtype, payload, count, name);
  } else if (tok_is(&t, TOK_IDENT, "file")) {
    token path;
    (void)lex_next(lx, &t);
    st_ok = lex_next(lx, &path);
    if (st_ok == ACCY_STATUS_OK && path.kind != TOK_STRING)
      st_ok = ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: expected a file name \"...\" after file",
                        path.line);
    int64_t offset = 0;
    bool has_offset = false;
    if (st_ok == ACCY_STATUS_OK) st_ok = lex_peek(lx, &t);
    if (st_ok == ACCY_STATUS_OK && tok_is(&t, TOK_IDENT, "offset")) {
      (void)lex_next(lx, &t);
      has_offset = true;
      st_ok = next_i64(lx, &offset);
    }
    if (st_ok == ACCY_STATUS_OK)
      st_ok = read_constant_file(st, &path, has_offset, offset, payload, need, name);
  } else {
    char d[64];
    st_ok = ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                      "line %u: constant '%.64s' needs values [...] or file \"...\", found %s",
                      t.line, name, tok_describe(&t, d, sizeof d));
  }
  if (st_ok == ACCY_STATUS_OK && type.dtype == ACCY_DTYPE_BOOL) {
    for (uint64_t i = 0; i < need; i++)
      if (payload[i] > 1) {
        st_ok = ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                          "line %u: constant '%.64s': bool element %llu is byte %u, not 0 or 1",
                          def->line, name, (unsigned long long)i, payload[i]);
        break;
      }
  }
  if (st_ok == ACCY_STATUS_OK)
    st_ok = accy__program_add_node(p, op, &inferred, NULL, 0, NULL, 0, name, name_len, payload,
                                   need, NULL);
  accy__free(payload);
  return st_ok;
}

/* ---- attributes ----------------------------------------------------------- */

static const char *const kDirections[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
static const char *const kReduceKinds[] = {"sum", "product", "max", "min", "and", "or"};
static const char *const kScatterModes[] = {"replace", "add", "multiply", "max", "min"};

static bool op_has_keyword(uint16_t op) {
  return op == ACCY_OP_COMPARE || op == ACCY_OP_REDUCE || op == ACCY_OP_REDUCE_WINDOW ||
         op == ACCY_OP_SCATTER;
}

static int keyword_index(const token *t, const char *const *names, int count) {
  for (int i = 0; i < count; i++) {
    size_t n = strlen(names[i]);
    if (n != t->n) continue;
    size_t k = 0;
    while (k < n && (t->s[k] | 0x20) == (names[i][k] | 0x20)) k++;
    if (k == n) return i;
  }
  return -1;
}

/* Parses name '=' (int | '[' ints ']') into the attribute set. */
static accy_status parse_attr(asm_state *st, const token *name) {
  attr_set *a = &st->aset;
  lexer *lx = &st->lx;
  for (uint32_t i = 0; i < a->n_items; i++)
    if (a->items[i].name_len == name->n && memcmp(a->items[i].name, name->s, name->n) == 0)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: attribute '%.*s' given twice",
                       name->line, (int)(name->n > 32 ? 32 : name->n), name->s);
  if (a->n_items >= MAX_NAMED_ATTRS)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: more than %d attributes",
                     name->line, MAX_NAMED_ATTRS);
  char ctx[64];
  snprintf(ctx, sizeof ctx, "after '%.*s'", (int)(name->n > 32 ? 32 : name->n), name->s);
  ACCY_TRY(expect_punct(lx, '=', ctx));
  attr_item *it = &a->items[a->n_items];
  memset(it, 0, sizeof *it);
  it->name = name->s;
  it->name_len = name->n;
  it->line = name->line;
  token t;
  ACCY_TRY(lex_peek(lx, &t));
  if (tok_punct(&t, '[')) {
    snprintf(ctx, sizeof ctx, "attribute '%.*s'", (int)(name->n > 32 ? 32 : name->n), name->s);
    it->is_list = true;
    it->list = a->pool + a->pool_used;
    ACCY_TRY(parse_int_list(lx, a->pool + a->pool_used, ACCY_MAX_ATTRS - a->pool_used, &it->n,
                            ctx));
    a->pool_used += it->n;
  } else {
    ACCY_TRY(next_i64(lx, &it->value));
  }
  a->n_items++;
  return ACCY_STATUS_OK;
}

typedef struct attr_out {
  int64_t *v;
  uint32_t n;
  uint32_t line;
  const char *op_name;
} attr_out;

static accy_status push(attr_out *o, int64_t v) {
  if (o->n >= ACCY_MAX_ATTRS)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: %s: more than ACCY_MAX_ATTRS %u attrs",
                     o->line, o->op_name, ACCY_MAX_ATTRS);
  o->v[o->n++] = v;
  return ACCY_STATUS_OK;
}

static attr_item *find_attr(attr_set *a, const char *name) {
  size_t n = strlen(name);
  for (uint32_t i = 0; i < a->n_items; i++)
    if (a->items[i].name_len == n && memcmp(a->items[i].name, name, n) == 0) {
      a->items[i].used = true;
      return &a->items[i];
    }
  return NULL;
}

/* Appends scalar attribute |name| (or |def| when absent and not required). */
static accy_status take_scalar(attr_set *a, attr_out *o, const char *name, bool required,
                               int64_t def) {
  attr_item *it = find_attr(a, name);
  if (!it) {
    if (required)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: %s needs %s=N", o->line, o->op_name,
                       name);
    return push(o, def);
  }
  if (it->is_list)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "line %u: bad attribute: %s=%s takes one integer, not a list", it->line,
                     o->op_name, name);
  return push(o, it->value);
}

/* Appends list attribute |name|. |len| < 0: any length (reported through
 * *out_len); else exactly |len| values, filled with |def| when absent. */
static accy_status take_list(attr_set *a, attr_out *o, const char *name, bool required,
                             int64_t len, int64_t def, uint32_t *out_len) {
  attr_item *it = find_attr(a, name);
  if (!it) {
    if (required)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: %s needs %s=[...]", o->line,
                       o->op_name, name);
    for (int64_t i = 0; i < (len < 0 ? 0 : len); i++) ACCY_TRY(push(o, def));
    if (out_len) *out_len = len < 0 ? 0 : (uint32_t)len;
    return ACCY_STATUS_OK;
  }
  if (!it->is_list)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "line %u: bad attribute: %s %s=[...] takes a list, not one integer",
                     it->line, o->op_name, name);
  if (len >= 0 && (int64_t)it->n != len)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "line %u: bad attribute: %s %s has %u values, expected %lld (one per axis)",
                     it->line, o->op_name, name, it->n, (long long)len);
  for (uint32_t i = 0; i < it->n; i++) ACCY_TRY(push(o, it->list[i]));
  if (out_len) *out_len = it->n;
  return ACCY_STATUS_OK;
}

/* The attribute names |op| accepts, space-separated ("" for none). */
static const char *allowed_attrs(uint16_t op) {
  switch (op) {
    case ACCY_OP_IOTA:
    case ACCY_OP_CONCATENATE: return "dim";
    case ACCY_OP_GATHER:
    case ACCY_OP_ARGMAX:
    case ACCY_OP_ARGMIN: return "axis";
    case ACCY_OP_SORT:
    case ACCY_OP_ARGSORT: return "axis descending";
    case ACCY_OP_BROADCAST_IN_DIM:
    case ACCY_OP_REVERSE:
    case ACCY_OP_REDUCE: return "dims";
    case ACCY_OP_TRANSPOSE: return "perm";
    case ACCY_OP_DYNAMIC_SLICE: return "sizes";
    case ACCY_OP_SLICE: return "start limit stride";
    case ACCY_OP_PAD: return "low high interior";
    case ACCY_OP_DOT_GENERAL: return "lhs_batch rhs_batch lhs_contract rhs_contract";
    case ACCY_OP_CONVOLUTION: return "stride pad_low pad_high lhs_dilation rhs_dilation groups";
    case ACCY_OP_REDUCE_WINDOW:
      return "window stride pad_low pad_high base_dilation window_dilation";
    default: return "";
  }
}

static bool word_in(const char *words, const char *w, size_t n) {
  for (const char *p = words; *p;) {
    const char *e = strchr(p, ' ');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && memcmp(p, w, n) == 0) return true;
    if (!e) break;
    p = e + 1;
  }
  return false;
}

/* Builds the flat attrs of |op| from the keyword and named attributes. */
static accy_status build_attrs(asm_state *st, uint16_t op, const char *op_name,
                               uint32_t n_operands, uint32_t line, uint32_t *n_attrs) {
  attr_set *a = &st->aset;
  attr_out o = {st->attrs, 0, line, op_name};
  const accy__program *p = &st->program;
  uint32_t rank0 = n_operands ? p->nodes[st->operands[0]].type.rank : 0;
  attr_item *raw = find_attr(a, "attrs");
  if (raw) {
    if (a->n_items != 1 || a->keyword >= 0)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "line %u: %s: attrs=[...] cannot be combined with other attributes",
                       line, op_name);
    if (!raw->is_list)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: bad attribute: attrs takes a list",
                       raw->line);
    for (uint32_t i = 0; i < raw->n; i++) ACCY_TRY(push(&o, raw->list[i]));
    *n_attrs = o.n;
    return ACCY_STATUS_OK;
  }
  /* Unknown names first: a misspelt attribute explains a "missing" one. */
  const char *allowed = allowed_attrs(op);
  for (uint32_t i = 0; i < a->n_items; i++) {
    const attr_item *it = &a->items[i];
    if (!word_in(allowed, it->name, it->name_len))
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "line %u: bad attribute: %s has no attribute '%.*s' (it takes: %s)",
                       it->line, op_name, (int)(it->name_len > 32 ? 32 : it->name_len), it->name,
                       allowed[0] ? allowed : "none");
  }
  if (op_has_keyword(op)) {
    if (a->keyword < 0) {
      if (op == ACCY_OP_SCATTER)
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                         "line %u: scatter needs a mode (replace add multiply max min) before "
                         "the operands",
                         line);
      if (op == ACCY_OP_COMPARE)
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                         "line %u: compare needs a direction (EQ NE LT LE GT GE) before the "
                         "operands",
                         line);
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "line %u: %s needs a kind (sum product max min and or) before the "
                       "operand",
                       line, op_name);
    }
    ACCY_TRY(push(&o, a->keyword));
  }
  uint32_t nb = 0, nc = 0, tmp;
  switch (op) {
    case ACCY_OP_IOTA:
    case ACCY_OP_CONCATENATE:
      ACCY_TRY(take_scalar(a, &o, "dim", true, 0));
      break;
    case ACCY_OP_GATHER:
    case ACCY_OP_ARGMAX:
    case ACCY_OP_ARGMIN:
      ACCY_TRY(take_scalar(a, &o, "axis", true, 0));
      break;
    case ACCY_OP_SORT:
    case ACCY_OP_ARGSORT:
      ACCY_TRY(take_scalar(a, &o, "axis", true, 0));
      ACCY_TRY(take_scalar(a, &o, "descending", false, 0));
      break;
    case ACCY_OP_BROADCAST_IN_DIM:
    case ACCY_OP_REVERSE:
    case ACCY_OP_REDUCE:
      ACCY_TRY(take_list(a, &o, "dims", true, -1, 0, NULL));
      break;
    case ACCY_OP_TRANSPOSE:
      ACCY_TRY(take_list(a, &o, "perm", true, -1, 0, NULL));
      break;
    case ACCY_OP_DYNAMIC_SLICE:
      ACCY_TRY(take_list(a, &o, "sizes", true, -1, 0, NULL));
      break;
    case ACCY_OP_SLICE:
      ACCY_TRY(take_list(a, &o, "start", true, rank0, 0, NULL));
      ACCY_TRY(take_list(a, &o, "limit", true, rank0, 0, NULL));
      ACCY_TRY(take_list(a, &o, "stride", false, rank0, 1, NULL));
      break;
    case ACCY_OP_PAD:
      ACCY_TRY(take_list(a, &o, "low", false, rank0, 0, NULL));
      ACCY_TRY(take_list(a, &o, "high", false, rank0, 0, NULL));
      ACCY_TRY(take_list(a, &o, "interior", false, rank0, 0, NULL));
      break;
    case ACCY_OP_DOT_GENERAL: {
      /* nb and nc are the list lengths; they are written before each pair. */
      attr_item *lb = find_attr(a, "lhs_batch"), *rb = find_attr(a, "rhs_batch");
      attr_item *lc = find_attr(a, "lhs_contract"), *rc = find_attr(a, "rhs_contract");
      attr_item *all[4] = {lb, rb, lc, rc};
      for (int i = 0; i < 4; i++)
        if (all[i] && !all[i]->is_list)
          return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                           "line %u: bad attribute: dot_general %.*s takes a list", all[i]->line,
                           (int)all[i]->name_len, all[i]->name);
      nb = lb ? lb->n : 0;
      nc = lc ? lc->n : 0;
      if ((rb ? rb->n : 0) != nb)
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                         "line %u: bad attribute: dot_general lhs_batch has %u axes, rhs_batch %u",
                         line, nb, rb ? rb->n : 0);
      if ((rc ? rc->n : 0) != nc)
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                         "line %u: bad attribute: dot_general lhs_contract has %u axes, "
                         "rhs_contract %u",
                         line, nc, rc ? rc->n : 0);
      ACCY_TRY(push(&o, nb));
      for (uint32_t i = 0; i < nb; i++) ACCY_TRY(push(&o, lb->list[i]));
      for (uint32_t i = 0; i < nb; i++) ACCY_TRY(push(&o, rb->list[i]));
      ACCY_TRY(push(&o, nc));
      for (uint32_t i = 0; i < nc; i++) ACCY_TRY(push(&o, lc->list[i]));
      for (uint32_t i = 0; i < nc; i++) ACCY_TRY(push(&o, rc->list[i]));
      break;
    }
    case ACCY_OP_CONVOLUTION: {
      if (rank0 < 3 || rank0 > 5)
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                         "line %u: convolution: lhs has rank %u; it needs 3 to 5 (N, C and 1 to "
                         "3 spatial axes)",
                         line, rank0);
      int64_t s = rank0 - 2;
      ACCY_TRY(push(&o, s));
      ACCY_TRY(take_list(a, &o, "stride", false, s, 1, &tmp));
      ACCY_TRY(take_list(a, &o, "pad_low", false, s, 0, &tmp));
      ACCY_TRY(take_list(a, &o, "pad_high", false, s, 0, &tmp));
      ACCY_TRY(take_list(a, &o, "lhs_dilation", false, s, 1, &tmp));
      ACCY_TRY(take_list(a, &o, "rhs_dilation", false, s, 1, &tmp));
      ACCY_TRY(take_scalar(a, &o, "groups", false, 1));
      break;
    }
    case ACCY_OP_REDUCE_WINDOW:
      ACCY_TRY(take_list(a, &o, "window", true, rank0, 1, NULL));
      ACCY_TRY(take_list(a, &o, "stride", false, rank0, 1, NULL));
      ACCY_TRY(take_list(a, &o, "pad_low", false, rank0, 0, NULL));
      ACCY_TRY(take_list(a, &o, "pad_high", false, rank0, 0, NULL));
      ACCY_TRY(take_list(a, &o, "base_dilation", false, rank0, 1, NULL));
      ACCY_TRY(take_list(a, &o, "window_dilation", false, rank0, 1, NULL));
      break;
    default:
      break;
  }
  for (uint32_t i = 0; i < a->n_items; i++)
    if (!a->items[i].used)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "line %u: bad attribute: %s has no attribute '%.*s'", a->items[i].line,
                       op_name, (int)(a->items[i].name_len > 32 ? 32 : a->items[i].name_len),
                       a->items[i].name);
  *n_attrs = o.n;
  return ACCY_STATUS_OK;
}

/* Parses the rest of '%v = OP ...' for ops other than parameter and constant. */
static accy_status parse_op(asm_state *st, const token *def, const token *op_tok, uint16_t op) {
  lexer *lx = &st->lx;
  accy__program *p = &st->program;
  const char *op_name = accy__op_name(op);
  attr_set *a = &st->aset;
  a->n_items = 0;
  a->pool_used = 0;
  a->keyword = -1;
  uint32_t n_operands = 0;
  bool has_type = false, has_dims = false;
  accy__type declared;
  token t;
  char d[64];
  if (op_has_keyword(op)) {
    ACCY_TRY(lex_peek(lx, &t));
    if (t.kind == TOK_IDENT && !tok_is(&t, TOK_IDENT, "attrs")) {
      (void)lex_next(lx, &t);
      int k = op == ACCY_OP_COMPARE   ? keyword_index(&t, kDirections, 6)
              : op == ACCY_OP_SCATTER ? keyword_index(&t, kScatterModes, 5)
                                      : keyword_index(&t, kReduceKinds, 6);
      if (k < 0) {
        if (op == ACCY_OP_SCATTER)
          return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                           "line %u: bad attribute: unknown scatter mode %s (replace add "
                           "multiply max min)",
                           t.line, tok_describe(&t, d, sizeof d));
        if (op == ACCY_OP_COMPARE)
          return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                           "line %u: bad attribute: unknown compare direction %s (EQ NE LT LE "
                           "GT GE)",
                           t.line, tok_describe(&t, d, sizeof d));
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                         "line %u: bad attribute: unknown %s kind %s (sum product max min and or)",
                         t.line, op_name, tok_describe(&t, d, sizeof d));
      }
      a->keyword = k;
      a->keyword_tok = t;
    }
  }
  for (;;) {
    ACCY_TRY(lex_peek(lx, &t));
    if (t.kind == TOK_NEWLINE || t.kind == TOK_EOF) break;
    (void)lex_next(lx, &t);
    if (t.kind == TOK_VALUE) {
      if (a->n_items)
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                         "line %u: operand %.*s after the attributes; operands come first",
                         t.line, (int)(t.n > 32 ? 32 : t.n), t.s);
      if (n_operands >= ACCY_MAX_OPERANDS)
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                         "line %u: %s: more than ACCY_MAX_OPERANDS %u operands", t.line, op_name,
                         ACCY_MAX_OPERANDS);
      ACCY_TRY(sym_lookup(st, &t, &st->operands[n_operands]));
      n_operands++;
    } else if (tok_punct(&t, ',')) {
      continue;
    } else if (t.kind == TOK_IDENT) {
      ACCY_TRY(parse_attr(st, &t));
    } else if (tok_punct(&t, ':')) {
      ACCY_TRY(parse_type(lx, &declared, &has_dims));
      has_type = true;
      break;
    } else {
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "line %u: expected an operand, an attribute or ':', found %s", t.line,
                       tok_describe(&t, d, sizeof d));
    }
  }
  int min_ops = 0, max_ops = 0;
  (void)accy__op_arity(op, &min_ops, &max_ops);
  if ((int)n_operands < min_ops || (max_ops >= 0 && (int)n_operands > max_ops)) {
    if (min_ops == max_ops)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: %s takes %d operand%s, got %u",
                       op_tok->line, op_name, min_ops, min_ops == 1 ? "" : "s", n_operands);
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: %s takes at least %d operands, got %u",
                     op_tok->line, op_name, min_ops, n_operands);
  }
  uint32_t n_attrs = 0;
  ACCY_TRY(build_attrs(st, op, op_name, n_operands, op_tok->line, &n_attrs));
  if (has_type && !has_dims) {
    /* A bare dtype: the dims follow from the operand. */
    if (op != ACCY_OP_CONVERT && op != ACCY_OP_ARGMAX && op != ACCY_OP_ARGMIN &&
        op != ACCY_OP_ARGSORT)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "line %u: bad type: %s needs a full type like %s[2,3]; a bare dtype is "
                       "only for convert, argmax, argmin and argsort",
                       op_tok->line, op_name, accy__dtype_name(declared.dtype));
    int32_t dtype = declared.dtype;
    const accy__type *x = &p->nodes[st->operands[0]].type;
    declared = *x;
    declared.dtype = dtype;
    if (op != ACCY_OP_CONVERT && n_attrs == 1 && st->attrs[0] >= 0 &&
        st->attrs[0] < (int64_t)x->rank) {
      uint32_t axis = (uint32_t)st->attrs[0];
      for (uint32_t i = axis; i + 1 < x->rank; i++) declared.dims[i] = x->dims[i + 1];
      declared.dims[x->rank - 1] = 0;
      declared.rank = x->rank - 1;
    }
  }
  accy__type type;
  ACCY_TRY_CTX(accy__infer_type(p, op, st->operands, n_operands, st->attrs, n_attrs,
                                has_type ? &declared : NULL, &type),
               "line %u: %s: ", def->line, op_name);
  return accy__program_add_node(p, op, &type, st->operands, n_operands, st->attrs, n_attrs, NULL,
                                0, NULL, 0, NULL);
}

static accy_status parse_definition(asm_state *st, const token *def) {
  lexer *lx = &st->lx;
  token t;
  char d[64];
  ACCY_TRY(expect_punct(lx, '=', "after the value name"));
  ACCY_TRY(lex_next(lx, &t));
  if (t.kind != TOK_IDENT)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: expected an op name, found %s",
                     t.line, tok_describe(&t, d, sizeof d));
  uint16_t op = accy__op_from_name(t.s, t.n);
  if (!op)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: unknown op '%.*s'", t.line,
                     (int)(t.n > 32 ? 32 : t.n), t.s);
  if (op == ACCY_OP_PARAMETER || op == ACCY_OP_CONSTANT)
    ACCY_TRY(parse_leaf(st, def, op));
  else
    ACCY_TRY(parse_op(st, def, &t, op));
  ACCY_TRY(note_line(st, def->line));
  return sym_define(st, def, st->program.n_nodes - 1);
}

static accy_status parse_output(asm_state *st, const token *kw) {
  lexer *lx = &st->lx;
  token v, t;
  char d[64];
  ACCY_TRY(lex_next(lx, &v));
  if (v.kind != TOK_VALUE)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: output needs a value (%%name), found %s",
                     kw->line, tok_describe(&v, d, sizeof d));
  uint32_t node;
  ACCY_TRY(sym_lookup(st, &v, &node));
  ACCY_TRY(lex_peek(lx, &t));
  char name[ACCY_MAX_NAME_BYTES + 1];
  size_t len;
  if (t.kind == TOK_STRING) {
    ACCY_TRY(parse_name_string(lx, name, &len, "output"));
  } else {
    /* No name given: the value's own name, without the '%'. */
    len = v.n - 1 > ACCY_MAX_NAME_BYTES ? ACCY_MAX_NAME_BYTES : v.n - 1;
    memcpy(name, v.s + 1, len);
    name[len] = '\0';
  }
  return accy__program_add_output(&st->program, node, name, len);
}

static accy_status parse_statements(asm_state *st) {
  lexer *lx = &st->lx;
  token t;
  char d[64];
  for (;;) {
    ACCY_TRY(lex_next(lx, &t));
    if (t.kind == TOK_EOF) return ACCY_STATUS_OK;
    if (t.kind == TOK_NEWLINE) continue;
    if (t.kind == TOK_VALUE) {
      ACCY_TRY(parse_definition(st, &t));
    } else if (tok_is(&t, TOK_IDENT, "output")) {
      ACCY_TRY(parse_output(st, &t));
    } else {
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "line %u: expected '%%name = op ...' or 'output %%name', found %s", t.line,
                       tok_describe(&t, d, sizeof d));
    }
    ACCY_TRY(lex_next(lx, &t));
    if (t.kind != TOK_NEWLINE && t.kind != TOK_EOF)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: unexpected %s at the end of the line",
                       t.line, tok_describe(&t, d, sizeof d));
    if (t.kind == TOK_EOF) return ACCY_STATUS_OK;
  }
}

/* The source line of node |node| (UINT32_MAX: none): where a whole-program
 * verify failure points. */
static uint32_t line_of_node(const asm_state *st, uint32_t node) {
  if (node < st->program.n_nodes && st->node_line) return st->node_line[node];
  return st->lx.line;
}

accy_status accy_text_assemble(const char *text, size_t length, const char *base_dir,
                               void **out_bytes, size_t *out_size) {
  accy_text_options o = {sizeof o, 0, base_dir};
  return accy_text_assemble_with(text, length, &o, out_bytes, out_size);
}

accy_status accy_text_assemble_with(const char *text, size_t length,
                                    const accy_text_options *options, void **out_bytes,
                                    size_t *out_size) {
  if (out_bytes) *out_bytes = NULL;
  if (out_size) *out_size = 0;
  if (!out_bytes || !out_size || (!text && length))
    return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER,
                     "accy_text_assemble: text, out_bytes or out_size is NULL");
  const char *base_dir = NULL;
  uint32_t flags = 0;
  if (options) {
    if (options->struct_size < offsetof(accy_text_options, base_dir) + sizeof(const char *))
      return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER,
                       "accy_text_assemble_with: options struct_size %u is too small",
                       options->struct_size);
    flags = options->flags;
    base_dir = options->base_dir;
    if (flags & ~(uint32_t)ACCY_TEXT_NO_FILES)
      return ACCY_FAIL(ACCY_STATUS_INVALID_BUFFER,
                       "accy_text_assemble_with: unknown flags 0x%x", flags & ~(uint32_t)ACCY_TEXT_NO_FILES);
  }
  asm_state *st = accy__calloc(1, sizeof *st);
  if (!st) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for the assembler");
  st->lx.text = text ? text : "";
  st->lx.length = length;
  st->lx.line = 1;
  st->base_dir = base_dir;
  st->flags = flags;
  accy__program_init(&st->program);
  accy_status s = parse_statements(st);
  if (s == ACCY_STATUS_OK && st->program.n_outputs == 0)
    s = ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                  "line %u: the program has no outputs (add 'output %%value \"name\"')",
                  st->lx.line);
  if (s == ACCY_STATUS_OK) {
    uint32_t bad_node;
    s = accy__verify_where(&st->program, &bad_node);
    if (s != ACCY_STATUS_OK) accy__prefix_cause("line %u: ", line_of_node(st, bad_node));
  }
  if (s == ACCY_STATUS_OK) s = accy__wire_encode(&st->program, out_bytes, out_size);
  accy__program_free(&st->program);
  accy__free(st->syms);
  accy__free(st->node_line);
  accy__free(st);
  return s;
}
