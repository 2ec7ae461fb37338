/* src/text/constants.c: the element values of constants in the text form,
 * written inline or read from a file (docs/text-format.md, "Parameters and
 * constants"), and the one float conversion that the assembler and the
 * disassembler share. */
#include "src/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/base/half.h"
#include "src/text/files.h"
#include "src/text/text.h"

/* Longest string accepted (file paths included). */
#define STRING_BYTES 4096

/* ---- float conversion ------------------------------------------------------ */

uint64_t accy__text_float_bits(int32_t dtype, double d) {
  switch (dtype) {
    case ACCY_DTYPE_F64: {
      uint64_t u;
      memcpy(&u, &d, 8);
      return u;
    }
    case ACCY_DTYPE_F32:
      return accy__f32_bits((float)d);
    case ACCY_DTYPE_F16:
      return accy__f32_to_f16(accy__f64_to_f32_odd(d));
    case ACCY_DTYPE_BF16:
      return accy__f32_to_bf16(accy__f64_to_f32_odd(d));
  }
  return 0;
}

/* ---- values ------------------------------------------------------------------ */

static void store_le(uint8_t *dst, uint64_t bits, size_t size) {
  for (size_t i = 0; i < size; i++) dst[i] = (uint8_t)(bits >> (8 * i));
}

/* Parses one element of |dtype| from |t| (and the tokens after it, for
 * bits(...)) into little-endian bytes at |dst|. */
static accy_status parse_element(accy__lexer *lx, const accy__token *t, int32_t dtype,
                                 uint8_t *dst) {
  size_t size = accy__dtype_size(dtype);
  char buf[ACCY__TEXT_NUMBER_CHARS];
  if (dtype == ACCY_DTYPE_BOOL) {
    if (accy__tok_is(t, ACCY__TOK_IDENT, "true") || accy__tok_is(t, ACCY__TOK_NUMBER, "1")) {
      dst[0] = 1;
    } else if (accy__tok_is(t, ACCY__TOK_IDENT, "false") ||
               accy__tok_is(t, ACCY__TOK_NUMBER, "0")) {
      dst[0] = 0;
    } else {
      char d[64];
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "line %u: bad bool value %s (use true, false, 1 or 0)", t->line,
                       accy__tok_describe(t, d, sizeof d));
    }
    return ACCY_STATUS_OK;
  }
  if (accy__dtype_is_float(dtype)) {
    if (accy__tok_is(t, ACCY__TOK_IDENT, "bits")) {
      accy__token v;
      ACCY_TRY(accy__lex_expect(lx, '(', "after bits"));
      ACCY_TRY(accy__lex_next(lx, &v));
      bool neg;
      uint64_t mag;
      ACCY_TRY(accy__tok_int(&v, &neg, &mag));
      if (neg || (size < 8 && mag >> (8 * size)))
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                         "line %u: bits(%.*s) does not fit in %zu bytes of %s", v.line,
                         (int)(v.n > 32 ? 32 : v.n), v.s, size, accy__dtype_name(dtype));
      ACCY_TRY(accy__lex_expect(lx, ')', "after bits(..."));
      store_le(dst, mag, size);
      return ACCY_STATUS_OK;
    }
    double d;
    uint64_t bits;
    if (t->kind != ACCY__TOK_NUMBER && t->kind != ACCY__TOK_IDENT) {
      char dd[64];
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: expected a number, found %s",
                       t->line, accy__tok_describe(t, dd, sizeof dd));
    }
    ACCY_TRY(accy__tok_cstr(t, buf, sizeof buf));
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
      if (!(accy__lex_is_digit(*p) || *p == '.')) {
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
  ACCY_TRY(accy__tok_int(t, &neg, &mag));
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
static accy_status parse_values(accy__lexer *lx, int32_t dtype, uint8_t *payload, uint64_t count,
                                const char *name) {
  size_t size = accy__dtype_size(dtype);
  uint8_t first[8] = {0};
  uint64_t n = 0;
  accy__token t, open;
  ACCY_TRY(accy__lex_next(lx, &open)); /* the caller peeked '[' */
  ACCY_TRY(accy__lex_next(lx, &t));
  if (!accy__tok_punct(&t, ']')) {
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
      ACCY_TRY(accy__lex_next(lx, &t));
      if (accy__tok_punct(&t, ']')) break;
      if (!accy__tok_punct(&t, ',')) {
        char d[64];
        return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                         "line %u: expected ',' or ']' in the values of '%.64s', found %s",
                         t.line, name, accy__tok_describe(&t, d, sizeof d));
      }
      ACCY_TRY(accy__lex_next(lx, &t));
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

static accy_status read_constant_file(const char *base_dir, uint32_t flags,
                                      const accy__token *path_tok, bool has_offset,
                                      int64_t offset, uint8_t *payload, uint64_t need,
                                      const char *name) {
  char rel[STRING_BYTES];
  size_t rel_len;
  uint32_t line = path_tok->line;
  ACCY_TRY(accy__tok_string(path_tok, rel, sizeof rel, &rel_len));
  if (flags & ACCY_TEXT_NO_FILES)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "line %u: constant '%.64s': file constants are not allowed here "
                     "(ACCY_TEXT_NO_FILES)",
                     line, name);
  if (offset < 0)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: negative offset %lld", line,
                     (long long)offset);
  int fd;
  uint64_t file_size;
  ACCY_TRY(accy__text_open_confined(base_dir, rel, rel_len, line, &fd, &file_size));
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

accy_status accy__text_constant_data(accy__lexer *lx, const accy__type *type, const char *name,
                                     uint32_t def_line, const char *base_dir, uint32_t flags,
                                     uint8_t *payload, uint64_t need) {
  uint64_t count = 0;
  (void)accy__type_elements(type, &count); /* accy__lex_type checked the limit */
  accy__token t;
  ACCY_TRY(accy__lex_peek(lx, &t));
  accy_status st_ok = ACCY_STATUS_OK;
  if (accy__tok_punct(&t, '[')) {
    st_ok = parse_values(lx, type->dtype, payload, count, name);
  } else if (accy__tok_is(&t, ACCY__TOK_IDENT, "file")) {
    accy__token path;
    accy__lex_skip(lx);
    st_ok = accy__lex_next(lx, &path);
    if (st_ok == ACCY_STATUS_OK && path.kind != ACCY__TOK_STRING)
      st_ok = ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: expected a file name \"...\" after file",
                        path.line);
    int64_t offset = 0;
    bool has_offset = false;
    if (st_ok == ACCY_STATUS_OK) st_ok = accy__lex_peek(lx, &t);
    if (st_ok == ACCY_STATUS_OK && accy__tok_is(&t, ACCY__TOK_IDENT, "offset")) {
      accy__lex_skip(lx);
      has_offset = true;
      st_ok = accy__lex_i64(lx, &offset);
    }
    if (st_ok == ACCY_STATUS_OK)
      st_ok = read_constant_file(base_dir, flags, &path, has_offset, offset, payload, need, name);
  } else {
    char d[64];
    st_ok = ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                      "line %u: constant '%.64s' needs values [...] or file \"...\", found %s",
                      t.line, name, accy__tok_describe(&t, d, sizeof d));
  }
  if (st_ok == ACCY_STATUS_OK && type->dtype == ACCY_DTYPE_BOOL) {
    for (uint64_t i = 0; i < need; i++)
      if (payload[i] > 1) {
        st_ok = ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                          "line %u: constant '%.64s': bool element %llu is byte %u, not 0 or 1",
                          def_line, name, (unsigned long long)i, payload[i]);
        break;
      }
  }
  return st_ok;
}
