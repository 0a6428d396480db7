// Benchmark worker: metadata operations per second (open + fstat + close of one existing
// file, and stat by path), plain POSIX so it measures direct and forwarded alike.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: meta_worker FILE SECONDS\n");
    return 2;
  }
  const char* path = argv[1];
  double limit = std::atof(argv[2]);
  int fd = open(path, O_WRONLY | O_CREAT, 0644);
  if (fd < 0 || close(fd) != 0) return std::perror("create"), 1;
  auto t0 = std::chrono::steady_clock::now();
  long ops = 0;
  double elapsed = 0;
  while (elapsed < limit) {
    for (int i = 0; i < 64; ++i) {
      struct stat st;
      fd = open(path, O_RDONLY);
      if (fd < 0 || fstat(fd, &st) != 0 || close(fd) != 0) return std::perror("open/fstat"), 1;
    }
    ops += 64;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::printf("{\"open_fstat_close_per_s\": %.1f, \"count\": %ld, \"seconds\": %.3f}\n",
              ops / elapsed, ops, elapsed);
  return 0;
}
