// 2-D Poisson and Helmholtz equations with a manufactured solution:
//   lap u + k^2 u = q on [x0, x1] x [y0, y1]   (Poisson: k = 0, q = -f),
//   u*(x, y) = sin(kx pi x) sin(ky pi y),  q = (k^2 - (kx^2 + ky^2) pi^2) u*,
// with, per edge, Dirichlet data u = u* or Neumann data du/dn = du*/dn.
//
// Nondimensionalization: x = L x_hat with L the Poincare length of the box and
// u = U u_hat with U = max|u*| over the box, so the network's output is of
// order one; the source and the fluxes then carry the solution's frequencies
// (up to ((kx^2 + ky^2) pi^2 L^2) and the wave number becomes k L. (Scaling by
// the source instead, |q| L^2, shrinks u_hat like 1 / k^2 for oscillatory
// solutions and the loss then stops resolving them.)
#include <cmath>
#include <numbers>

#include "framework/ops/ops.h"
#include "suites/science/problems/conditions.h"
#include "suites/science/problems/problems.h"
#include "framework/config/section.h"

namespace skiff::science {
namespace {

constexpr double kPi = std::numbers::pi;
const std::vector<std::string> kEdges{"left", "right", "bottom", "top"};  // Rectangle's part order

class SinProductProblem : public Problem {
 public:
  SinProductProblem(const config::Section& s, bool helmholtz) : helmholtz_(helmholtz) {
    std::vector<std::string> keys{"name", "domain", "solution", "boundary", "weights"};
    if (helmholtz_) keys.push_back("wavenumber");
    s.allow_only(keys);
    config::Section dom = s.section("domain"), sol = s.section("solution");
    dom.allow_only({"x", "y"});
    sol.allow_only({"kx", "ky"});
    const std::vector<double> fallback = helmholtz_ ? std::vector<double>{-1, 1} : std::vector<double>{0, 1};
    auto x = dom.numbers("x", fallback), y = dom.numbers("y", fallback);
    SKIFF_CHECK(x.size() == 2 && y.size() == 2 && x[0] < x[1] && y[0] < y[1],
                "{}: domain.x and domain.y are [low, high] pairs with low < high", dom.where("x"));
    box_ = std::make_shared<Rectangle>(x[0], y[0], x[1], y[1]);
    kx_ = sol.number("kx", 1.0);
    ky_ = sol.number("ky", helmholtz_ ? 4.0 : 1.0);
    k_ = helmholtz_ ? s.number("wavenumber", 1.0) : 0.0;
    bc_ = parse_boundary_conditions(s, "boundary", kEdges, BoundaryKind::Dirichlet);
    if (!helmholtz_)
      SKIFF_CHECK(bc_.any(BoundaryKind::Dirichlet),
                  "{}: at least one edge needs a Dirichlet condition (with Neumann data only, u is fixed up to a "
                  "constant)",
                  s.where("boundary"));
    w_ = LossWeights(s, {"pde", "boundary"});
    l_ = poincare_length(box_->bounds());
    // Largest |u*| on a fine grid of the closed box.
    double gmax = 0;
    for (int i = 0; i <= 64; ++i)
      for (int j = 0; j <= 64; ++j)
        gmax = std::max(gmax, std::abs(exact(x[0] + (x[1] - x[0]) * i / 64, y[0] + (y[1] - y[0]) * j / 64)));
    u_ = gmax;
    SKIFF_CHECK(u_ > 0, "{}: the manufactured solution is zero everywhere on this domain", s.where("solution"));
  }

  std::string name() const override { return helmholtz_ ? "helmholtz" : "poisson"; }
  std::vector<std::string> inputs() const override { return {"x", "y"}; }
  std::vector<std::string> outputs() const override { return {"u"}; }
  std::shared_ptr<const Geometry> domain() const override { return box_; }
  Scales scales() const override { return {{l_, l_}, {u_}}; }
  std::map<std::string, int64_t> default_counts() const override { return {{"interior", 2000}, {"boundary", 400}}; }

  std::vector<Constraint> constraints(const SamplingPlan& plan, Generator& gen) const override {
    Box b = box_->bounds();
    Rectangle box(b.lo[0] / l_, b.lo[1] / l_, b.hi[0] / l_, b.hi[1] / l_);
    Tensor xi = box.sample_interior(plan.count("interior"), plan.method, gen);
    const double k2 = k_ * k_;
    Tensor source =
        exact(select(xi, 1, 0) * l_, select(xi, 1, 1) * l_) * ((k2 - (kx_ * kx_ + ky_ * ky_) * kPi * kPi) * l_ * l_ / u_);
    Constraint pde{"pde", xi, {{0, {2, 0}}, {0, {0, 2}}}, nullptr, w_["pde"]};
    const double k2_hat = k2 * l_ * l_;
    pde.residual = [source, k2_hat](Derivatives& d, const Tensor& x) {
      Tensor r = d.partial({0, {2, 0}}) + d.partial({0, {0, 2}}) - to(source, x.dtype());
      return k2_hat != 0 ? r + d.value(0) * k2_hat : r;
    };
    std::vector<Constraint> out{pde};
    BoundarySample edge = box.sample_boundary(plan.count("boundary"), plan.method, gen);
    if (bc_.any(BoundaryKind::Dirichlet)) {
      Tensor xb = bc_.select(edge, BoundaryKind::Dirichlet).points;
      out.push_back(value_constraint("boundary", xb, {0}, exact(select(xb, 1, 0) * l_, select(xb, 1, 1) * l_) / u_,
                                     w_["boundary"]));
    }
    if (bc_.any(BoundaryKind::Neumann)) {
      BoundarySample nb = bc_.select(edge, BoundaryKind::Neumann);
      auto [gx, gy] = gradient(select(nb.points, 1, 0) * l_, select(nb.points, 1, 1) * l_);
      Tensor flux = (gx * select(nb.normals, 1, 0) + gy * select(nb.normals, 1, 1)) * (l_ / u_);
      out.push_back(neumann_constraint("neumann", nb, 0, 2, flux, w_["boundary"]));
    }
    return out;
  }

  std::vector<Field> reference(const Tensor& p) const override {
    Tensor p64 = to(p, DType::Float64);
    return {{"u", "", exact(select(p64, 1, 0), select(p64, 1, 1))}};
  }

 private:
  double exact(double x, double y) const { return std::sin(kx_ * kPi * x) * std::sin(ky_ * kPi * y); }
  Tensor exact(const Tensor& x, const Tensor& y) const { return sin(x * (kx_ * kPi)) * sin(y * (ky_ * kPi)); }
  std::pair<Tensor, Tensor> gradient(const Tensor& x, const Tensor& y) const {
    return {cos(x * (kx_ * kPi)) * sin(y * (ky_ * kPi)) * (kx_ * kPi),
            sin(x * (kx_ * kPi)) * cos(y * (ky_ * kPi)) * (ky_ * kPi)};
  }

  bool helmholtz_;
  std::shared_ptr<Rectangle> box_;
  BoundaryConditions bc_;
  LossWeights w_;
  double kx_, ky_, k_, l_, u_;
};

}  // namespace

std::unique_ptr<Problem> make_poisson(const config::Section& s) { return std::make_unique<SinProductProblem>(s, false); }
std::unique_ptr<Problem> make_helmholtz(const config::Section& s) { return std::make_unique<SinProductProblem>(s, true); }

}  // namespace skiff::science
