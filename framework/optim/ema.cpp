#include "framework/optim/ema.h"

#include <algorithm>
#include <cmath>

#include "framework/nn/module.h"
#include "framework/optim/kernel_utils.h"

namespace skiff::optim {

namespace {

Tensor shadow_of(const Tensor& t) {
  Tensor s = empty(t.shape(), is_floating(t.dtype()) ? compute_dtype(t.dtype()) : t.dtype());
  skiff::detail::copy_into(s, t);
  return s;
}

}  // namespace

ExponentialMovingAverage::ExponentialMovingAverage(std::vector<Tensor> tensors, double decay, bool warmup)
    : tensors_(std::move(tensors)), decay_(decay), warmup_(warmup) {
  for (size_t i = 0; i < tensors_.size(); ++i) names_.push_back(std::to_string(i));
  init(decay);
}

ExponentialMovingAverage::ExponentialMovingAverage(const nn::Module& m, double decay, bool warmup)
    : decay_(decay), warmup_(warmup) {
  // state_dict() tensors alias the module's storage, so writing them updates the module.
  for (const auto& [name, t] : m.state_dict()) {
    names_.push_back(name);
    tensors_.push_back(t);
  }
  init(decay);
}

void ExponentialMovingAverage::init(double decay) {
  SKIFF_CHECK(decay >= 0 && decay <= 1, "ExponentialMovingAverage: decay must be in [0, 1], got {}", decay);
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor& t = tensors_[i];
    SKIFF_CHECK(t.defined(), "ExponentialMovingAverage: tensor '{}' is undefined", names_[i]);
    SKIFF_CHECK_T(DeviceError, t.device() == kCPU, "ExponentialMovingAverage: tensor '{}' is on {}, expected cpu",
                  names_[i], t.device().str());
    shadow_.push_back(shadow_of(t));
  }
}

double ExponentialMovingAverage::current_decay() const {
  if (!warmup_) return decay_;
  const double n = double(num_updates_);
  return std::min(decay_, (1.0 + n) / (10.0 + n));
}

void ExponentialMovingAverage::update() {
  const double d = current_decay();
  ++num_updates_;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    Tensor& s = shadow_[i];
    if (!is_floating(s.dtype())) {
      skiff::detail::copy_into(s, tensors_[i]);
      continue;
    }
    Tensor x = detail::as_contiguous(tensors_[i], s.dtype());
    detail::visit_compute(s.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* sp = s.data<T>();
      const T* xp = x.data<T>();
      const T w = T(1.0 - d);
      // PyTorch's lerp (exact at both ends: w = 0 keeps s, w = 1 gives x).
      detail::parallel_elements(s.numel(), [&](int64_t k) {
        sp[k] = std::abs(w) < T(0.5) ? sp[k] + w * (xp[k] - sp[k]) : xp[k] - (xp[k] - sp[k]) * (T(1) - w);
      });
    });
  }
}

void ExponentialMovingAverage::copy_to() {
  for (size_t i = 0; i < tensors_.size(); ++i) skiff::detail::copy_into(tensors_[i], shadow_[i]);
}

void ExponentialMovingAverage::store() {
  SKIFF_CHECK(!stored_, "ExponentialMovingAverage.store: values already stored; call restore() first");
  backup_.clear();
  for (const auto& t : tensors_) backup_.push_back(skiff::detail::contiguous_copy(t));
  stored_ = true;
}

void ExponentialMovingAverage::restore() {
  SKIFF_CHECK(stored_, "ExponentialMovingAverage.restore: nothing stored; call store() first");
  for (size_t i = 0; i < tensors_.size(); ++i) skiff::detail::copy_into(tensors_[i], backup_[i]);
  backup_.clear();
  stored_ = false;
}

std::map<std::string, Tensor> ExponentialMovingAverage::averaged() const {
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < names_.size(); ++i) out[names_[i]] = shadow_[i];
  return out;
}

OptimizerState ExponentialMovingAverage::state_dict() const {
  OptimizerState sd;
  for (size_t i = 0; i < names_.size(); ++i) sd.tensors["shadow." + names_[i]] = skiff::detail::contiguous_copy(shadow_[i]);
  sd.scalars["num_updates"] = double(num_updates_);
  sd.scalars["decay"] = decay_;
  sd.scalars["warmup"] = warmup_ ? 1.0 : 0.0;
  return sd;
}

void ExponentialMovingAverage::load_state_dict(const OptimizerState& sd) {
  std::vector<Tensor> next(shadow_.size());
  for (size_t i = 0; i < names_.size(); ++i) {
    auto it = sd.tensors.find("shadow." + names_[i]);
    SKIFF_CHECK(it != sd.tensors.end(), "ExponentialMovingAverage.load_state_dict: missing 'shadow.{}'", names_[i]);
    SKIFF_CHECK_SHAPE(it->second.shape() == shadow_[i].shape(),
                      "ExponentialMovingAverage.load_state_dict: 'shadow.{}' has shape {}, expected {}", names_[i],
                      it->second.shape(), shadow_[i].shape());
    next[i] = empty(shadow_[i].shape(), shadow_[i].dtype());
    skiff::detail::copy_into(next[i], it->second);
  }
  auto get = [&](const char* k, double dflt) {
    auto it = sd.scalars.find(k);
    return it == sd.scalars.end() ? dflt : it->second;
  };
  shadow_ = std::move(next);
  num_updates_ = int64_t(get("num_updates", 0));
  decay_ = get("decay", decay_);
  warmup_ = get("warmup", warmup_ ? 1 : 0) != 0;
}

}  // namespace skiff::optim
