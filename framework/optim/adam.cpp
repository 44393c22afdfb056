#include <algorithm>
#include <cmath>

#include "framework/optim/kernel_utils.h"
#include "framework/optim/optimizers.h"

namespace skiff::optim {

Options AdamOptions::to_map() const {
  return {{"lr", lr},
          {"beta1", beta1},
          {"beta2", beta2},
          {"eps", eps},
          {"weight_decay", weight_decay},
          {"amsgrad", amsgrad ? 1.0 : 0.0},
          {"maximize", maximize ? 1.0 : 0.0}};
}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions defaults, bool decoupled)
    : Optimizer(std::move(groups), defaults.to_map(), decoupled ? "AdamW" : "Adam"), decoupled_(decoupled) {
  for (const auto& g : groups_) validate(g);
}

void Adam::validate(const ParamGroup& g) const {
  SKIFF_CHECK(g.get("lr") >= 0, "{}: invalid learning rate {}, expected >= 0", name_, g.get("lr"));
  SKIFF_CHECK(g.get("eps") >= 0, "{}: invalid eps {}, expected >= 0", name_, g.get("eps"));
  SKIFF_CHECK(g.get("weight_decay") >= 0, "{}: invalid weight_decay {}, expected >= 0", name_,
              g.get("weight_decay"));
  for (const char* b : {"beta1", "beta2"})
    SKIFF_CHECK(g.get(b) >= 0 && g.get(b) < 1, "{}: invalid {} {}, expected in [0, 1)", name_, b, g.get(b));
}

/// PyTorch's CPU lerp: two formulas so the result is exact at both ends.
template <typename T>
static inline T lerp(T a, T b, T w) {
  return std::abs(w) < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w);
}

void Adam::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& st) {
  const bool amsgrad = group.get("amsgrad") != 0;
  if (!st.buffers.count("exp_avg")) {
    st.buffers["exp_avg"] = zeros_like_state(param);
    st.buffers["exp_avg_sq"] = zeros_like_state(param);
  }
  if (amsgrad && !st.buffers.count("max_exp_avg_sq")) st.buffers["max_exp_avg_sq"] = zeros_like_state(param);
  const int64_t t = ++st.step;
  const double lr = group.get("lr"), b1 = group.get("beta1"), b2 = group.get("beta2");
  const double wd = group.get("weight_decay");
  // Scalars computed in double as PyTorch does in Python, then cast to the compute type.
  const double step_size = lr / (1.0 - std::pow(b1, double(t)));
  const double bc2_sqrt = std::sqrt(1.0 - std::pow(b2, double(t)));
  detail::visit_compute(param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* m = st.buffers["exp_avg"].data<T>();
    T* v = st.buffers["exp_avg_sq"].data<T>();
    T* vmax = amsgrad ? st.buffers["max_exp_avg_sq"].data<T>() : nullptr;
    const bool maximize = group.get("maximize") != 0, decoupled = decoupled_;
    const T wdT = T(wd), decay = T(1.0 - lr * wd), w1 = T(1.0 - b1), b2T = T(b2), w2 = T(1.0 - b2);
    const T ss = T(step_size), bc2 = T(bc2_sqrt), eps = T(group.get("eps"));
    detail::parallel_elements(param.numel(), [&](int64_t i) {
      T gi = maximize ? -g[i] : g[i];
      if (wd != 0) {
        if (decoupled)
          p[i] = p[i] * decay;
        else
          gi = gi + wdT * p[i];
      }
      m[i] = lerp(m[i], gi, w1);
      v[i] = v[i] * b2T + w2 * gi * gi;
      T vv = v[i];
      if (vmax) vv = vmax[i] = std::max(vmax[i], v[i]);
      const T denom = std::sqrt(vv) / bc2 + eps;
      p[i] = p[i] + (-ss) * (m[i] / denom);
    });
  });
}

}  // namespace skiff::optim
