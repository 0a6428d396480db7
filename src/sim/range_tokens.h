// Byte-range write tokens of one shared file, as GPFS negotiates them (Schmuck & Haskin, FAST
// 2002): a host writes bytes only under a token it holds for them. A write inside the host's
// ranges needs nothing; otherwise the host asks the file's token server for the range from the
// write's first byte to the end of the file (its desired range), and is granted that range up to
// the first byte another host is writing at that moment (their required ranges), taken from
// whichever hosts held it (each holder a revoke), and below the write the bytes nobody holds (so
// the first writer gets the whole file). So a host writing one region of the file
// negotiates once, and hosts writing interleaved blocks negotiate at nearly every write.
//
// Pure bookkeeping, no clock and no waiting: StorageModel charges the negotiations and makes a
// blocked write wait (sim/storage_model.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace iorelay::sim {

class FileRangeTokens {
 public:
  using Holder = const void*;  // a client host, compared by identity only

  enum class Outcome {
    kHeld,     // inside the holder's ranges: the write may start
    kGranted,  // negotiated (revoked() holders lost bytes): the write may start
    kBlocked,  // overlaps another holder's write in progress: retry when one is released
  };
  // Asks for the bytes [offset, offset + length) for a write of `holder`; unless kBlocked, the
  // write is in progress from now on until its Release.
  Outcome Acquire(Holder holder, uint64_t offset, uint64_t length);
  void Release(Holder holder, uint64_t offset, uint64_t length);
  // The hosts that lost bytes to the last kGranted.
  int revoked() const { return revoked_; }
  // Ranges held (for tests: one holder's adjacent grants are one range).
  size_t ranges() const { return held_.size(); }

 private:
  struct Range {
    uint64_t end;
    Holder holder;
  };
  bool Covers(Holder holder, uint64_t begin, uint64_t end) const;
  // Gives [begin, end) to `holder`, cutting the ranges of others; returns how many others lost
  // bytes.
  int Assign(Holder holder, uint64_t begin, uint64_t end);

  std::map<uint64_t, Range> held_;              // by first byte; disjoint
  std::multimap<uint64_t, Range> in_progress_;  // writes in progress, by first byte
  int revoked_ = 0;
};

}  // namespace iorelay::sim
