#include "framework/optim/optimizer.h"

#include <set>

#include "framework/nn/module.h"
#include "framework/ops/op.h"
#include "framework/optim/kernel_utils.h"

namespace skiff::optim {

namespace {

std::string option_names(const Options& o) {
  std::string s;
  for (const auto& [k, v] : o) s += (s.empty() ? "" : ", ") + k;
  return s;
}

}  // namespace

// ---- helpers -------------------------------------------------------------------

DType compute_dtype(DType t) { return t == DType::Float64 ? DType::Float64 : DType::Float32; }

Tensor zeros_like_state(const Tensor& p) { return zeros(p.shape(), compute_dtype(p.dtype())); }

namespace detail {

Tensor working_copy(const Tensor& p) {
  if (p.is_contiguous() && p.dtype() == compute_dtype(p.dtype()))
    return skiff::detail::make_view(p, p.shape(), p.strides(), p.offset());
  Tensor w = empty(p.shape(), compute_dtype(p.dtype()));
  skiff::detail::copy_into(w, p);
  return w;
}

void commit(const Tensor& target, const Tensor& work) {
  if (work.storage() == target.storage()) {
    target.storage()->bump_version();  // written through the alias
    return;
  }
  skiff::detail::copy_into(target, work);
}

Tensor as_contiguous(const Tensor& g, DType t) {
  if (g.is_contiguous() && g.dtype() == t) return g;
  Tensor out = empty(g.shape(), t);
  skiff::detail::copy_into(out, g);
  return out;
}

}  // namespace detail

std::vector<ParamGroup> module_group(const nn::Module& m) { return single_group(m.parameters()); }

double ParamGroup::get(const std::string& name) const {
  auto it = options.find(name);
  SKIFF_CHECK(it != options.end(), "optimizer: param group has no option '{}' (known: {})", name,
              option_names(options));
  return it->second;
}

// ---- OptimizerState ------------------------------------------------------------------

std::map<std::string, Tensor> OptimizerState::to_tensor_map() const {
  std::map<std::string, Tensor> out = tensors;
  for (const auto& [k, v] : scalars) out["scalars." + k] = scalar_tensor(v, DType::Float64);
  return out;
}

OptimizerState OptimizerState::from_tensor_map(const std::map<std::string, Tensor>& m) {
  static const std::string kPrefix = "scalars.";
  OptimizerState s;
  for (const auto& [k, t] : m) {
    if (k.rfind(kPrefix, 0) == 0) {
      SKIFF_CHECK(t.numel() == 1, "optimizer state: scalar entry '{}' has shape {}, expected one element", k,
                  t.shape());
      s.scalars[k.substr(kPrefix.size())] = skiff::detail::cast(t, DType::Float64).item<double>();
    } else {
      s.tensors[k] = t;
    }
  }
  return s;
}

// ---- Optimizer -------------------------------------------------------------------------

Optimizer::Optimizer(std::vector<ParamGroup> groups, Options defaults, std::string name)
    : defaults_(std::move(defaults)), name_(std::move(name)) {
  SKIFF_CHECK(!groups.empty(), "{}: expected at least one parameter group, got none", name_);
  for (auto& g : groups) add_param_group(std::move(g));
}

void Optimizer::add_param_group(ParamGroup group) {
  const int64_t gi = int64_t(groups_.size());
  SKIFF_CHECK(!group.params.empty(), "{}: parameter group {} is empty", name_, gi);
  for (const auto& [k, v] : group.options)
    SKIFF_CHECK(defaults_.count(k) || k == "initial_lr", "{}: unknown option '{}' in parameter group {} (known: {})",
                name_, k, gi, option_names(defaults_));
  for (const auto& [k, v] : defaults_) group.options.emplace(k, v);
  std::set<const TensorImpl*> seen;
  for (const auto& g : groups_)
    for (const auto& p : g.params) seen.insert(&p.impl());
  for (size_t i = 0; i < group.params.size(); ++i) {
    const Tensor& p = group.params[i];
    SKIFF_CHECK(p.defined(), "{}: parameter {} of group {} is undefined", name_, i, gi);
    SKIFF_CHECK_DTYPE(is_floating(p.dtype()), "{}: parameter {} of group {} has dtype {}, expected a floating dtype",
                      name_, i, gi, dtype_name(p.dtype()));
    SKIFF_CHECK_T(DeviceError, p.device() == kCPU, "{}: parameter {} of group {} is on {}, expected cpu", name_, i,
                  gi, p.device().str());
    SKIFF_CHECK(seen.insert(&p.impl()).second, "{}: parameter {} of group {} appears more than once", name_, i, gi);
  }
  groups_.push_back(std::move(group));
  state_.resize(state_.size() + groups_.back().params.size());
  validated_ = false;
}

int64_t Optimizer::num_params() const { return int64_t(state_.size()); }

ParamState& Optimizer::state(int64_t index) {
  SKIFF_CHECK_INDEX(index >= 0 && index < num_params(), "{}: parameter index {} out of range [0, {})", name_, index,
                    num_params());
  return state_[index];
}

void Optimizer::set_lr(double lr) {
  for (auto& g : groups_) g.options["lr"] = lr;
}

double Optimizer::step(const Closure& closure) {
  double loss = 0.0;
  if (closure) {
    GradModeGuard on(true);
    loss = closure();
  }
  NoGradGuard no_grad;
  int64_t idx = 0;
  for (const auto& g : groups_) {
    validate(g);  // cheap; re-run because schedulers and users may edit options
    for (const auto& p : g.params) {
      ParamState& st = state_[idx++];
      Tensor grad = p.grad();
      if (!grad.defined()) continue;
      Tensor work = detail::working_copy(p);
      Tensor gw = detail::as_contiguous(grad, work.dtype());
      update(g, work, gw, st);
      detail::commit(p, work);
    }
  }
  return loss;
}

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& g : groups_)
    for (auto& p : g.params) {
      Tensor gr = p.grad();
      if (!gr.defined()) continue;
      if (set_to_none)
        p.set_grad(Tensor());
      else
        skiff::detail::fill(gr, 0.0);
    }
}

OptimizerState Optimizer::state_dict() const {
  OptimizerState sd;
  sd.scalars["num_groups"] = double(groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) {
    const std::string pre = "param_groups." + std::to_string(g) + ".";
    sd.scalars[pre + "num_params"] = double(groups_[g].params.size());
    for (const auto& [k, v] : groups_[g].options) sd.scalars[pre + k] = v;
  }
  for (size_t i = 0; i < state_.size(); ++i) {
    const ParamState& st = state_[i];
    if (!st.initialized()) continue;
    const std::string pre = "state." + std::to_string(i) + ".";
    sd.scalars[pre + "step"] = double(st.step);
    // Copies: the checkpoint must not alias buffers the next step() overwrites.
    for (const auto& [k, t] : st.buffers) sd.tensors[pre + k] = skiff::detail::contiguous_copy(t);
  }
  return sd;
}

void Optimizer::load_state_dict(const OptimizerState& sd) {
  auto scalar = [&](const std::string& k) {
    auto it = sd.scalars.find(k);
    SKIFF_CHECK(it != sd.scalars.end(), "{}.load_state_dict: missing scalar '{}'", name_, k);
    return it->second;
  };
  const auto ng = int64_t(scalar("num_groups"));
  SKIFF_CHECK(ng == int64_t(groups_.size()), "{}.load_state_dict: state has {} parameter groups, optimizer has {}",
              name_, ng, groups_.size());
  std::vector<Options> new_opts(groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) {
    const std::string pre = "param_groups." + std::to_string(g) + ".";
    const auto np = int64_t(scalar(pre + "num_params"));
    SKIFF_CHECK(np == int64_t(groups_[g].params.size()),
                "{}.load_state_dict: group {} has {} parameters in the state, {} in the optimizer", name_, g, np,
                groups_[g].params.size());
    new_opts[g] = groups_[g].options;
    for (const auto& [k, v] : sd.scalars)
      if (k.rfind(pre, 0) == 0 && k != pre + "num_params") new_opts[g][k.substr(pre.size())] = v;
  }
  // Parse every per-parameter entry before touching anything, so a bad dict leaves us unchanged.
  std::vector<ParamState> new_state(state_.size());
  std::vector<const Tensor*> flat;
  for (const auto& g : groups_)
    for (const auto& p : g.params) flat.push_back(&p);
  auto parse_index = [&](const std::string& key, std::string* rest) -> int64_t {
    const size_t dot = key.find('.', 6);
    SKIFF_CHECK(dot != std::string::npos, "{}.load_state_dict: malformed key '{}'", name_, key);
    int64_t i = -1;
    try {
      i = std::stoll(key.substr(6, dot - 6));
    } catch (...) {
      SKIFF_THROW(ValueError, "{}.load_state_dict: malformed key '{}'", name_, key);
    }
    SKIFF_CHECK(i >= 0 && i < num_params(), "{}.load_state_dict: key '{}' names parameter {}, optimizer has {}",
                name_, key, i, num_params());
    *rest = key.substr(dot + 1);
    return i;
  };
  for (const auto& [k, v] : sd.scalars) {
    if (k.rfind("state.", 0) != 0) continue;
    std::string rest;
    const int64_t i = parse_index(k, &rest);
    if (rest == "step") new_state[i].step = int64_t(v);
  }
  for (const auto& [k, t] : sd.tensors) {
    if (k.rfind("state.", 0) != 0) continue;
    std::string rest;
    const int64_t i = parse_index(k, &rest);
    const Tensor& p = *flat[i];
    SKIFF_CHECK_SHAPE(t.shape() == p.shape(), "{}.load_state_dict: '{}' has shape {}, parameter {} has shape {}",
                      name_, k, t.shape(), i, p.shape());
    Tensor buf = empty(t.shape(), compute_dtype(p.dtype()));
    skiff::detail::copy_into(buf, t);
    new_state[i].buffers[rest] = buf;
  }
  for (size_t g = 0; g < groups_.size(); ++g) groups_[g].options = std::move(new_opts[g]);
  state_ = std::move(new_state);
}

}  // namespace skiff::optim
