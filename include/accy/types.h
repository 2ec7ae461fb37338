/* accy/types.h: element types and the descriptor of one program input or
 * output. The dtype numbers are ABI and appear in the wire format. */
#ifndef ACCY_TYPES_H
#define ACCY_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "accy/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element types. Values are ABI (also used on the wire): never renumbered.
 * Zero is never a valid dtype. */
#define ACCY_DTYPE_MAP(XX)        \
  XX(F32, 1, "f32", 4)            \
  XX(F64, 2, "f64", 8)            \
  XX(F16, 3, "f16", 2)            \
  XX(BF16, 4, "bf16", 2)          \
  XX(I8, 5, "i8", 1)              \
  XX(I16, 6, "i16", 2)            \
  XX(I32, 7, "i32", 4)            \
  XX(I64, 8, "i64", 8)            \
  XX(U8, 9, "u8", 1)              \
  XX(U16, 10, "u16", 2)           \
  XX(U32, 11, "u32", 4)           \
  XX(U64, 12, "u64", 8)           \
  XX(BOOL, 13, "bool", 1)

typedef enum accy_dtype {
#define ACCY_DTYPE_XX(name, value, text, bytes) ACCY_DTYPE_##name = value,
  ACCY_DTYPE_MAP(ACCY_DTYPE_XX)
#undef ACCY_DTYPE_XX
} accy_dtype;

/* The text name of a dtype ("f32", "bf16", ...) or NULL for an unknown
 * value. Thread-safe. */
ACCY_API const char *accy_dtype_name(int32_t dtype);

/* The size in bytes of one element of |dtype|, or 0 for an unknown value.
 * Thread-safe. */
ACCY_API size_t accy_dtype_size(int32_t dtype);

/* The most axes a tensor may have. */
#define ACCY_MAX_RANK 8

/* Descriptor flags. */
/* The program writes this input in place, so invoke copies the caller's bytes
 * to scratch first; the caller's input is never modified. */
#define ACCY_DESCRIPTOR_COPIED_INPUT 0x1u
/* This output is a parameter, a constant or a duplicate of another output,
 * so invoke fills it with a copy rather than by a tile writing it. */
#define ACCY_DESCRIPTOR_COPIED_OUTPUT 0x2u

/* One program input or output, as a caller sizes and types its buffer.
 * |dims| and |name| point into the compiled program and stay valid until the
 * program is released (copy them first if another thread may release it). |alignment| is what invoke requires of the buffer's
 * address: the element's natural alignment. |byte_size| is the exact size
 * the buffer must have (product of dims times the element size; booleans are
 * one byte each, 0 or 1). */
typedef struct accy_descriptor {
  int32_t dtype;        /* an accy_dtype value */
  uint32_t rank;        /* number of entries in dims, 0..ACCY_MAX_RANK */
  const int64_t *dims;  /* row-major extents; may be NULL when rank is 0 */
  uint64_t byte_size;   /* exact size in bytes the buffer must have */
  uint32_t alignment;   /* required address alignment in bytes (power of 2) */
  uint32_t flags;       /* ACCY_DESCRIPTOR_* bits */
  const char *name;     /* parameter or output name, NUL-terminated */
} accy_descriptor;

/* A caller's input buffer: read only, never modified by accy. */
typedef struct accy_input {
  const void *data;
  size_t size;
} accy_input;

/* A caller's output buffer: written directly by the tiles. */
typedef struct accy_output {
  void *data;
  size_t size;
} accy_output;

#ifdef __cplusplus
}
#endif
#endif /* ACCY_TYPES_H */
