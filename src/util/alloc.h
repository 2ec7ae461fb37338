/* src/util/alloc.h: moved to src/base/alloc.h. This forwarder stays only
 * while files outside this change still include the old path; new code
 * includes src/base/alloc.h. */
#include "src/base/alloc.h"
