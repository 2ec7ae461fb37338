/* src/session.c: STUB, to be replaced. */
#include "src/internal.h"

accy_status accy_session_create(const accy_session_options *options, accy_session **out) {
  (void)options; if (out) *out = NULL; return ACCY_STATUS_OUT_OF_MEMORY;
}
void accy_session_destroy(accy_session *session) { (void)session; }
accy_status accy_session_compile(accy_session *s, const void *bytes, size_t size, accy_handle *out) {
  (void)s; (void)bytes; (void)size; (void)out; return ACCY_STATUS_COMPILE_FAILED;
}
accy_status accy_session_inputs(const accy_session *s, accy_handle h, const accy_descriptor **out, size_t *count) {
  (void)s; (void)h; (void)out; (void)count; return ACCY_STATUS_INVALID_HANDLE;
}
accy_status accy_session_outputs(const accy_session *s, accy_handle h, const accy_descriptor **out, size_t *count) {
  (void)s; (void)h; (void)out; (void)count; return ACCY_STATUS_INVALID_HANDLE;
}
accy_status accy_session_invoke(accy_session *s, accy_handle h, const accy_input *inputs, size_t n_inputs,
                                const accy_output *outputs, size_t n_outputs) {
  (void)s; (void)h; (void)inputs; (void)n_inputs; (void)outputs; (void)n_outputs; return ACCY_STATUS_INVALID_HANDLE;
}
accy_status accy_session_release(accy_session *s, accy_handle h) { (void)s; (void)h; return ACCY_STATUS_INVALID_HANDLE; }
