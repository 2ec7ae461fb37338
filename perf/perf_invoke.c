/* perf/perf_invoke.c: STUB, to be replaced. */
int main(void) { return 0; }
