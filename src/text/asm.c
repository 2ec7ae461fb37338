/* src/text/asm.c: the text form -> wire bytes (docs/text-format.md).
 *
 * A hand-written lexer (lex.c) and a recursive-descent parser build an
 * accy__program node by node, inferring each node's type as it goes (so a
 * mistake is reported at its own line), then verify and encode it. This
 * file holds the assembler's state, the statements and the ops; attributes
 * are built by attrs.c from each op's schema and constant values are read by
 * constants.c. Every failure is INVALID_PROGRAM "line N: ..." (or
 * OUT_OF_MEMORY); the text is untrusted and is only ever read within
 * |length|. */
#include "src/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/base/alloc.h"
#include "src/ir/ir.h"
#include "src/ir/verify.h"
#include "src/text/text.h"
#include "src/wire/wire.h"

/* ---- assembler state ------------------------------------------------------ */

typedef struct symbol {
  const char *name; /* into the text, without the '%'; NULL = empty slot */
  size_t len;
  uint32_t node;
  uint32_t line;
} symbol;

typedef struct asm_state {
  accy__lexer lx;
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
  accy__attr_set aset;
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

static accy_status sym_define(asm_state *st, const accy__token *t, uint32_t node) {
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

static accy_status sym_lookup(asm_state *st, const accy__token *t, uint32_t *node) {
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

/* ---- statements ----------------------------------------------------------- */

static accy_status parse_name_string(accy__lexer *lx, char *buf, size_t *len, const char *what) {
  accy__token t;
  ACCY_TRY(accy__lex_next(lx, &t));
  if (t.kind != ACCY__TOK_STRING) {
    char d[64];
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: expected the %s name as \"...\", found %s",
                     t.line, what, accy__tok_describe(&t, d, sizeof d));
  }
  ACCY_TRY(accy__tok_string(&t, buf, ACCY_MAX_NAME_BYTES + 1, len));
  if (*len == 0) return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: empty %s name", t.line, what);
  return ACCY_STATUS_OK;
}

static accy_status parse_leaf(asm_state *st, const accy__token *def, uint16_t op) {
  accy__lexer *lx = &st->lx;
  const char *what = op == ACCY_OP_PARAMETER ? "parameter" : "constant";
  char name[ACCY_MAX_NAME_BYTES + 1];
  size_t name_len;
  ACCY_TRY(parse_name_string(lx, name, &name_len, what));
  accy__token t;
  ACCY_TRY(accy__lex_next(lx, &t));
  if (!accy__tok_punct(&t, ':'))
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: %s '%.64s' needs a type (': f32[2,3]')",
                     t.line, what, name);
  accy__type type;
  bool has_dims;
  ACCY_TRY(accy__lex_type(lx, &type, &has_dims));
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
  /* Constant: values inline or from a file (constants.c). */
  uint64_t need = accy__type_bytes(&type);
  if (need > ACCY_MAX_CONSTANT_BYTES)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                     "line %u: constant '%.64s': %llu bytes exceed ACCY_MAX_CONSTANT_BYTES",
                     def->line, name, (unsigned long long)need);
  ACCY_TRY(accy__lex_peek(lx, &t));
  uint8_t *payload = accy__malloc(need ? (size_t)need : 1);
  if (!payload) return ACCY_FAIL(ACCY_STATUS_OUT_OF_MEMORY, "out of memory for constant data");
  accy_status st_ok = accy__text_constant_data(lx, &type, name, def->line, st->base_dir,
                                               st->flags, payload, need);
  if (st_ok == ACCY_STATUS_OK)
    st_ok = accy__program_add_node(p, op, &inferred, NULL, 0, NULL, 0, name, name_len, payload,
                                   need, NULL);
  accy__free(payload);
  return st_ok;
}

/* ---- ops ------------------------------------------------------------------ */

/* Parses the rest of '%v = OP ...' for ops other than parameter and constant. */
static accy_status parse_op(asm_state *st, const accy__token *def, const accy__token *op_tok,
                            uint16_t op) {
  accy__lexer *lx = &st->lx;
  accy__program *p = &st->program;
  const char *op_name = accy__op_name(op);
  accy__attr_set *a = &st->aset;
  accy__attr_set_reset(a);
  uint32_t n_operands = 0;
  bool has_type = false, has_dims = false;
  accy__type declared;
  accy__token t;
  char d[64];
  ACCY_TRY(accy__attr_parse_keyword(lx, op, a));
  for (;;) {
    ACCY_TRY(accy__lex_peek(lx, &t));
    if (t.kind == ACCY__TOK_NEWLINE || t.kind == ACCY__TOK_EOF) break;
    accy__lex_skip(lx);
    if (t.kind == ACCY__TOK_VALUE) {
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
    } else if (accy__tok_punct(&t, ',')) {
      continue;
    } else if (t.kind == ACCY__TOK_IDENT) {
      ACCY_TRY(accy__attr_parse(lx, a, &t));
    } else if (accy__tok_punct(&t, ':')) {
      ACCY_TRY(accy__lex_type(lx, &declared, &has_dims));
      has_type = true;
      break;
    } else {
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "line %u: expected an operand, an attribute or ':', found %s", t.line,
                       accy__tok_describe(&t, d, sizeof d));
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
  uint32_t rank0 = n_operands ? p->nodes[st->operands[0]].type.rank : 0;
  ACCY_TRY(accy__attr_build(a, op, rank0, op_tok->line, st->attrs, &n_attrs));
  if (has_type && !has_dims) {
    /* A bare dtype: the dims follow from the operand. */
    if (accy__op_trait_of(op)->result != ACCY__RESULT_DTYPE)
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

static accy_status parse_definition(asm_state *st, const accy__token *def) {
  accy__lexer *lx = &st->lx;
  accy__token t;
  char d[64];
  ACCY_TRY(accy__lex_expect(lx, '=', "after the value name"));
  ACCY_TRY(accy__lex_next(lx, &t));
  if (t.kind != ACCY__TOK_IDENT)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: expected an op name, found %s",
                     t.line, accy__tok_describe(&t, d, sizeof d));
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

static accy_status parse_output(asm_state *st, const accy__token *kw) {
  accy__lexer *lx = &st->lx;
  accy__token v, t;
  char d[64];
  ACCY_TRY(accy__lex_next(lx, &v));
  if (v.kind != ACCY__TOK_VALUE)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: output needs a value (%%name), found %s",
                     kw->line, accy__tok_describe(&v, d, sizeof d));
  uint32_t node;
  ACCY_TRY(sym_lookup(st, &v, &node));
  ACCY_TRY(accy__lex_peek(lx, &t));
  char name[ACCY_MAX_NAME_BYTES + 1];
  size_t len;
  if (t.kind == ACCY__TOK_STRING) {
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
  accy__lexer *lx = &st->lx;
  accy__token t;
  char d[64];
  for (;;) {
    ACCY_TRY(accy__lex_next(lx, &t));
    if (t.kind == ACCY__TOK_EOF) return ACCY_STATUS_OK;
    if (t.kind == ACCY__TOK_NEWLINE) continue;
    if (t.kind == ACCY__TOK_VALUE) {
      ACCY_TRY(parse_definition(st, &t));
    } else if (accy__tok_is(&t, ACCY__TOK_IDENT, "output")) {
      ACCY_TRY(parse_output(st, &t));
    } else {
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "line %u: expected '%%name = op ...' or 'output %%name', found %s", t.line,
                       accy__tok_describe(&t, d, sizeof d));
    }
    ACCY_TRY(accy__lex_next(lx, &t));
    if (t.kind != ACCY__TOK_NEWLINE && t.kind != ACCY__TOK_EOF)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: unexpected %s at the end of the line",
                       t.line, accy__tok_describe(&t, d, sizeof d));
    if (t.kind == ACCY__TOK_EOF) return ACCY_STATUS_OK;
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
