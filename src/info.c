/* src/info.c: accy_info, the dotted-key facts of accy/info.h. */
#include "src/internal.h"

#include <string.h>

#include "src/scratch.h"

const char *accy_info(const char *key) {
  if (!key) return NULL;
  if (strcmp(key, "version") == 0) return accy_version();
  if (strcmp(key, "scratch.backend") == 0) return accy__scratch_backend();
  if (strcmp(key, "scratch.backend.note") == 0) return accy__scratch_backend_note();
  return NULL;
}
