// 1-D heat equation u_t = alpha u_xx on [x0, x1] x [t0, t1] with the exact
// solution u*(x, t) = sin(w (x - x0)) exp(-alpha w^2 (t - t0)), w = k pi / (x1 - x0):
// the initial condition u(x, t0) = u*(x, t0) and, per end, Dirichlet data u*
// or Neumann data du*/dn.
//
// Nondimensionalization: x = L x_hat with L the Poincare length of the
// interval, t = T t_hat with the diffusion time T = L^2 / alpha (so the
// equation becomes u_t_hat = u_x_hat_x_hat), u = U u_hat with
// U = max(max|u0|, max|u0_x| L) so initial and flux data are of order one.
#include <cmath>
#include <numbers>

#include "framework/ops/ops.h"
#include "suites/science/problems/conditions.h"
#include "suites/science/problems/problems.h"
#include "framework/config/section.h"

namespace skiff::science {
namespace {

constexpr double kPi = std::numbers::pi;

class Heat : public Problem {
 public:
  explicit Heat(const config::Section& s) {
    s.allow_only({"name", "domain", "diffusivity", "solution", "boundary", "weights"});
    config::Section dom = s.section("domain"), sol = s.section("solution");
    dom.allow_only({"x", "t"});
    sol.allow_only({"k"});
    auto x = dom.numbers("x", std::vector<double>{0, 1}), t = dom.numbers("t", std::vector<double>{0, 1});
    SKIFF_CHECK(x.size() == 2 && x[0] < x[1], "{}: [low, high] with low < high", dom.where("x"));
    SKIFF_CHECK(t.size() == 2 && t[0] < t[1], "{}: [start, end] with start < end", dom.where("t"));
    x0_ = x[0], x1_ = x[1], t0_ = t[0], t1_ = t[1];
    alpha_ = s.positive("diffusivity", 0.1);
    const double k = sol.positive("k", 1.0);
    omega_ = k * kPi / (x1_ - x0_);
    bc_ = parse_boundary_conditions(s, "boundary", {"left", "right"}, BoundaryKind::Dirichlet);
    w_ = LossWeights(s, {"pde", "boundary", "initial"});
    l_ = poincare_length({{x0_}, {x1_}});
    tc_ = l_ * l_ / alpha_;
    // |u*| <= 1 and |u*_x| <= w.
    u_ = std::max(1.0, omega_ * l_);
    domain_ = std::make_shared<TimeDomain>(std::make_shared<Interval>(x0_, x1_), t0_, t1_);
  }

  std::string name() const override { return "heat"; }
  std::vector<std::string> inputs() const override { return {"x", "t"}; }
  std::vector<std::string> outputs() const override { return {"u"}; }
  std::shared_ptr<const Geometry> domain() const override { return domain_; }
  Scales scales() const override { return {{l_, tc_}, {u_}}; }
  std::map<std::string, int64_t> default_counts() const override {
    return {{"interior", 2000}, {"boundary", 200}, {"initial", 200}};
  }

  std::vector<Constraint> constraints(const SamplingPlan& plan, Generator& gen) const override {
    TimeDomain dom(std::make_shared<Interval>(x0_ / l_, x1_ / l_), t0_ / tc_, t1_ / tc_);
    Constraint pde{"pde", dom.sample_interior(plan.count("interior"), plan.method, gen), {{0, {0, 1}}, {0, {2, 0}}},
                   nullptr, w_["pde"]};
    pde.residual = [](Derivatives& d, const Tensor&) { return d.partial({0, {0, 1}}) - d.partial({0, {2, 0}}); };
    std::vector<Constraint> out{pde};
    Tensor xi = dom.sample_initial(plan.count("initial"), plan.method, gen);
    out.push_back(value_constraint("initial", xi, {0}, exact_hat(xi), w_["initial"]));
    BoundarySample ends = dom.sample_boundary(plan.count("boundary"), plan.method, gen);
    if (bc_.any(BoundaryKind::Dirichlet)) {
      Tensor xb = bc_.select(ends, BoundaryKind::Dirichlet).points;
      out.push_back(value_constraint("boundary", xb, {0}, exact_hat(xb), w_["boundary"]));
    }
    if (bc_.any(BoundaryKind::Neumann)) {
      BoundarySample nb = bc_.select(ends, BoundaryKind::Neumann);
      Tensor p = to_physical(nb.points, scales());
      Tensor ux = cos((select(p, 1, 0) - x0_) * omega_) * exp((select(p, 1, 1) - t0_) * (-alpha_ * omega_ * omega_)) *
                  omega_;
      out.push_back(neumann_constraint("neumann", nb, 0, 1, ux * select(nb.normals, 1, 0) * (l_ / u_), w_["boundary"]));
    }
    return out;
  }

  std::vector<Field> reference(const Tensor& p) const override { return {{"u", "", exact(to(p, DType::Float64))}}; }

 private:
  Tensor exact(const Tensor& p) const {
    return sin((select(p, 1, 0) - x0_) * omega_) * exp((select(p, 1, 1) - t0_) * (-alpha_ * omega_ * omega_));
  }
  // u*/U at nondimensional points.
  Tensor exact_hat(const Tensor& nondim) const { return exact(to_physical(nondim, scales())) / u_; }

  double x0_, x1_, t0_, t1_, alpha_, omega_;
  BoundaryConditions bc_;
  LossWeights w_;
  double l_, tc_, u_;
  std::shared_ptr<TimeDomain> domain_;
};

}  // namespace

std::unique_ptr<Problem> make_heat(const config::Section& s) { return std::make_unique<Heat>(s); }

}  // namespace skiff::science
