// The floor of the shared-memory transport's wake-ups on this machine: the same sleep/wake
// protocol as the daemon's rings (common/shm_ring.h) with no other work. A "daemon" process of
// L loop threads, each owning C/L slots, and a "client" process of C threads, one slot each,
// in one shared mapping. A client writes its request, rings its loop (a futex wake) when the loop
// said it sleeps, then sleeps on its own flag until the reply (no spin). A loop answers every
// slot with a request, waking each client that sleeps, and when a pass finds none marks itself
// asleep, looks once more, and sleeps on its doorbell. So a request costs at most what it costs
// through iorelayd with IORELAY_SPIN_US=0 minus the frames, the scheduler and the backend: the
// CPU per request printed (from each process's rusage) bounds what any change of the transport
// can reach without spinning.
//
//   wakeup_floor [CLIENTS 8] [LOOPS 2] [SECONDS 3]   → one line of JSON
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <thread>
#include <vector>

namespace {

struct alignas(64) Slot {
  std::atomic<uint32_t> request{0};         // 1: a request waits for its loop
  std::atomic<uint32_t> reply{0};           // 1: the reply waits for the client
  std::atomic<uint32_t> client_waiting{0};  // the client sleeps on it
};

struct alignas(64) Loop {
  std::atomic<uint32_t> bell{0};  // the loop sleeps on it while 1 (asleep)
};

struct Shared {
  std::atomic<uint32_t> stop{0};
  std::atomic<uint64_t> requests{0};
  double daemon_cpu_s = 0;
  Loop loops[64];
  Slot slots[1024];
};

void Wait(std::atomic<uint32_t>* word, uint32_t value) {
  syscall(SYS_futex, word, FUTEX_WAIT, value, nullptr, nullptr, 0);
}
void Wake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, word, FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

double CpuSeconds(int who) {
  rusage r;
  getrusage(who, &r);
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

void RunLoop(Shared* sh, int loop, int clients, int loops) {
  Loop& me = sh->loops[loop];
  while (sh->stop.load() == 0) {
    bool any = false;
    for (int c = loop; c < clients; c += loops) {
      Slot& s = sh->slots[c];
      if (s.request.load() == 0) continue;
      any = true;
      s.request.store(0);
      s.reply.store(1);
      if (s.client_waiting.exchange(0) != 0) Wake(&s.client_waiting);
    }
    if (any) continue;
    me.bell.store(1);  // asleep; then one more look, as the rings do
    bool pending = false;
    for (int c = loop; c < clients; c += loops) pending |= sh->slots[c].request.load() != 0;
    if (!pending && sh->stop.load() == 0) Wait(&me.bell, 1);
    me.bell.store(0);
  }
}

void RunClient(Shared* sh, int c, int loops) {
  Slot& s = sh->slots[c];
  Loop& loop = sh->loops[c % loops];
  uint64_t n = 0;
  while (sh->stop.load() == 0) {
    s.request.store(1);
    if (loop.bell.exchange(0) != 0) Wake(&loop.bell);
    for (;;) {
      if (s.reply.load() != 0) break;
      s.client_waiting.store(1);
      if (s.reply.load() != 0) {
        s.client_waiting.store(0);
        break;
      }
      Wait(&s.client_waiting, 1);
    }
    s.reply.store(0);
    ++n;
  }
  sh->requests.fetch_add(n);
}

}  // namespace

int main(int argc, char** argv) {
  const int clients = argc > 1 ? std::atoi(argv[1]) : 8;
  const int loops = argc > 2 ? std::atoi(argv[2]) : 2;
  const double seconds = argc > 3 ? std::atof(argv[3]) : 3.0;
  if (clients < 1 || clients > 1024 || loops < 1 || loops > 64) return 2;
  void* p =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 1;
  auto* sh = new (p) Shared();
  const pid_t daemon = fork();
  if (daemon == 0) {
    std::vector<std::thread> ts;
    for (int l = 0; l < loops; ++l) ts.emplace_back(RunLoop, sh, l, clients, loops);
    for (auto& t : ts) t.join();
    sh->daemon_cpu_s = CpuSeconds(RUSAGE_SELF);
    _exit(0);
  }
  const pid_t client = fork();
  if (client == 0) {
    std::vector<std::thread> ts;
    for (int c = 0; c < clients; ++c) ts.emplace_back(RunClient, sh, c, loops);
    for (auto& t : ts) t.join();
    _exit(0);
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  sh->stop.store(1);
  for (int l = 0; l < loops; ++l) {
    sh->loops[l].bell.store(0);
    Wake(&sh->loops[l].bell);
  }
  for (int c = 0; c < clients; ++c) {
    sh->slots[c].reply.store(1);
    sh->slots[c].client_waiting.store(0);
    Wake(&sh->slots[c].client_waiting);
  }
  int status;
  waitpid(client, &status, 0);
  const double client_cpu = CpuSeconds(RUSAGE_CHILDREN);
  waitpid(daemon, &status, 0);
  const double n = static_cast<double>(sh->requests.load());
  std::printf(
      "{\"clients\": %d, \"loops\": %d, \"requests_per_s\": %.0f, \"daemon_cpu_us_per_request\": "
      "%.2f, \"client_cpu_us_per_request\": %.2f}\n",
      clients, loops, n / seconds, sh->daemon_cpu_s * 1e6 / n, client_cpu * 1e6 / n);
  return 0;
}
