/* src/text/lex.c: the lexer of the text form, and its readers of integers,
 * integer lists and types; see lex.h. */
#include "src/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/text/lex.h"

/* ---- lexer ---------------------------------------------------------------- */

static bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_ident_char(char c) {
  return is_ident_start(c) || accy__lex_is_digit(c) || c == '.';
}

accy_status accy__lex_next(accy__lexer *lx, accy__token *t) {
  if (lx->has_peek) {
    *t = lx->peeked;
    lx->has_peek = false;
    return ACCY_STATUS_OK;
  }
  const char *s = lx->text;
  for (;;) {
    if (lx->pos >= lx->length) {
      t->kind = ACCY__TOK_EOF;
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
        t->kind = ACCY__TOK_NEWLINE;
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
    t->kind = ACCY__TOK_IDENT;
  } else if (c == '%') {
    lx->pos++;
    while (lx->pos < lx->length && is_ident_char(s[lx->pos])) lx->pos++;
    if (lx->pos == start + 1)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: '%%' must be followed by a name",
                       lx->line);
    t->kind = ACCY__TOK_VALUE;
  } else if (accy__lex_is_digit(c) ||
             ((c == '-' || c == '+' || c == '.') && start + 1 < lx->length &&
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
    t->kind = ACCY__TOK_NUMBER;
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
    t->kind = ACCY__TOK_STRING;
    t->s = s + start + 1;
    t->n = lx->pos - start - 1;
    lx->pos++;
    return ACCY_STATUS_OK;
  } else if (strchr("=,[]:()", c) && c != '\0') {
    lx->pos++;
    t->kind = ACCY__TOK_PUNCT;
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

accy_status accy__lex_peek(accy__lexer *lx, accy__token *t) {
  if (!lx->has_peek) {
    ACCY_TRY(accy__lex_next(lx, &lx->peeked));
    lx->has_peek = true;
  }
  *t = lx->peeked;
  return ACCY_STATUS_OK;
}

bool accy__tok_is(const accy__token *t, accy__tok_kind kind, const char *text) {
  size_t n = strlen(text);
  return t->kind == kind && t->n == n && memcmp(t->s, text, n) == 0;
}
bool accy__tok_punct(const accy__token *t, char c) {
  return t->kind == ACCY__TOK_PUNCT && t->n == 1 && t->s[0] == c;
}

const char *accy__tok_describe(const accy__token *t, char *buf, size_t size) {
  switch (t->kind) {
    case ACCY__TOK_EOF:
      return "end of text";
    case ACCY__TOK_NEWLINE:
      return "end of line";
    case ACCY__TOK_STRING:
      snprintf(buf, size, "string \"%.*s\"", (int)(t->n > 32 ? 32 : t->n), t->s);
      return buf;
    default:
      snprintf(buf, size, "'%.*s'", (int)(t->n > 32 ? 32 : t->n), t->s);
      return buf;
  }
}

accy_status accy__lex_expect(accy__lexer *lx, char c, const char *context) {
  accy__token t;
  ACCY_TRY(accy__lex_next(lx, &t));
  if (!accy__tok_punct(&t, c)) {
    char buf[64];
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: expected '%c' %s, found %s", t.line,
                     c, context, accy__tok_describe(&t, buf, sizeof buf));
  }
  return ACCY_STATUS_OK;
}

accy_status accy__tok_string(const accy__token *t, char *buf, size_t cap, size_t *out_len) {
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

accy_status accy__tok_cstr(const accy__token *t, char *buf, size_t cap) {
  if (t->n >= cap)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: number '%.32s...' is too long",
                     t->line, t->s);
  memcpy(buf, t->s, t->n);
  buf[t->n] = '\0';
  return ACCY_STATUS_OK;
}

/* Parses an integer token: decimal or 0x hex, optional sign. The magnitude
 * goes to *mag (up to UINT64_MAX), the sign to *neg. */
accy_status accy__tok_int(const accy__token *t, bool *neg, uint64_t *mag) {
  char buf[ACCY__TEXT_NUMBER_CHARS];
  if (t->kind != ACCY__TOK_NUMBER) {
    char d[64];
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: expected an integer, found %s",
                     t->line, accy__tok_describe(t, d, sizeof d));
  }
  ACCY_TRY(accy__tok_cstr(t, buf, sizeof buf));
  const char *p = buf;
  *neg = false;
  if (*p == '-' || *p == '+') *neg = *p++ == '-';
  int base = 10;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    base = 16;
    p += 2;
  }
  if (!*p || !(accy__lex_is_digit(*p) || (base == 16 && strchr("abcdefABCDEF", *p))))
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

accy_status accy__tok_i64(const accy__token *t, int64_t *out) {
  bool neg;
  uint64_t mag;
  ACCY_TRY(accy__tok_int(t, &neg, &mag));
  if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: '%.*s' does not fit in int64",
                     t->line, (int)t->n, t->s);
  *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
  return ACCY_STATUS_OK;
}

accy_status accy__lex_i64(accy__lexer *lx, int64_t *out) {
  accy__token t;
  ACCY_TRY(accy__lex_next(lx, &t));
  return accy__tok_i64(&t, out);
}

accy_status accy__lex_int_list(accy__lexer *lx, int64_t *out, uint32_t cap, uint32_t *n_out,
                               const char *what, bool *too_many) {
  accy__token t;
  uint32_t n = 0;
  if (too_many) *too_many = false;
  ACCY_TRY(accy__lex_expect(lx, '[', what));
  ACCY_TRY(accy__lex_peek(lx, &t));
  if (accy__tok_punct(&t, ']')) {
    ACCY_TRY(accy__lex_next(lx, &t));
    *n_out = 0;
    return ACCY_STATUS_OK;
  }
  for (;;) {
    ACCY_TRY(accy__lex_next(lx, &t));
    if (n >= cap) {
      if (too_many) *too_many = true;
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: more than %u values in %s",
                       t.line, cap, what);
    }
    ACCY_TRY(accy__tok_i64(&t, &out[n]));
    n++;
    ACCY_TRY(accy__lex_next(lx, &t));
    if (accy__tok_punct(&t, ']')) break;
    if (!accy__tok_punct(&t, ',')) {
      char d[64];
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: expected ',' or ']' in %s, found %s",
                       t.line, what, accy__tok_describe(&t, d, sizeof d));
    }
  }
  *n_out = n;
  return ACCY_STATUS_OK;
}

/* ---- types ---------------------------------------------------------------- */

static int32_t dtype_from_token(const accy__token *t) {
  for (int32_t d = 1; d <= ACCY_DTYPE_BOOL; d++) {
    const char *name = accy__dtype_name(d);
    if (strlen(name) == t->n && memcmp(name, t->s, t->n) == 0) return d;
  }
  return 0;
}

accy_status accy__lex_type(accy__lexer *lx, accy__type *out, bool *has_dims) {
  accy__token t;
  ACCY_TRY(accy__lex_next(lx, &t));
  memset(out, 0, sizeof *out);
  out->dtype = t.kind == ACCY__TOK_IDENT ? dtype_from_token(&t) : 0;
  if (!out->dtype) {
    char d[64];
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "line %u: bad type: %s is not a dtype (f32 f64 f16 bf16 i8 i16 i32 i64 u8 "
                     "u16 u32 u64 bool)",
                     t.line, accy__tok_describe(&t, d, sizeof d));
  }
  ACCY_TRY(accy__lex_peek(lx, &t));
  *has_dims = accy__tok_punct(&t, '[');
  if (!*has_dims) return ACCY_STATUS_OK;
  int64_t dims[ACCY_MAX_RANK];
  uint32_t n = 0;
  accy__token open = t;
  bool too_many;
  accy_status s = accy__lex_int_list(lx, dims, ACCY_MAX_RANK, &n, "type dims", &too_many);
  if (s != ACCY_STATUS_OK) {
    /* Rank overflow reads better as a type error than as a list error. */
    if (too_many)
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
