#include "suites/science/derivatives.h"

#include <algorithm>

#include "framework/autograd/engine.h"
#include "framework/core/error.h"
#include "framework/ops/ops.h"

namespace skiff::science {

std::string partial_name(const Partial& p, const std::vector<std::string>& outputs,
                         const std::vector<std::string>& inputs) {
  std::string s = p.output < int(outputs.size()) ? outputs[p.output] : "u" + std::to_string(p.output);
  std::string sub;
  for (size_t i = 0; i < p.alpha.size(); ++i)
    for (int k = 0; k < p.alpha[i]; ++k) sub += i < inputs.size() ? inputs[i] : "x" + std::to_string(i);
  return sub.empty() ? s : s + "_" + sub;
}

DerivativeMode parse_derivative_mode(const std::string& name) {
  if (name == "jet") return DerivativeMode::Jet;
  if (name == "autograd") return DerivativeMode::Autograd;
  throw ValueError(fmt::format("derivative mode '{}' is not known; use 'jet' or 'autograd'", name));
}

Tensor Derivatives::value(int output) { return select(values(), 1, output); }

namespace {

int order_of(const MultiIndex& a) {
  int s = 0;
  for (int k : a) s += k;
  return s;
}

void check_partial(const Partial& p, int64_t inputs, int64_t outputs) {
  SKIFF_CHECK(p.output >= 0 && p.output < outputs, "derivatives: output {} out of range (the model has {})", p.output,
              outputs);
  SKIFF_CHECK(int64_t(p.alpha.size()) == inputs, "derivatives: multi-index has {} entries for {} inputs",
              p.alpha.size(), inputs);
  for (int k : p.alpha) SKIFF_CHECK(k >= 0, "derivatives: negative order in a multi-index");
}

// Nested reverse mode: a partial is the gradient of a lower one, and one
// gradient call yields that partial for every input coordinate, all cached.
class AutogradDerivatives : public Derivatives {
 public:
  AutogradDerivatives(const std::function<Tensor(const Tensor&)>& model, int64_t outputs, const Tensor& points)
      : outputs_(outputs) {
    x_ = detach(points).set_requires_grad(true);
    u_ = model(x_);
    SKIFF_CHECK(u_.dim() == 2 && u_.size(0) == x_.size(0) && u_.size(1) == outputs,
                "derivatives: the model maps [{}, {}] points to {}, expected [{}, {}]", x_.size(0), x_.size(1),
                u_.shape().str(), x_.size(0), outputs);
  }
  Tensor values() override { return u_; }
  Tensor partial(const Partial& p) override {
    check_partial(p, x_.size(1), outputs_);
    if (order_of(p.alpha) == 0) return select(u_, 1, p.output);
    if (auto it = cache_.find(p); it != cache_.end()) return it->second;
    // Differentiate the lower partial along the last coordinate it still has.
    Partial lower = p;
    int axis = int(std::find_if(lower.alpha.rbegin(), lower.alpha.rend(), [](int k) { return k > 0; }).base() -
                   lower.alpha.begin()) - 1;
    lower.alpha[axis] -= 1;
    Tensor base = partial(lower);
    // create_graph: the result must stay differentiable (for the next order and
    // for the parameters' gradient). allow_unused: a polynomial of low degree in
    // x can have a derivative that no longer depends on x.
    auto g = autograd::grad({sum(base)}, {x_}, {}, /*create_graph=*/true, /*allow_unused=*/true)[0];
    for (int j = 0; j < int(p.alpha.size()); ++j) {
      Partial q = lower;
      q.alpha[j] += 1;
      if (!cache_.count(q)) cache_[q] = g.defined() ? select(g, 1, j) : zeros({x_.size(0)}, u_.dtype());
    }
    return cache_.at(p);
  }

 private:
  int64_t outputs_;
  Tensor x_, u_;
  std::map<Partial, Tensor> cache_;
};

// How a partial is formed from directional derivatives: sum of coef * D^order_v u.
struct Term {
  int direction;
  double coef;
};
struct Recipe {
  int order;
  std::vector<Term> terms;
};

class JetDerivatives : public Derivatives {
 public:
  JetDerivatives(PinnNet& net, const Tensor& points, const std::vector<Partial>& needed) {
    const int d = int(net.config().inputs);
    std::vector<std::vector<double>> dirs;
    auto direction = [&](std::vector<double> v) {
      auto it = std::find(dirs.begin(), dirs.end(), v);
      if (it != dirs.end()) return int(it - dirs.begin());
      dirs.push_back(std::move(v));
      return int(dirs.size()) - 1;
    };
    auto unit = [&](int i, int j = -1, double sj = 0) {
      std::vector<double> v(d, 0.0);
      v[i] = 1;
      if (j >= 0) v[j] = sj;
      return v;
    };
    int max_order = 0;
    for (const Partial& p : needed) {
      check_partial(p, net.config().inputs, net.config().outputs);
      std::vector<int> nz;
      for (int i = 0; i < d; ++i)
        if (p.alpha[i] > 0) nz.push_back(i);
      const int m = order_of(p.alpha);
      if (m == 0 || recipes_.count(p)) continue;
      SKIFF_CHECK(m <= 4, "jet derivatives: order {} of partial {} is above 4; use derivatives: autograd", m,
                  fmt::join(p.alpha, ","));
      Recipe r{m, {}};
      if (nz.size() == 1) {
        r.terms = {{direction(unit(nz[0])), 1.0}};
      } else if (nz.size() == 2 && m == 2) {  // u_ij = (D2(ei+ej) - D2 ei - D2 ej) / 2
        int i = nz[0], j = nz[1];
        r.terms = {{direction(unit(i, j, 1)), 0.5}, {direction(unit(i)), -0.5}, {direction(unit(j)), -0.5}};
      } else if (nz.size() == 2 && p.alpha[nz[0]] == 2 && p.alpha[nz[1]] == 2) {
        // D4(ei+ej) + D4(ei-ej) = 2 u_iiii + 12 u_iijj + 2 u_jjjj (odd terms cancel).
        int i = nz[0], j = nz[1];
        r.terms = {{direction(unit(i, j, 1)), 1.0 / 12},
                   {direction(unit(i, j, -1)), 1.0 / 12},
                   {direction(unit(i)), -1.0 / 6},
                   {direction(unit(j)), -1.0 / 6}};
      } else {
        throw ValueError(fmt::format(
            "jet derivatives: mixed partial ({}) is not supported (only u_ij and u_iijj); use derivatives: autograd",
            fmt::join(p.alpha, ",")));
      }
      max_order = std::max(max_order, m);
      recipes_[p] = r;
    }
    if (dirs.empty()) {
      values_ = net.forward(points);
      return;
    }
    std::vector<double> flat;
    for (const auto& v : dirs) flat.insert(flat.end(), v.begin(), v.end());
    Jet j = net.jet(points, from_vector(flat, Shape{int64_t(dirs.size()), d}), max_order);
    values_ = j.value;
    jet_ = std::move(j.d);
  }
  Tensor values() override { return values_; }
  Tensor partial(const Partial& p) override {
    if (order_of(p.alpha) == 0) return select(values_, 1, p.output);
    auto it = recipes_.find(p);
    SKIFF_CHECK(it != recipes_.end(), "jet derivatives: partial ({}) of output {} was not declared by the constraint",
                fmt::join(p.alpha, ","), p.output);
    Tensor out;
    for (const Term& t : it->second.terms) {
      Tensor v = select(select(jet_[it->second.order - 1], 0, t.direction), 1, p.output);
      if (t.coef != 1.0) v = v * t.coef;
      out = out.defined() ? out + v : v;
    }
    return out;
  }

 private:
  std::map<Partial, Recipe> recipes_;
  Tensor values_;
  std::vector<Tensor> jet_;
};

}  // namespace

std::unique_ptr<Derivatives> make_derivatives(DerivativeMode mode, PinnNet& net, const Tensor& points,
                                              const std::vector<Partial>& needed) {
  if (mode == DerivativeMode::Autograd)
    return std::make_unique<AutogradDerivatives>([&net](const Tensor& x) { return net.forward(x); },
                                                 net.config().outputs, points);
  return std::make_unique<JetDerivatives>(net, points, needed);
}

std::unique_ptr<Derivatives> autograd_derivatives(const std::function<Tensor(const Tensor&)>& model, int64_t outputs,
                                                  const Tensor& points) {
  return std::make_unique<AutogradDerivatives>(model, outputs, points);
}

}  // namespace skiff::science
