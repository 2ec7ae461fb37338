/* src/base/status.c: status names and messages from the X-macro list of
 * accy/status.h, and the per-thread cause text (status.h). The cause is a
 * fixed thread-local buffer so that the failure path never allocates. */
#include "src/base/base.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "src/base/status.h"

static _Thread_local char cause_buffer[ACCY_CAUSE_BYTES];

const char *accy_status_name(accy_status status) {
  switch (status) {
#define XX(name, value, msg) \
  case ACCY_STATUS_##name:   \
    return "ACCY_STATUS_" #name;
    ACCY_STATUS_MAP(XX)
#undef XX
  }
  return "ACCY_STATUS_<unknown>";
}

const char *accy_status_message(accy_status status) {
  switch (status) {
#define XX(name, value, msg) \
  case ACCY_STATUS_##name:   \
    return msg;
    ACCY_STATUS_MAP(XX)
#undef XX
  }
  return "unknown status";
}

accy_status accy__fail(accy_status code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cause_buffer, sizeof cause_buffer, fmt, ap);
  va_end(ap);
  return code;
}

void accy__set_cause(const char *text) {
  size_t n = strlen(text);
  if (n >= sizeof cause_buffer) n = sizeof cause_buffer - 1;
  memmove(cause_buffer, text, n);
  cause_buffer[n] = '\0';
}

void accy__prefix_cause(const char *fmt, ...) {
  char prefix[160];
  va_list ap;
  va_start(ap, fmt);
  int p = vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  if (p <= 0) return;
  size_t plen = (size_t)p < sizeof prefix ? (size_t)p : sizeof prefix - 1;
  size_t clen = strlen(cause_buffer);
  if (plen + clen >= sizeof cause_buffer) clen = sizeof cause_buffer - 1 - plen;
  memmove(cause_buffer + plen, cause_buffer, clen);
  memcpy(cause_buffer, prefix, plen);
  cause_buffer[plen + clen] = '\0';
}

const char *accy__cause(void) { return cause_buffer; }
