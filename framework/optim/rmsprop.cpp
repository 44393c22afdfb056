#include <cmath>

#include "framework/optim/kernel_utils.h"
#include "framework/optim/optimizers.h"

namespace skiff::optim {

Options RMSpropOptions::to_map() const {
  return {{"lr", lr},
          {"alpha", alpha},
          {"eps", eps},
          {"weight_decay", weight_decay},
          {"momentum", momentum},
          {"centered", centered ? 1.0 : 0.0},
          {"maximize", maximize ? 1.0 : 0.0}};
}

RMSprop::RMSprop(std::vector<ParamGroup> groups, RMSpropOptions defaults)
    : Optimizer(std::move(groups), defaults.to_map(), "RMSprop") {
  for (const auto& g : groups_) validate(g);
}

void RMSprop::validate(const ParamGroup& g) const {
  for (const char* k : {"lr", "eps", "weight_decay", "momentum", "alpha"})
    SKIFF_CHECK(g.get(k) >= 0, "RMSprop: invalid {} {}, expected >= 0", k, g.get(k));
}

void RMSprop::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& st) {
  const bool centered = group.get("centered") != 0;
  const double mu = group.get("momentum");
  if (!st.buffers.count("square_avg")) st.buffers["square_avg"] = zeros_like_state(param);
  if (centered && !st.buffers.count("grad_avg")) st.buffers["grad_avg"] = zeros_like_state(param);
  if (mu > 0 && !st.buffers.count("momentum_buffer")) st.buffers["momentum_buffer"] = zeros_like_state(param);
  ++st.step;
  detail::visit_compute(param.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* v = st.buffers["square_avg"].data<T>();
    T* ga = centered ? st.buffers["grad_avg"].data<T>() : nullptr;
    T* b = mu > 0 ? st.buffers["momentum_buffer"].data<T>() : nullptr;
    const T lr = T(group.get("lr")), alpha = T(group.get("alpha")), w = T(1.0 - group.get("alpha"));
    const T eps = T(group.get("eps")), wd = T(group.get("weight_decay")), m = T(mu);
    const bool maximize = group.get("maximize") != 0;
    detail::parallel_elements(param.numel(), [&](int64_t i) {
      T gi = maximize ? -g[i] : g[i];
      if (wd != 0) gi = gi + wd * p[i];
      v[i] = v[i] * alpha + w * gi * gi;
      T avg;
      if (ga) {
        // lerp with weight 1-alpha (< 0.5 for the usual alpha): a + w*(b-a); else PyTorch's other branch.
        ga[i] = std::abs(w) < T(0.5) ? ga[i] + w * (gi - ga[i]) : gi - (gi - ga[i]) * (T(1) - w);
        avg = std::sqrt(v[i] + T(-1) * ga[i] * ga[i]) + eps;
      } else {
        avg = std::sqrt(v[i]) + eps;
      }
      if (b) {
        b[i] = b[i] * m + gi / avg;
        p[i] = p[i] + (-lr) * b[i];
      } else {
        p[i] = p[i] + (-lr) * (gi / avg);
      }
    });
  });
}

}  // namespace skiff::optim
