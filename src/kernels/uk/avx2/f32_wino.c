/* src/kernels/uk/avx2/f32_wino.c: the Winograd F(2x2, 3x3) transforms at
 * the avx2 level (uk/wino_body.h). */
#include "src/internal.h"

#define WINO_NAME(name) name##__avx2
#include "src/kernels/uk/wino_body.h"
