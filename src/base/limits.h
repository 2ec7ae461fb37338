/* src/base/limits.h: named limits on programs. Exceeding one is INVALID_PROGRAM
 * (decode/verify) or COMPILE_FAILED (planning), with a cause that names the
 * limit and the value. docs/limits.md lists them for users. */
#ifndef ACCY_BASE_LIMITS_H
#define ACCY_BASE_LIMITS_H

#include "src/base/base.h"

/* Most bytes one wire program may have. */
#define ACCY_MAX_PROGRAM_BYTES (UINT64_C(1) << 32)
/* Most nodes (parameters, constants and ops) in one program. */
#define ACCY_MAX_NODES 65536u
/* Most operands of one node (concatenate is the only op with many). */
#define ACCY_MAX_OPERANDS 1024u
/* Most integer attributes of one node. */
#define ACCY_MAX_ATTRS 256u
/* Most outputs of one program. */
#define ACCY_MAX_OUTPUTS 4096u
/* Most parameters of one program. */
#define ACCY_MAX_PARAMETERS 4096u
/* Largest extent of one dimension. */
#define ACCY_MAX_DIM (INT64_C(1) << 40)
/* Most elements of one tensor. */
#define ACCY_MAX_ELEMENTS (UINT64_C(1) << 40)
/* Most bytes of one tensor. */
#define ACCY_MAX_TENSOR_BYTES (UINT64_C(1) << 42)
/* Most bytes of all constants of one program together. */
#define ACCY_MAX_CONSTANT_BYTES (UINT64_C(1) << 32)
/* Most bytes of one name (parameter, constant or output), NUL excluded. */
#define ACCY_MAX_NAME_BYTES 1024u
/* Most scratch bytes one launch may need. */
#define ACCY_MAX_SCRATCH_BYTES (UINT64_C(1) << 40)

#endif /* ACCY_BASE_LIMITS_H */
