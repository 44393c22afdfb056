#pragma once
/// \file rng.h
/// Seeded random number generation. Same seed and same thread count give the
/// same numbers: generators are only ever advanced from the calling thread.

#include <cstdint>
#include <random>
#include <string>

namespace skiff {

/// A seedable generator (mt19937_64). Its state can be saved in checkpoints.
class Generator {
 public:
  explicit Generator(uint64_t seed = 5489u) : engine_(seed), seed_(seed) {}
  void seed(uint64_t s) { engine_.seed(s); seed_ = s; }
  uint64_t initial_seed() const { return seed_; }
  uint64_t next_u64() { return engine_(); }
  /// Uniform in [0, 1).
  double uniform() { return double(engine_() >> 11) * 0x1.0p-53; }
  /// Standard normal (Box-Muller, no cached second value so the state is a pure function of draws).
  double normal();
  /// Serialized engine state, for checkpoints.
  std::string state() const;
  void set_state(const std::string& s);

 private:
  std::mt19937_64 engine_;
  uint64_t seed_;
};

/// The process-wide default generator used when no generator is passed.
Generator& default_generator();
/// Seeds the default generator.
void manual_seed(uint64_t seed);

}  // namespace skiff
