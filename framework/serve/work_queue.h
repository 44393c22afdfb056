#pragma once
/// \file work_queue.h
/// The bounded queue between the connections and the workers, with dynamic
/// batching: a worker takes the oldest request, then every queued request with
/// the same endpoint and batch key (Endpoint::prepare), up to `max_batch`,
/// waiting at most `max_wait` for more to arrive, and runs them as one batch.
///
/// The queue holds at most `capacity` requests; push() refuses the next one (the
/// server answers 503) rather than letting latency grow without bound. A request
/// whose deadline passes before a worker reaches it is dropped unrun (its client
/// has had 504). Each worker runs with `threads_per_worker` OpenMP threads, so
/// the workers together use the one thread budget (SKIFF_NUM_THREADS, --threads).

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "framework/serve/endpoint.h"
#include "framework/serve/metrics.h"

namespace skiff::serve {

using Clock = std::chrono::steady_clock;

/// One request on its way through the queue. The connection's thread waits on it;
/// a worker runs it and calls finish().
struct Job {
  const Endpoint* endpoint = nullptr;
  std::string batch_key;
  Call call;
  Clock::time_point deadline = Clock::time_point::max();

  /// Marks the job done, with the error that failed it (or none).
  void finish(std::exception_ptr error = nullptr);
  /// Waits until the job is done or `until` passes; false on timeout.
  bool wait_until(Clock::time_point until);
  /// The error that failed it (after a true wait_until).
  std::exception_ptr error() const { return error_; }
  /// True when the deadline passed before any worker ran it.
  bool expired() const { return expired_; }

 private:
  friend class WorkQueue;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false, expired_ = false;
  std::exception_ptr error_;
};

struct QueueOptions {
  int workers = 1;
  int threads_per_worker = 1;
  size_t capacity = 64;
  size_t max_batch = 8;
  std::chrono::microseconds max_wait{2000};
};

class WorkQueue {
 public:
  /// Starts the workers. `metrics` (may be null) receives the queue depth and batches.
  WorkQueue(QueueOptions options, Metrics* metrics);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  /// Queues a job; false when the queue is full or shutting down.
  bool push(std::shared_ptr<Job> job);
  size_t depth() const;
  const QueueOptions& options() const { return options_; }
  /// Lets the workers finish every queued job, then joins them. Idempotent.
  void shutdown();

 private:
  void work();
  /// The next batch: the oldest job and compatible ones (called with the lock held).
  std::vector<std::shared_ptr<Job>> take_batch(std::unique_lock<std::mutex>& lock);
  void gather(std::vector<std::shared_ptr<Job>>& batch);
  void run_batch(std::vector<std::shared_ptr<Job>>& batch);

  QueueOptions options_;
  Metrics* metrics_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace skiff::serve
