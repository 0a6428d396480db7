// Benchmark worker: one process of a file-per-process run (write then/or read of SIZE
// bytes in REQUEST-byte pwrite/pread calls). Plain POSIX, so the same binary measures
// the direct path and, under the interposer, the forwarded one. Prints one JSON line.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

[[noreturn]] void Usage() {
  std::fprintf(stderr,
               "usage: io_worker --file F --size BYTES --request BYTES --op write|read "
               "[--direct] [--fsync]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string file, op;
  unsigned long long size = 0, request = 0;
  bool direct = false, do_fsync = false;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : (Usage(), ""); };
    if (k == "--file")
      file = next();
    else if (k == "--size")
      size = std::strtoull(next(), nullptr, 10);
    else if (k == "--request")
      request = std::strtoull(next(), nullptr, 10);
    else if (k == "--op")
      op = next();
    else if (k == "--direct")
      direct = true;
    else if (k == "--fsync")
      do_fsync = true;
    else
      Usage();
  }
  if (file.empty() || request == 0 || size % request != 0 || (op != "write" && op != "read")) {
    Usage();
  }
  bool writing = op == "write";
  int flags = (writing ? O_WRONLY | O_CREAT : O_RDONLY) | (direct ? O_DIRECT : 0);
  void* buf = nullptr;
  if (posix_memalign(&buf, 4096, request) != 0) return 1;
  std::memset(buf, 0x5a, request);
  auto t0 = std::chrono::steady_clock::now();
  int fd = open(file.c_str(), flags, 0644);
  if (fd < 0) return std::perror("open"), 1;
  for (unsigned long long off = 0; off < size; off += request) {
    ssize_t n = writing ? pwrite(fd, buf, request, static_cast<off_t>(off))
                        : pread(fd, buf, request, static_cast<off_t>(off));
    if (n != static_cast<ssize_t>(request)) return std::perror(op.c_str()), 1;
  }
  if (do_fsync && fsync(fd) != 0) return std::perror("fsync"), 1;
  if (close(fd) != 0) return std::perror("close"), 1;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("{\"op\": \"%s\", \"bytes\": %llu, \"seconds\": %.6f}\n", op.c_str(), size, seconds);
  free(buf);
  return 0;
}
