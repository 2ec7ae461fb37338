/* src/limits.h: moved to src/base/limits.h. This forwarder stays only while
 * files outside this change still include the old path; new code includes
 * src/base/limits.h. */
#include "src/base/limits.h"
