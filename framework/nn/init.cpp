#include "framework/nn/init.h"

#include <cmath>
#include <vector>

namespace skiff::nn::init {

namespace {

void check_float(const Tensor& t, const char* fn) {
  SKIFF_CHECK(t.defined(), "init.{}: the tensor is undefined", fn);
  SKIFF_CHECK_DTYPE(is_floating(t.dtype()), "init.{}: expected a floating tensor, got {} {}", fn,
                    dtype_name(t.dtype()), t.shape());
}

thread_local bool skip_random_init = false;

// Draws numel values with `draw` in row-major order and writes them into t
// (nothing under a SkipRandomInitGuard).
template <typename Draw>
void fill_with(const Tensor& t, Draw&& draw) {
  if (skip_random_init) return;
  std::vector<double> v(size_t(t.numel()));
  for (double& x : v) x = draw();
  detail::copy_into(t, from_vector<double>(v, t.shape()));
  t.storage()->bump_version();
}

Generator& gen_or_default(Generator* gen) { return gen ? *gen : default_generator(); }

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

}  // namespace

SkipRandomInitGuard::SkipRandomInitGuard() : previous_(skip_random_init) { skip_random_init = true; }
SkipRandomInitGuard::~SkipRandomInitGuard() { skip_random_init = previous_; }
bool SkipRandomInitGuard::active() { return skip_random_init; }

double calculate_gain(Nonlinearity nl, double param) {
  switch (nl) {
    case Nonlinearity::Linear:
    case Nonlinearity::Conv:
    case Nonlinearity::Sigmoid: return 1.0;
    case Nonlinearity::Tanh: return 5.0 / 3.0;
    case Nonlinearity::ReLU: return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU: return std::sqrt(2.0 / (1.0 + param * param));
    case Nonlinearity::SELU: return 0.75;
  }
  SKIFF_THROW(ValueError, "init.calculate_gain: unknown nonlinearity {}", int(nl));
}

std::pair<int64_t, int64_t> fan_in_and_fan_out(const Tensor& t) {
  SKIFF_CHECK(t.defined() && t.dim() >= 1, "init: fan in/out need a tensor with at least 1 dimension, got {}",
              t.defined() ? t.shape().str() : std::string("an undefined tensor"));
  if (t.dim() == 1) return {t.size(0), t.size(0)};
  int64_t receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

void uniform_(const Tensor& t, double a, double b, Generator* gen) {
  check_float(t, "uniform_");
  SKIFF_CHECK(a <= b, "init.uniform_: expected a <= b, got a={} b={}", a, b);
  Generator& g = gen_or_default(gen);
  fill_with(t, [&] { return a + (b - a) * g.uniform(); });
}

void normal_(const Tensor& t, double mean, double std, Generator* gen) {
  check_float(t, "normal_");
  SKIFF_CHECK(std >= 0, "init.normal_: expected std >= 0, got {}", std);
  Generator& g = gen_or_default(gen);
  fill_with(t, [&] { return mean + std * g.normal(); });
}

void trunc_normal_(const Tensor& t, double mean, double std, double a, double b, Generator* gen) {
  check_float(t, "trunc_normal_");
  SKIFF_CHECK(std > 0 && a < b, "init.trunc_normal_: expected std > 0 and a < b, got std={} a={} b={}", std, a, b);
  double mass = normal_cdf((b - mean) / std) - normal_cdf((a - mean) / std);
  SKIFF_CHECK(mass >= 1e-4,
              "init.trunc_normal_: [{}, {}] holds only {:.3g} of N({}, {}^2); choose bounds closer to the mean", a, b,
              mass, mean, std);
  Generator& g = gen_or_default(gen);
  // Rejection keeps the exact truncated distribution; the mass check bounds the expected tries.
  fill_with(t, [&] {
    for (;;) {
      double x = mean + std * g.normal();
      if (x >= a && x <= b) return x;
    }
  });
}

void constant_(const Tensor& t, double value) {
  check_float(t, "constant_");
  detail::fill(t, value);
  t.storage()->bump_version();
}
void zeros_(const Tensor& t) { constant_(t, 0.0); }
void ones_(const Tensor& t) { constant_(t, 1.0); }

void xavier_uniform_(const Tensor& t, double gain, Generator* gen) {
  check_float(t, "xavier_uniform_");
  auto [fi, fo] = fan_in_and_fan_out(t);
  SKIFF_CHECK(fi + fo > 0, "init.xavier_uniform_: tensor {} has zero fans", t.shape());
  double r = gain * std::sqrt(6.0 / double(fi + fo));
  uniform_(t, -r, r, gen);
}

void xavier_normal_(const Tensor& t, double gain, Generator* gen) {
  check_float(t, "xavier_normal_");
  auto [fi, fo] = fan_in_and_fan_out(t);
  SKIFF_CHECK(fi + fo > 0, "init.xavier_normal_: tensor {} has zero fans", t.shape());
  normal_(t, 0.0, gain * std::sqrt(2.0 / double(fi + fo)), gen);
}

namespace {
double kaiming_std(const Tensor& t, double a, FanMode mode, Nonlinearity nl, const char* fn) {
  check_float(t, fn);
  auto [fi, fo] = fan_in_and_fan_out(t);
  int64_t fan = mode == FanMode::FanIn ? fi : fo;
  SKIFF_CHECK(fan > 0, "init.{}: tensor {} has a zero fan", fn, t.shape());
  return calculate_gain(nl, a) / std::sqrt(double(fan));
}
}  // namespace

void kaiming_uniform_(const Tensor& t, double a, FanMode mode, Nonlinearity nl, Generator* gen) {
  double s = kaiming_std(t, a, mode, nl, "kaiming_uniform_");
  uniform_(t, -std::sqrt(3.0) * s, std::sqrt(3.0) * s, gen);
}

void kaiming_normal_(const Tensor& t, double a, FanMode mode, Nonlinearity nl, Generator* gen) {
  normal_(t, 0.0, kaiming_std(t, a, mode, nl, "kaiming_normal_"), gen);
}

}  // namespace skiff::nn::init
