/* accy/status.h: the nine status numbers every accy call returns.
 *
 * The numbers are ABI: hosts in other languages compare against them, so a
 * value is never renumbered, reused or removed.
 *
 * When each is used:
 *   INVALID_PROGRAM      the wire bytes fail decoding or validation.
 *   UNSUPPORTED_VERSION  the bytes are well formed but of a wire version this
 *                        build does not read.
 *   INVALID_HANDLE       the handle was released, never issued, or its index
 *                        is out of range.
 *   INVALID_BUFFER       the caller's buffers are wrong: count, size,
 *                        alignment, NULL, or overlap.
 *   TOO_MANY_PROGRAMS    the session already holds ACCY_MAX_PROGRAMS programs.
 *   OUT_OF_MEMORY        an allocation failed.
 *   COMPILE_FAILED       a valid program this build cannot compile.
 *   LAUNCH_FAILED        the worker pool could not be started
 *                        (accy_session_create); a run itself never fails.
 * The detail always goes into the cause text (accy_session_last_cause), never
 * into new codes. */
#ifndef ACCY_STATUS_H
#define ACCY_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include "accy/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* (NAME, value, message). Values are ABI: never renumber or reuse. */
#define ACCY_STATUS_MAP(XX)                                                      \
  XX(OK, 0, "success")                                                           \
  XX(INVALID_PROGRAM, 1, "the wire bytes are not a valid program")              \
  XX(UNSUPPORTED_VERSION, 2, "the wire format version is not supported")        \
  XX(INVALID_HANDLE, 3, "the handle was released or never issued")              \
  XX(INVALID_BUFFER, 4, "a buffer has the wrong count, size, alignment or overlaps") \
  XX(TOO_MANY_PROGRAMS, 5, "the session already holds its maximum of programs") \
  XX(OUT_OF_MEMORY, 6, "out of memory")                                         \
  XX(COMPILE_FAILED, 7, "the program could not be compiled")                    \
  XX(LAUNCH_FAILED, 8, "the run failed")

/* Number of status values (0 .. ACCY_STATUS_COUNT - 1): the length of the
 * per-status arrays of accy_session_stats. */
#define ACCY_STATUS_COUNT 9

typedef enum accy_status {
#define ACCY_STATUS_XX(name, value, msg) ACCY_STATUS_##name = value,
  ACCY_STATUS_MAP(ACCY_STATUS_XX)
#undef ACCY_STATUS_XX
} accy_status;

/* Returns the enumerator's name, e.g. "ACCY_STATUS_INVALID_BUFFER", for any
 * value; unknown values give "ACCY_STATUS_<unknown>". Never NULL.
 * Thread-safe. */
ACCY_API const char *accy_status_name(accy_status status);

/* Returns a short English sentence for the status; never NULL. Thread-safe. */
ACCY_API const char *accy_status_message(accy_status status);

#ifdef __cplusplus
}
#endif
#endif /* ACCY_STATUS_H */
