#include <cmath>

#include "framework/optim/kernel_utils.h"
#include "framework/optim/optimizers.h"

namespace skiff::optim {

Options AdagradOptions::to_map() const {
  return {{"lr", lr},
          {"lr_decay", lr_decay},
          {"weight_decay", weight_decay},
          {"initial_accumulator_value", initial_accumulator_value},
          {"eps", eps},
          {"maximize", maximize ? 1.0 : 0.0}};
}

Adagrad::Adagrad(std::vector<ParamGroup> groups, AdagradOptions defaults)
    : Optimizer(std::move(groups), defaults.to_map(), "Adagrad") {
  for (const auto& g : groups_) validate(g);
}

void Adagrad::validate(const ParamGroup& g) const {
  for (const char* k : {"lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"})
    SKIFF_CHECK(g.get(k) >= 0, "Adagrad: invalid {} {}, expected >= 0", k, g.get(k));
}

void Adagrad::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& st) {
  if (!st.buffers.count("sum")) {
    st.buffers["sum"] = zeros_like_state(param);
    skiff::detail::fill(st.buffers["sum"], group.get("initial_accumulator_value"));
  }
  const int64_t t = ++st.step;
  const double clr = group.get("lr") / (1.0 + double(t - 1) * group.get("lr_decay"));
  detail::visit_compute(param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* s = st.buffers["sum"].data<T>();
    const T c = T(clr), eps = T(group.get("eps")), wd = T(group.get("weight_decay"));
    const bool maximize = group.get("maximize") != 0;
    detail::parallel_elements(param.numel(), [&](int64_t i) {
      T gi = maximize ? -g[i] : g[i];
      if (wd != 0) gi = gi + wd * p[i];
      s[i] = s[i] + gi * gi;
      p[i] = p[i] + (-c) * (gi / (std::sqrt(s[i]) + eps));
    });
  });
}

}  // namespace skiff::optim
