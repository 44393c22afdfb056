#include "framework/ops/op.h"
#include "framework/ops/optim/optim_ops.h"
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
  NoGradGuard no_grad;
  rmsprop_step_(param, grad, st.buffers["square_avg"], centered ? st.buffers["grad_avg"] : Tensor(),
                mu > 0 ? st.buffers["momentum_buffer"] : Tensor(),
                {.lr = group.get("lr"),
                 .alpha = group.get("alpha"),
                 .eps = group.get("eps"),
                 .weight_decay = group.get("weight_decay"),
                 .momentum = mu,
                 .centered = centered,
                 .maximize = group.get("maximize") != 0});
}

}  // namespace skiff::optim
