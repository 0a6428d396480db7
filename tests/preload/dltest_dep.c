/* A shared object that another needs (preload e2e: dlopen of forwarded objects). */
int dltest_dep_value(void) { return 41; }
