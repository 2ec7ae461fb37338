/* src/base/status.h: failing with a status and a cause.
 *
 * A failure is one of the nine public status numbers plus a cause text in a
 * fixed thread-local buffer of ACCY_CAUSE_BYTES (accy_session_last_cause
 * reads it). Recording a cause never allocates, so every macro here is safe
 * on out-of-memory paths. */
#ifndef ACCY_BASE_STATUS_H
#define ACCY_BASE_STATUS_H

#include "src/base/base.h"

/* Size of the per-thread cause buffer, terminating NUL included. */
#define ACCY_CAUSE_BYTES 512

/* Records the formatted message as the calling thread's cause text and
 * returns |code|. Never allocates, so it is safe on out-of-memory paths. */
ACCY_NODISCARD accy_status accy__fail(accy_status code, const char *fmt, ...) ACCY_PRINTF(2, 3);
#define ACCY_FAIL(code, ...) accy__fail((code), __VA_ARGS__)

/* Copies |text| (NUL-terminated) into the calling thread's cause buffer. */
void accy__set_cause(const char *text);
/* Prefixes the calling thread's current cause with the formatted text,
 * e.g. "node 12 (dot_general): " + cause. Never allocates. */
void accy__prefix_cause(const char *fmt, ...) ACCY_PRINTF(1, 2);
/* The calling thread's cause buffer (never NULL). */
const char *accy__cause(void);

#define ACCY_TRY(expr)                                              \
  do {                                                              \
    accy_status accy__s = (expr);                                   \
    if (ACCY_UNLIKELY(accy__s != ACCY_STATUS_OK)) return accy__s;   \
  } while (0)

#endif /* ACCY_BASE_STATUS_H */
