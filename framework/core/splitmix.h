#pragma once
/// \file splitmix.h
/// splitmix64: a tiny, fast 64-bit mixer that gives the same numbers on every
/// platform and standard library (std:: distributions do not). Used where results
/// must be a pure function of a seed and a position (data order, synthetic images).

#include <cstdint>

namespace skiff {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace skiff
