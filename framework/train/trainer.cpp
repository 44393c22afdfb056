#include "framework/train/trainer.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "framework/autograd/engine.h"
#include "framework/core/error.h"
#include "framework/core/progress_bar.h"
#include "framework/core/rng.h"
#include "framework/data/image_io.h"
#include "framework/distributed/data_parallel.h"
#include "framework/distributed/process_group.h"
#include "framework/distributed/zero.h"
#include "framework/io/checkpoint.h"
#include "framework/io/file.h"
#include "framework/ops/op.h"
#include "framework/optim/clip_grad.h"
#include "framework/optim/ema.h"
#include "framework/train/event_file.h"
#include "framework/train/plot.h"

namespace skiff::train {

namespace {

// ---- Ctrl-C -----------------------------------------------------------------------------
std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) {
  g_interrupted.store(true);
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
}

// Installs the handler for the lifetime of a fit() and puts the old one back.
class SigintScope {
 public:
  SigintScope() {
    g_interrupted.store(false);
    old_ = std::signal(SIGINT, on_sigint);
  }
  ~SigintScope() { std::signal(SIGINT, old_); }

 private:
  void (*old_)(int);
};

// ---- records ----------------------------------------------------------------------------
std::string now_stamp() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  return buf;
}

// Four decimals, or three significant digits in scientific notation for the small
// values (1e-5 errors, 1e-7 losses) a science run is judged by.
std::string format_value(double v) {
  return std::abs(v) < 1e-3 && v != 0 ? fmt::format("{:.3e}", v) : fmt::format("{:.4f}", v);
}

std::string format_duration(double seconds) {
  auto s = int64_t(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

class AppendFile {
 public:
  explicit AppendFile(const std::filesystem::path& path) : path_(path), out_(path, std::ios::app) {
    if (!out_) throw IoError(fmt::format("{}: cannot open for writing", path.string()));
  }
  void line(const std::string& text) {
    out_ << text << '\n';
    out_.flush();
    if (!out_) throw IoError(fmt::format("{}: write failed", path_.string()));
  }

 private:
  std::filesystem::path path_;
  std::ofstream out_;
};

int64_t batch_rows(const data::Example& batch) {
  for (const auto& [name, t] : batch)
    if (t.defined() && t.dim() > 0) return t.size(0);
  return 1;
}

std::string scheduler_json(const optim::LRScheduler& s) { return nlohmann::json(s.state_dict().scalars).dump(); }

optim::OptimizerState scheduler_state(const std::string& text) {
  optim::OptimizerState st;
  st.scalars = nlohmann::json::parse(text).get<std::map<std::string, double>>();
  return st;
}

}  // namespace

struct Trainer::Impl {
  TrainTask& task;
  std::vector<TrainPhase> phases;
  std::vector<int64_t> phase_start;  // first step (0-based) of each phase
  data::DataLoader* loader;          // null: full-batch steps
  TrainerOptions o;
  std::unique_ptr<optim::ExponentialMovingAverage> ema;
  std::unique_ptr<AppendFile> log_file, metrics_file;
  std::unique_ptr<EventFileWriter> events;
  std::unique_ptr<ProgressBar> bar;  // drawn on a terminal; log lines to stderr otherwise
  // Distributed runs (skiff launch): the world group, the gradient averaging, and
  // whether this rank writes the output directory (rank 0).
  std::shared_ptr<distributed::ProcessGroup> group;
  std::unique_ptr<distributed::DataParallel> ddp;
  std::unique_ptr<distributed::ZeroRedundancy> zero;
  bool writes = true;

  // Curves for the final plot.
  std::vector<double> loss_steps, losses, eval_steps, eval_values;

  Impl(TrainTask& t, std::vector<TrainPhase> ph, data::DataLoader* l, TrainerOptions opts)
      : task(t), phases(std::move(ph)), loader(l), o(std::move(opts)) {
    SKIFF_CHECK(o.epochs >= 1, "training needs at least one epoch, got {}", o.epochs);
    SKIFF_CHECK(o.log_every >= 1, "log_every must be >= 1, got {}", o.log_every);
    SKIFF_CHECK(o.max_steps >= 0 && o.eval_every >= 0 && o.checkpoint_every >= 0,
                "max_steps, eval_every and checkpoint_every must be >= 0");
    SKIFF_CHECK(!phases.empty(), "training needs at least one phase (an optimizer)");
    std::set<std::string> names;
    for (size_t i = 0; i < phases.size(); ++i) {
      const TrainPhase& p = phases[i];
      SKIFF_CHECK(p.optimizer, "training phase '{}' has no optimizer", p.name);
      SKIFF_CHECK(!p.name.empty() && p.name.find('/') == std::string::npos && names.insert(p.name).second,
                  "training phase names must be unique, non-empty and without '/': '{}'", p.name);
      SKIFF_CHECK(p.steps >= 0 && p.log_every >= 0 && p.eval_every >= 0 && p.checkpoint_every >= 0,
                  "training phase '{}': steps, log_every, eval_every and checkpoint_every must be >= 0", p.name);
      SKIFF_CHECK(p.steps > 0 || (i + 1 == phases.size() && loader),
                  "training phase '{}' needs a step count (only the last phase of a run with a data loader "
                  "may take the rest of the run)",
                  p.name);
    }
    // Started by skiff launch (SKIFF_WORLD_SIZE set): join the ranks and train on this rank's shard.
    group = distributed::world();
    if (group && group->size() == 1) group.reset();
    if (group) {
      writes = group->rank() == 0;
      if (loader) loader->set_shard(group->rank(), group->size());
    }
    if (loader)
      SKIFF_CHECK(loader->num_batches() > 0, "the training set gives no batches (is it empty, or smaller than one "
                                             "batch with drop_last?)");
    int64_t at = 0;
    for (const TrainPhase& p : phases) {
      phase_start.push_back(at);
      at += p.steps;
    }
    bar = std::make_unique<ProgressBar>(o.progress_bar && !o.quiet);
  }

  // A full-batch run is one epoch of all its steps.
  int64_t steps_per_epoch() const {
    if (loader) return loader->num_batches();
    int64_t n = 0;
    for (const TrainPhase& p : phases) n += p.steps;
    return n;
  }
  int64_t total_steps() const {
    int64_t all = loader ? o.epochs * steps_per_epoch() : steps_per_epoch();
    return o.max_steps > 0 ? std::min(all, o.max_steps) : all;
  }
  // The phase that takes the step after `done` steps.
  size_t phase_of(int64_t done) const {
    size_t i = 0;
    while (i + 1 < phases.size() && done >= phase_start[i + 1]) ++i;
    return i;
  }
  int64_t phase_end(size_t i) const {
    return i + 1 < phases.size() ? phase_start[i + 1] : total_steps();
  }
  const char* rate_unit() const { return loader ? "samples/s" : "steps/s"; }

  // A line for the log file and, unless quiet, stderr (above the bar).
  void say(const std::string& text) {
    if (log_file) log_file->line(fmt::format("[{}] {}", now_stamp(), text));
    if (o.quiet) return;
    bar->clear();
    std::fprintf(stderr, "%s\n", text.c_str());
  }

  void draw_bar(int64_t step, double loss, double lr, double rate, double eta) {
    int64_t total = total_steps();
    bar->draw(double(step) / double(std::max<int64_t>(total, 1)),
              fmt::format("{}/{} loss {} lr {:.2e} {:.1f} {} ETA {}", step, total, format_value(loss), lr, rate, rate_unit(),
                          format_duration(eta)));
  }

  static double lr_of(const optim::Optimizer& opt) { return opt.param_groups().front().get("lr"); }

  std::map<std::string, double> evaluate(int64_t step, int64_t epoch) {
    if (ema) {
      ema->store();
      ema->copy_to();
    }
    task.model().eval();
    std::map<std::string, double> m;
    {
      NoGradGuard no_grad;
      m = task.evaluate();
    }
    task.model().train();
    if (ema) ema->restore();
    SKIFF_CHECK(m.count(o.metric), "the evaluation has no metric '{}' (it gives: {})", o.metric,
                fmt::join([&] {
                  std::vector<std::string> k;
                  for (auto& [name, v] : m) k.push_back(name);
                  return k;
                }(), ", "));
    nlohmann::json j{{"step", step}, {"epoch", epoch}, {"eval", m}};
    if (metrics_file) metrics_file->line(j.dump());
    std::string text = fmt::format("eval step {}:", step);
    for (auto& [name, v] : m) {
      text += fmt::format(" {} {}", name, format_value(v));
      if (events) events->add_scalar("eval/" + name, v, step);
    }
    say(text);
    eval_steps.push_back(double(step));
    eval_values.push_back(m[o.metric]);
    return m;
  }

  int zero_stage() const {
    if (o.zero_stage >= 0) return o.zero_stage;
    const char* e = std::getenv("SKIFF_ZERO_STAGE");
    if (!e || !*e) return 0;
    SKIFF_CHECK(std::string(e) == "0" || std::string(e) == "1", "SKIFF_ZERO_STAGE='{}' must be 0 or 1", e);
    return std::atoi(e);
  }

  bool better(double v, double than) const { return o.higher_is_better ? v > than : v < than; }
  bool better(double v, const std::map<std::string, double>& best) const {
    return best.empty() || better(v, best.at(o.metric));
  }
  bool reached(double v) const { return o.stop_at && (v == *o.stop_at || better(v, *o.stop_at)); }

  std::map<std::string, Tensor> model_weights() {
    if (!ema) return task.model().state_dict();
    return ema->averaged();
  }

  void save_weights(const std::filesystem::path& path) {
    if (!writes) return;
    io::save_safetensors(path, model_weights(), o.metadata);
  }

  // A run of one phase keeps the single-optimizer checkpoint layout; with several,
  // each optimizer's tensors are under "<phase>/" and the schedules are a JSON object by phase.
  // `gathered`: with ZeRO, every rank's optimizer state merged (ZeroRedundancy::gather_state).
  io::Checkpoint checkpoint(int64_t step, const data::LoaderState& position, const FitResult& r,
                            const std::optional<optim::OptimizerState>& gathered) {
    io::Checkpoint c;
    c.step = step;
    c.model = task.model().state_dict();
    if (phases.size() == 1) {
      c.optimizer = (gathered ? *gathered : phases[0].optimizer->state_dict()).to_tensor_map();
      if (phases[0].scheduler) c.scheduler_state = scheduler_json(*phases[0].scheduler);
    } else {
      nlohmann::json schedules = nlohmann::json::object();
      for (const TrainPhase& p : phases) {
        for (auto& [k, v] : p.optimizer->state_dict().to_tensor_map()) c.optimizer[p.name + "/" + k] = v;
        if (p.scheduler) schedules[p.name] = p.scheduler->state_dict().scalars;
      }
      if (!schedules.empty()) c.scheduler_state = schedules.dump();
    }
    if (ema) {
      auto st = ema->state_dict();
      c.extra = st.tensors;
      c.metadata["ema"] = nlohmann::json(st.scalars).dump();
    }
    c.rng["default"] = default_generator().state();
    if (loader) c.data["train"] = position.str();
    for (auto& [k, v] : r.best) c.metrics["best." + k] = v;
    c.metadata["best_step"] = std::to_string(r.best_step);
    for (auto& [k, v] : o.metadata) c.metadata[k] = v;
    return c;
  }

  void restore(const io::Checkpoint& c, FitResult& r) {
    task.model().load_state_dict(c.model);
    if (phases.size() == 1) {
      phases[0].optimizer->load_state_dict(optim::OptimizerState::from_tensor_map(c.optimizer));
      if (phases[0].scheduler) {
        SKIFF_CHECK(!c.scheduler_state.empty(), "the checkpoint has no learning-rate schedule state");
        phases[0].scheduler->load_state_dict(scheduler_state(c.scheduler_state));
      }
    } else {
      nlohmann::json schedules = c.scheduler_state.empty() ? nlohmann::json::object()
                                                           : nlohmann::json::parse(c.scheduler_state);
      for (const TrainPhase& p : phases) {
        std::map<std::string, Tensor> own;
        const std::string prefix = p.name + "/";
        for (auto& [k, v] : c.optimizer)
          if (k.rfind(prefix, 0) == 0) own[k.substr(prefix.size())] = v;
        SKIFF_CHECK(!own.empty(), "the checkpoint has no optimizer state for the training phase '{}'", p.name);
        p.optimizer->load_state_dict(optim::OptimizerState::from_tensor_map(own));
        if (p.scheduler) {
          SKIFF_CHECK(schedules.contains(p.name), "the checkpoint has no learning-rate schedule state for the "
                                                  "training phase '{}'", p.name);
          optim::OptimizerState st;
          st.scalars = schedules[p.name].get<std::map<std::string, double>>();
          p.scheduler->load_state_dict(st);
        }
      }
    }
    if (ema) {
      SKIFF_CHECK(c.metadata.count("ema"), "the checkpoint was saved without EMA; the recipe asks for EMA");
      optim::OptimizerState st;
      st.tensors = c.extra;
      st.scalars = nlohmann::json::parse(c.metadata.at("ema")).get<std::map<std::string, double>>();
      ema->load_state_dict(st);
    }
    if (auto it = c.rng.find("default"); it != c.rng.end()) default_generator().set_state(it->second);
    for (auto& [k, v] : c.metrics)
      if (k.rfind("best.", 0) == 0) r.best[k.substr(5)] = v;
    if (auto it = c.metadata.find("best_step"); it != c.metadata.end()) r.best_step = std::stoll(it->second);
    r.steps = c.step;
  }

  void write_plot() {
    if (!writes || losses.empty()) return;
    std::vector<cv::Mat> panels;
    auto [lo, hi] = padded_range({losses});
    panels.push_back(line_panel(loss_steps, {{losses, cv::Scalar(200, 80, 30), false}}, lo, hi, "training loss", "step"));
    if (eval_values.size() >= 2) {
      auto [elo, ehi] = padded_range({eval_values});
      panels.push_back(line_panel(eval_steps, {{eval_values, cv::Scalar(40, 150, 40), false}}, elo, ehi,
                                  "eval " + o.metric, "step"));
    }
    cv::Mat figure = panel_row(panels, "");
    data::write_image_file((o.output_dir / "curves.png").string(), figure);
  }

  // One optimizer step of phase `p` on `batch`; returns the loss (before the step).
  double optimize(TrainPhase& p, const data::Example& batch, int64_t step) {
    optim::Optimizer& opt = *p.optimizer;
    double value;
    if (p.closure) {
      // The optimizer calls this as often as its line search needs.
      value = opt.step([&] {
        opt.zero_grad();
        Tensor loss = task.loss(batch);
        backward(loss);
        if (ddp) ddp->finish_gradient_sync();
        return loss.item<double>();
      });
      SKIFF_CHECK(std::isfinite(value), "the loss is {} at step {} (phase {}): check the recipe", value, step + 1,
                  p.name);
    } else {
      opt.zero_grad();
      Tensor loss = task.loss(batch);
      value = loss.item<double>();
      SKIFF_CHECK(std::isfinite(value), "the loss is {} at step {}: lower the learning rate or check the data",
                  value, step + 1);
      backward(loss);
      if (ddp) ddp->finish_gradient_sync();
      if (o.clip_norm > 0) optim::clip_grad_norm_(task.model(), o.clip_norm);
      if (zero) zero->before_step();
      opt.step();
      if (zero) zero->after_step();
    }
    if (p.scheduler) p.scheduler->step();
    if (ema) ema->update();
    return value;
  }

  FitResult fit(const std::optional<std::filesystem::path>& resume_from) {
    // Distributed: every rank trains, rank 0 alone writes the output directory.
    std::optional<io::CheckpointManager> manager;
    if (writes) {
      std::filesystem::create_directories(o.output_dir);
      log_file = std::make_unique<AppendFile>(o.output_dir / "train.log");
      metrics_file = std::make_unique<AppendFile>(o.output_dir / "metrics.jsonl");
      events = std::make_unique<EventFileWriter>(o.output_dir);
      manager.emplace(o.output_dir / "checkpoints", io::CheckpointManagerOptions{.keep_last = o.keep_last});
    }
    // Before the EMA copies the weights: every rank starts from rank 0's.
    if (group) ddp = std::make_unique<distributed::DataParallel>(task.model(), group);
    if (group && zero_stage() >= 1) {
      SKIFF_CHECK_T(NotImplementedError, phases.size() == 1 && !phases[0].closure,
                    "ZeRO needs a run with one optimizer that takes plain steps (this one has {} phase(s))",
                    phases.size());
      zero = std::make_unique<distributed::ZeroRedundancy>(*phases[0].optimizer, group);
    }
    if (o.ema_decay > 0) ema = std::make_unique<optim::ExponentialMovingAverage>(task.model(), o.ema_decay, true);

    FitResult r;
    data::LoaderState position{loader ? loader->options().seed : 0, 0, 0};
    if (resume_from) {
      io::Checkpoint c = io::load_checkpoint(*resume_from);
      restore(c, r);
      if (zero) zero->drop_foreign_state();
      if (loader) {
        auto it = c.data.find("train");
        SKIFF_CHECK(it != c.data.end(), "{}: the checkpoint has no data-loader position", resume_from->string());
        position = data::LoaderState::parse(it->second);
      } else {
        position.batch = r.steps;
      }
      say(fmt::format("resumed from {} at step {}", resume_from->string(), r.steps));
    }
    const int64_t total = total_steps();
    if (loader)
      say(fmt::format("training {} steps ({} per epoch, {} epochs), output in {}", total, steps_per_epoch(), o.epochs,
                      o.output_dir.string()));
    else
      say(fmt::format("training {} full-batch steps ({}), output in {}", total,
                      fmt::join([&] {
                        std::vector<std::string> parts;
                        for (size_t i = 0; i < phases.size(); ++i)
                          if (phase_start[i] < total)
                            parts.push_back(fmt::format("{} {}", phases[i].name,
                                                        std::min(phase_end(i), total) - phase_start[i]));
                        return parts;
                      }(), ", "),
                      o.output_dir.string()));

    SigintScope sigint;
    task.model().train();
    auto start = std::chrono::steady_clock::now();
    auto window_start = start;
    int64_t window_rows = 0, steps_this_run = 0;
    double window_loss = 0;
    int64_t window_steps = 0;
    int64_t step = r.steps;
    auto save = [&] {
      std::optional<optim::OptimizerState> gathered;
      if (zero) gathered = zero->gather_state();  // collective: every rank takes part
      if (manager) r.last_checkpoint = manager->save(checkpoint(step, position, r, gathered));
    };
    size_t announced = phases.size() > 1 && step > 0 ? phase_of(step - 1) : size_t(-1);

    // One step on `batch`; `epoch_end` tells whether it finished an epoch. True: stop the run.
    auto train_step = [&](const data::Example& batch, int64_t epoch, auto epoch_end_of) -> bool {
      const size_t pi = phase_of(step);
      TrainPhase& phase = phases[pi];
      if (phases.size() > 1 && pi != announced) {
        say(fmt::format("phase {}: steps {}..{}", phase.name, phase_start[pi] + 1, std::min(phase_end(pi), total)));
        announced = pi;
      }
      double value = optimize(phase, batch, step);
      if (zero && steps_this_run == 0) say("ZeRO stage 1: " + zero->summary());  // the memory saved, once
      bool interrupted = g_interrupted.load();
      if (group) {
        // The ranks agree on the logged loss (the mean over ranks, as one process with
        // the whole batch would report) and on stopping at Ctrl-C.
        Tensor agree = from_vector<double>({value, interrupted ? 1.0 : 0.0});
        group->all_reduce(agree, distributed::ReduceOp::Sum);
        auto both = agree.to_vector<double>();
        value = both[0] / double(group->size());
        interrupted = both[1] > 0;
      }
      const double lr = lr_of(*phase.optimizer);
      ++step;
      ++steps_this_run;
      const bool epoch_end = epoch_end_of();
      const int64_t in_phase = step - phase_start[pi];
      const bool phase_done = step == std::min(phase_end(pi), total);
      r.last_loss = value;
      window_loss += value;
      ++window_steps;
      // Samples of the global batch: every rank took a batch like this one.
      window_rows += loader ? batch_rows(batch) * (group ? group->size() : 1) : 1;

      auto now = std::chrono::steady_clock::now();
      double elapsed = std::chrono::duration<double>(now - start).count();
      double eta = elapsed / double(steps_this_run) * double(total - step);
      double window_s = std::chrono::duration<double>(now - window_start).count();
      double rate = window_s > 0 ? double(window_rows) / window_s : 0;
      draw_bar(step, value, lr, rate, eta);
      const int64_t log_every = phase.log_every > 0 ? phase.log_every : o.log_every;
      if (in_phase % log_every == 0 || phase_done) {
        double mean = window_loss / double(window_steps);
        nlohmann::json j{{"step", step}, {"epoch", epoch}, {"loss", mean}, {"lr", lr},
                         {loader ? "samples_per_s" : "steps_per_s", rate}};
        if (phases.size() > 1) j["phase"] = phase.name;
        if (metrics_file) metrics_file->line(j.dump());
        if (events) {
          events->add_scalar("train/loss", mean, step);
          events->add_scalar("train/lr", lr, step);
        }
        loss_steps.push_back(double(step));
        losses.push_back(mean);
        std::string where = loader ? fmt::format("epoch {} step {}/{}", epoch + 1, step, total)
                                   : fmt::format("{}{}step {}/{}", phases.size() > 1 ? phase.name : "",
                                                 phases.size() > 1 ? " " : "", step, total);
        std::string line =
            fmt::format("{} loss {} lr {:.3e} {:.1f} {}", where, format_value(mean), lr, rate, rate_unit());
        if (!bar->active())
          say(line + fmt::format(" ETA {}", format_duration(eta)));
        else if (log_file)
          log_file->line(fmt::format("[{}] {}", now_stamp(), line));
        window_loss = 0, window_steps = 0, window_rows = 0, window_start = now;
      }
      const int64_t eval_every = phase.eval_every > 0 ? phase.eval_every : o.eval_every;
      bool eval_now = eval_every > 0 ? (step >= o.eval_start && in_phase % eval_every == 0) : epoch_end;
      bool stop = false;
      if (eval_now || step == total) {
        auto m = evaluate(step, epoch);
        if (better(m[o.metric], r.best)) {
          r.best = m;
          r.best_step = step;
          save_weights(o.output_dir / "best_model.safetensors");
          say(fmt::format("best {} {} at step {}{}", o.metric, format_value(m[o.metric]), step,
                          writes ? ": saved best_model.safetensors" : ""));
        }
        if (reached(m[o.metric]) && step < total) {
          r.reached_target = true;
          say(fmt::format("{} {} reached the target {} at step {}: stopping", o.metric, format_value(m[o.metric]),
                          format_value(*o.stop_at), step));
          stop = true;
        }
      }
      bool ckpt_now = phase.checkpoint_every > 0 ? in_phase % phase.checkpoint_every == 0
                      : o.checkpoint_every > 0 ? step % o.checkpoint_every == 0
                                               : epoch_end;
      if (ckpt_now || step == total || stop) save();
      if (interrupted) {
        if (!(ckpt_now || step == total || stop)) save();
        r.interrupted = true;
        say(fmt::format("interrupted at step {}: saved {}; continue with --resume", step,
                        r.last_checkpoint.string()));
        return true;
      }
      return stop;
    };

    bool stopped = false;
    if (loader) {
      for (int64_t epoch = position.epoch; epoch < o.epochs && step < total && !stopped; ++epoch) {
        auto pass = loader->resume({position.seed, epoch, epoch == position.epoch ? position.batch : 0});
        while (step < total) {
          std::optional<data::Example> batch = pass.next();
          if (!batch) break;
          stopped = train_step(*batch, epoch, [&] {
            position = pass.state();
            return position.batch >= steps_per_epoch();
          });
          if (stopped) break;
        }
        if (position.batch >= steps_per_epoch()) position = {position.seed, epoch + 1, 0};
      }
    } else {
      const data::Example everything;
      while (step < total && !stopped)
        stopped = train_step(everything, 0, [&] {
          position.batch = step;
          return step == total;
        });
    }
    r.steps = step;
    if (r.interrupted) return r;
    save_weights(o.output_dir / "latest_model.safetensors");
    write_plot();
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    say(fmt::format("done: {} steps in {}{}", step, format_duration(elapsed),
                    r.best.empty() ? std::string()
                                   : fmt::format(", best {} {} at step {}", o.metric, format_value(r.best.at(o.metric)),
                                                 r.best_step)));
    return r;
  }
};

Trainer::Trainer(TrainTask& task, optim::Optimizer& optimizer, optim::LRScheduler* scheduler,
                 data::DataLoader& loader, TrainerOptions options)
    : impl_(std::make_unique<Impl>(task, std::vector<TrainPhase>{{.optimizer = &optimizer, .scheduler = scheduler}},
                                   &loader, std::move(options))) {}

Trainer::Trainer(TrainTask& task, std::vector<TrainPhase> phases, data::DataLoader* loader, TrainerOptions options)
    : impl_(std::make_unique<Impl>(task, std::move(phases), loader, std::move(options))) {}

Trainer::~Trainer() = default;

FitResult Trainer::fit(const std::optional<std::filesystem::path>& resume_from) { return impl_->fit(resume_from); }

int64_t Trainer::total_steps() const { return impl_->total_steps(); }

std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& output_dir) {
  auto dir = output_dir / "checkpoints";
  if (!std::filesystem::is_directory(dir)) return std::nullopt;
  return io::CheckpointManager(dir).latest();
}

void load_weights(nn::Module& model, const std::filesystem::path& file, bool strict) {
  if (!std::filesystem::exists(file)) throw IoError(fmt::format("{}: no such weights file", file.string()));
  // A checkpoint is read whole (it validates its own layout); a weights file is just tensors.
  io::SafetensorsFile f = io::load_safetensors(file);
  std::map<std::string, Tensor> weights =
      f.metadata.count("skiff.format") ? io::load_checkpoint(file).model : std::move(f.tensors);
  try {
    model.load_state_dict(weights, strict);
  } catch (const Error& e) {
    throw ValueError(fmt::format("{}: does not fit the model: {}", file.string(), e.what()));
  }
}

}  // namespace skiff::train
