#pragma once
// An endpoint for testing the server's machinery (queue, batching, timeouts,
// shutdown, streaming) without a model: it echoes the request's "value" and
// records the batches it ran; with a gate closed, run() waits until it opens.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "framework/serve/endpoint.h"

namespace skiff::serve::testing {

class GateEndpoint final : public Endpoint {
 public:
  explicit GateEndpoint(bool open = true) : open_(open) {}

  std::string prepare(Call& call, const RequestLimits&) const override {
    SKIFF_CHECK(call.request.is_object() && call.request.contains("value"), "value: this field is required");
    return call.request.value("key", std::string());
  }
  void run(std::span<Call* const> calls) const override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++running_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return open_; });
      batch_sizes_.push_back(calls.size());
    }
    for (Call* c : calls) {
      if (c->request.value("fail", false)) SKIFF_THROW(ValueError, "value: asked to fail");
      if (c->emit)
        for (int i = 0; i < 3; ++i) c->emit({{"token", i}});
      c->result = {{"echo", c->request["value"]}};
    }
  }
  bool streams(const Call& call) const override { return call.request.value("stream", false); }

  void open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  /// Waits until run() has been entered `n` times.
  void wait_running(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return running_ >= n; });
  }
  std::vector<size_t> batch_sizes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return batch_sizes_;
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool open_;
  mutable int running_ = 0;
  mutable std::vector<size_t> batch_sizes_;
};

}  // namespace skiff::serve::testing
