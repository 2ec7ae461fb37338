/* src/kernels/uk/avx512/f32_wino.c: the Winograd F(2x2, 3x3) transforms at
 * the avx512 level (uk/wino_body.h): the avx2 level's vectors with 32
 * registers to hold them; the same bits. */
#include "src/internal.h"

#define WINO_NAME(name) name##__avx512
#include "src/kernels/uk/wino_body.h"
