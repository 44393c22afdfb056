#include "framework/ops/op.h"
#include "framework/ops/optim/optim_ops.h"
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
  NoGradGuard no_grad;
  adagrad_step_(param, grad, st.buffers["sum"],
                {.lr = group.get("lr") / (1.0 + double(t - 1) * group.get("lr_decay")),
                 .eps = group.get("eps"),
                 .weight_decay = group.get("weight_decay"),
                 .maximize = group.get("maximize") != 0});
}

}  // namespace skiff::optim
