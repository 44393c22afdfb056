// 2-D Poisson equation with a manufactured solution:
//   -lap u = f on [x0, x1] x [y0, y1],  u = g on the boundary,
//   u*(x, y) = sin(kx pi x) sin(ky pi y), f = (kx^2 + ky^2) pi^2 u*, g = u*.
//
// Nondimensionalization: x = L x_hat with L the Poincare length of the box and
// u = U u_hat with U = max(max|f| L^2, max|g|), so both the source and the
// boundary data are of order one in the network's units.
#include <cmath>
#include <numbers>

#include "framework/ops/ops.h"
#include "suites/science/problems/problems.h"
#include "suites/science/recipe_section.h"

namespace skiff::science {
namespace {

constexpr double kPi = std::numbers::pi;

class Poisson : public Problem {
 public:
  explicit Poisson(const RecipeSection& s) {
    s.allow_only({"name", "domain", "solution", "weights"});
    RecipeSection dom = s.section("domain"), sol = s.section("solution"), w = s.section("weights");
    dom.allow_only({"x", "y"});
    sol.allow_only({"kx", "ky"});
    w.allow_only({"pde", "boundary"});
    auto x = dom.numbers("x", std::vector<double>{0, 1}), y = dom.numbers("y", std::vector<double>{0, 1});
    SKIFF_CHECK(x.size() == 2 && y.size() == 2, "{}: domain.x and domain.y are [low, high] pairs", dom.where("x"));
    box_ = std::make_shared<Rectangle>(x[0], y[0], x[1], y[1]);
    kx_ = sol.number("kx", 1.0);
    ky_ = sol.number("ky", 1.0);
    w_pde_ = w.positive("pde", 1.0);
    w_bc_ = w.positive("boundary", 1.0);
    l_ = poincare_length(box_->bounds());
    // Largest |u*| on a fine grid of the closed box bounds the boundary data.
    double gmax = 0;
    for (int i = 0; i <= 64; ++i)
      for (int j = 0; j <= 64; ++j)
        gmax = std::max(gmax, std::abs(exact(x[0] + (x[1] - x[0]) * i / 64, y[0] + (y[1] - y[0]) * j / 64)));
    const double fmax = (kx_ * kx_ + ky_ * ky_) * kPi * kPi * gmax;
    u_ = std::max(fmax * l_ * l_, gmax);
    SKIFF_CHECK(u_ > 0, "{}: the manufactured solution is zero everywhere on this domain", s.where("solution"));
  }

  std::string name() const override { return "poisson"; }
  std::vector<std::string> inputs() const override { return {"x", "y"}; }
  std::vector<std::string> outputs() const override { return {"u"}; }
  std::shared_ptr<const Geometry> domain() const override { return box_; }
  Scales scales() const override { return {{l_, l_}, {u_}}; }
  std::map<std::string, int64_t> default_counts() const override { return {{"interior", 2000}, {"boundary", 400}}; }

  std::vector<Constraint> constraints(const SamplingPlan& plan, Generator& gen) const override {
    Box b = box_->bounds();
    Rectangle box(b.lo[0] / l_, b.lo[1] / l_, b.hi[0] / l_, b.hi[1] / l_);
    Tensor xi = box.sample_interior(plan.count("interior"), plan.method, gen);
    Tensor source = exact(select(xi, 1, 0) * l_, select(xi, 1, 1) * l_) *
                    ((kx_ * kx_ + ky_ * ky_) * kPi * kPi * l_ * l_ / u_);
    Constraint pde{"pde", xi, {{0, {2, 0}}, {0, {0, 2}}}, nullptr, w_pde_};
    pde.residual = [source](Derivatives& d, const Tensor& x) {
      return -(d.partial({0, {2, 0}}) + d.partial({0, {0, 2}})) - to(source, x.dtype());
    };
    Tensor xb = box.sample_boundary(plan.count("boundary"), plan.method, gen).points;
    Tensor g = exact(select(xb, 1, 0) * l_, select(xb, 1, 1) * l_) / u_;
    Constraint bc{"boundary", xb, {}, nullptr, w_bc_};
    bc.residual = [g](Derivatives& d, const Tensor& x) { return d.value(0) - to(g, x.dtype()); };
    return {pde, bc};
  }

  std::vector<Field> reference(const Tensor& p) const override {
    Tensor p64 = to(p, DType::Float64);
    return {{"u", "", exact(select(p64, 1, 0), select(p64, 1, 1))}};
  }

 private:
  double exact(double x, double y) const { return std::sin(kx_ * kPi * x) * std::sin(ky_ * kPi * y); }
  Tensor exact(const Tensor& x, const Tensor& y) const { return sin(x * (kx_ * kPi)) * sin(y * (ky_ * kPi)); }

  std::shared_ptr<Rectangle> box_;
  double kx_, ky_, w_pde_, w_bc_, l_, u_;
};

}  // namespace

std::unique_ptr<Problem> make_poisson(const RecipeSection& s) { return std::make_unique<Poisson>(s); }

}  // namespace skiff::science
