// Viscous Burgers equation, the classic PINN benchmark (Raissi et al. 2019):
//   u_t + u u_x = nu u_xx on [-1, 1] x [0, T],  u(x, 0) = -sin(pi x),  u(+-1, t) = 0,
// with nu = 0.01 / pi by default: a shock-like front forms at x = 0.
//
// Reference: the Cole-Hopf transformation turns the equation into the heat
// equation, giving (Basdevant et al. 1986)
//   u(x, t) = -int sin(pi (x - e)) f(x - e) G(e) de / int f(x - e) G(e) de,
//   f(y) = exp(-cos(pi y) / (2 pi nu)),  G(e) = exp(-e^2 / (4 nu t)),
// evaluated by the trapezoidal rule in s = e / sqrt(4 nu t) (spectrally
// accurate for these smooth, rapidly decaying integrands), with the exponents
// shifted by their maximum so that exp(1 / (pi nu)) never overflows.
//
// The problem is already in units of order one (half-length 1, speed 1,
// time L / U = 1), so the scales are 1 and the network sees nu itself.
#include <cmath>
#include <numbers>
#include <vector>

#include "framework/core/error.h"
#include "framework/ops/ops.h"
#include "suites/science/problems/conditions.h"
#include "suites/science/problems/problems.h"
#include "framework/config/section.h"

namespace skiff::science {

constexpr double kPi = std::numbers::pi;

double burgers_cole_hopf(double x, double t, double nu, double step) {
  SKIFF_CHECK(step > 0 && nu > 0, "Cole-Hopf reference: need step > 0 and nu > 0");
  if (t <= 0) return -std::sin(kPi * x);
  const double c = std::sqrt(4 * nu * t);
  // |log f| varies by at most 1 / (pi nu); past |s| = sqrt(that + 40) the
  // Gaussian has made every term negligible (e^-40 relative).
  const double s_max = std::sqrt(1.0 / (kPi * nu) + 40.0);
  const int64_t n = int64_t(std::ceil(s_max / step));
  std::vector<double> expo(size_t(2 * n + 1)), sines(size_t(2 * n + 1));
  double peak = -INFINITY;
  for (int64_t i = -n; i <= n; ++i) {
    const double s = double(i) * step, y = kPi * (x - c * s);
    expo[size_t(i + n)] = -std::cos(y) / (2 * kPi * nu) - s * s;
    sines[size_t(i + n)] = std::sin(y);
    peak = std::max(peak, expo[size_t(i + n)]);
  }
  double num = 0, den = 0;
  for (size_t i = 0; i < expo.size(); ++i) {
    const double w = std::exp(expo[i] - peak);
    num += sines[i] * w;
    den += w;
  }
  return -num / den;
}

namespace {

class Burgers : public Problem {
 public:
  explicit Burgers(const config::Section& s) {
    s.allow_only({"name", "viscosity", "end_time", "weights"});
    nu_ = s.positive("viscosity", 0.01 / kPi);
    t1_ = s.positive("end_time", 1.0);
    w_ = LossWeights(s, {"pde", "boundary", "initial"});
    domain_ = std::make_shared<TimeDomain>(std::make_shared<Interval>(-1.0, 1.0), 0.0, t1_);
  }

  std::string name() const override { return "burgers"; }
  std::vector<std::string> inputs() const override { return {"x", "t"}; }
  std::vector<std::string> outputs() const override { return {"u"}; }
  std::shared_ptr<const Geometry> domain() const override { return domain_; }
  Scales scales() const override { return {{1.0, 1.0}, {1.0}}; }
  std::map<std::string, int64_t> default_counts() const override {
    return {{"interior", 10000}, {"boundary", 100}, {"initial", 100}};
  }

  std::vector<Constraint> constraints(const SamplingPlan& plan, Generator& gen) const override {
    const TimeDomain& td = *domain_;
    Constraint pde{"pde", td.sample_interior(plan.count("interior"), plan.method, gen),
                   {{0, {0, 1}}, {0, {1, 0}}, {0, {2, 0}}}, nullptr, w_["pde"]};
    const double nu = nu_;
    pde.residual = [nu](Derivatives& d, const Tensor&) {
      return d.partial({0, {0, 1}}) + d.value(0) * d.partial({0, {1, 0}}) - d.partial({0, {2, 0}}) * nu;
    };
    Tensor xi = td.sample_initial(plan.count("initial"), plan.method, gen);
    Tensor xb = td.sample_boundary(plan.count("boundary"), plan.method, gen).points;
    return {pde, value_constraint("initial", xi, {0}, -sin(select(xi, 1, 0) * kPi), w_["initial"]),
            value_constraint("boundary", xb, {0}, zeros({xb.size(0)}, DType::Float64), w_["boundary"])};
  }

  std::vector<Field> reference(const Tensor& p) const override {
    Tensor p64 = contiguous(to(p, DType::Float64));
    const int64_t n = p64.size(0);
    std::vector<double> u(static_cast<size_t>(n));
    const double* xy = p64.data<double>();
    for (int64_t i = 0; i < n; ++i) u[size_t(i)] = burgers_cole_hopf(xy[2 * i], xy[2 * i + 1], nu_);
    return {{"u", "", from_vector(u)}};
  }

 private:
  double nu_, t1_;
  LossWeights w_;
  std::shared_ptr<TimeDomain> domain_;
};

}  // namespace

std::unique_ptr<Problem> make_burgers(const config::Section& s) { return std::make_unique<Burgers>(s); }

}  // namespace skiff::science
