#pragma once
/// \file metrics.h
/// The numbers `GET /metrics` reports, in Prometheus' text format: requests by
/// route and status, their latencies (a histogram), the queue's depth, requests
/// in flight, and the batches the workers ran. Thread-safe; updated per request.

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace skiff::serve {

class Metrics {
 public:
  /// Upper bounds of the latency histogram's buckets, in seconds (+Inf is implied).
  static constexpr std::array<double, 12> kLatencyBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                            0.5,   1,    2.5,   5,    10,  30};

  /// One finished request: its route ("ocr", "predict", "health"), HTTP status and time taken.
  void record_request(const std::string& route, int status, double seconds);
  /// One batch run by a worker, of `size` calls.
  void record_batch(size_t size);
  void set_queue_depth(size_t depth) { queue_depth_ = int64_t(depth); }
  void add_in_flight(int delta) { in_flight_ += delta; }

  /// Everything, in the Prometheus text exposition format (version 0.0.4).
  std::string prometheus_text(size_t queue_capacity, int workers) const;

 private:
  struct Route {
    std::map<int, uint64_t> by_status;
    std::array<uint64_t, kLatencyBuckets.size()> buckets{};  // counts per bucket (not cumulative)
    uint64_t count = 0;
    double seconds = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, Route> routes_;
  uint64_t batches_ = 0, batched_calls_ = 0;
  std::atomic<int64_t> queue_depth_{0}, in_flight_{0};
};

}  // namespace skiff::serve
