/* src/wire/format.h: STUB, to be replaced. */
#ifndef ACCY_WIRE_FORMAT_H
#define ACCY_WIRE_FORMAT_H
#endif
