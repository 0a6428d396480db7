// The cost of sealing one frame (common/frame_mac.h), for a heartbeat, a 4 KiB write and a
// 4 MiB write, with each tag algorithm: second argument 1, Poly1305 under a one-time key from
// ChaCha20; 2, AES-GMAC (which tags frames over kGmacMaxFrameBytes with Poly1305 too).
// docs/security.md records the numbers and the command. Each side of a sealed connection pays
// this once per frame it sends and once per frame it receives.
#include <benchmark/benchmark.h>

#include <vector>

#include "common/frame_mac.h"
#include "common/handshake_transcript.h"

namespace iorelay {
namespace {

void BM_FrameTag(benchmark::State& state) {
  // As on a connection: the key from the handshake (which also initialises libsodium, so that
  // it picks the fastest Poly1305 for this CPU).
  Secret secret{};
  const SessionKey key = TranscriptMac(secret, TranscriptMacRole::kSessionKey, TranscriptDigest{});
  const auto algorithm = static_cast<TagAlgorithm>(state.range(1));
  if (algorithm == TagAlgorithm::kAesGmac && !AesGmacAvailable()) {
    state.SkipWithError("no AES-GMAC on this CPU");
    return;
  }
  FrameSealer sealer(key, FrameDirection::kToDaemon, algorithm);
  std::vector<uint8_t> frame(static_cast<size_t>(state.range(0)), 0x5a);
  for (auto _ : state) {
    FrameMac mac = sealer.Next();
    mac.Update(frame);
    FrameTag tag = mac.Final();
    benchmark::DoNotOptimize(tag);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
// A heartbeat (header only), a 4 KiB pwrite (header, fields, data), a 4 MiB pwrite.
BENCHMARK(BM_FrameTag)->ArgsProduct({{24, 24 + 16 + 4096, 24 + 16 + (4 << 20)}, {1, 2}});

}  // namespace
}  // namespace iorelay

BENCHMARK_MAIN();
