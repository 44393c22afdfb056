#include "framework/data/dataloader.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "framework/core/error.h"
#include "framework/ops/ops.h"

namespace skiff::data {

Example default_collate(std::vector<Example>& examples) {
  SKIFF_CHECK(!examples.empty(), "collate: empty batch");
  NoGradGuard no_grad;
  Example out;
  const Example& first = examples.front();
  for (const auto& [key, t0] : first) {
    std::vector<Tensor> parts;
    parts.reserve(examples.size());
    for (size_t i = 0; i < examples.size(); ++i) {
      auto it = examples[i].find(key);
      SKIFF_CHECK(it != examples[i].end(), "collate: example {} of the batch lacks key '{}'", i, key);
      SKIFF_CHECK_SHAPE(it->second.shape() == t0.shape(),
                        "collate: key '{}': example {} has shape {}, example 0 has {} (use a custom collate "
                        "or resize)",
                        key, i, it->second.shape(), t0.shape());
      parts.push_back(it->second);
    }
    out.emplace(key, stack(parts, 0));
  }
  for (size_t i = 1; i < examples.size(); ++i)
    SKIFF_CHECK(examples[i].size() == first.size(), "collate: example {} has {} keys, example 0 has {}", i,
                examples[i].size(), first.size());
  return out;
}

struct DataLoader::Epoch::State {
  // A finished batch or the error that prevented it.
  struct Slot {
    std::optional<Example> batch;
    std::exception_ptr error;
  };
  std::shared_ptr<const Dataset> dataset;
  DataLoaderOptions opt;
  int64_t epoch = 0;
  std::vector<int64_t> order;
  int64_t num_batches = 0;
  int64_t next_batch = 0;
  bool failed = false;

  // Per worker: a bounded queue of finished batches (in that worker's order).
  struct Worker {
    std::deque<Slot> done;
    std::thread thread;
  };
  std::vector<Worker> workers;
  std::mutex mu;
  std::condition_variable cv_space, cv_ready;
  bool stop = false;

  // Loads batch b on the calling thread. Never throws: errors go into the slot.
  Slot load(int64_t b) {
    Slot s;
    const int64_t bs = opt.batch_size;
    const int64_t begin = b * bs, end = std::min<int64_t>(begin + bs, int64_t(order.size()));
    std::vector<Example> examples;
    examples.reserve(size_t(end - begin));
    int64_t index = -1;
    try {
      for (int64_t k = begin; k < end; ++k) {
        index = order[size_t(k)];
        Generator gen(sample_seed(opt.seed, epoch, index));
        examples.push_back(dataset->get(index, gen));
      }
      index = -1;
      s.batch = opt.collate ? opt.collate(examples) : default_collate(examples);
    } catch (Error& e) {
      e.add_context(index >= 0 ? fmt::format("in DataLoader while loading sample {} (batch {})", index, b)
                               : fmt::format("in DataLoader while collating batch {}", b));
      s.error = std::current_exception();
    } catch (const std::exception& e) {
      std::string where = index >= 0 ? fmt::format("sample {}", index) : fmt::format("collating batch {}", b);
      s.error = std::make_exception_ptr(Error(fmt::format("DataLoader: {}: {}", where, e.what())));
    }
    return s;
  }

  void worker_loop(int w) {
    const int nw = int(workers.size());
    for (int64_t b = w; b < num_batches; b += nw) {
      {
        std::unique_lock lk(mu);
        cv_space.wait(lk, [&] { return stop || int(workers[size_t(w)].done.size()) < opt.prefetch; });
        if (stop) return;
      }
      Slot s = load(b);
      std::lock_guard lk(mu);
      workers[size_t(w)].done.push_back(std::move(s));
      cv_ready.notify_all();
    }
  }

  void shutdown() {
    {
      std::lock_guard lk(mu);
      stop = true;
    }
    cv_space.notify_all();
    for (auto& w : workers)
      if (w.thread.joinable()) w.thread.join();
  }
};

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), opt_(std::move(options)) {
  SKIFF_CHECK(dataset_ != nullptr, "DataLoader: null dataset");
  SKIFF_CHECK(opt_.batch_size >= 1, "DataLoader: batch_size must be >= 1, got {}", opt_.batch_size);
  SKIFF_CHECK(opt_.num_workers >= 0, "DataLoader: num_workers must be >= 0, got {}", opt_.num_workers);
  SKIFF_CHECK(opt_.prefetch >= 1, "DataLoader: prefetch must be >= 1, got {}", opt_.prefetch);
}

DataLoader::~DataLoader() = default;

int64_t DataLoader::num_batches() const {
  const int64_t n = dataset_->size();
  return opt_.drop_last ? n / opt_.batch_size : (n + opt_.batch_size - 1) / opt_.batch_size;
}

std::vector<int64_t> DataLoader::indices(int64_t epoch) const {
  const int64_t n = dataset_->size();
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[size_t(i)] = i;
  if (opt_.shuffle) {
    // Fisher-Yates; the generator depends on (seed, epoch) only.
    Generator g(sample_seed(opt_.seed, epoch, -1));
    for (int64_t i = n - 1; i > 0; --i) {
      int64_t j = int64_t(g.next_u64() % uint64_t(i + 1));
      std::swap(order[size_t(i)], order[size_t(j)]);
    }
  }
  return order;
}

DataLoader::Epoch DataLoader::epoch(int64_t epoch) {
  auto s = std::make_unique<Epoch::State>();
  s->dataset = dataset_;
  s->opt = opt_;
  s->epoch = epoch;
  s->order = indices(epoch);
  s->num_batches = num_batches();
  s->workers.resize(size_t(opt_.num_workers));
  Epoch::State* raw = s.get();
  for (int w = 0; w < opt_.num_workers; ++w) s->workers[size_t(w)].thread = std::thread([raw, w] { raw->worker_loop(w); });
  return Epoch(std::move(s));
}

DataLoader::Epoch::Epoch(std::unique_ptr<State> s) : s_(std::move(s)) {}
DataLoader::Epoch::Epoch(Epoch&&) noexcept = default;
DataLoader::Epoch::~Epoch() {
  if (s_) s_->shutdown();
}

std::optional<Example> DataLoader::Epoch::next() {
  State& s = *s_;
  if (s.failed || s.next_batch >= s.num_batches) return std::nullopt;
  const int64_t b = s.next_batch++;
  State::Slot slot;
  if (s.workers.empty()) {
    slot = s.load(b);
  } else {
    auto& w = s.workers[size_t(b % int64_t(s.workers.size()))];
    std::unique_lock lk(s.mu);
    s.cv_ready.wait(lk, [&] { return !w.done.empty(); });
    slot = std::move(w.done.front());
    w.done.pop_front();
    s.cv_space.notify_all();
  }
  if (slot.error) {
    // The epoch ends with the error; the workers stop at the next batch.
    s.failed = true;
    s.shutdown();
    std::rethrow_exception(slot.error);
  }
  return std::move(slot.batch);
}

DataLoader::Epoch::Iterator DataLoader::Epoch::begin() {
  Iterator it;
  it.ep_ = this;
  it.cur_ = next();
  return it;
}

}  // namespace skiff::data
