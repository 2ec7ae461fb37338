/* src/base/dtype.h: the element-type table. The rows are accy/types.h's
 * ACCY_DTYPE_MAP (number, text name, element size); this header adds the
 * classes every layer asks about. The public accy_dtype_name and
 * accy_dtype_size are wrappers of these functions (dtype.c). */
#ifndef ACCY_BASE_DTYPE_H
#define ACCY_BASE_DTYPE_H

#include "accy/types.h"
#include "src/base/base.h"

/* Element size in bytes, 0 for an invalid dtype. */
size_t accy__dtype_size(int32_t dtype);
/* Text name ("f32"), or "?" for an invalid dtype (the public accy_dtype_name
 * returns NULL there instead). */
const char *accy__dtype_name(int32_t dtype);
bool accy__dtype_valid(int32_t dtype);
bool accy__dtype_is_float(int32_t dtype);    /* f32 f64 f16 bf16 */
bool accy__dtype_is_int(int32_t dtype);      /* signed or unsigned integer, not bool */
bool accy__dtype_is_signed(int32_t dtype);   /* i8..i64 */
bool accy__dtype_is_unsigned(int32_t dtype); /* u8..u64 */

/* Classes of dtypes that ops accept (docs/ops.md's "dtypes" columns). */
typedef enum accy__dtype_class {
  ACCY__DCLASS_ANY = 0,      /* every valid dtype */
  ACCY__DCLASS_FLOAT,        /* f32 f64 f16 bf16 */
  ACCY__DCLASS_NUMERIC,      /* float or integer */
  ACCY__DCLASS_NUMERIC_BOOL, /* float, integer or bool */
  ACCY__DCLASS_INT,          /* signed or unsigned integer */
  ACCY__DCLASS_INT_BOOL      /* integer or bool */
} accy__dtype_class;

bool accy__dtype_in_class(int32_t dtype, accy__dtype_class c);
/* "a float dtype (f32, f64, f16, bf16)": what a cause says was expected. */
const char *accy__dtype_class_text(accy__dtype_class c);

#endif /* ACCY_BASE_DTYPE_H */
