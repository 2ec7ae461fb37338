/* src/text/lex.h: the lexer of the text form (docs/text-format.md) and the
 * readers built directly on it: integers, integer lists and types.
 *
 * The text is untrusted: the lexer reads only within |length| and every
 * failure is INVALID_PROGRAM with a "line N: ..." cause. Tokens point into
 * the text; nothing here allocates. */
#ifndef ACCY_TEXT_LEX_H
#define ACCY_TEXT_LEX_H

#include "src/internal.h"
#include "src/ir/ir.h"

/* Longest number token accepted. */
#define ACCY__TEXT_NUMBER_CHARS 80

typedef enum accy__tok_kind {
  ACCY__TOK_EOF,
  ACCY__TOK_NEWLINE,
  ACCY__TOK_IDENT,  /* [A-Za-z_][A-Za-z0-9_.]* */
  ACCY__TOK_VALUE,  /* %name */
  ACCY__TOK_NUMBER, /* sign, digits, letters, '.', exponent signs */
  ACCY__TOK_STRING, /* "..." (s/n: the raw bytes between the quotes) */
  ACCY__TOK_PUNCT   /* one of = , [ ] : ( ) */
} accy__tok_kind;

typedef struct accy__token {
  accy__tok_kind kind;
  const char *s; /* into the text */
  size_t n;
  uint32_t line;
} accy__token;

typedef struct accy__lexer {
  const char *text;
  size_t length;
  size_t pos;
  uint32_t line;
  int depth; /* open '[' and '(': newlines inside them do not end a statement */
  bool has_peek;
  accy__token peeked;
} accy__lexer;

static inline bool accy__lex_is_digit(char c) { return c >= '0' && c <= '9'; }

/* The next token (consumed), or the one accy__lex_peek saw. */
ACCY_NODISCARD accy_status accy__lex_next(accy__lexer *lx, accy__token *t);
/* The next token, not consumed. */
ACCY_NODISCARD accy_status accy__lex_peek(accy__lexer *lx, accy__token *t);
/* Consumes the token accy__lex_peek just returned (cannot fail). */
static inline void accy__lex_skip(accy__lexer *lx) { lx->has_peek = false; }
/* Consumes the punctuation |c| or fails with "expected 'c' <context>". */
ACCY_NODISCARD accy_status accy__lex_expect(accy__lexer *lx, char c, const char *context);

bool accy__tok_is(const accy__token *t, accy__tok_kind kind, const char *text);
bool accy__tok_punct(const accy__token *t, char c);
/* A short printable description of a token for messages ("'x'", "end of
 * line"), bounded because the text is the caller's. Returns |buf| or a
 * constant. */
const char *accy__tok_describe(const accy__token *t, char *buf, size_t size);
/* Decodes a string token's escapes into |buf| (|cap| bytes, NUL-terminated;
 * *out_len excludes the NUL). */
ACCY_NODISCARD accy_status accy__tok_string(const accy__token *t, char *buf, size_t cap,
                                            size_t *out_len);
/* Copies a number or identifier token into a NUL-terminated buffer. */
ACCY_NODISCARD accy_status accy__tok_cstr(const accy__token *t, char *buf, size_t cap);
/* Parses an integer token: decimal or 0x hex, optional sign. The magnitude
 * goes to *mag (up to UINT64_MAX), the sign to *neg. */
ACCY_NODISCARD accy_status accy__tok_int(const accy__token *t, bool *neg, uint64_t *mag);
/* An integer token that fits in int64. */
ACCY_NODISCARD accy_status accy__tok_i64(const accy__token *t, int64_t *out);
/* The next token as an int64. */
ACCY_NODISCARD accy_status accy__lex_i64(accy__lexer *lx, int64_t *out);
/* Parses '[' int (',' int)* ']' (possibly empty) into |out| (at most |cap|
 * values). |what| names the list in causes. *too_many (may be NULL) tells
 * whether a failure was the list being longer than |cap|. */
ACCY_NODISCARD accy_status accy__lex_int_list(accy__lexer *lx, int64_t *out, uint32_t cap,
                                              uint32_t *n_out, const char *what,
                                              bool *too_many);
/* Parses dtype ['[' dims ']'], dims within the limits. *has_dims false
 * means a bare dtype. */
ACCY_NODISCARD accy_status accy__lex_type(accy__lexer *lx, accy__type *out, bool *has_dims);

#endif /* ACCY_TEXT_LEX_H */
