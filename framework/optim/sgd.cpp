#include "framework/ops/op.h"
#include "framework/ops/optim/optim_ops.h"
#include "framework/optim/optimizers.h"

namespace skiff::optim {

Options SGDOptions::to_map() const {
  return {{"lr", lr},
          {"momentum", momentum},
          {"dampening", dampening},
          {"weight_decay", weight_decay},
          {"nesterov", nesterov ? 1.0 : 0.0},
          {"maximize", maximize ? 1.0 : 0.0}};
}

SGD::SGD(std::vector<ParamGroup> groups, SGDOptions defaults)
    : Optimizer(std::move(groups), defaults.to_map(), "SGD") {
  for (const auto& g : groups_) validate(g);
}

void SGD::validate(const ParamGroup& g) const {
  SKIFF_CHECK(g.get("lr") >= 0, "SGD: invalid learning rate {}, expected >= 0", g.get("lr"));
  SKIFF_CHECK(g.get("momentum") >= 0, "SGD: invalid momentum {}, expected >= 0", g.get("momentum"));
  SKIFF_CHECK(g.get("weight_decay") >= 0, "SGD: invalid weight_decay {}, expected >= 0", g.get("weight_decay"));
  if (g.get("nesterov") != 0)
    SKIFF_CHECK(g.get("momentum") > 0 && g.get("dampening") == 0,
                "SGD: nesterov requires momentum > 0 and dampening = 0, got momentum {} dampening {}",
                g.get("momentum"), g.get("dampening"));
}

void SGD::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& st) {
  const double mu = group.get("momentum");
  const bool first = !st.buffers.count("momentum_buffer");
  if (mu != 0 && first) st.buffers["momentum_buffer"] = zeros_like_state(param);
  ++st.step;
  NoGradGuard no_grad;
  sgd_step_(param, grad, mu != 0 ? st.buffers["momentum_buffer"] : Tensor(),
            {.lr = group.get("lr"),
             .momentum = mu,
             .dampening = group.get("dampening"),
             .weight_decay = group.get("weight_decay"),
             .nesterov = group.get("nesterov") != 0,
             .maximize = group.get("maximize") != 0,
             .first = first});
}

}  // namespace skiff::optim
