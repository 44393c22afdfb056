// Kirchhoff thin-plate bending (the PaddleScience biharmonic2d problem):
//   D lap^2 w = q on [0, a] x [0, b],  D = E h^3 / (12 (1 - nu^2)),
//   simply supported: w = 0 and zero normal bending moment on every edge.
// The load is q0 sin(pi x / a) sin(pi y / b), whose Navier solution is the
// single term w = q0 / (D pi^4 (1/a^2 + 1/b^2)^2) sin(pi x / a) sin(pi y / b).
//
// Nondimensionalization: x = L x_hat with L the Poincare length of the plate,
// w = W w_hat with W = q0 L^4 / D, so lap_hat^2 w_hat = q / q0 and w_hat is of
// order one for any plate size, stiffness and load.
#include <cmath>
#include <numbers>

#include "framework/core/error.h"
#include "framework/ops/ops.h"
#include "suites/science/problems/conditions.h"
#include "suites/science/problems/problems.h"
#include "framework/config/section.h"

namespace skiff::science {
namespace {

constexpr double kPi = std::numbers::pi;

class PlateBending : public Problem {
 public:
  explicit PlateBending(const config::Section& s) {
    s.allow_only({"name", "plate", "load", "weights"});
    config::Section plate = s.section("plate"), load = s.section("load");
    plate.allow_only({"a", "b", "thickness", "youngs_modulus", "poisson_ratio"});
    load.allow_only({"q0"});
    a_ = plate.positive("a", 2.0);
    b_ = plate.positive("b", 3.0);
    h_ = plate.positive("thickness", 0.01);
    e_ = plate.positive("youngs_modulus", 201880e6);
    nu_ = plate.number("poisson_ratio", 0.25);
    SKIFF_CHECK(nu_ > -1 && nu_ < 0.5, "{}: must lie in (-1, 0.5), got {}", plate.where("poisson_ratio"), nu_);
    q0_ = load.number("q0", 980.0);
    SKIFF_CHECK(q0_ != 0, "{}: a zero load gives the trivial solution w = 0", load.where("q0"));
    w_ = LossWeights(s, {"pde", "boundary"});
    d_ = e_ * h_ * h_ * h_ / (12 * (1 - nu_ * nu_));
    l_ = poincare_length({{0, 0}, {a_, b_}});
    wscale_ = q0_ * std::pow(l_, 4) / d_;
  }

  std::string name() const override { return "plate_bending"; }
  std::vector<std::string> inputs() const override { return {"x", "y"}; }
  std::vector<std::string> outputs() const override { return {"w"}; }
  std::shared_ptr<const Geometry> domain() const override { return std::make_shared<Rectangle>(0, 0, a_, b_); }
  Scales scales() const override { return {{l_, l_}, {wscale_}}; }
  std::map<std::string, int64_t> default_counts() const override { return {{"interior", 2000}, {"boundary", 400}}; }

  std::vector<Constraint> constraints(const SamplingPlan& plan, Generator& gen) const override {
    Rectangle box(0, 0, a_ / l_, b_ / l_);
    const double ah = a_ / l_, bh = b_ / l_;
    Constraint pde{"pde", box.sample_interior(plan.count("interior"), plan.method, gen),
                   {{0, {4, 0}}, {0, {2, 2}}, {0, {0, 4}}}, nullptr, w_["pde"]};
    pde.residual = [ah, bh](Derivatives& d, const Tensor& x) {
      Tensor bih = d.partial({0, {4, 0}}) + d.partial({0, {2, 2}}) * 2.0 + d.partial({0, {0, 4}});
      Tensor q = sin(select(x, 1, 0) * (kPi / ah)) * sin(select(x, 1, 1) * (kPi / bh));
      return bih - q;
    };
    BoundarySample edge = box.sample_boundary(plan.count("boundary"), plan.method, gen);
    // Normal moment: M_n ~ w_nn + nu w_tt, with n = x on parts 0/1 and n = y on 2/3.
    Tensor on_x_edge = lt(edge.part, 2.0);
    Constraint bc{"boundary", edge.points, {{0, {2, 0}}, {0, {0, 2}}}, nullptr, w_["boundary"]};
    const double nu = nu_;
    bc.residual = [on_x_edge, nu](Derivatives& d, const Tensor&) {
      Tensor wxx = d.partial({0, {2, 0}}), wyy = d.partial({0, {0, 2}});
      Tensor moment = where(on_x_edge, wxx + wyy * nu, wyy + wxx * nu);
      return stack({d.value(0), moment}, 1);
    };
    return {pde, bc};
  }

  std::vector<Partial> field_needs() const override { return {{0, {2, 0}}, {0, {0, 2}}}; }

  std::vector<Field> fields(Derivatives& d) const override {
    const double curv = wscale_ / (l_ * l_);  // w_xx = W / L^2 w_hat_xx
    Tensor w = to(d.value(0), DType::Float64) * wscale_;
    Tensor wxx = to(d.partial({0, {2, 0}}), DType::Float64) * curv;
    Tensor wyy = to(d.partial({0, {0, 2}}), DType::Float64) * curv;
    return {{"w", "m", w}, {"Mx", "N*m/m", (wxx + wyy * nu_) * -d_}, {"My", "N*m/m", (wyy + wxx * nu_) * -d_}};
  }

  std::vector<Field> reference(const Tensor& p) const override {
    const double amp = q0_ / (d_ * std::pow(kPi, 4) * std::pow(1 / (a_ * a_) + 1 / (b_ * b_), 2));
    Tensor p64 = to(p, DType::Float64);
    Tensor w = sin(select(p64, 1, 0) * (kPi / a_)) * sin(select(p64, 1, 1) * (kPi / b_)) * amp;
    const double kx = std::pow(kPi / a_, 2), ky = std::pow(kPi / b_, 2);
    return {{"w", "m", w}, {"Mx", "N*m/m", w * (d_ * (kx + nu_ * ky))}, {"My", "N*m/m", w * (d_ * (ky + nu_ * kx))}};
  }

  std::map<std::string, double> figures(
      const std::function<std::vector<Field>(const Tensor&)>& predict) const override {
    Tensor centre = from_vector(std::vector<double>{a_ / 2, b_ / 2}, Shape{1, 2});
    auto pred = predict(centre);
    auto ref = reference(centre);
    std::map<std::string, double> out{{"flexural_rigidity_D", d_}};
    for (size_t i = 0; i < pred.size(); ++i) {
      out["centre_" + pred[i].name] = pred[i].values.item<double>();
      out["centre_" + pred[i].name + "_reference"] = ref[i].values.item<double>();
    }
    return out;
  }

 private:
  double a_, b_, h_, e_, nu_, q0_;
  LossWeights w_;
  double d_, l_, wscale_;
};

}  // namespace

std::unique_ptr<Problem> make_plate_bending(const config::Section& s) { return std::make_unique<PlateBending>(s); }

}  // namespace skiff::science
