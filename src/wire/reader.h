/* src/wire/reader.h: a bounds-checked cursor over untrusted bytes.
 *
 * Every read either succeeds completely and advances the cursor, or fails
 * with ACCY_STATUS_INVALID_PROGRAM (cause: what was needed, the absolute
 * byte offset and how many bytes remain) and leaves the cursor where it was.
 * The invariant offset <= length always holds; lengths are compared with
 * what remains (length - offset), never by forming offset + n, so no request
 * can wrap around. Integers are assembled from bytes, little endian, so the
 * host's endianness and the data's alignment do not matter.
 *
 * Out-parameters are zeroed (NULL) on entry and filled only on success. */
#ifndef ACCY_WIRE_READER_H
#define ACCY_WIRE_READER_H

#include "src/internal.h"

typedef struct accy__reader {
  const uint8_t *data; /* borrowed: the caller keeps the bytes alive */
  size_t length;       /* bytes readable at data */
  size_t offset;       /* bytes consumed; always <= length */
  size_t base;         /* absolute offset of data[0] in the whole input, so
                          sub-readers report offsets the user can find */
} accy__reader;

/* Starts a reader over |length| bytes at |data| (NULL allowed when length is
 * 0). Absolute offsets start at 0. */
void accy__reader_init(accy__reader *r, const void *data, size_t length);

/* Bytes not yet consumed. */
static inline size_t accy__reader_remaining(const accy__reader *r) {
  return r->length - r->offset;
}
/* Absolute offset of the next byte to be read (for cause messages). */
static inline size_t accy__reader_position(const accy__reader *r) {
  return r->base + r->offset;
}

ACCY_NODISCARD accy_status accy__reader_u8(accy__reader *r, uint8_t *out);
ACCY_NODISCARD accy_status accy__reader_u16le(accy__reader *r, uint16_t *out);
ACCY_NODISCARD accy_status accy__reader_u32le(accy__reader *r, uint32_t *out);
ACCY_NODISCARD accy_status accy__reader_u64le(accy__reader *r, uint64_t *out);
/* Two's complement: the u64 bit pattern reinterpreted. */
ACCY_NODISCARD accy_status accy__reader_i64le(accy__reader *r, int64_t *out);

/* Consumes |n| bytes and points *out at them (borrowed, inside the input).
 * n = 0 succeeds with *out pointing at the current position. */
ACCY_NODISCARD accy_status accy__reader_bytes(accy__reader *r, uint64_t n, const uint8_t **out);

/* Consumes |n| bytes and makes *out a reader over exactly those bytes, with
 * absolute offsets continuing the parent's. On failure *out is empty. */
ACCY_NODISCARD accy_status accy__reader_sub(accy__reader *r, uint64_t n, accy__reader *out);

/* Checks, without moving, that |count| items of at least |unit_bytes| bytes
 * each (unit_bytes >= 1) could still fit in what remains. Compared by
 * division, so a huge count cannot overflow the check. Use it before
 * allocating anything sized by |count|. */
ACCY_NODISCARD accy_status accy__reader_check_count(const accy__reader *r, uint64_t count,
                                                    uint64_t unit_bytes);

/* Fails unless every byte has been consumed. */
ACCY_NODISCARD accy_status accy__reader_expect_end(const accy__reader *r);

#endif /* ACCY_WIRE_READER_H */
