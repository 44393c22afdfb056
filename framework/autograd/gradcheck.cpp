#include "framework/autograd/gradcheck.h"

#include <cmath>

#include "framework/autograd/engine.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/op.h"
#include "framework/ops/reduce/reduce.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff::autograd {
namespace {

std::vector<double> flat(const Tensor& t) { return contiguous(t).to_vector<double>(); }

}  // namespace

GradcheckResult gradcheck(const TensorFn& fn, const std::vector<Tensor>& inputs, const GradcheckOptions& opt) {
  std::vector<Tensor> in;
  for (const auto& x : inputs) in.push_back(x);
  Tensor y = fn(in);
  const int64_t m = y.numel();
  std::vector<int64_t> diff_inputs;
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i].requires_grad()) diff_inputs.push_back(int64_t(i));
  SKIFF_CHECK(!diff_inputs.empty(), "gradcheck: no input requires grad");
  SKIFF_CHECK(y.requires_grad(), "gradcheck: the output does not depend on any input that requires grad");

  // Analytic Jacobian rows: one grad() per output element.
  std::vector<std::vector<std::vector<double>>> analytic(diff_inputs.size());  // [input][row][col]
  for (int64_t k = 0; k < m; ++k) {
    Tensor onehot = zeros(y.shape(), y.dtype());
    {
      std::vector<double> v(size_t(m), 0.0);
      v[size_t(k)] = 1.0;
      detail::copy_into(onehot, from_vector(v, y.shape()));
    }
    std::vector<Tensor> targets;
    for (int64_t i : diff_inputs) targets.push_back(in[size_t(i)]);
    auto gs = grad({y}, targets, {onehot}, false, true, 1);
    for (size_t j = 0; j < diff_inputs.size(); ++j) {
      const Tensor& x = in[size_t(diff_inputs[j])];
      analytic[j].push_back(gs[j].defined() ? flat(gs[j]) : std::vector<double>(size_t(x.numel()), 0.0));
    }
  }

  // Numerical Jacobian columns by central differences. Grad mode stays on: fn may
  // itself differentiate (gradgradcheck), so perturbed inputs keep requires_grad.
  for (size_t j = 0; j < diff_inputs.size(); ++j) {
    Tensor x = in[size_t(diff_inputs[j])];
    for (int64_t c = 0; c < x.numel(); ++c) {
      std::vector<double> base = flat(x);
      auto eval = [&](double delta) {
        std::vector<double> v = base;
        v[size_t(c)] += delta;
        std::vector<Tensor> args = in;
        args[size_t(diff_inputs[j])] = to(from_vector(v, x.shape()), x.dtype()).set_requires_grad();
        return flat(detach(fn(args)));
      };
      std::vector<double> plus = eval(opt.eps), minus = eval(-opt.eps);
      for (int64_t k = 0; k < m; ++k) {
        double num = (plus[size_t(k)] - minus[size_t(k)]) / (2 * opt.eps);
        double ana = analytic[j][size_t(k)][size_t(c)];
        if (!(std::abs(num - ana) <= opt.atol + opt.rtol * std::abs(num))) {
          return {false, fmt::format("input {}: d out[{}] / d in[{}]: analytic {:.8g}, numerical {:.8g}",
                                     diff_inputs[j], k, c, ana, num)};
        }
      }
    }
  }
  return {};
}

GradcheckResult gradgradcheck(const TensorFn& fn, const std::vector<Tensor>& inputs, const GradcheckOptions& opt) {
  Tensor y0;
  {
    NoGradGuard ng;
    y0 = fn(inputs);
  }
  Tensor v = randn(y0.shape(), y0.dtype());
  TensorFn first_order = [&](const std::vector<Tensor>& in) {
    Tensor y = fn(in);
    std::vector<Tensor> targets;
    for (const auto& x : in)
      if (x.requires_grad()) targets.push_back(x);
    auto gs = grad({y}, targets, {v}, /*create_graph=*/true, /*allow_unused=*/true);
    // Concatenate all gradients into one vector output.
    std::vector<Tensor> parts;
    for (size_t i = 0; i < gs.size(); ++i)
      parts.push_back(gs[i].defined() ? reshape(gs[i], {-1}) : zeros({targets[i].numel()}, targets[i].dtype()));
    return concat(parts, 0);
  };
  return gradcheck(first_order, inputs, opt);
}

}  // namespace skiff::autograd
