/* src/base/dtype.c: the element-type table (dtype.h), and the public
 * accy_dtype_name / accy_dtype_size of accy/types.h, which wrap it. */
#include "src/base/base.h"

#include "src/base/dtype.h"

/* The one lookup: the row of ACCY_DTYPE_MAP with number |dtype|. */
static bool dtype_row(int32_t dtype, const char **name, size_t *bytes) {
  switch (dtype) {
#define XX(nm, value, text, size) \
  case value:                     \
    *name = text;                 \
    *bytes = size;                \
    return true;
    ACCY_DTYPE_MAP(XX)
#undef XX
  }
  return false;
}

size_t accy__dtype_size(int32_t dtype) {
  const char *name;
  size_t bytes;
  return dtype_row(dtype, &name, &bytes) ? bytes : 0;
}

const char *accy__dtype_name(int32_t dtype) {
  const char *name;
  size_t bytes;
  return dtype_row(dtype, &name, &bytes) ? name : "?";
}

bool accy__dtype_valid(int32_t dtype) {
  const char *name;
  size_t bytes;
  return dtype_row(dtype, &name, &bytes);
}

bool accy__dtype_is_float(int32_t d) {
  return d == ACCY_DTYPE_F32 || d == ACCY_DTYPE_F64 || d == ACCY_DTYPE_F16 || d == ACCY_DTYPE_BF16;
}

bool accy__dtype_is_signed(int32_t d) { return d >= ACCY_DTYPE_I8 && d <= ACCY_DTYPE_I64; }
bool accy__dtype_is_unsigned(int32_t d) { return d >= ACCY_DTYPE_U8 && d <= ACCY_DTYPE_U64; }
bool accy__dtype_is_int(int32_t d) { return accy__dtype_is_signed(d) || accy__dtype_is_unsigned(d); }

bool accy__dtype_in_class(int32_t d, accy__dtype_class c) {
  bool is_bool = d == ACCY_DTYPE_BOOL;
  switch (c) {
    case ACCY__DCLASS_ANY: return accy__dtype_valid(d);
    case ACCY__DCLASS_FLOAT: return accy__dtype_is_float(d);
    case ACCY__DCLASS_NUMERIC: return accy__dtype_is_float(d) || accy__dtype_is_int(d);
    case ACCY__DCLASS_NUMERIC_BOOL:
      return accy__dtype_is_float(d) || accy__dtype_is_int(d) || is_bool;
    case ACCY__DCLASS_INT: return accy__dtype_is_int(d);
    case ACCY__DCLASS_INT_BOOL: return accy__dtype_is_int(d) || is_bool;
  }
  return false;
}

const char *accy__dtype_class_text(accy__dtype_class c) {
  switch (c) {
    case ACCY__DCLASS_ANY: return "a valid dtype";
    case ACCY__DCLASS_FLOAT: return "a float dtype (f32, f64, f16, bf16)";
    case ACCY__DCLASS_NUMERIC: return "a numeric dtype (float or integer)";
    case ACCY__DCLASS_NUMERIC_BOOL: return "a numeric or bool dtype";
    case ACCY__DCLASS_INT: return "an integer dtype";
    case ACCY__DCLASS_INT_BOOL: return "bool or an integer dtype";
  }
  return "?";
}

/* ---- public API ------------------------------------------------------------ */

const char *accy_dtype_name(int32_t dtype) {
  return accy__dtype_valid(dtype) ? accy__dtype_name(dtype) : NULL;
}

size_t accy_dtype_size(int32_t dtype) { return accy__dtype_size(dtype); }
