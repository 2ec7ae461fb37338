/* src/text/text.h: the pieces of the text form (docs/text-format.md) that
 * its files share. The assembler (asm.c: statements and ops) reads tokens
 * through lex.h, builds attributes with attrs.c and constant payloads with
 * constants.c, and opens file constants through files.h; the disassembler
 * (dis.c) shares the float conversion with it. */
#ifndef ACCY_TEXT_TEXT_H
#define ACCY_TEXT_TEXT_H

#include "src/internal.h"
#include "src/ir/ir.h"
#include "src/text/lex.h"

/* ---- floats (constants.c) ------------------------------------------------------ */

/* Converts |d| to the bit pattern of a float dtype, rounding to nearest even
 * exactly once. The disassembler prints the shortest decimal that this
 * function maps back to the same bits, so both sides use this one
 * conversion. */
uint64_t accy__text_float_bits(int32_t dtype, double d);

/* ---- constants (constants.c) ---------------------------------------------------- */

/* Parses the values of constant |name| of |type| that follow its type on
 * line |def_line|: '[' values ']' (one value fills every element) or
 * file "PATH" [offset N] under |base_dir| (refused with ACCY_TEXT_NO_FILES
 * in |flags|), into |payload| (|need| bytes). */
ACCY_NODISCARD accy_status accy__text_constant_data(accy__lexer *lx, const accy__type *type,
                                                    const char *name, uint32_t def_line,
                                                    const char *base_dir, uint32_t flags,
                                                    uint8_t *payload, uint64_t need);

/* ---- attributes (attrs.c) --------------------------------------------------------- */

/* Most key=value attributes on one line. */
#define ACCY__TEXT_MAX_NAMED_ATTRS 16

typedef struct accy__attr_item {
  const char *name; /* into the text */
  size_t name_len;
  uint32_t line;
  bool is_list;
  bool used;
  int64_t value;       /* scalar */
  const int64_t *list; /* into the set's pool */
  uint32_t n;
} accy__attr_item;

/* The attributes written on one op line. */
typedef struct accy__attr_set {
  accy__attr_item items[ACCY__TEXT_MAX_NAMED_ATTRS];
  uint32_t n_items;
  int64_t pool[ACCY_MAX_ATTRS];
  uint32_t pool_used;
  int64_t keyword; /* the keyword's value; -1: none */
} accy__attr_set;

void accy__attr_set_reset(accy__attr_set *a);
/* For an op whose schema starts with a keyword (compare LT, reduce sum,
 * scatter add): reads the keyword word when one comes next. */
ACCY_NODISCARD accy_status accy__attr_parse_keyword(accy__lexer *lx, uint16_t op,
                                                    accy__attr_set *a);
/* Parses '=' (int | '[' ints ']') after the attribute name |name|. */
ACCY_NODISCARD accy_status accy__attr_parse(accy__lexer *lx, accy__attr_set *a,
                                            const accy__token *name);
/* Builds the flat attrs of |op| (operand 0 of rank |rank0|, on line |line|)
 * from the set, by the op's schema: defaults for what is left out, every
 * name checked, or the raw attrs=[...] as given. |out| has ACCY_MAX_ATTRS
 * entries. */
ACCY_NODISCARD accy_status accy__attr_build(accy__attr_set *a, uint16_t op, uint32_t rank0,
                                            uint32_t line, int64_t *out, uint32_t *n_out);

#endif /* ACCY_TEXT_TEXT_H */
