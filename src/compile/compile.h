/* src/compile/compile.h: STUB, to be replaced. */
#ifndef ACCY_COMPILE_COMPILE_H
#define ACCY_COMPILE_COMPILE_H
#endif
