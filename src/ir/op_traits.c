/* src/ir/op_traits.c: the op-trait table of op_traits.h and the attribute
 * schemas: the one normative description of every op's flat attrs layout
 * (docs/ops.md explains what the values mean, docs/text-format.md how they
 * are spelt). The assembler builds attrs from a schema and the
 * disassembler prints them back from it. */
#include "src/internal.h"

#include <string.h>

#include "src/ir/op_traits.h"

/* ---- keyword words ----------------------------------------------------------- */

/* Value i is word i: the accy_compare_direction, accy_reduce_kind and
 * accy_scatter_mode numbers of accy/ops.h. */
static const char *const kDirections[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
static const char *const kReduceKinds[] = {"sum", "product", "max", "min", "and", "or"};
static const char *const kScatterModes[] = {"replace", "add", "multiply", "max", "min"};

static const accy__attr_words kDirectionWords = {"direction", 6, kDirections};
static const accy__attr_words kKindWords = {"kind", 6, kReduceKinds};
static const accy__attr_words kModeWords = {"mode", 5, kScatterModes};

_Static_assert(ACCY_COMPARE_GE == 5 && ACCY_REDUCE_OR == 5 && ACCY_SCATTER_MIN == 4,
               "keyword tables follow accy/ops.h");

/* ---- field shorthands ----------------------------------------------------------- */

#define KEYWORD(w) {NULL, NULL, ACCY__ATTR_KEYWORD, ACCY__LEN_ONE, true, false, 0, &(w)}
#define SCALAR(n) {n, NULL, ACCY__ATTR_SCALAR, ACCY__LEN_ONE, true, false, 0, NULL}
#define SCALAR_OPT(n, d) {n, NULL, ACCY__ATTR_SCALAR, ACCY__LEN_ONE, false, false, d, NULL}
#define LIST(n, len) {n, NULL, ACCY__ATTR_LIST, ACCY__LEN_##len, true, false, 0, NULL}
#define LIST_OPT(n, len, d) {n, NULL, ACCY__ATTR_LIST, ACCY__LEN_##len, false, false, d, NULL}
#define PAIR(n, n2, shown) {n, n2, ACCY__ATTR_PAIR, ACCY__LEN_ONE, false, shown, 0, NULL}
#define SPATIAL() {NULL, NULL, ACCY__ATTR_SPATIAL, ACCY__LEN_ONE, true, false, 0, NULL}

/* ---- schemas, one per layout ------------------------------------------------------ */
/* r: operand 0's rank; s: convolution's spatial axes (r - 2). */

/* compare: [direction] */
static const accy__attr_field kCompare[] = {KEYWORD(kDirectionWords)};
/* iota: [iota_dimension]; concatenate: [dimension] */
static const accy__attr_field kDim[] = {SCALAR("dim")};
/* gather, argmax, argmin: [axis] */
static const accy__attr_field kAxis[] = {SCALAR("axis")};
/* sort, argsort: [axis, descending] (descending 0 or 1) */
static const accy__attr_field kSort[] = {SCALAR("axis"), SCALAR_OPT("descending", 0)};
/* broadcast_in_dim: [result axis of each operand axis]; reverse: [axes...] */
static const accy__attr_field kDims[] = {LIST("dims", ANY)};
/* transpose: [permutation x r]: result axis i is operand axis perm[i] */
static const accy__attr_field kPerm[] = {LIST("perm", ANY)};
/* dynamic_slice: [slice_sizes x r]; operands (x, r scalar starts) */
static const accy__attr_field kSizes[] = {LIST("sizes", ANY)};
/* slice: [start x r, limit x r, stride x r] */
static const accy__attr_field kSlice[] = {LIST("start", RANK), LIST("limit", RANK),
                                          LIST_OPT("stride", RANK, 1)};
/* pad: [low x r, high x r, interior x r]; operands (x, scalar pad value) */
static const accy__attr_field kPad[] = {LIST_OPT("low", RANK, 0), LIST_OPT("high", RANK, 0),
                                        LIST_OPT("interior", RANK, 0)};
/* dot_general: [nb, lhs_batch x nb, rhs_batch x nb, nc, lhs_contract x nc,
 * rhs_contract x nc] */
static const accy__attr_field kDot[] = {PAIR("lhs_batch", "rhs_batch", false),
                                        PAIR("lhs_contract", "rhs_contract", true)};
/* convolution: [s, stride x s, pad_low x s, pad_high x s, lhs_dilation x s,
 * rhs_dilation x s, feature_group_count] */
static const accy__attr_field kConv[] = {
    SPATIAL(),
    LIST_OPT("stride", SPATIAL, 1),
    LIST_OPT("pad_low", SPATIAL, 0),
    LIST_OPT("pad_high", SPATIAL, 0),
    LIST_OPT("lhs_dilation", SPATIAL, 1),
    LIST_OPT("rhs_dilation", SPATIAL, 1),
    SCALAR_OPT("groups", 1)};
/* reduce: [kind, dims...] (accy_reduce_kind, distinct axes) */
static const accy__attr_field kReduce[] = {KEYWORD(kKindWords), LIST("dims", ANY)};
/* reduce_window: [kind, window x r, stride x r, pad_low x r, pad_high x r,
 * base_dilation x r, window_dilation x r] */
static const accy__attr_field kReduceWindow[] = {
    KEYWORD(kKindWords),
    LIST("window", RANK),
    LIST_OPT("stride", RANK, 1),
    LIST_OPT("pad_low", RANK, 0),
    LIST_OPT("pad_high", RANK, 0),
    LIST_OPT("base_dilation", RANK, 1),
    LIST_OPT("window_dilation", RANK, 1)};
/* scatter: [mode] (accy_scatter_mode); operands (data, indices, updates) */
static const accy__attr_field kScatter[] = {KEYWORD(kModeWords)};

#define SCHEMA(id, f) static const accy__attr_schema kAttrs_##id = {ACCY_ARRAY_SIZE(f), f};
static const accy__attr_schema kAttrs_NONE = {0, NULL};
SCHEMA(COMPARE, kCompare)
SCHEMA(DIM, kDim)
SCHEMA(AXIS, kAxis)
SCHEMA(SORT, kSort)
SCHEMA(DIMS, kDims)
SCHEMA(PERM, kPerm)
SCHEMA(SIZES, kSizes)
SCHEMA(SLICE, kSlice)
SCHEMA(PAD, kPad)
SCHEMA(DOT, kDot)
SCHEMA(CONV, kConv)
SCHEMA(REDUCE, kReduce)
SCHEMA(REDUCE_WINDOW, kReduceWindow)
SCHEMA(SCATTER, kScatter)
#undef SCHEMA

/* ---- the table ------------------------------------------------------------------- */

/* Every op of ACCY_OP_MAP has a trait row (a missing row is an undeclared
 * TRAIT_ name), and the two lists have the same length. */
enum {
#define XX(NAME, family, infer, dclass, result, attrs) TRAIT_##NAME,
  ACCY__OP_TRAITS(XX)
#undef XX
  TRAIT_COUNT
};
enum {
#define XX(NAME, code, text, mn, mx) OPMAP_##NAME = TRAIT_##NAME,
  ACCY_OP_MAP(XX)
#undef XX
};
#define XX(NAME, code, text, mn, mx) +1
_Static_assert(0 ACCY_OP_MAP(XX) == TRAIT_COUNT, "ACCY__OP_TRAITS and ACCY_OP_MAP differ");
#undef XX

/* Public columns by op name, to join them with the trait rows. */
enum {
#define XX(NAME, code, text, mn, mx) CODE_##NAME = code,
  ACCY_OP_MAP(XX)
#undef XX
};
#define XX(NAME, code, text, mn, mx) static const char kName_##NAME[] = text;
ACCY_OP_MAP(XX)
#undef XX
enum {
#define XX(NAME, code, text, mn, mx) MIN_##NAME = mn, MAX_##NAME = mx,
  ACCY_OP_MAP(XX)
#undef XX
};

static const accy__op_trait kTraits[TRAIT_COUNT] = {
#define XX(NAME, family, infer, dclass, result, attrs)                                    \
  [TRAIT_##NAME] = {CODE_##NAME,           kName_##NAME,           MIN_##NAME,            \
                    MAX_##NAME,            ACCY__FAMILY_##family,  ACCY__RESULT_##result, \
                    ACCY__DCLASS_##dclass, &kAttrs_##attrs},
    ACCY__OP_TRAITS(XX)
#undef XX
};

const accy__op_trait *accy__op_trait_of(uint32_t op) {
  switch (op) {
#define XX(NAME, code, text, mn, mx) \
  case code:                         \
    return &kTraits[TRAIT_##NAME];
    ACCY_OP_MAP(XX)
#undef XX
  }
  return NULL;
}

const accy__op_trait *accy__op_trait_at(uint32_t i) { return i < TRAIT_COUNT ? &kTraits[i] : NULL; }

uint32_t accy__op_count(void) { return TRAIT_COUNT; }

const char *accy__op_name(uint32_t op) {
  const accy__op_trait *t = accy__op_trait_of(op);
  return t ? t->name : NULL;
}

uint16_t accy__op_from_name(const char *name, size_t len) {
  for (uint32_t i = 0; i < TRAIT_COUNT; i++)
    if (strlen(kTraits[i].name) == len && memcmp(name, kTraits[i].name, len) == 0)
      return kTraits[i].code;
  return 0;
}

bool accy__op_arity(uint32_t op, int *min_operands, int *max_operands) {
  const accy__op_trait *t = accy__op_trait_of(op);
  if (!t) return false;
  *min_operands = t->min_operands;
  *max_operands = t->max_operands;
  return true;
}
