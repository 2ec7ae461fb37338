/* src/text/attrs.c: the named attributes of the text form -> an op's flat
 * attrs, driven by the op's attribute schema (src/ir/op_traits.c), so that
 * the assembler and the disassembler (src/text/dis.c) read one description
 * of every layout. */
#include "src/internal.h"

#include <stdio.h>
#include <string.h>

#include "src/text/text.h"

/* ---- parsing ----------------------------------------------------------------- */

static int keyword_index(const accy__token *t, const accy__attr_words *w) {
  for (uint32_t i = 0; i < w->n; i++) {
    size_t n = strlen(w->words[i]);
    if (n != t->n) continue;
    size_t k = 0;
    while (k < n && (t->s[k] | 0x20) == (w->words[i][k] | 0x20)) k++;
    if (k == n) return (int)i;
  }
  return -1;
}

/* The keyword field of |op|'s schema, or NULL. */
static const accy__attr_field *keyword_field(uint16_t op) {
  const accy__op_trait *t = accy__op_trait_of(op);
  if (!t) return NULL;
  for (uint32_t i = 0; i < t->attrs->n_fields; i++)
    if (t->attrs->fields[i].kind == ACCY__ATTR_KEYWORD) return &t->attrs->fields[i];
  return NULL;
}

void accy__attr_set_reset(accy__attr_set *a) {
  a->n_items = 0;
  a->pool_used = 0;
  a->keyword = -1;
}

accy_status accy__attr_parse_keyword(accy__lexer *lx, uint16_t op, accy__attr_set *a) {
  const accy__attr_field *f = keyword_field(op);
  if (!f) return ACCY_STATUS_OK;
  accy__token t;
  ACCY_TRY(accy__lex_peek(lx, &t));
  if (t.kind != ACCY__TOK_IDENT || accy__tok_is(&t, ACCY__TOK_IDENT, "attrs"))
    return ACCY_STATUS_OK;
  accy__lex_skip(lx);
  int k = keyword_index(&t, f->words);
  if (k < 0) {
    char d[64], list[96] = "";
    for (uint32_t i = 0; i < f->words->n; i++) {
      if (i) strncat(list, " ", sizeof list - strlen(list) - 1);
      strncat(list, f->words->words[i], sizeof list - strlen(list) - 1);
    }
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: bad attribute: unknown %s %s %s (%s)",
                     t.line, accy__op_name(op), f->words->noun,
                     accy__tok_describe(&t, d, sizeof d), list);
  }
  a->keyword = k;
  return ACCY_STATUS_OK;
}

accy_status accy__attr_parse(accy__lexer *lx, accy__attr_set *a, const accy__token *name) {
  for (uint32_t i = 0; i < a->n_items; i++)
    if (a->items[i].name_len == name->n && memcmp(a->items[i].name, name->s, name->n) == 0)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: attribute '%.*s' given twice",
                       name->line, (int)(name->n > 32 ? 32 : name->n), name->s);
  if (a->n_items >= ACCY__TEXT_MAX_NAMED_ATTRS)
    return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: more than %d attributes",
                     name->line, ACCY__TEXT_MAX_NAMED_ATTRS);
  char ctx[64];
  snprintf(ctx, sizeof ctx, "after '%.*s'", (int)(name->n > 32 ? 32 : name->n), name->s);
  ACCY_TRY(accy__lex_expect(lx, '=', ctx));
  accy__attr_item *it = &a->items[a->n_items];
  memset(it, 0, sizeof *it);
  it->name = name->s;
  it->name_len = name->n;
  it->line = name->line;
  accy__token t;
  ACCY_TRY(accy__lex_peek(lx, &t));
  if (accy__tok_punct(&t, '[')) {
    snprintf(ctx, sizeof ctx, "attribute '%.*s'", (int)(name->n > 32 ? 32 : name->n), name->s);
    it->is_list = true;
    it->list = a->pool + a->pool_used;
    ACCY_TRY(accy__lex_int_list(lx, a->pool + a->pool_used, ACCY_MAX_ATTRS - a->pool_used,
                                &it->n, ctx, NULL));
    a->pool_used += it->n;
  } else {
    ACCY_TRY(accy__lex_i64(lx, &it->value));
  }
  a->n_items++;
  return ACCY_STATUS_OK;
}

/* ---- building the flat attrs -------------------------------------------------- */

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

static accy__attr_item *find_attr(accy__attr_set *a, const char *name) {
  size_t n = strlen(name);
  for (uint32_t i = 0; i < a->n_items; i++)
    if (a->items[i].name_len == n && memcmp(a->items[i].name, name, n) == 0) {
      a->items[i].used = true;
      return &a->items[i];
    }
  return NULL;
}

/* Appends scalar attribute |name| (or |def| when absent and not required). */
static accy_status take_scalar(accy__attr_set *a, attr_out *o, const char *name, bool required,
                               int64_t def) {
  accy__attr_item *it = find_attr(a, name);
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

/* Appends list attribute |name|. |len| < 0: any length; else exactly |len|
 * values, filled with |def| when absent. */
static accy_status take_list(accy__attr_set *a, attr_out *o, const char *name, bool required,
                             int64_t len, int64_t def) {
  accy__attr_item *it = find_attr(a, name);
  if (!it) {
    if (required)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: %s needs %s=[...]", o->line,
                       o->op_name, name);
    for (int64_t i = 0; i < (len < 0 ? 0 : len); i++) ACCY_TRY(push(o, def));
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
  return ACCY_STATUS_OK;
}

/* A PAIR field's two lists, which must both be lists when given. */
static accy_status find_pair(accy__attr_set *a, const accy__attr_field *f, const char *op_name,
                             accy__attr_item **lhs, accy__attr_item **rhs) {
  *lhs = find_attr(a, f->name);
  *rhs = find_attr(a, f->name2);
  accy__attr_item *both[2] = {*lhs, *rhs};
  for (int i = 0; i < 2; i++)
    if (both[i] && !both[i]->is_list)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: bad attribute: %s %.*s takes a list",
                       both[i]->line, op_name, (int)both[i]->name_len, both[i]->name);
  return ACCY_STATUS_OK;
}

static bool same_name(const char *name, const char *w, size_t n) {
  return name && strlen(name) == n && memcmp(name, w, n) == 0;
}

/* Whether |schema| spells an attribute |w| (|n| bytes). */
static bool schema_has(const accy__attr_schema *schema, const char *w, size_t n) {
  for (uint32_t i = 0; i < schema->n_fields; i++)
    if (same_name(schema->fields[i].name, w, n) || same_name(schema->fields[i].name2, w, n))
      return true;
  return false;
}

/* The spelt names of |schema| in layout order, space-separated ("" for
 * none), into |buf|. */
static const char *schema_names(const accy__attr_schema *schema, char *buf, size_t size) {
  buf[0] = '\0';
  for (uint32_t i = 0; i < schema->n_fields; i++) {
    const char *names[2] = {schema->fields[i].name, schema->fields[i].name2};
    for (int k = 0; k < 2; k++) {
      if (!names[k]) continue;
      if (buf[0]) strncat(buf, " ", size - strlen(buf) - 1);
      strncat(buf, names[k], size - strlen(buf) - 1);
    }
  }
  return buf;
}

accy_status accy__attr_build(accy__attr_set *a, uint16_t op, uint32_t rank0, uint32_t line,
                             int64_t *out, uint32_t *n_out) {
  const accy__op_trait *trait = accy__op_trait_of(op);
  const char *op_name = trait->name;
  const accy__attr_schema *schema = trait->attrs;
  attr_out o = {out, 0, line, op_name};
  accy__attr_item *raw = find_attr(a, "attrs");
  if (raw) {
    if (a->n_items != 1 || a->keyword >= 0)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "line %u: %s: attrs=[...] cannot be combined with other attributes",
                       line, op_name);
    if (!raw->is_list)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM, "line %u: bad attribute: attrs takes a list",
                       raw->line);
    for (uint32_t i = 0; i < raw->n; i++) ACCY_TRY(push(&o, raw->list[i]));
    *n_out = o.n;
    return ACCY_STATUS_OK;
  }
  /* Unknown names first: a misspelt attribute explains a "missing" one. */
  for (uint32_t i = 0; i < a->n_items; i++) {
    const accy__attr_item *it = &a->items[i];
    char names[160];
    if (!schema_has(schema, it->name, it->name_len))
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "line %u: bad attribute: %s has no attribute '%.*s' (it takes: %s)",
                       it->line, op_name, (int)(it->name_len > 32 ? 32 : it->name_len), it->name,
                       schema_names(schema, names, sizeof names)[0] ? names : "none");
  }
  /* Every list of a pair must be a list before any pair's lengths are
   * compared. */
  for (uint32_t i = 0; i < schema->n_fields; i++) {
    accy__attr_item *lhs, *rhs;
    if (schema->fields[i].kind == ACCY__ATTR_PAIR)
      ACCY_TRY(find_pair(a, &schema->fields[i], op_name, &lhs, &rhs));
  }
  int64_t spatial = 0;
  for (uint32_t i = 0; i < schema->n_fields; i++) {
    const accy__attr_field *f = &schema->fields[i];
    switch (f->kind) {
      case ACCY__ATTR_KEYWORD:
        if (a->keyword < 0) {
          char list[96] = "";
          for (uint32_t w = 0; w < f->words->n; w++) {
            if (w) strncat(list, " ", sizeof list - strlen(list) - 1);
            strncat(list, f->words->words[w], sizeof list - strlen(list) - 1);
          }
          return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                           "line %u: %s needs a %s (%s) before the operand%s", line, op_name,
                           f->words->noun, list, trait->max_operands == 1 ? "" : "s");
        }
        ACCY_TRY(push(&o, a->keyword));
        break;
      case ACCY__ATTR_SCALAR:
        ACCY_TRY(take_scalar(a, &o, f->name, f->required, f->def));
        break;
      case ACCY__ATTR_LIST: {
        int64_t len = f->len == ACCY__LEN_RANK      ? (int64_t)rank0
                      : f->len == ACCY__LEN_SPATIAL ? spatial
                                                    : -1;
        ACCY_TRY(take_list(a, &o, f->name, f->required, len, f->def));
        break;
      }
      case ACCY__ATTR_PAIR: {
        /* n is the lists' length; it is written before them. */
        accy__attr_item *lhs, *rhs;
        ACCY_TRY(find_pair(a, f, op_name, &lhs, &rhs));
        uint32_t n = lhs ? lhs->n : 0, n2 = rhs ? rhs->n : 0;
        if (n2 != n)
          return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                           "line %u: bad attribute: %s %s has %u axes, %s %u", line, op_name,
                           f->name, n, f->name2, n2);
        ACCY_TRY(push(&o, n));
        for (uint32_t k = 0; k < n; k++) ACCY_TRY(push(&o, lhs->list[k]));
        for (uint32_t k = 0; k < n; k++) ACCY_TRY(push(&o, rhs->list[k]));
        break;
      }
      case ACCY__ATTR_SPATIAL:
        if (rank0 < 3 || rank0 > 5)
          return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                           "line %u: %s: lhs has rank %u; it needs 3 to 5 (N, C and 1 to 3 "
                           "spatial axes)",
                           line, op_name, rank0);
        spatial = (int64_t)rank0 - 2;
        ACCY_TRY(push(&o, spatial));
        break;
    }
  }
  for (uint32_t i = 0; i < a->n_items; i++)
    if (!a->items[i].used)
      return ACCY_FAIL(ACCY_STATUS_INVALID_PROGRAM,
                       "line %u: bad attribute: %s has no attribute '%.*s'", a->items[i].line,
                       op_name, (int)(a->items[i].name_len > 32 ? 32 : a->items[i].name_len),
                       a->items[i].name);
  *n_out = o.n;
  return ACCY_STATUS_OK;
}
