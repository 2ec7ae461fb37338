/* accy/builder.h: a C API for constructing programs in code. The builder
 * collects nodes, infers result types with the same rules the verifier uses,
 * and produces canonical wire bytes for accy_session_compile.
 *
 * Values are named by uint32_t ids (node indices) returned by each call.
 * A failing call returns INVALID_PROGRAM (or OUT_OF_MEMORY) with the cause
 * in accy_session_last_cause(NULL) and leaves the builder as it was, so a
 * caller may continue. Thread-compatible: one thread at a time per builder. */
#ifndef ACCY_BUILDER_H
#define ACCY_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "accy/memory.h"
#include "accy/ops.h"
#include "accy/status.h"
#include "accy/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct accy_builder accy_builder; /* opaque */

/* A tensor type for the builder: dtype and row-major dims. */
typedef struct accy_type {
  int32_t dtype;
  uint32_t rank;
  int64_t dims[ACCY_MAX_RANK];
} accy_type;

ACCY_API accy_status accy_builder_create(accy_builder **out);
ACCY_API void accy_builder_destroy(accy_builder *b);

/* Adds a named parameter (the next input, in call order). */
ACCY_API accy_status accy_builder_parameter(accy_builder *b, const char *name, int32_t dtype,
                                            uint32_t rank, const int64_t *dims, uint32_t *out);

/* Adds a named constant; |data| holds |size| bytes = element size x elements
 * (little endian; booleans one byte 0 or 1). The data is copied. */
ACCY_API accy_status accy_builder_constant(accy_builder *b, const char *name, int32_t dtype,
                                           uint32_t rank, const int64_t *dims,
                                           const void *data, size_t size, uint32_t *out);

/* Adds any op (see docs/ops.md for operands and attrs). |result| may be NULL
 * when the type can be inferred; reshape, iota and broadcast_in_dim need the
 * full result type, convert/argmax/argmin its dtype. */
ACCY_API accy_status accy_builder_op(accy_builder *b, accy_op op, const uint32_t *operands,
                                     uint32_t n_operands, const int64_t *attrs,
                                     uint32_t n_attrs, const accy_type *result, uint32_t *out);

/* Shorthands for accy_builder_op. */
ACCY_API accy_status accy_builder_unary(accy_builder *b, accy_op op, uint32_t x, uint32_t *out);
ACCY_API accy_status accy_builder_binary(accy_builder *b, accy_op op, uint32_t x, uint32_t y,
                                         uint32_t *out);
ACCY_API accy_status accy_builder_compare(accy_builder *b, accy_compare_direction direction,
                                          uint32_t x, uint32_t y, uint32_t *out);
ACCY_API accy_status accy_builder_convert(accy_builder *b, uint32_t x, int32_t dtype,
                                          uint32_t *out);
ACCY_API accy_status accy_builder_reshape(accy_builder *b, uint32_t x, uint32_t rank,
                                          const int64_t *dims, uint32_t *out);

/* Marks value |value| as the next program output, named |name|. */
ACCY_API accy_status accy_builder_output(accy_builder *b, uint32_t value, const char *name);

/* The type of value |value| (after inference). */
ACCY_API accy_status accy_builder_type(const accy_builder *b, uint32_t value, accy_type *out);

/* Verifies the whole program and encodes it as wire bytes in a buffer the
 * caller frees with accy_free (accy/memory.h). The builder stays usable. */
ACCY_API accy_status accy_builder_finish(accy_builder *b, void **out_bytes, size_t *out_size);

#ifdef __cplusplus
}
#endif
#endif /* ACCY_BUILDER_H */
