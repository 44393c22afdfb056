#include "framework/optim/lbfgs.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "framework/ops/op.h"
#include "framework/ops/ops.h"
#include "framework/optim/kernel_utils.h"

namespace skiff::optim {

namespace {

using Vec = std::vector<double>;

double dot(const Vec& a, const Vec& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}
double abs_max(const Vec& a) {
  double m = 0.0;
  for (double v : a) m = std::max(m, std::abs(v));
  return m;
}
double abs_sum(const Vec& a) {
  double s = 0.0;
  for (double v : a) s += std::abs(v);
  return s;
}

/// Minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to the bounds
/// (default: the interval between the points); the midpoint when the cubic has no minimum.
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2, const double* lo = nullptr,
                         const double* hi = nullptr) {
  const double xmin = lo ? *lo : std::min(x1, x2);
  const double xmax = hi ? *hi : std::max(x1, x2);
  const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  const double d2_square = d1 * d1 - g1 * g2;
  if (d2_square >= 0) {
    const double d2 = std::sqrt(d2_square);
    const double min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                                    : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
    return std::min(std::max(min_pos, xmin), xmax);
  }
  return (xmin + xmax) / 2;
}

Tensor vec_tensor(const Vec& v) { return from_vector<double>(v); }
Vec tensor_vec(const Tensor& t) { return skiff::detail::cast(t, DType::Float64).to_vector<double>(); }

}  // namespace

Options LBFGSOptions::to_map() const {
  return {{"lr", lr},
          {"max_iter", double(max_iter)},
          {"max_eval", double(max_eval > 0 ? max_eval : max_iter * 5 / 4)},
          {"tolerance_grad", tolerance_grad},
          {"tolerance_change", tolerance_change},
          {"history_size", double(history_size)},
          {"strong_wolfe", strong_wolfe ? 1.0 : 0.0}};
}

LBFGS::LBFGS(std::vector<Tensor> params, LBFGSOptions o)
    : Optimizer(single_group(std::move(params)), o.to_map(), "LBFGS") {
  validate(groups_[0]);
  for (const auto& p : groups_[0].params) numel_ += p.numel();
}

void LBFGS::validate(const ParamGroup& g) const {
  SKIFF_CHECK(groups_.size() == 1, "LBFGS: expected exactly one parameter group, got {}", groups_.size());
  SKIFF_CHECK(g.get("lr") > 0, "LBFGS: invalid learning rate {}, expected > 0", g.get("lr"));
  SKIFF_CHECK(g.get("max_iter") >= 1, "LBFGS: invalid max_iter {}, expected >= 1", g.get("max_iter"));
  SKIFF_CHECK(g.get("max_eval") >= 1, "LBFGS: invalid max_eval {}, expected >= 1", g.get("max_eval"));
  SKIFF_CHECK(g.get("history_size") >= 1, "LBFGS: invalid history_size {}, expected >= 1", g.get("history_size"));
}

void LBFGS::update(const ParamGroup&, Tensor&, const Tensor&, ParamState&) {
  SKIFF_THROW(InternalError, "LBFGS: update() is not used; step(closure) drives the iteration");
}

Vec LBFGS::gather_flat_grad() const {
  Vec out;
  out.reserve(numel_);
  for (const auto& p : groups_[0].params) {
    Tensor g = p.grad();
    if (!g.defined()) {
      out.insert(out.end(), p.numel(), 0.0);
      continue;
    }
    Tensor c = detail::as_contiguous(g, DType::Float64);
    const double* d = c.data<double>();
    out.insert(out.end(), d, d + c.numel());
  }
  return out;
}

Vec LBFGS::params_flat() const {
  Vec out;
  out.reserve(numel_);
  for (const auto& p : groups_[0].params) {
    Tensor c = detail::as_contiguous(p, DType::Float64);
    const double* d = c.data<double>();
    out.insert(out.end(), d, d + c.numel());
  }
  return out;
}

void LBFGS::add_to_params(double t, const Vec& d) {
  NoGradGuard no_grad;
  int64_t off = 0;
  for (const auto& p : groups_[0].params) {
    Tensor w = detail::working_copy(p);
    // p's slice of the direction, in p's compute dtype: w += t * d as two kernels (mul, add_),
    // the same arithmetic as x + T(t) * T(d) element by element.
    Tensor direction = from_blob(const_cast<double*>(d.data() + off), w.shape(), DType::Float64);
    add_(w, mul(to(direction, w.dtype()), t));
    detail::commit(p, w);
    off += p.numel();
  }
}

void LBFGS::set_params(const Vec& x) {
  int64_t off = 0;
  for (const auto& p : groups_[0].params) {
    Tensor src = from_vector<double>(Vec(x.begin() + off, x.begin() + off + p.numel()), p.shape());
    skiff::detail::copy_into(p, src);
    off += p.numel();
  }
}

std::pair<double, Vec> LBFGS::directional_evaluate(const Closure& closure, const Vec& x, double t, const Vec& d) {
  add_to_params(t, d);
  double loss;
  {
    GradModeGuard on(true);
    loss = closure();
  }
  Vec g = gather_flat_grad();
  set_params(x);
  return {loss, std::move(g)};
}

std::tuple<double, Vec, int64_t> LBFGS::strong_wolfe(const Closure& closure, const Vec& x, double& t, const Vec& d,
                                                      double f, const Vec& g, double gtd) {
  constexpr double c1 = 1e-4, c2 = 0.9;
  constexpr int64_t max_ls = 25;
  const double tolerance_change = groups_[0].get("tolerance_change");
  const double d_norm = abs_max(d);
  auto [f_new, g_new] = directional_evaluate(closure, x, t, d);
  int64_t evals = 1;
  double gtd_new = dot(g_new, d);
  double t_prev = 0, f_prev = f, gtd_prev = gtd;
  Vec g_prev = g;
  bool done = false;
  int64_t ls_iter = 0;
  // Bracketing phase: find an interval containing a point satisfying the strong Wolfe conditions.
  double br[2] = {0, 0}, br_f[2] = {0, 0}, br_gtd[2] = {0, 0};
  Vec br_g[2];
  int nbr = 0;
  while (ls_iter < max_ls) {
    if (f_new > f + c1 * t * gtd || (ls_iter > 1 && f_new >= f_prev)) {
      br[0] = t_prev, br[1] = t, br_f[0] = f_prev, br_f[1] = f_new, br_gtd[0] = gtd_prev, br_gtd[1] = gtd_new;
      br_g[0] = g_prev, br_g[1] = g_new, nbr = 2;
      break;
    }
    if (std::abs(gtd_new) <= -c2 * gtd) {
      br[0] = t, br_f[0] = f_new, br_g[0] = g_new, br_gtd[0] = gtd_new, nbr = 1;
      done = true;
      break;
    }
    if (gtd_new >= 0) {
      br[0] = t_prev, br[1] = t, br_f[0] = f_prev, br_f[1] = f_new, br_gtd[0] = gtd_prev, br_gtd[1] = gtd_new;
      br_g[0] = g_prev, br_g[1] = g_new, nbr = 2;
      break;
    }
    // Extrapolate with a cubic, keeping the step between 1.01 t and 10 t.
    double lo = t + 0.01 * (t - t_prev), hi = t * 10;
    const double tmp = t;
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, &lo, &hi);
    t_prev = tmp, f_prev = f_new, g_prev = g_new, gtd_prev = gtd_new;
    std::tie(f_new, g_new) = directional_evaluate(closure, x, t, d);
    ++evals;
    gtd_new = dot(g_new, d);
    ++ls_iter;
  }
  if (ls_iter == max_ls) {
    br[0] = 0, br[1] = t, br_f[0] = f, br_f[1] = f_new, br_g[0] = g, br_g[1] = g_new;
    br_gtd[0] = gtd, br_gtd[1] = gtd_new, nbr = 2;
  }
  // Zoom phase: shrink the bracket by cubic interpolation until the conditions hold.
  bool insuf_progress = false;
  int low = 0, high = 1;
  if (nbr == 2 && br_f[0] > br_f[1]) low = 1, high = 0;
  while (!done && ls_iter < max_ls) {
    if (std::abs(br[1] - br[0]) * d_norm < tolerance_change) break;
    t = cubic_interpolate(br[0], br_f[0], br_gtd[0], br[1], br_f[1], br_gtd[1]);
    const double bmax = std::max(br[0], br[1]), bmin = std::min(br[0], br[1]);
    const double eps = 0.1 * (bmax - bmin);
    if (std::min(bmax - t, t - bmin) < eps) {
      // Too close to an end: move away unless the last step already did, to guarantee progress.
      if (insuf_progress || t >= bmax || t <= bmin) {
        t = std::abs(t - bmax) < std::abs(t - bmin) ? bmax - eps : bmin + eps;
        insuf_progress = false;
      } else {
        insuf_progress = true;
      }
    } else {
      insuf_progress = false;
    }
    std::tie(f_new, g_new) = directional_evaluate(closure, x, t, d);
    ++evals;
    gtd_new = dot(g_new, d);
    ++ls_iter;
    if (f_new > f + c1 * t * gtd || f_new >= br_f[low]) {
      br[high] = t, br_f[high] = f_new, br_g[high] = g_new, br_gtd[high] = gtd_new;
      if (br_f[0] <= br_f[1])
        low = 0, high = 1;
      else
        low = 1, high = 0;
    } else {
      if (std::abs(gtd_new) <= -c2 * gtd) {
        done = true;
      } else if (gtd_new * (br[high] - br[low]) >= 0) {
        br[high] = br[low], br_f[high] = br_f[low], br_g[high] = br_g[low], br_gtd[high] = br_gtd[low];
      }
      br[low] = t, br_f[low] = f_new, br_g[low] = g_new, br_gtd[low] = gtd_new;
    }
  }
  if (nbr == 1) low = 0;
  t = br[low];
  return {br_f[low], br_g[low], evals};
}

double LBFGS::step(const Closure& closure) {
  SKIFF_CHECK(closure != nullptr, "LBFGS.step: a closure that recomputes the loss and gradients is required");
  const ParamGroup& g = groups_[0];
  validate(g);
  const double lr = g.get("lr"), tol_grad = g.get("tolerance_grad"), tol_change = g.get("tolerance_change");
  const auto max_iter = int64_t(g.get("max_iter")), max_eval = int64_t(g.get("max_eval"));
  const auto history = size_t(g.get("history_size"));
  const bool wolfe = g.get("strong_wolfe") != 0;

  double orig_loss;
  {
    GradModeGuard on(true);
    orig_loss = closure();
  }
  NoGradGuard no_grad;
  double loss = orig_loss;
  int64_t current_evals = 1;
  ++func_evals_;
  Vec flat_grad = gather_flat_grad();
  if (abs_max(flat_grad) <= tol_grad) return orig_loss;

  int64_t n_iter = 0;
  while (n_iter < max_iter) {
    ++n_iter;
    ++n_iter_;
    // Direction: two-loop recursion over the stored correction pairs.
    if (n_iter_ == 1) {
      d_.assign(flat_grad.size(), 0.0);
      for (size_t i = 0; i < d_.size(); ++i) d_[i] = -flat_grad[i];
      old_dirs_.clear(), old_stps_.clear(), ro_.clear();
      h_diag_ = 1.0;
    } else {
      Vec y(flat_grad.size()), s(flat_grad.size());
      for (size_t i = 0; i < y.size(); ++i) y[i] = flat_grad[i] - prev_flat_grad_[i], s[i] = d_[i] * t_;
      const double ys = dot(y, s);
      if (ys > 1e-10) {  // skip pairs that would break positive definiteness
        if (old_dirs_.size() == history) {
          old_dirs_.erase(old_dirs_.begin()), old_stps_.erase(old_stps_.begin()), ro_.erase(ro_.begin());
        }
        old_dirs_.push_back(y), old_stps_.push_back(s), ro_.push_back(1.0 / ys);
        h_diag_ = ys / dot(y, y);
      }
      const size_t num_old = old_dirs_.size();
      Vec al(num_old);
      Vec q(flat_grad.size());
      for (size_t i = 0; i < q.size(); ++i) q[i] = -flat_grad[i];
      for (size_t k = num_old; k-- > 0;) {
        al[k] = dot(old_stps_[k], q) * ro_[k];
        for (size_t i = 0; i < q.size(); ++i) q[i] += -al[k] * old_dirs_[k][i];
      }
      for (double& v : q) v *= h_diag_;
      for (size_t k = 0; k < num_old; ++k) {
        const double be = dot(old_dirs_[k], q) * ro_[k];
        for (size_t i = 0; i < q.size(); ++i) q[i] += (al[k] - be) * old_stps_[k][i];
      }
      d_ = std::move(q);
    }
    prev_flat_grad_ = flat_grad;
    prev_loss_ = loss;
    t_ = n_iter_ == 1 ? std::min(1.0, 1.0 / abs_sum(flat_grad)) * lr : lr;
    const double gtd = dot(flat_grad, d_);
    if (gtd > -tol_change) break;  // not a descent direction

    int64_t ls_evals = 0;
    bool opt_cond = false;
    if (wolfe) {
      const Vec x_init = params_flat();
      auto [f_new, g_new, evals] = strong_wolfe(closure, x_init, t_, d_, loss, flat_grad, gtd);
      loss = f_new, flat_grad = std::move(g_new), ls_evals = evals;
      add_to_params(t_, d_);
      opt_cond = abs_max(flat_grad) <= tol_grad;
    } else {
      add_to_params(t_, d_);
      if (n_iter != max_iter) {
        {
          GradModeGuard on(true);
          loss = closure();
        }
        flat_grad = gather_flat_grad();
        opt_cond = abs_max(flat_grad) <= tol_grad;
        ls_evals = 1;
      }
    }
    current_evals += ls_evals;
    func_evals_ += ls_evals;
    if (n_iter == max_iter || current_evals >= max_eval || opt_cond) break;
    if (abs_max(d_) * std::abs(t_) <= tol_change) break;
    if (std::abs(loss - prev_loss_) < tol_change) break;
  }
  return orig_loss;
}

OptimizerState LBFGS::state_dict() const {
  OptimizerState sd = Optimizer::state_dict();
  if (!d_.empty()) sd.tensors["lbfgs.d"] = vec_tensor(d_);
  if (!prev_flat_grad_.empty()) sd.tensors["lbfgs.prev_flat_grad"] = vec_tensor(prev_flat_grad_);
  for (size_t k = 0; k < old_dirs_.size(); ++k) {
    sd.tensors["lbfgs.old_dirs." + std::to_string(k)] = vec_tensor(old_dirs_[k]);
    sd.tensors["lbfgs.old_stps." + std::to_string(k)] = vec_tensor(old_stps_[k]);
    sd.scalars["lbfgs.ro." + std::to_string(k)] = ro_[k];
  }
  sd.scalars["lbfgs.history"] = double(old_dirs_.size());
  sd.scalars["lbfgs.t"] = t_;
  sd.scalars["lbfgs.H_diag"] = h_diag_;
  sd.scalars["lbfgs.prev_loss"] = prev_loss_;
  sd.scalars["lbfgs.n_iter"] = double(n_iter_);
  sd.scalars["lbfgs.func_evals"] = double(func_evals_);
  return sd;
}

void LBFGS::load_state_dict(const OptimizerState& sd) {
  auto scalar = [&](const std::string& k) {
    auto it = sd.scalars.find(k);
    SKIFF_CHECK(it != sd.scalars.end(), "LBFGS.load_state_dict: missing scalar '{}'", k);
    return it->second;
  };
  auto vec = [&](const std::string& k) {
    auto it = sd.tensors.find(k);
    SKIFF_CHECK(it != sd.tensors.end(), "LBFGS.load_state_dict: missing tensor '{}'", k);
    SKIFF_CHECK_SHAPE(it->second.numel() == numel_, "LBFGS.load_state_dict: '{}' has {} elements, expected {}", k,
                      it->second.numel(), numel_);
    return tensor_vec(it->second);
  };
  const auto hist = size_t(scalar("lbfgs.history"));
  std::vector<Vec> dirs, stps;
  std::vector<double> ro;
  for (size_t k = 0; k < hist; ++k) {
    dirs.push_back(vec("lbfgs.old_dirs." + std::to_string(k)));
    stps.push_back(vec("lbfgs.old_stps." + std::to_string(k)));
    ro.push_back(scalar("lbfgs.ro." + std::to_string(k)));
  }
  const auto n_iter = int64_t(scalar("lbfgs.n_iter"));
  Vec d = n_iter > 0 ? vec("lbfgs.d") : Vec{}, pg = n_iter > 0 ? vec("lbfgs.prev_flat_grad") : Vec{};
  Optimizer::load_state_dict(sd);
  old_dirs_ = std::move(dirs), old_stps_ = std::move(stps), ro_ = std::move(ro);
  d_ = std::move(d), prev_flat_grad_ = std::move(pg);
  t_ = scalar("lbfgs.t"), h_diag_ = scalar("lbfgs.H_diag"), prev_loss_ = scalar("lbfgs.prev_loss");
  n_iter_ = n_iter, func_evals_ = int64_t(scalar("lbfgs.func_evals"));
}

}  // namespace skiff::optim
