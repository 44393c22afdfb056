#include "framework/serve/work_queue.h"

#include <algorithm>

#include "framework/core/error.h"
#include "framework/core/threading.h"

namespace skiff::serve {

void Job::finish(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = std::move(error);
    done_ = true;
  }
  cv_.notify_all();
}

bool Job::wait_until(Clock::time_point until) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_until(lock, until, [this] { return done_; });
}

WorkQueue::WorkQueue(QueueOptions options, Metrics* metrics) : options_(options), metrics_(metrics) {
  SKIFF_CHECK(options_.workers > 0 && options_.threads_per_worker > 0 && options_.capacity > 0 &&
                  options_.max_batch > 0,
              "serve: workers, threads per worker, queue capacity and max batch must be positive");
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { work(); });
}

WorkQueue::~WorkQueue() { shutdown(); }

bool WorkQueue::push(std::shared_ptr<Job> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || queue_.size() >= options_.capacity) return false;
    queue_.push_back(std::move(job));
    if (metrics_) metrics_->set_queue_depth(queue_.size());
  }
  // Every waiter: a worker gathering a batch may want this job, and an idle one must wake.
  cv_.notify_all();
  return true;
}

size_t WorkQueue::depth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

void WorkQueue::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
}

void WorkQueue::gather(std::vector<std::shared_ptr<Job>>& batch) {
  const Job& first = *batch.front();
  for (auto it = queue_.begin(); it != queue_.end() && batch.size() < options_.max_batch;) {
    if ((*it)->endpoint == first.endpoint && (*it)->batch_key == first.batch_key) {
      batch.push_back(std::move(*it));
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<std::shared_ptr<Job>> WorkQueue::take_batch(std::unique_lock<std::mutex>& lock) {
  cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
  if (queue_.empty()) return {};  // stopping, and nothing left to do
  std::vector<std::shared_ptr<Job>> batch{std::move(queue_.front())};
  queue_.pop_front();
  if (!batch.front()->batch_key.empty() && options_.max_batch > 1) {
    gather(batch);
    // Wait a little for more of the same kind: one batch of n costs less than n runs.
    const auto until = Clock::now() + options_.max_wait;
    while (batch.size() < options_.max_batch && !stopping_ &&
           cv_.wait_until(lock, until, [&] { return stopping_ || !queue_.empty(); })) {
      const size_t before = batch.size();
      gather(batch);
      if (batch.size() == before) {
        // Only other kinds arrived: let another worker take them, and stop waiting.
        lock.unlock();
        cv_.notify_one();
        lock.lock();
        break;
      }
    }
    gather(batch);
  }
  if (metrics_) metrics_->set_queue_depth(queue_.size());
  return batch;
}

void WorkQueue::run_batch(std::vector<std::shared_ptr<Job>>& batch) {
  const auto now = Clock::now();
  std::vector<Call*> calls;
  std::vector<std::shared_ptr<Job>> live;
  for (auto& job : batch) {
    if (job->deadline <= now) {
      job->expired_ = true;  // read only after finish() by the waiter
      job->finish();
      continue;
    }
    calls.push_back(&job->call);
    live.push_back(job);
  }
  if (live.empty()) return;
  if (metrics_) metrics_->record_batch(live.size());
  std::exception_ptr error;
  try {
    live.front()->endpoint->run(calls);
  } catch (...) {
    error = std::current_exception();
  }
  for (auto& job : live) job->finish(error);
}

void WorkQueue::work() {
  set_num_threads_for_this_thread(options_.threads_per_worker);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    std::vector<std::shared_ptr<Job>> batch = take_batch(lock);
    if (batch.empty()) return;
    lock.unlock();
    run_batch(batch);
    lock.lock();
  }
}

}  // namespace skiff::serve
