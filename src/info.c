/* src/info.c: facts about the library as it runs: accy_version
 * (accy/version.h) and accy_info, the dotted-key facts of accy/info.h. */
#include "src/internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "src/base/cpu.h"
#include "src/scratch.h"

static pthread_once_t limit_once = PTHREAD_ONCE_INIT;
static char limit_text[24];

static void format_limit(void) {
  snprintf(limit_text, sizeof limit_text, "%llu", (unsigned long long)accy__memory_limit_default());
}

const char *accy_version(void) { return ACCY_VERSION_STRING; }

const char *accy_info(const char *key) {
  if (!key) return NULL;
  if (strcmp(key, "version") == 0) return accy_version();
  if (strcmp(key, "scratch.backend") == 0) return accy__scratch_backend();
  if (strcmp(key, "scratch.backend.note") == 0) return accy__scratch_backend_note();
  if (strcmp(key, "isa") == 0) return accy__isa_name(accy__isa_level());
  if (strcmp(key, "isa.detected") == 0) return accy__isa_name(accy__cpu_get()->detected);
  if (strcmp(key, "memory.limit.default") == 0) {
    pthread_once(&limit_once, format_limit);
    return limit_text;
  }
  return NULL;
}
