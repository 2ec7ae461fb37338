/* src/kernels/uk/portable/ew.c: the elementwise microkernels at the portable
 * level (uk/ew_body.h), built with the baseline flags. */
#include "src/internal.h"

#define EW_EXPORT(name) accy__##name##__portable
#include "src/kernels/uk/ew_body.h"
