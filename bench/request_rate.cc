// Benchmark: forwarded 4 KiB pwrite requests per second against one daemon, from T
// threads of one process through the client C API (each thread its own file region).
// Prints one JSON line. The driver (bench/datapath.py) starts the daemon.
#include <iorelay/iorelay.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: request_rate PATH THREADS SECONDS REQUEST_BYTES\n");
    return 2;
  }
  const char* path = argv[1];
  int threads = std::atoi(argv[2]);
  double seconds = std::atof(argv[3]);
  size_t request = std::strtoul(argv[4], nullptr, 10);
  int err = 0;
  iorelay_client* c = iorelay_client_from_env(&err);
  if (!c) return std::fprintf(stderr, "client: %s\n", std::strerror(-err)), 1;
  iorelay_file* f = nullptr;
  int rc = iorelay_open(c, path, O_RDWR | O_CREAT, 0644, &f);
  if (rc != 0) return std::fprintf(stderr, "open: %s\n", std::strerror(-rc)), 1;
  std::atomic<bool> stop{false};
  std::atomic<long> total{0}, failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::vector<char> buf(request, static_cast<char>('a' + t));
      long n = 0;
      const off_t region = static_cast<off_t>(request) * 256 * t;
      while (!stop.load(std::memory_order_relaxed)) {
        off_t off = region + static_cast<off_t>(request) * (n % 256);
        if (iorelay_pwrite(f, buf.data(), request, off) != static_cast<ssize_t>(request)) {
          failures.fetch_add(1);
          break;
        }
        ++n;
      }
      total.fetch_add(n);
    });
  }
  auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& th : pool) th.join();
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  iorelay_close(f);
  iorelay_client_destroy(c);
  std::printf(
      "{\"threads\": %d, \"request_bytes\": %zu, \"requests\": %ld, \"seconds\": %.3f, "
      "\"requests_per_s\": %.1f, \"failures\": %ld}\n",
      threads, request, total.load(), elapsed, total.load() / elapsed, failures.load());
  return failures.load() == 0 ? 0 : 1;
}
