#include "framework/optim/clip_grad.h"

#include <algorithm>
#include <cmath>

#include "framework/nn/module.h"
#include "framework/optim/kernel_utils.h"

namespace skiff::optim {

namespace {

/// Gradient as contiguous double values (a copy; gradients are small next to activations).
std::vector<double> grad_values(const Tensor& g) {
  Tensor c = detail::as_contiguous(g, DType::Float64);
  const double* d = c.data<double>();
  return std::vector<double>(d, d + c.numel());
}

/// Multiplies (or clamps) a gradient in place through a working copy when needed.
template <typename Fn>
void modify_grad(const Tensor& g, Fn&& fn) {
  Tensor w = detail::working_copy(g);
  detail::visit_compute(w.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* d = w.data<T>();
    detail::parallel_elements(w.numel(), [&](int64_t i) { d[i] = fn(d[i]); });
  });
  detail::commit(g, w);
}

}  // namespace

double grad_norm(const std::vector<Tensor>& params, double norm_type) {
  SKIFF_CHECK(norm_type > 0, "clip_grad_norm_: norm_type must be > 0, got {}", norm_type);
  const bool inf = std::isinf(norm_type);
  double total = 0.0;
  for (const auto& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    SKIFF_CHECK_DTYPE(is_floating(g.dtype()), "clip_grad_norm_: gradient has dtype {}, expected floating",
                      dtype_name(g.dtype()));
    double n = 0.0;
    for (double v : grad_values(g)) {
      if (inf)
        n = std::max(n, std::abs(v));
      else if (norm_type == 2.0)
        n += v * v;
      else
        n += std::pow(std::abs(v), norm_type);
    }
    // Combine per-tensor norms as PyTorch does: norm of the vector of norms.
    if (inf) {
      total = std::max(total, n);
    } else {
      const double tn = norm_type == 2.0 ? std::sqrt(n) : std::pow(n, 1.0 / norm_type);
      total += norm_type == 2.0 ? tn * tn : std::pow(tn, norm_type);
    }
  }
  if (!inf) total = norm_type == 2.0 ? std::sqrt(total) : std::pow(total, 1.0 / norm_type);
  return total;
}

double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  const double total = grad_norm(params, norm_type);
  SKIFF_CHECK(!(error_if_nonfinite && !std::isfinite(total)),
              "clip_grad_norm_: the total norm of order {} of the gradients is non-finite ({})", norm_type, total);
  const double coef = max_norm / (total + 1e-6);
  if (coef < 1.0) {
    for (const auto& p : params) {
      Tensor g = p.grad();
      if (!g.defined()) continue;
      modify_grad(g, [&](auto v) { return v * decltype(v)(coef); });
    }
  }
  return total;
}

double clip_grad_norm_(const nn::Module& m, double max_norm, double norm_type, bool error_if_nonfinite) {
  return clip_grad_norm_(m.parameters(), max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& params, double clip_value) {
  SKIFF_CHECK(clip_value >= 0, "clip_grad_value_: clip_value must be >= 0, got {}", clip_value);
  for (const auto& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    modify_grad(g, [&](auto v) {
      using T = decltype(v);
      return std::clamp(v, T(-clip_value), T(clip_value));
    });
  }
}

void clip_grad_value_(const nn::Module& m, double clip_value) { clip_grad_value_(m.parameters(), clip_value); }

}  // namespace skiff::optim
