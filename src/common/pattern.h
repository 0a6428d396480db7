// The data-verification pattern (as IOR's -W/-R): every 8-byte word of a file carries a
// value derived from (seed, rank, offset), so data at the wrong place is caught, not
// only wrong bytes. Used by the test programs and the benchmark.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/mix64.h"

namespace iorelay {

// The word expected at byte `offset` (a multiple of 8) of data written by `rank`.
inline uint64_t PatternWord(uint64_t seed, uint32_t rank, uint64_t offset) {
  // splitmix64's finaliser over the three inputs: cheap, and every input bit matters.
  return Mix64(seed ^ (static_cast<uint64_t>(rank) << 48) ^ offset ^ kGoldenGamma);
}

// Fills `words` (covering file bytes [offset, offset + 8 * count)) with rank's pattern.
inline void FillPattern(uint64_t* words, size_t count, uint64_t seed, uint32_t rank,
                        uint64_t offset) {
  for (size_t i = 0; i < count; ++i) words[i] = PatternWord(seed, rank, offset + 8 * i);
}

// How many words of `words` differ from rank's pattern at `offset`.
inline size_t CountWrongWords(const uint64_t* words, size_t count, uint64_t seed, uint32_t rank,
                              uint64_t offset) {
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) wrong += words[i] != PatternWord(seed, rank, offset + 8 * i);
  return wrong;
}

}  // namespace iorelay
