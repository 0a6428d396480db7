/* What the interposer adds to calls it does not forward: 1-byte pwrite to /dev/null
 * and 0-byte read from a pipe, N calls each; run with and without LD_PRELOAD.
 * Usage: preload_overhead_bench [calls] (default 1000000). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  int null_fd = open("/dev/null", O_WRONLY);
  int pipe_fd[2];
  if (null_fd < 0 || pipe(pipe_fd) != 0) {
    perror("setup");
    return 1;
  }
  char byte = 'x';
  double t0 = NowNs();
  for (long i = 0; i < n; ++i) {
    if (pwrite(null_fd, &byte, 1, 0) != 1) return 1;
  }
  double t1 = NowNs();
  for (long i = 0; i < n; ++i) {
    if (read(pipe_fd[0], &byte, 0) != 0) return 1;
  }
  double t2 = NowNs();
  printf(
      "{\"calls\": %ld, \"pwrite_devnull_ns\": %.1f, \"read0_pipe_ns\": %.1f, \"preload\": %s}\n",
      n, (t1 - t0) / (double)n, (t2 - t1) / (double)n, getenv("LD_PRELOAD") ? "true" : "false");
  return 0;
}
