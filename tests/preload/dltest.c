/* A shared object needing libdltest_dep.so through its RUNPATH $ORIGIN/deps (preload e2e:
 * dlopen of forwarded objects). */
int dltest_dep_value(void);
int dltest_value(void) { return dltest_dep_value() + 1; }
