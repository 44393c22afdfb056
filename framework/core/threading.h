#pragma once
/// \file threading.h
/// The one threading knob. skiff uses OpenMP everywhere (oneDNN is built on it),
/// so there is a single pool; its size comes from SKIFF_NUM_THREADS, `--threads`,
/// or set_num_threads(), defaulting to the number of cores.

#include <cstdint>

namespace skiff {

int num_threads();
void set_num_threads(int n);
/// Reads SKIFF_NUM_THREADS once; called by num_threads() on first use.
void init_threads_from_env();

/// Grain below which a loop runs on one thread: forking a team costs a few microseconds.
inline constexpr int64_t kParallelGrain = 32768;

}  // namespace skiff
