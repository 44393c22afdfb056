#include "suites/science/pinn.h"

#include <cmath>
#include <optional>

#include "framework/core/error.h"
#include "framework/ops/ops.h"
#include "suites/science/problems/problems.h"

namespace skiff::science {

NetConfig net_config_for(const Problem& p, std::vector<int64_t> hidden, Activation act, DType dtype, uint64_t seed) {
  NetConfig c;
  c.inputs = int64_t(p.inputs().size());
  c.outputs = int64_t(p.outputs().size());
  c.hidden = std::move(hidden);
  c.activation = act;
  c.dtype = dtype;
  c.seed = seed;
  const Box b = p.domain()->bounds();
  const Scales s = p.scales();
  for (size_t i = 0; i < b.lo.size(); ++i) {
    c.lo.push_back(b.lo[i] / s.inputs[i]);
    c.hi.push_back(b.hi[i] / s.inputs[i]);
  }
  return c;
}

PinnSolver::PinnSolver(std::shared_ptr<const Problem> problem, NetConfig net, DerivativeMode mode, SamplingPlan plan,
                       uint64_t seed)
    : problem_(std::move(problem)), mode_(mode) {
  net.seed = seed;
  net_ = std::make_shared<PinnNet>(net);
  // The sampling stream is separate from the initialization stream so changing
  // the network does not move the points.
  Generator gen(seed ^ 0x9e3779b97f4a7c15ull);
  for (const auto& [key, n] : problem_->default_counts()) plan.counts.emplace(key, n);
  constraints_ = problem_->constraints(plan, gen);
  for (const auto& c : constraints_) points_.push_back(to(c.points, net.dtype));
  validation_points_ = problem_->domain()->sample_interior(2000, Sampling::LatinHypercube, gen);
  // Computed once: some references (Cole-Hopf quadrature) cost more than a training step.
  auto ref = problem_->reference(validation_points_);
  if (!ref.empty()) validation_reference_ = ref[0].values;
}

Tensor PinnSolver::loss(std::map<std::string, double>* parts) {
  Tensor total;
  for (size_t i = 0; i < constraints_.size(); ++i) {
    const Constraint& c = constraints_[i];
    auto d = make_derivatives(mode_, *net_, points_[i], c.needs);
    Tensor r = c.residual(*d, points_[i]);
    Tensor term = sum(r * r) * (c.weight / double(r.size(0)));
    if (parts) (*parts)[c.name] = to(detach(term), DType::Float64).item<double>();
    total = total.defined() ? total + term : term;
  }
  return total;
}

std::vector<Field> PinnSolver::predict(const Tensor& physical_points) {
  const Scales s = problem_->scales();
  Tensor x = to_nondimensional(physical_points, s);
  const int64_t n = x.size(0), chunk = 4096;
  std::optional<NoGradGuard> no_grad;  // Taylor mode needs no graph for the fields
  if (mode_ == DerivativeMode::Jet) no_grad.emplace();
  std::vector<std::vector<Tensor>> parts;
  std::vector<Field> out;
  for (int64_t start = 0; start < n; start += chunk) {
    Tensor xc = to(narrow(x, 0, start, std::min(chunk, n - start)), net_->config().dtype);
    // Nested autograd records a graph per chunk, dropped with it.
    auto d = make_derivatives(mode_, *net_, xc, problem_->field_needs());
    auto f = problem_->fields(*d);
    if (out.empty()) out = f;
    for (size_t k = 0; k < f.size(); ++k) {
      if (parts.size() <= k) parts.emplace_back();
      parts[k].push_back(detach(f[k].values));
    }
  }
  for (size_t k = 0; k < out.size(); ++k) out[k].values = concat(parts[k], 0);
  return out;
}

namespace {
double rel_l2(const Tensor& pred, const Tensor& ref) {
  double num = std::sqrt(sum(square(pred - ref)).item<double>());
  double den = std::sqrt(sum(square(ref)).item<double>());
  return den > 0 ? num / den : num;
}
}  // namespace

Evaluation PinnSolver::evaluate(const Tensor& physical_points) {
  Evaluation e;
  auto pred = predict(physical_points);
  auto ref = problem_->reference(physical_points);
  for (size_t k = 0; k < pred.size() && k < ref.size(); ++k) {
    FieldError fe{pred[k].name, pred[k].unit};
    fe.rel_l2 = rel_l2(pred[k].values, ref[k].values);
    fe.max_abs = amax(abs(pred[k].values - ref[k].values)).item<double>();
    fe.ref_max_abs = amax(abs(ref[k].values)).item<double>();
    e.errors.push_back(fe);
  }
  e.figures = problem_->figures([this](const Tensor& p) { return predict(p); });
  return e;
}

double PinnSolver::validation_error() {
  if (!validation_reference_.defined()) return -1;
  auto pred = predict(validation_points_);
  return rel_l2(pred[0].values, validation_reference_);
}

Tensor grid_points(const Geometry& g, const std::vector<int64_t>& sizes, std::vector<bool>* inside) {
  const Box b = g.bounds();
  const int d = g.dim();
  SKIFF_CHECK(int(sizes.size()) == d, "grid: {} sizes for a {}-D domain", sizes.size(), d);
  int64_t total = 1;
  for (int64_t s : sizes) {
    SKIFF_CHECK(s >= 2, "grid: every size must be at least 2, got {}", s);
    total *= s;
  }
  std::vector<double> pts;
  std::vector<double> p(d);
  if (inside) inside->assign(total, false);
  for (int64_t idx = 0; idx < total; ++idx) {
    int64_t r = idx;
    for (int k = d - 1; k >= 0; --k) {
      int64_t i = r % sizes[k];
      r /= sizes[k];
      p[k] = b.lo[k] + (b.hi[k] - b.lo[k]) * double(i) / double(sizes[k] - 1);
    }
    if (!g.contains(p.data(), 1e-12)) continue;
    if (inside) (*inside)[idx] = true;
    pts.insert(pts.end(), p.begin(), p.end());
  }
  return from_vector(pts, Shape{int64_t(pts.size()) / d, d});
}

}  // namespace skiff::science
