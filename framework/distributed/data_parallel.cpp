#include "framework/distributed/data_parallel.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "framework/core/error.h"
#include "framework/core/threading.h"
#include "framework/ops/ops.h"

namespace skiff::distributed {
namespace {

struct Bucket {
  std::vector<Tensor> params;
  int ready = 0;
};

}  // namespace

struct DataParallel::Impl {
  std::shared_ptr<ProcessGroup> group;
  std::vector<Bucket> buckets;
  // Main thread (backward runs the hooks there).
  std::vector<char> param_ready;           // by parameter number, this pass
  std::vector<int> bucket_of;              // by parameter number
  int next_launch = 0;

  // Shared with the communication thread.
  std::mutex mu;
  std::condition_variable cv;
  std::deque<int> queue;
  int finished = 0;
  std::exception_ptr error;
  bool stop = false;
  std::thread thread;
  // Hooks stay on the parameters after this object is gone (they cannot be removed);
  // they hold this token weakly and do nothing once it has expired.
  std::shared_ptr<int> alive = std::make_shared<int>(0);

  void mark_ready(int param) {
    if (param_ready[size_t(param)]) return;
    param_ready[size_t(param)] = 1;
    ++buckets[size_t(bucket_of[size_t(param)])].ready;
    while (next_launch < int(buckets.size()) &&
           buckets[size_t(next_launch)].ready == int(buckets[size_t(next_launch)].params.size()))
      launch(next_launch++);
  }

  void launch(int b) {
    {
      std::lock_guard<std::mutex> lock(mu);
      queue.push_back(b);
    }
    cv.notify_all();
  }

  // Averages one bucket: every gradient, divided by the number of ranks, is copied into one
  // flat buffer (one pass: the division rides on the copy), the buffer is summed across the
  // ranks, and every parameter gets its part of it as its gradient.
  void reduce(int b) {
    NoGradGuard no_grad;
    const auto& params = buckets[size_t(b)].params;
    int64_t total = 0;
    for (const Tensor& p : params) total += p.numel();
    Tensor all = empty({total}, params.front().dtype());
    const double scale = 1.0 / double(group->size());
    int64_t offset = 0;
    for (const Tensor& p : params) {
      Tensor g = p.grad();
      if (g.defined() && !g.is_contiguous()) g = contiguous(g);
      if (all.dtype() == DType::Float64)
        scaled_copy(all.data<double>() + offset, g.defined() ? g.data<double>() : nullptr, p.numel(), scale);
      else
        scaled_copy(all.data<float>() + offset, g.defined() ? g.data<float>() : nullptr, p.numel(), float(scale));
      offset += p.numel();
    }
    group->all_reduce(all, ReduceOp::Sum);
    offset = 0;
    for (const Tensor& p : params) {
      Tensor leaf = p;
      leaf.set_grad(reshape(narrow(all, 0, offset, p.numel()), p.shape()));
      offset += p.numel();
    }
  }

  // dst = src * scale, or zeros for a parameter that got no gradient this pass.
  template <typename T>
  static void scaled_copy(T* dst, const T* src, int64_t n, T scale) {
    if (!src) {
      std::fill(dst, dst + n, T(0));
      return;
    }
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i] * scale;
  }

  void run() {
    set_num_threads_for_this_thread(1);  // the main thread's backward keeps the cores
    while (true) {
      int b;
      bool skip;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stop || !queue.empty(); });
        if (stop) return;
        b = queue.front();
        queue.pop_front();
        skip = error != nullptr;  // after a failure the group is unusable: drain the queue
      }
      std::exception_ptr failed;
      if (!skip) {
        try {
          reduce(b);
        } catch (...) {
          failed = std::current_exception();
        }
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        if (failed && !error) error = failed;
        ++finished;
      }
      cv.notify_all();
    }
  }
};

DataParallel::DataParallel(nn::Module& model, std::shared_ptr<ProcessGroup> group, int64_t bucket_bytes)
    : impl_(std::make_unique<Impl>()) {
  SKIFF_CHECK(group != nullptr, "DataParallel: no process group");
  SKIFF_CHECK(bucket_bytes > 0, "DataParallel: bucket size must be positive, got {}", bucket_bytes);
  Impl& s = *impl_;
  s.group = std::move(group);
  {
    NoGradGuard no_grad;
    for (Tensor t : model.parameters()) s.group->broadcast(t, 0);
    for (Tensor t : model.buffers()) s.group->broadcast(t, 0);
  }
  // Buckets in reverse registration order, one dtype each.
  std::vector<Tensor> params;
  for (const Tensor& p : model.parameters())
    if (p.requires_grad()) {
      SKIFF_CHECK_T(NotImplementedError, p.dtype() == DType::Float32 || p.dtype() == DType::Float64,
                    "DataParallel: {} parameters are not supported (float32 and float64 are)", dtype_name(p.dtype()));
      params.push_back(p);
    }
  int64_t bytes = 0;
  for (auto it = params.rbegin(); it != params.rend(); ++it) {
    const Tensor& p = *it;
    if (s.buckets.empty() || bytes >= bucket_bytes || s.buckets.back().params.front().dtype() != p.dtype()) {
      s.buckets.emplace_back();
      bytes = 0;
    }
    const int number = int(s.bucket_of.size());
    s.bucket_of.push_back(int(s.buckets.size() - 1));
    s.buckets.back().params.push_back(p);
    bytes += p.nbytes();
    Tensor leaf = p;
    leaf.register_post_accumulate_grad_hook([alive = std::weak_ptr<int>(s.alive), &s, number](const Tensor&) {
      if (!alive.expired()) s.mark_ready(number);
    });
  }
  s.param_ready.assign(s.bucket_of.size(), 0);
  s.thread = std::thread([&s] { s.run(); });
}

DataParallel::~DataParallel() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

void DataParallel::finish_gradient_sync() {
  Impl& s = *impl_;
  // Parameters that got no gradient this pass: their buckets start now, in order.
  while (s.next_launch < int(s.buckets.size())) s.launch(s.next_launch++);
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(s.mu);
    s.cv.wait(lock, [&] { return s.finished == int(s.buckets.size()); });
    s.finished = 0;
    error = s.error;
    s.error = nullptr;
  }
  s.next_launch = 0;
  std::fill(s.param_ready.begin(), s.param_ready.end(), 0);
  for (Bucket& b : s.buckets) b.ready = 0;
  if (error) std::rethrow_exception(error);
}

int64_t DataParallel::num_buckets() const { return int64_t(impl_->buckets.size()); }

}  // namespace skiff::distributed
