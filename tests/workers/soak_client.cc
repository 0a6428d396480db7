// Load for the soak benchmark (bench/soak.py): holds IDLE authenticated connections to one
// daemon (one client, hence one session and one connection, each) while ACTIVE threads do mixed
// 4 KiB I/O (3 pwrites to 1 pread, random offsets in a region of their own) for SECONDS.
// Prints one JSON line per second ({"t", "ops", "p50_us", "p99_us", "errors"}) and a final one
// ({"done": true, "idle_connected", "ops", "errors"}). The environment names the daemon and
// the credential, as for any client (IORELAY_SERVERS, IORELAY_SECRET_FILE, IORELAY_PREFIX).
#include <iorelay/iorelay.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void RaiseDescriptorLimit() {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

// Latencies of the current second, and the errors so far.
struct Window {
  std::mutex mu;
  std::vector<uint32_t> latencies_us;
  std::atomic<long> errors{0};
  std::atomic<long> ops{0};
};

void Worker(iorelay_client* c, const std::string& path, int index, std::atomic<bool>* stop,
            Window* w) {
  iorelay_file* f = nullptr;
  if (iorelay_open(c, path.c_str(), O_RDWR | O_CREAT, 0644, &f) != 0) {
    w->errors.fetch_add(1);
    return;
  }
  constexpr size_t kBytes = 4096;
  constexpr int kBlocks = 1024;  // a 4 MiB region per worker
  std::vector<char> buf(kBytes, static_cast<char>('a' + index % 26));
  std::mt19937 rng(static_cast<uint32_t>(index));
  const off_t base = static_cast<off_t>(index) * kBlocks * kBytes;
  for (long n = 0; !stop->load(std::memory_order_relaxed); ++n) {
    const off_t off = base + static_cast<off_t>(rng() % kBlocks) * kBytes;
    const auto t0 = Clock::now();
    const ssize_t r = n % 4 == 3 ? iorelay_pread(f, buf.data(), kBytes, off)
                                 : iorelay_pwrite(f, buf.data(), kBytes, off);
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0);
    if (r < 0) w->errors.fetch_add(1);
    w->ops.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> l(w->mu);
    w->latencies_us.push_back(static_cast<uint32_t>(us.count()));
  }
  iorelay_close(f);
}

uint32_t Quantile(std::vector<uint32_t>& v, double q) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: soak_client IDLE ACTIVE SECONDS PATH_PREFIX\n");
    return 2;
  }
  const int idle = std::atoi(argv[1]);
  const int active = std::atoi(argv[2]);
  const double seconds = std::atof(argv[3]);
  const std::string prefix = argv[4];
  RaiseDescriptorLimit();
  int err = 0;
  std::vector<iorelay_client*> idle_clients;
  int connected = 0;
  for (int i = 0; i < idle; ++i) {
    iorelay_client* c = iorelay_client_from_env(&err);
    if (c == nullptr) return std::fprintf(stderr, "client: %s\n", std::strerror(-err)), 1;
    char* json = nullptr;
    if (iorelay_stats_json(c, 0, &json) == 0) ++connected;  // connects and authenticates
    std::free(json);
    idle_clients.push_back(c);
  }
  std::printf("{\"idle_connected\": %d}\n", connected);
  std::fflush(stdout);
  iorelay_client* c = iorelay_client_from_env(&err);
  if (c == nullptr) return std::fprintf(stderr, "client: %s\n", std::strerror(-err)), 1;
  std::atomic<bool> stop{false};
  Window w;
  std::vector<std::thread> workers;
  for (int i = 0; i < active; ++i) {
    workers.emplace_back(Worker, c, prefix + "/soak." + std::to_string(i), i, &stop, &w);
  }
  const auto start = Clock::now();
  for (int t = 1; std::chrono::duration<double>(Clock::now() - start).count() < seconds; ++t) {
    std::this_thread::sleep_until(start + std::chrono::seconds(t));
    std::vector<uint32_t> lat;
    {
      std::lock_guard<std::mutex> l(w.mu);
      lat.swap(w.latencies_us);
    }
    const size_t ops = lat.size();
    const uint32_t p50 = Quantile(lat, 0.50), p99 = Quantile(lat, 0.99);
    std::printf("{\"t\": %d, \"ops\": %zu, \"p50_us\": %u, \"p99_us\": %u, \"errors\": %ld}\n", t,
                ops, p50, p99, w.errors.load());
    std::fflush(stdout);
  }
  stop = true;
  for (std::thread& t : workers) t.join();
  std::printf("{\"done\": true, \"idle_connected\": %d, \"ops\": %ld, \"errors\": %ld}\n",
              connected, w.ops.load(), w.errors.load());
  for (iorelay_client* ic : idle_clients) iorelay_client_destroy(ic);
  iorelay_client_destroy(c);
  return w.errors.load() == 0 ? 0 : 1;
}
