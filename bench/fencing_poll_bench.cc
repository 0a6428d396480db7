// The cost of the fencing check the daemon makes before each queued write (ClientGone in
// src/daemon/data_ops.cc): one poll(POLLRDHUP, timeout 0) on the client's connected socket
// (docs/interposer.md, Fencing, records the number and the command).
#include <benchmark/benchmark.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace {

void BM_FencingPoll(benchmark::State& state) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
    state.SkipWithError("socketpair");
    return;
  }
  for (auto _ : state) {
    pollfd p{fds[0], POLLRDHUP, 0};
    benchmark::DoNotOptimize(::poll(&p, 1, 0));
  }
  ::close(fds[0]);
  ::close(fds[1]);
}
BENCHMARK(BM_FencingPoll);

}  // namespace

BENCHMARK_MAIN();
