#pragma once
// Concurrent first use of a Predictor, shared by the predictor thread-safety tests.
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "framework/engine/predictor.h"

namespace skiff::graph::testing {

struct ConcurrentRuns {
  std::vector<Tensor> outputs;      ///< outputs[0] of each thread's run()
  std::vector<std::string> errors;  ///< what each thread's run() threw, "" when nothing
  Tensor serial;                    ///< outputs[0] of one run afterwards, alone
};

/// `threads` threads, released together, each call p.run({x}) once; then one more
/// run on a fresh thread gives the single-threaded result (a fresh thread has the
/// same OpenMP defaults as the workers, so the results must agree bit for bit).
inline ConcurrentRuns run_concurrently(const engine::Predictor& p, const Tensor& x, int threads) {
  ConcurrentRuns r{std::vector<Tensor>(size_t(threads)), std::vector<std::string>(size_t(threads)), {}};
  std::latch start(threads);
  std::vector<std::thread> workers;
  for (int i = 0; i < threads; ++i)
    workers.emplace_back([&, i] {
      start.arrive_and_wait();  // all threads call run() at the same moment
      try {
        r.outputs[size_t(i)] = p.run(std::vector<Tensor>{x})[0];
      } catch (const std::exception& e) {
        r.errors[size_t(i)] = e.what();
      }
    });
  for (auto& t : workers) t.join();
  std::thread([&] { r.serial = p.run(std::vector<Tensor>{x})[0]; }).join();
  return r;
}

}  // namespace skiff::graph::testing
