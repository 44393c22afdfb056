#include "framework/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace skiff::optim {

// ---- base ---------------------------------------------------------------------------

LRScheduler::LRScheduler(Optimizer& opt) : opt_(opt) {
  for (auto& g : opt_.param_groups()) {
    auto it = g.options.find("initial_lr");
    if (it == g.options.end()) it = g.options.emplace("initial_lr", g.get("lr")).first;
    base_lrs_.push_back(it->second);
  }
}

void LRScheduler::initialize() {
  last_epoch_ = 0;
  apply();
}

void LRScheduler::apply() {
  last_lr_ = get_lr();
  auto& groups = opt_.param_groups();
  SKIFF_CHECK(groups.size() == base_lrs_.size(), "LRScheduler: optimizer has {} groups, scheduler was built for {}",
              groups.size(), base_lrs_.size());
  for (size_t g = 0; g < groups.size(); ++g) groups[g].options["lr"] = last_lr_[g];
}

void LRScheduler::step() { step_to(last_epoch_ + 1); }

void LRScheduler::step_to(int64_t epoch) {
  SKIFF_CHECK(epoch >= 0, "LRScheduler.step_to: epoch must be >= 0, got {}", epoch);
  last_epoch_ = epoch;
  apply();
}

std::vector<double> LRScheduler::get_lr() const {
  std::vector<double> out(base_lrs_.size());
  for (size_t g = 0; g < out.size(); ++g) out[g] = lr_at(last_epoch_, g);
  return out;
}

OptimizerState LRScheduler::state_dict() const {
  OptimizerState sd;
  sd.scalars["last_epoch"] = double(last_epoch_);
  for (size_t g = 0; g < base_lrs_.size(); ++g) sd.scalars["base_lrs." + std::to_string(g)] = base_lrs_[g];
  return sd;
}

void LRScheduler::load_state_dict(const OptimizerState& sd) {
  auto get = [&](const std::string& k) {
    auto it = sd.scalars.find(k);
    SKIFF_CHECK(it != sd.scalars.end(), "LRScheduler.load_state_dict: missing scalar '{}'", k);
    return it->second;
  };
  std::vector<double> base(base_lrs_.size());
  for (size_t g = 0; g < base.size(); ++g) base[g] = get("base_lrs." + std::to_string(g));
  SKIFF_CHECK(!sd.scalars.count("base_lrs." + std::to_string(base.size())),
              "LRScheduler.load_state_dict: state has more than the optimizer's {} groups", base.size());
  const auto epoch = int64_t(get("last_epoch"));
  base_lrs_ = std::move(base);
  for (size_t g = 0; g < base_lrs_.size(); ++g) opt_.param_groups()[g].options["initial_lr"] = base_lrs_[g];
  step_to(epoch);
}

// ---- schedules -------------------------------------------------------------------------

ConstantLR::ConstantLR(Optimizer& opt, double factor, int64_t total_iters)
    : LRScheduler(opt), factor_(factor), total_iters_(total_iters) {
  SKIFF_CHECK(factor >= 0 && factor <= 1, "ConstantLR: factor must be in [0, 1], got {}", factor);
  SKIFF_CHECK(total_iters >= 0, "ConstantLR: total_iters must be >= 0, got {}", total_iters);
  initialize();
}
double ConstantLR::lr_at(int64_t e, size_t g) const { return e < total_iters_ ? base_lrs_[g] * factor_ : base_lrs_[g]; }

StepLR::StepLR(Optimizer& opt, int64_t step_size, double gamma)
    : LRScheduler(opt), step_size_(step_size), gamma_(gamma) {
  SKIFF_CHECK(step_size >= 1, "StepLR: step_size must be >= 1, got {}", step_size);
  initialize();
}
double StepLR::lr_at(int64_t e, size_t g) const { return base_lrs_[g] * std::pow(gamma_, double(e / step_size_)); }

MultiStepLR::MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(opt), milestones_(std::move(milestones)), gamma_(gamma) {
  SKIFF_CHECK(std::is_sorted(milestones_.begin(), milestones_.end()),
              "MultiStepLR: milestones must be sorted, got {}", milestones_);
  initialize();
}
double MultiStepLR::lr_at(int64_t e, size_t g) const {
  const auto n = std::upper_bound(milestones_.begin(), milestones_.end(), e) - milestones_.begin();
  return base_lrs_[g] * std::pow(gamma_, double(n));
}

ExponentialLR::ExponentialLR(Optimizer& opt, double gamma) : LRScheduler(opt), gamma_(gamma) { initialize(); }
double ExponentialLR::lr_at(int64_t e, size_t g) const { return base_lrs_[g] * std::pow(gamma_, double(e)); }

CosineAnnealingLR::CosineAnnealingLR(Optimizer& opt, int64_t t_max, double eta_min)
    : LRScheduler(opt), t_max_(t_max), eta_min_(eta_min) {
  SKIFF_CHECK(t_max >= 1, "CosineAnnealingLR: T_max must be >= 1, got {}", t_max);
  initialize();
}
double CosineAnnealingLR::lr_at(int64_t e, size_t g) const {
  return eta_min_ + (base_lrs_[g] - eta_min_) * (1 + std::cos(std::numbers::pi * double(e) / double(t_max_))) / 2;
}

PolynomialLR::PolynomialLR(Optimizer& opt, int64_t total_iters, double power, double end_lr)
    : LRScheduler(opt), total_iters_(total_iters), power_(power), end_lr_(end_lr) {
  SKIFF_CHECK(total_iters >= 1, "PolynomialLR: total_iters must be >= 1, got {}", total_iters);
  initialize();
}
double PolynomialLR::lr_at(int64_t e, size_t g) const {
  const double frac = 1.0 - double(std::min(e, total_iters_)) / double(total_iters_);
  return (base_lrs_[g] - end_lr_) * std::pow(frac, power_) + end_lr_;
}

OneCycleLR::OneCycleLR(Optimizer& opt, std::vector<double> max_lrs, int64_t total_steps, OneCycleOptions o)
    : LRScheduler(opt), max_lrs_(std::move(max_lrs)), total_steps_(total_steps), o_(o) {
  const size_t ng = opt.param_groups().size();
  SKIFF_CHECK(max_lrs_.size() == 1 || max_lrs_.size() == ng,
              "OneCycleLR: expected 1 or {} max_lrs (one per group), got {}", ng, max_lrs_.size());
  if (max_lrs_.size() == 1) max_lrs_.assign(ng, max_lrs_[0]);
  SKIFF_CHECK(total_steps >= 2, "OneCycleLR: total_steps must be >= 2, got {}", total_steps);
  SKIFF_CHECK(o.pct_start > 0 && o.pct_start < 1, "OneCycleLR: pct_start must be in (0, 1), got {}", o.pct_start);
  SKIFF_CHECK(o.div_factor > 0 && o.final_div_factor > 0, "OneCycleLR: div factors must be > 0, got {} and {}",
              o.div_factor, o.final_div_factor);
  const double T = double(total_steps);
  if (o.three_phase)
    phases_ = {{o.pct_start * T - 1, 0, 1}, {2 * o.pct_start * T - 2, 1, 0}, {T - 1, 0, 2}};
  else
    phases_ = {{o.pct_start * T - 1, 0, 1}, {T - 1, 1, 2}};
  // The schedule starts at max_lr / div_factor; record it as the base (PyTorch's initial_lr).
  for (size_t g = 0; g < ng; ++g) {
    base_lrs_[g] = max_lrs_[g] / o.div_factor;
    opt.param_groups()[g].options["initial_lr"] = base_lrs_[g];
  }
  initialize();
}

double OneCycleLR::lr_at(int64_t e, size_t g) const {
  SKIFF_CHECK(e < total_steps_, "OneCycleLR: stepped to {} but total_steps is {} (last valid step {})", e,
              total_steps_, total_steps_ - 1);
  const double initial = max_lrs_[g] / o_.div_factor;
  const double levels[3] = {initial, max_lrs_[g], initial / o_.final_div_factor};
  double start_step = 0;
  for (size_t i = 0; i < phases_.size(); ++i) {
    const Phase& ph = phases_[i];
    if (double(e) <= ph.end_step || i + 1 == phases_.size()) {
      const double pct = (double(e) - start_step) / (ph.end_step - start_step);
      const double a = levels[int(ph.start_factor)], b = levels[int(ph.end_factor)];
      return o_.cosine ? b + (a - b) / 2.0 * (std::cos(std::numbers::pi * pct) + 1) : (b - a) * pct + a;
    }
    start_step = ph.end_step;
  }
  return levels[2];  // unreachable
}

namespace {
Optimizer& optimizer_of(const std::unique_ptr<LRScheduler>& inner) {
  SKIFF_CHECK(inner != nullptr, "LinearWarmup: the inner scheduler is null");
  return inner->optimizer();
}
}  // namespace

LinearWarmup::LinearWarmup(std::unique_ptr<LRScheduler> inner, int64_t warmup_steps, double start_factor)
    : LRScheduler(optimizer_of(inner)),
      inner_(std::move(inner)),
      warmup_steps_(warmup_steps),
      start_factor_(start_factor) {
  SKIFF_CHECK(warmup_steps >= 0, "LinearWarmup: warmup_steps must be >= 0, got {}", warmup_steps);
  SKIFF_CHECK(start_factor >= 0 && start_factor <= 1, "LinearWarmup: start_factor must be in [0, 1], got {}",
              start_factor);
  base_lrs_ = inner_->base_lrs();
  initialize();
}

double LinearWarmup::lr_at(int64_t e, size_t g) const {
  if (e >= warmup_steps_) return inner_->lr_at(e - warmup_steps_, g);
  const double target = inner_->lr_at(0, g);
  return target * (start_factor_ + (1.0 - start_factor_) * double(e) / double(warmup_steps_));
}

}  // namespace skiff::optim
