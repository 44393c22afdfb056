#pragma once
/// \file threading.h
/// The one threading knob. skiff uses OpenMP everywhere (oneDNN is built on it),
/// so there is a single pool; its size comes from SKIFF_NUM_THREADS, `--threads`,
/// or set_num_threads(), defaulting to the number of cores. Libraries with pools of
/// their own (OpenCV runs cv::resize on TBB workers) follow the same count through
/// a listener, so `--threads 1` means one busy thread.

#include <cstdint>

namespace skiff {

int num_threads();
void set_num_threads(int n);
/// Sets the OpenMP team size of the calling thread alone (new threads start from the
/// process-wide count). A server whose workers share the cores gives each its part.
void set_num_threads_for_this_thread(int n);
/// Reads SKIFF_NUM_THREADS once; called by num_threads() on first use.
void init_threads_from_env();
/// Calls `fn(n)` whenever the count is set (set_num_threads, SKIFF_NUM_THREADS),
/// and at once if it was set before. For modules that own another thread pool.
void add_thread_count_listener(void (*fn)(int));

/// Grain below which a loop runs on one thread: forking a team costs a few microseconds.
inline constexpr int64_t kParallelGrain = 32768;

}  // namespace skiff
