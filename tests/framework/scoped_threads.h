#pragma once
// Test helpers for running code at a given OpenMP thread count (framework/core/threading.h).

#include <link.h>
#include <omp.h>

#include <cstring>

#include "framework/core/threading.h"

namespace skiff::testutil {

/// Sets skiff's thread count for a scope and puts the previous count back.
class ScopedNumThreads {
 public:
  explicit ScopedNumThreads(int n) : prev_(num_threads()) { set_num_threads(n); }
  ~ScopedNumThreads() { set_num_threads(prev_); }
  ScopedNumThreads(const ScopedNumThreads&) = delete;
  ScopedNumThreads& operator=(const ScopedNumThreads&) = delete;
  int previous() const { return prev_; }

 private:
  int prev_;
};

/// True when the process has loaded both GCC's and LLVM's OpenMP runtimes: the clang build
/// (scripts/sanitize.sh) uses libomp while Debian's oneDNN brings libgomp, and then a thread
/// count set through one runtime is not what regions of the other get. Tests that check the
/// count reached OpenMP skip there (the GCC build, with one runtime, runs them).
inline bool mixed_openmp_runtimes() {
  int found = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        const char* name = info->dlpi_name ? std::strrchr(info->dlpi_name, '/') : nullptr;
        if (name && std::strncmp(name, "/libgomp.so", 11) == 0) *static_cast<int*>(data) |= 1;
        if (name && std::strncmp(name, "/libomp.so", 10) == 0) *static_cast<int*>(data) |= 2;
        return 0;
      },
      &found);
  return found == 3;
}

/// Number of threads a parallel region started now really gets (what the kernels' regions get).
inline int parallel_team_size() {
  int n = 0;
#pragma omp parallel
  {
#pragma omp single
    n = omp_get_num_threads();
  }
  return n;
}

}  // namespace skiff::testutil
