/* src/kernels/half.h: moved to src/base/half.h. This forwarder stays only
 * while files outside this change still include the old path; new code
 * includes src/base/half.h. */
#include "src/base/half.h"
