#include "framework/data/dataloader.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <sstream>
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

std::string LoaderState::str() const { return fmt::format("skiff.loader.v1 {} {} {}", seed, epoch, batch); }

LoaderState LoaderState::parse(const std::string& s) {
  std::istringstream is(s);
  std::string tag;
  LoaderState st;
  is >> tag >> st.seed >> st.epoch >> st.batch;
  std::string rest;
  const bool ok = !is.fail() && tag == "skiff.loader.v1" && !(is >> rest) && st.epoch >= 0 && st.batch >= 0;
  SKIFF_CHECK(ok, "LoaderState: '{}' is not a loader position (expected 'skiff.loader.v1 <seed> <epoch> <batch>')",
              s);
  return st;
}

struct DataLoader::Epoch::State {
  // A finished batch, the error that prevented it, or (neither) the end of a stream.
  struct Slot {
    std::optional<Example> batch;
    std::exception_ptr error;
    bool end() const { return !batch && !error; }
  };
  std::shared_ptr<const Dataset> dataset;
  std::shared_ptr<const IterableDataset> stream_ds;
  DataLoaderOptions opt;
  int64_t epoch = 0;
  std::vector<int64_t> order;
  int64_t num_batches = -1;  // -1: a stream, ends when it runs dry
  int64_t start_batch = 0;
  int64_t next_batch = 0;
  bool finished = false;
  ExampleStream main_stream;  // the stream read by next() when there are no workers

  // Per worker: a bounded queue of finished batches (in that worker's order).
  struct Worker {
    std::deque<Slot> done;
    std::thread thread;
  };
  std::vector<Worker> workers;
  std::mutex mu;
  std::condition_variable cv_space, cv_ready;
  bool stop = false;

  Slot collate(std::vector<Example>& examples, int64_t b) {
    Slot s;
    try {
      s.batch = opt.collate ? opt.collate(examples) : default_collate(examples);
    } catch (Error& e) {
      e.add_context(fmt::format("in DataLoader while collating batch {}", b));
      s.error = std::current_exception();
    } catch (const std::exception& e) {
      s.error = std::make_exception_ptr(Error(fmt::format("DataLoader: collating batch {}: {}", b, e.what())));
    }
    return s;
  }

  // Loads batch b of an indexed dataset on the calling thread. Never throws: errors go into the slot.
  Slot load(int64_t b) {
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
    } catch (Error& e) {
      e.add_context(fmt::format("in DataLoader while loading sample {} (batch {})", index, b));
      return {std::nullopt, std::current_exception()};
    } catch (const std::exception& e) {
      return {std::nullopt,
              std::make_exception_ptr(Error(fmt::format("DataLoader: sample {}: {}", index, e.what())))};
    }
    return collate(examples, b);
  }

  // Opens the shard of the stream whose blocks are the batches b >= start_batch with b % n == w.
  ExampleStream open_stream(int w, int n) {
    return stream_ds->stream(epoch, StreamShard{.shard = w, .num_shards = n, .block = opt.batch_size,
                                                .first_block = start_batch});
  }

  // Reads batch b of a stream from `st` (positioned at that batch). An empty slot
  // means the stream ended (or only a short final batch was left under drop_last).
  Slot load_stream(ExampleStream& st, int64_t b) {
    const int64_t bs = opt.batch_size;
    std::vector<Example> examples;
    examples.reserve(size_t(bs));
    try {
      while (int64_t(examples.size()) < bs) {
        std::optional<Example> ex = st();
        if (!ex) break;
        examples.push_back(std::move(*ex));
      }
    } catch (Error& e) {
      e.add_context(fmt::format("in DataLoader while reading stream position {} (batch {})",
                                b * bs + int64_t(examples.size()), b));
      return {std::nullopt, std::current_exception()};
    } catch (const std::exception& e) {
      return {std::nullopt, std::make_exception_ptr(Error(fmt::format(
                                "DataLoader: stream position {}: {}", b * bs + int64_t(examples.size()), e.what())))};
    }
    if (examples.empty() || (opt.drop_last && int64_t(examples.size()) < bs)) return {};
    return collate(examples, b);
  }

  void push(int w, Slot s) {
    std::lock_guard lk(mu);
    workers[size_t(w)].done.push_back(std::move(s));
    cv_ready.notify_all();
  }
  bool wait_for_space(int w) {
    std::unique_lock lk(mu);
    cv_space.wait(lk, [&] { return stop || int(workers[size_t(w)].done.size()) < opt.prefetch; });
    return !stop;
  }

  void worker_loop(int w) {
    const int nw = int(workers.size());
    // This worker's first batch: the smallest b >= start_batch with b % nw == w.
    const int64_t first = start_batch + ((w - start_batch % nw) % nw + nw) % nw;
    if (!stream_ds) {
      for (int64_t b = first; b < num_batches; b += nw) {
        if (!wait_for_space(w)) return;
        push(w, load(b));
      }
      return;
    }
    ExampleStream st;
    try {
      st = open_stream(w, nw);
    } catch (...) {
      push(w, {std::nullopt, std::current_exception()});
      return;
    }
    for (int64_t b = first;; b += nw) {
      if (!wait_for_space(w)) return;
      Slot s = load_stream(st, b);
      const bool last = !s.batch;
      push(w, std::move(s));
      if (last) return;
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

namespace {
void check_options(const DataLoaderOptions& opt) {
  SKIFF_CHECK(opt.batch_size >= 1, "DataLoader: batch_size must be >= 1, got {}", opt.batch_size);
  SKIFF_CHECK(opt.num_workers >= 0, "DataLoader: num_workers must be >= 0, got {}", opt.num_workers);
  SKIFF_CHECK(opt.prefetch >= 1, "DataLoader: prefetch must be >= 1, got {}", opt.prefetch);
  SKIFF_CHECK(opt.num_shards >= 1 && opt.shard >= 0 && opt.shard < opt.num_shards,
              "DataLoader: shard {} of {} is out of range", opt.shard, opt.num_shards);
}
}  // namespace

DataLoader::DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), opt_(std::move(options)) {
  SKIFF_CHECK(dataset_ != nullptr, "DataLoader: null dataset");
  check_options(opt_);
}

DataLoader::DataLoader(std::shared_ptr<const IterableDataset> dataset, DataLoaderOptions options)
    : stream_(std::move(dataset)), opt_(std::move(options)) {
  SKIFF_CHECK(stream_ != nullptr, "DataLoader: null dataset");
  check_options(opt_);
  SKIFF_CHECK(!opt_.shuffle,
              "DataLoader: shuffle is not supported for an iterable dataset (a stream has no indices to permute; "
              "shuffle inside the dataset, e.g. with a seeded buffer)");
  if (opt_.num_shards > 1) set_shard(opt_.shard, opt_.num_shards);
}

void DataLoader::set_shard(int shard, int num_shards) {
  DataLoaderOptions o = opt_;
  o.shard = shard;
  o.num_shards = num_shards;
  check_options(o);
  SKIFF_CHECK_T(NotImplementedError, !stream_ || num_shards == 1,
                "DataLoader: an iterable dataset cannot be sharded across ranks (its length is unknown, so the ranks "
                "could not agree on the number of steps); use an indexed dataset for distributed training");
  opt_ = o;
}

DataLoader::~DataLoader() = default;

int64_t DataLoader::num_batches() const {
  if (stream_) return -1;
  const int64_t n = (dataset_->size() + opt_.num_shards - 1) / opt_.num_shards;  // one shard, padded
  return opt_.drop_last ? n / opt_.batch_size : (n + opt_.batch_size - 1) / opt_.batch_size;
}

std::vector<int64_t> DataLoader::indices(int64_t epoch) const {
  SKIFF_CHECK(!stream_, "DataLoader::indices: an iterable dataset has no indices");
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
  if (opt_.num_shards == 1 || n == 0) return order;
  const int64_t per_shard = (n + opt_.num_shards - 1) / opt_.num_shards;
  std::vector<int64_t> mine(static_cast<size_t>(per_shard));
  for (int64_t k = 0; k < per_shard; ++k)
    mine[size_t(k)] = order[size_t((opt_.shard + k * opt_.num_shards) % n)];  // wraps around to pad
  return mine;
}

DataLoader::Epoch DataLoader::epoch(int64_t epoch, int64_t start_batch) {
  auto s = std::make_unique<Epoch::State>();
  s->dataset = dataset_;
  s->stream_ds = stream_;
  s->opt = opt_;
  s->epoch = epoch;
  s->num_batches = num_batches();
  SKIFF_CHECK(start_batch >= 0 && (stream_ || start_batch <= s->num_batches),
              "DataLoader: start batch {} out of range [0, {}]", start_batch, s->num_batches);
  s->start_batch = s->next_batch = start_batch;
  if (!stream_) s->order = indices(epoch);
  s->workers.resize(size_t(opt_.num_workers));
  Epoch::State* raw = s.get();
  for (int w = 0; w < opt_.num_workers; ++w) s->workers[size_t(w)].thread = std::thread([raw, w] { raw->worker_loop(w); });
  return Epoch(std::move(s));
}

DataLoader::Epoch DataLoader::resume(const LoaderState& state) {
  SKIFF_CHECK(state.seed == opt_.seed,
              "DataLoader::resume: the saved position is for seed {}, this loader has seed {} (the batches would "
              "differ)",
              state.seed, opt_.seed);
  return epoch(state.epoch, state.batch);
}

DataLoader::Epoch::Epoch(std::unique_ptr<State> s) : s_(std::move(s)) {}
DataLoader::Epoch::Epoch(Epoch&&) noexcept = default;
DataLoader::Epoch::~Epoch() {
  if (s_) s_->shutdown();
}

LoaderState DataLoader::Epoch::state() const { return {s_->opt.seed, s_->epoch, s_->next_batch}; }

std::optional<Example> DataLoader::Epoch::next() {
  State& s = *s_;
  if (s.finished || (s.num_batches >= 0 && s.next_batch >= s.num_batches)) return std::nullopt;
  const int64_t b = s.next_batch;
  State::Slot slot;
  if (s.workers.empty()) {
    if (!s.stream_ds) {
      slot = s.load(b);
    } else {
      try {
        if (!s.main_stream) s.main_stream = s.open_stream(0, 1);
        slot = s.load_stream(s.main_stream, b);
      } catch (...) {
        slot.error = std::current_exception();
      }
    }
  } else {
    auto& w = s.workers[size_t(b % int64_t(s.workers.size()))];
    std::unique_lock lk(s.mu);
    s.cv_ready.wait(lk, [&] { return !w.done.empty(); });
    slot = std::move(w.done.front());
    w.done.pop_front();
    s.cv_space.notify_all();
  }
  if (slot.end()) {
    s.finished = true;
    s.shutdown();
    return std::nullopt;
  }
  if (slot.error) {
    // The epoch ends with the error; the workers stop at the next batch.
    s.finished = true;
    s.shutdown();
    std::rethrow_exception(slot.error);
  }
  ++s.next_batch;
  return std::move(slot.batch);
}

DataLoader::Epoch::Iterator DataLoader::Epoch::begin() {
  Iterator it;
  it.ep_ = this;
  it.cur_ = next();
  return it;
}

}  // namespace skiff::data
