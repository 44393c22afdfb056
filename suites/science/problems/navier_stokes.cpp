// Steady incompressible Navier-Stokes in 2-D, Kovasznay flow (the wake behind
// a row of cylinders; an exact solution):
//   (u . grad) u + grad p = (1 / Re) lap u,  div u = 0,
//   u = 1 - e^(l x) cos(2 pi y),  v = l / (2 pi) e^(l x) sin(2 pi y),  p = (1 - e^(2 l x)) / 2,
//   l = Re / 2 - sqrt(Re^2 / 4 + 4 pi^2),
// on [x0, x1] x [y0, y1] with the exact velocity on every edge and the exact
// pressure on the outlet (x = x1), which fixes p's free constant.
//
// Nondimensionalization: x = L x_hat with L the Poincare length of the box,
// velocities by U = the largest boundary speed, p by U^2; the equations keep
// their form with Re_hat = Re U L.
#include <cmath>
#include <numbers>

#include "framework/ops/ops.h"
#include "suites/science/problems/conditions.h"
#include "suites/science/problems/problems.h"
#include "framework/config/section.h"

namespace skiff::science {
namespace {

constexpr double kPi = std::numbers::pi;

class Kovasznay : public Problem {
 public:
  explicit Kovasznay(const config::Section& s) {
    s.allow_only({"name", "reynolds", "domain", "weights"});
    config::Section dom = s.section("domain");
    dom.allow_only({"x", "y"});
    re_ = s.positive("reynolds", 20.0);
    auto x = dom.numbers("x", std::vector<double>{-0.5, 1.0}), y = dom.numbers("y", std::vector<double>{-0.5, 1.5});
    SKIFF_CHECK(x.size() == 2 && y.size() == 2 && x[0] < x[1] && y[0] < y[1],
                "{}: domain.x and domain.y are [low, high] pairs with low < high", dom.where("x"));
    box_ = std::make_shared<Rectangle>(x[0], y[0], x[1], y[1]);
    w_ = LossWeights(s, {"momentum", "continuity", "boundary", "outlet_pressure"});
    lambda_ = re_ / 2 - std::sqrt(re_ * re_ / 4 + 4 * kPi * kPi);
    l_ = poincare_length(box_->bounds());
    // The speed is largest where e^(l x) is (l < 0: at the inlet x0).
    double umax = 0;
    for (int i = 0; i <= 256; ++i) {
      double py = y[0] + (y[1] - y[0]) * i / 256;
      for (double px : {x[0], x[1]}) {
        auto [u, v, p] = exact(px, py);
        umax = std::max(umax, std::hypot(u, v));
      }
    }
    u_ = umax;
  }

  std::string name() const override { return "navier_stokes"; }
  std::vector<std::string> inputs() const override { return {"x", "y"}; }
  std::vector<std::string> outputs() const override { return {"u", "v", "p"}; }
  std::shared_ptr<const Geometry> domain() const override { return box_; }
  Scales scales() const override { return {{l_, l_}, {u_, u_, u_ * u_}}; }
  std::map<std::string, int64_t> default_counts() const override { return {{"interior", 2000}, {"boundary", 400}}; }

  std::vector<Constraint> constraints(const SamplingPlan& plan, Generator& gen) const override {
    Box b = box_->bounds();
    Rectangle box(b.lo[0] / l_, b.lo[1] / l_, b.hi[0] / l_, b.hi[1] / l_);
    Tensor xi = box.sample_interior(plan.count("interior"), plan.method, gen);
    const double inv_re = 1.0 / (re_ * u_ * l_);
    std::vector<Partial> needs;
    for (int k : {0, 1})
      for (MultiIndex a : {MultiIndex{1, 0}, MultiIndex{0, 1}, MultiIndex{2, 0}, MultiIndex{0, 2}}) needs.push_back({k, a});
    needs.push_back({2, {1, 0}});
    needs.push_back({2, {0, 1}});
    Constraint momentum{"momentum", xi, needs, nullptr, w_["momentum"]};
    momentum.residual = [inv_re](Derivatives& d, const Tensor&) {
      Tensor u = d.value(0), v = d.value(1);
      auto transport = [&](int k, const MultiIndex& dp) {
        return u * d.partial({k, {1, 0}}) + v * d.partial({k, {0, 1}}) + d.partial({2, dp}) -
               (d.partial({k, {2, 0}}) + d.partial({k, {0, 2}})) * inv_re;
      };
      return stack({transport(0, {1, 0}), transport(1, {0, 1})}, 1);
    };
    Constraint continuity{"continuity", xi, {{0, {1, 0}}, {1, {0, 1}}}, nullptr, w_["continuity"]};
    continuity.residual = [](Derivatives& d, const Tensor&) { return d.partial({0, {1, 0}}) + d.partial({1, {0, 1}}); };

    BoundarySample edge = box.sample_boundary(plan.count("boundary"), plan.method, gen);
    Tensor xb = edge.points;
    auto ref = reference(to_physical(xb, scales()));
    Tensor velocity = stack({ref[0].values / u_, ref[1].values / u_}, 1);
    // The outlet is Rectangle part 1 (x = x1).
    Tensor xo = select_parts(edge, {false, true, false, false}).points;
    Tensor p_out = reference(to_physical(xo, scales()))[2].values / (u_ * u_);
    return {momentum, continuity, value_constraint("boundary", xb, {0, 1}, velocity, w_["boundary"]),
            value_constraint("outlet_pressure", xo, {2}, p_out, w_["outlet_pressure"])};
  }

  std::vector<Field> reference(const Tensor& p) const override {
    Tensor p64 = to(p, DType::Float64);
    Tensor x = select(p64, 1, 0), y = select(p64, 1, 1);
    Tensor e = exp(x * lambda_);
    return {{"u", "", 1.0 - e * cos(y * (2 * kPi))},
            {"v", "", e * sin(y * (2 * kPi)) * (lambda_ / (2 * kPi))},
            {"p", "", (1.0 - e * e) * 0.5}};
  }

 private:
  std::tuple<double, double, double> exact(double x, double y) const {
    const double e = std::exp(lambda_ * x);
    return {1 - e * std::cos(2 * kPi * y), lambda_ / (2 * kPi) * e * std::sin(2 * kPi * y), (1 - e * e) / 2};
  }

  double re_;
  std::shared_ptr<Rectangle> box_;
  LossWeights w_;
  double lambda_, l_, u_;
};

}  // namespace

std::unique_ptr<Problem> make_navier_stokes(const config::Section& s) { return std::make_unique<Kovasznay>(s); }

}  // namespace skiff::science
