/* tools/accy.c: STUB, to be replaced. */
#include <stdio.h>
int main(void) { puts("accy: not implemented"); return 1; }
