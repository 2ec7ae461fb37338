/* STUB suite, to be replaced: skips. */
int main(void) { return 77; }
