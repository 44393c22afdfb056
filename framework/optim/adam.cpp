#include "framework/ops/op.h"
#include "framework/ops/optim/optim_ops.h"
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

void Adam::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& st) {
  const bool amsgrad = group.get("amsgrad") != 0;
  if (!st.buffers.count("exp_avg")) {
    st.buffers["exp_avg"] = zeros_like_state(param);
    st.buffers["exp_avg_sq"] = zeros_like_state(param);
  }
  if (amsgrad && !st.buffers.count("max_exp_avg_sq")) st.buffers["max_exp_avg_sq"] = zeros_like_state(param);
  NoGradGuard no_grad;
  adam_step_(param, grad, st.buffers["exp_avg"], st.buffers["exp_avg_sq"],
             amsgrad ? st.buffers["max_exp_avg_sq"] : Tensor(),
             {.lr = group.get("lr"),
              .beta1 = group.get("beta1"),
              .beta2 = group.get("beta2"),
              .eps = group.get("eps"),
              .weight_decay = group.get("weight_decay"),
              .step = ++st.step,
              .decoupled = decoupled_,
              .amsgrad = amsgrad,
              .maximize = group.get("maximize") != 0});
}

}  // namespace skiff::optim
