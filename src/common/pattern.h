// The data-verification pattern (as IOR's -W/-R): every 8-byte word of a file carries a
// value derived from (seed, rank, offset), so data at the wrong place is caught, not
// only wrong bytes. Used by the test programs and the benchmark.
#pragma once

#include <cstddef>
#include <cstdint>

namespace iorelay {

// The word expected at byte `offset` (a multiple of 8) of data written by `rank`.
inline uint64_t PatternWord(uint64_t seed, uint32_t rank, uint64_t offset) {
  // splitmix64 finaliser over the three inputs: cheap, and every input bit matters.
  uint64_t z = seed ^ (static_cast<uint64_t>(rank) << 48) ^ offset ^ 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
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
