#pragma once
// Test helpers for running code at a given OpenMP thread count (framework/core/threading.h).

#include <omp.h>

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
