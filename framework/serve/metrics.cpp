#include "framework/serve/metrics.h"

#include <fmt/format.h>

namespace skiff::serve {

void Metrics::record_request(const std::string& route, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  Route& r = routes_[route];
  ++r.by_status[status];
  ++r.count;
  r.seconds += seconds;
  for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
    if (seconds <= kLatencyBuckets[i]) {
      ++r.buckets[i];
      break;
    }
  }
}

void Metrics::record_batch(size_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  ++batches_;
  batched_calls_ += size;
}

std::string Metrics::prometheus_text(size_t queue_capacity, int workers) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  auto line = [&out]<typename... A>(fmt::format_string<A...> format, A&&... args) {
    fmt::format_to(std::back_inserter(out), format, std::forward<A>(args)...);
  };
  line("# HELP skiff_requests_total Requests answered, by route and HTTP status.\n");
  line("# TYPE skiff_requests_total counter\n");
  for (const auto& [route, r] : routes_)
    for (const auto& [status, n] : r.by_status)
      line("skiff_requests_total{{route=\"{}\",code=\"{}\"}} {}\n", route, status, n);
  line("# HELP skiff_request_duration_seconds Time from a request's arrival to its answer.\n");
  line("# TYPE skiff_request_duration_seconds histogram\n");
  for (const auto& [route, r] : routes_) {
    uint64_t cumulative = 0;
    for (size_t i = 0; i < kLatencyBuckets.size(); ++i) {
      cumulative += r.buckets[i];
      line("skiff_request_duration_seconds_bucket{{route=\"{}\",le=\"{}\"}} {}\n", route, kLatencyBuckets[i],
           cumulative);
    }
    line("skiff_request_duration_seconds_bucket{{route=\"{}\",le=\"+Inf\"}} {}\n", route, r.count);
    line("skiff_request_duration_seconds_sum{{route=\"{}\"}} {}\n", route, r.seconds);
    line("skiff_request_duration_seconds_count{{route=\"{}\"}} {}\n", route, r.count);
  }
  line("# HELP skiff_queue_depth Requests waiting for a worker.\n# TYPE skiff_queue_depth gauge\n");
  line("skiff_queue_depth {}\n", queue_depth_.load());
  line("# HELP skiff_queue_capacity Requests that may wait before the server answers 503.\n");
  line("# TYPE skiff_queue_capacity gauge\nskiff_queue_capacity {}\n", queue_capacity);
  line("# HELP skiff_requests_in_flight Requests received and not yet answered.\n");
  line("# TYPE skiff_requests_in_flight gauge\nskiff_requests_in_flight {}\n", in_flight_.load());
  line("# HELP skiff_workers Workers running endpoints.\n# TYPE skiff_workers gauge\nskiff_workers {}\n", workers);
  line("# HELP skiff_batches_total Batches the workers ran.\n# TYPE skiff_batches_total counter\n");
  line("skiff_batches_total {}\n", batches_);
  line("# HELP skiff_batched_calls_total Requests run inside those batches.\n");
  line("# TYPE skiff_batched_calls_total counter\nskiff_batched_calls_total {}\n", batched_calls_);
  return out;
}

}  // namespace skiff::serve
