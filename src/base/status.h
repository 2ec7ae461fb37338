/* src/base/status.h: failing with a status and a cause.
 *
 * A failure is one of the nine public status numbers plus a cause text in a
 * fixed thread-local buffer of ACCY_CAUSE_BYTES (accy_session_last_cause
 * reads it). Recording a cause never allocates, so every macro here is safe
 * on out-of-memory paths.
 *
 * One rule for context: the code that detects a failure says what is wrong
 * in its own terms ("operand 1 has dtype i32, expected f32"); each caller
 * that knows more context puts it in front on the way up, with ACCY_TRY_CTX
 * ("node 12 (dot_general): " + cause). A callee never writes its caller's
 * context, and nothing inspects the cause text to decide what to add.
 * Statuses returned directly without a cause (a full program table, a stale
 * handle, a buffer count mismatch: accy/session.h) are never annotated, so
 * they leave the cause as it was. */
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

/* Evaluates |expr|; on failure returns its status from the calling
 * function. */
#define ACCY_TRY(expr)                                              \
  do {                                                              \
    accy_status accy__s = (expr);                                   \
    if (ACCY_UNLIKELY(accy__s != ACCY_STATUS_OK)) return accy__s;   \
  } while (0)

/* As ACCY_TRY, but on failure first prefixes the cause with the formatted
 * context (accy__prefix_cause), e.g.
 *   ACCY_TRY_CTX(prepare(p, i), "node %u (%s): ", i, accy__op_name(op));
 * The format arguments are evaluated only on failure. */
#define ACCY_TRY_CTX(expr, ...)                                     \
  do {                                                              \
    accy_status accy__s = (expr);                                   \
    if (ACCY_UNLIKELY(accy__s != ACCY_STATUS_OK)) {                 \
      accy__prefix_cause(__VA_ARGS__);                              \
      return accy__s;                                               \
    }                                                               \
  } while (0)

#endif /* ACCY_BASE_STATUS_H */
