// CPU kernels for var, norm and logsumexp (float inputs; the op wrappers convert
// integers to float32).
//
// All three use reduce_blocks (reduced dims last, one contiguous block per
// output) and accumulate in double, rounding once to the output type:
// - var: two passes (mean, then the sum of squared deviations) - no cancellation
//   as in the one-pass E[x^2] - E[x]^2; divides by max(0, N - correction).
// - norm: p = 2, 1, inf, -inf, 0 special-cased; general p is (sum |x|^p)^(1/p).
// - logsumexp: max-shifted, m + log(sum exp(x - m)); exp runs in the input's
//   compute type (float for float32/16-bit), sums in double. All -inf gives -inf.
// Tested against float64 naive references at 1e-5 relative (float32).
#include <cmath>
#include <limits>

#include "framework/backends/cpu/reduce_utils.h"

namespace skiff::cpu {
namespace {

void var_cpu(const KernelContext& c) {
  const Tensor &in = c.inputs[0], &out = c.outputs[0];
  const int64_t correction = c.attrs.get_int("correction");
  visit_floating(in.dtype(), "var", [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduce_blocks<T, T>(out, in, c.attrs.get_ints("dims"), [correction](const T* p, int64_t n, int64_t) {
      const double m = block_sum<double>(p, n) / double(n);
      double ss = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        const double d = double(p[i]) - m;
        ss += d * d;
      }
      return T(ss / double(std::max<int64_t>(0, n - correction)));
    });
  });
}

void norm_cpu(const KernelContext& c) {
  const Tensor &in = c.inputs[0], &out = c.outputs[0];
  const double p = c.attrs.get_float("p");
  visit_floating(in.dtype(), "norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduce_blocks<T, T>(out, in, c.attrs.get_ints("dims"), [p](const T* x, int64_t n, int64_t) {
      double acc = 0.0;
      if (p == 2.0) {
        for (int64_t i = 0; i < n; ++i) acc += double(x[i]) * double(x[i]);
        return T(std::sqrt(acc));
      }
      if (p == 1.0) {
        for (int64_t i = 0; i < n; ++i) acc += std::abs(double(x[i]));
        return T(acc);
      }
      if (p == 0.0) {
        for (int64_t i = 0; i < n; ++i) acc += double(x[i]) != 0.0 ? 1.0 : 0.0;
        return T(acc);
      }
      if (std::isinf(p)) {  // max |x| (p = inf) or min |x| (p = -inf); NaN propagates
        acc = p > 0 ? 0.0 : std::numeric_limits<double>::infinity();
        for (int64_t i = 0; i < n; ++i) {
          const double a = std::abs(double(x[i]));
          if (std::isnan(a)) return T(a);
          acc = p > 0 ? std::max(acc, a) : std::min(acc, a);
        }
        return T(acc);
      }
      for (int64_t i = 0; i < n; ++i) acc += std::pow(std::abs(double(x[i])), p);
      return T(std::pow(acc, 1.0 / p));
    });
  });
}

void logsumexp_cpu(const KernelContext& c) {
  const Tensor &in = c.inputs[0], &out = c.outputs[0];
  visit_floating(in.dtype(), "logsumexp", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    reduce_blocks<T, T>(out, in, c.attrs.get_ints("dims"), [](const T* x, int64_t n, int64_t) {
      A m = -std::numeric_limits<A>::infinity();
      for (int64_t i = 0; i < n; ++i) {
        const A v = A(x[i]);
        if (std::isnan(v)) return T(v);
        m = std::max(m, v);
      }
      if (std::isinf(m)) return T(m);  // all -inf (or empty): -inf; any +inf: +inf
      double s = 0.0;
      for (int64_t i = 0; i < n; ++i) s += double(std::exp(A(x[i]) - m));
      return T(double(m) + std::log(s));
    });
  });
}

}  // namespace

SKIFF_REGISTER_KERNEL(var, CPU, "cpu", kFloatTypes, 0, var_cpu);
SKIFF_REGISTER_KERNEL(norm, CPU, "cpu", kFloatTypes, 0, norm_cpu);
SKIFF_REGISTER_KERNEL(logsumexp, CPU, "cpu", kFloatTypes, 0, logsumexp_cpu);

}  // namespace skiff::cpu
