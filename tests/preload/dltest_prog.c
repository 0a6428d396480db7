/* A program needing libdltest.so through its RUNPATH $ORIGIN/lib (preload e2e: exec of a
 * forwarded program whose libraries are forwarded too). Exits with dltest_value(), 42. */
int dltest_value(void);
int main(void) { return dltest_value(); }
