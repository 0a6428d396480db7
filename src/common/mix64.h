// splitmix64's finaliser: a cheap bijection of 64-bit words in which every input bit moves
// about half of the output bits. For reproducible pseudo-random choices keyed by a value (a
// route, a lock owner, a name's directory stripe) and for the data pattern.
#pragma once

#include <cstdint>

namespace iorelay {

// splitmix64's increment; adding it first keeps 0 from mapping to 0.
inline constexpr uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ull;

inline constexpr uint64_t Mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace iorelay
