#include "suites/science/geometry.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "framework/core/error.h"

namespace skiff::science {
namespace {

void check_count(int64_t n, const std::string& what) {
  SKIFF_CHECK(n >= 1, "{}: need at least one point, got {}", what, n);
}

Tensor to_tensor(std::vector<double> values, int64_t n, int64_t d) {
  return from_vector(values, Shape{n, d});
}

// Stratified values along one parameter in [0, 1): the boundary counterpart of a
// Latin hypercube (one point per 1/n stratum), or plain uniform draws.
std::vector<double> unit_line(int64_t n, Sampling s, Generator& gen) { return unit_samples(n, 1, s, gen); }

}  // namespace

Sampling parse_sampling(const std::string& name) {
  if (name == "uniform") return Sampling::Uniform;
  if (name == "lhs" || name == "latin_hypercube") return Sampling::LatinHypercube;
  throw ValueError(fmt::format("sampling method '{}' is not known; use 'uniform' or 'lhs'", name));
}

std::vector<double> unit_samples(int64_t n, int d, Sampling s, Generator& gen) {
  std::vector<double> out(size_t(n) * d);
  if (s == Sampling::Uniform) {
    for (double& v : out) v = gen.uniform();
    return out;
  }
  std::vector<int64_t> perm(n);
  for (int j = 0; j < d; ++j) {
    for (int64_t i = 0; i < n; ++i) perm[i] = i;
    for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates with the caller's generator
      int64_t k = int64_t(gen.next_u64() % uint64_t(i + 1));
      std::swap(perm[i], perm[k]);
    }
    for (int64_t i = 0; i < n; ++i) out[size_t(i) * d + j] = (double(perm[i]) + gen.uniform()) / double(n);
  }
  return out;
}

// ---- Interval ----------------------------------------------------------------

Interval::Interval(double a, double b) : a_(a), b_(b) {
  SKIFF_CHECK(std::isfinite(a) && std::isfinite(b) && a < b, "interval: need a < b, got [{}, {}]", a, b);
}

bool Interval::contains(const double* p, double tol) const { return p[0] >= a_ - tol && p[0] <= b_ + tol; }

Tensor Interval::sample_interior(int64_t n, Sampling s, Generator& gen) const {
  check_count(n, "interval interior");
  auto u = unit_samples(n, 1, s, gen);
  for (double& v : u) v = a_ + (b_ - a_) * v;
  return to_tensor(std::move(u), n, 1);
}

BoundarySample Interval::sample_boundary(int64_t n, Sampling, Generator&) const {
  check_count(n, "interval boundary");
  std::vector<double> p(n), nr(n);
  std::vector<int64_t> part(n);
  for (int64_t i = 0; i < n; ++i) {
    part[i] = i % 2;
    p[i] = part[i] == 0 ? a_ : b_;
    nr[i] = part[i] == 0 ? -1.0 : 1.0;
  }
  return {to_tensor(p, n, 1), to_tensor(nr, n, 1), from_vector(part)};
}

// ---- Rectangle ---------------------------------------------------------------

Rectangle::Rectangle(double x0, double y0, double x1, double y1) : x0_(x0), y0_(y0), x1_(x1), y1_(y1) {
  SKIFF_CHECK(x0 < x1 && y0 < y1 && std::isfinite(x0 + y0 + x1 + y1),
                    "rectangle: need x0 < x1 and y0 < y1, got [{}, {}] x [{}, {}]", x0, x1, y0, y1);
}

bool Rectangle::contains(const double* p, double tol) const {
  return p[0] >= x0_ - tol && p[0] <= x1_ + tol && p[1] >= y0_ - tol && p[1] <= y1_ + tol;
}

Tensor Rectangle::sample_interior(int64_t n, Sampling s, Generator& gen) const {
  check_count(n, "rectangle interior");
  auto u = unit_samples(n, 2, s, gen);
  for (int64_t i = 0; i < n; ++i) {
    u[2 * i] = x0_ + (x1_ - x0_) * u[2 * i];
    u[2 * i + 1] = y0_ + (y1_ - y0_) * u[2 * i + 1];
  }
  return to_tensor(std::move(u), n, 2);
}

BoundarySample Rectangle::sample_boundary(int64_t n, Sampling s, Generator& gen) const {
  check_count(n, "rectangle boundary");
  // One parameter along the perimeter (left, right, bottom, top), so points are
  // spread in proportion to edge length and, with LHS, evenly along it.
  const double w = x1_ - x0_, h = y1_ - y0_, perim = 2 * (w + h);
  auto u = unit_line(n, s, gen);
  std::vector<double> p(2 * n), nr(2 * n, 0.0);
  std::vector<int64_t> part(n);
  for (int64_t i = 0; i < n; ++i) {
    double t = u[i] * perim;
    double *q = &p[2 * i], *m = &nr[2 * i];
    if (t < h) {
      q[0] = x0_, q[1] = y0_ + t, m[0] = -1, part[i] = 0;
    } else if (t < 2 * h) {
      q[0] = x1_, q[1] = y0_ + (t - h), m[0] = 1, part[i] = 1;
    } else if (t < 2 * h + w) {
      q[0] = x0_ + (t - 2 * h), q[1] = y0_, m[1] = -1, part[i] = 2;
    } else {
      q[0] = x0_ + std::min(t - 2 * h - w, w), q[1] = y1_, m[1] = 1, part[i] = 3;
    }
  }
  return {to_tensor(p, n, 2), to_tensor(nr, n, 2), from_vector(part)};
}

// ---- Disk --------------------------------------------------------------------

Disk::Disk(double cx, double cy, double r) : cx_(cx), cy_(cy), r_(r) {
  SKIFF_CHECK(r > 0 && std::isfinite(cx + cy + r), "disk: need a positive radius, got {}", r);
}

bool Disk::contains(const double* p, double tol) const {
  return std::hypot(p[0] - cx_, p[1] - cy_) <= r_ + tol;
}

Tensor Disk::sample_interior(int64_t n, Sampling s, Generator& gen) const {
  check_count(n, "disk interior");
  // Area-preserving map of the unit square (r = R sqrt(u), theta = 2 pi v), so
  // uniform and Latin-hypercube draws stay uniform (and stratified) on the disk.
  auto u = unit_samples(n, 2, s, gen);
  for (int64_t i = 0; i < n; ++i) {
    double r = r_ * std::sqrt(u[2 * i]), th = 2 * std::numbers::pi * u[2 * i + 1];
    u[2 * i] = cx_ + r * std::cos(th);
    u[2 * i + 1] = cy_ + r * std::sin(th);
  }
  return to_tensor(std::move(u), n, 2);
}

BoundarySample Disk::sample_boundary(int64_t n, Sampling s, Generator& gen) const {
  check_count(n, "disk boundary");
  auto u = unit_line(n, s, gen);
  std::vector<double> p(2 * n), nr(2 * n);
  for (int64_t i = 0; i < n; ++i) {
    double th = 2 * std::numbers::pi * u[i];
    nr[2 * i] = std::cos(th), nr[2 * i + 1] = std::sin(th);
    p[2 * i] = cx_ + r_ * nr[2 * i], p[2 * i + 1] = cy_ + r_ * nr[2 * i + 1];
  }
  return {to_tensor(p, n, 2), to_tensor(nr, n, 2), zeros({n}, DType::Int64)};
}

// ---- Polygon -----------------------------------------------------------------

namespace {
double signed_area(const std::vector<std::array<double, 2>>& v) {
  double a = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const auto &p = v[i], &q = v[(i + 1) % v.size()];
    a += p[0] * q[1] - q[0] * p[1];
  }
  return a / 2;
}

double cross(const std::array<double, 2>& o, const std::array<double, 2>& a, const std::array<double, 2>& b) {
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

bool segments_cross(const std::array<double, 2>& a, const std::array<double, 2>& b, const std::array<double, 2>& c,
                    const std::array<double, 2>& d) {
  double d1 = cross(c, d, a), d2 = cross(c, d, b), d3 = cross(a, b, c), d4 = cross(a, b, d);
  return ((d1 > 0) != (d2 > 0)) && ((d3 > 0) != (d4 > 0)) && d1 != 0 && d2 != 0 && d3 != 0 && d4 != 0;
}
}  // namespace

Polygon::Polygon(std::vector<std::array<double, 2>> vertices) : v_(std::move(vertices)) {
  SKIFF_CHECK(v_.size() >= 3, "polygon: need at least 3 vertices, got {}", v_.size());
  double a = signed_area(v_);
  SKIFF_CHECK(std::abs(a) > 0 && std::isfinite(a), "polygon: the vertices enclose no area");
  if (a < 0) std::reverse(v_.begin(), v_.end());
  const size_t n = v_.size();
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 2; j < n; ++j) {
      if (i == 0 && j == n - 1) continue;  // adjacent through the closing edge
      SKIFF_CHECK(!segments_cross(v_[i], v_[(i + 1) % n], v_[j], v_[(j + 1) % n]),
                        "polygon: edges {} and {} cross (the outline must be simple)", i, j);
    }
}

double Polygon::area() const { return signed_area(v_); }

Box Polygon::bounds() const {
  Box b{{v_[0][0], v_[0][1]}, {v_[0][0], v_[0][1]}};
  for (const auto& p : v_)
    for (int k = 0; k < 2; ++k) b.lo[k] = std::min(b.lo[k], p[k]), b.hi[k] = std::max(b.hi[k], p[k]);
  return b;
}

bool Polygon::contains(const double* p, double tol) const {
  const size_t n = v_.size();
  bool inside = false;
  for (size_t i = 0, j = n - 1; i < n; j = i++) {
    const auto &a = v_[i], &b = v_[j];
    // On an edge (within tol) counts as inside: the domain is closed.
    double ex = b[0] - a[0], ey = b[1] - a[1], len2 = ex * ex + ey * ey;
    double t = std::clamp(((p[0] - a[0]) * ex + (p[1] - a[1]) * ey) / len2, 0.0, 1.0);
    if (std::hypot(p[0] - a[0] - t * ex, p[1] - a[1] - t * ey) <= tol) return true;
    if ((a[1] > p[1]) != (b[1] > p[1]) && p[0] < (b[0] - a[0]) * (p[1] - a[1]) / (b[1] - a[1]) + a[0])
      inside = !inside;
  }
  return inside;
}

Tensor Polygon::sample_interior(int64_t n, Sampling s, Generator& gen) const {
  check_count(n, "polygon interior");
  const Box b = bounds();
  const double fill = area() / ((b.hi[0] - b.lo[0]) * (b.hi[1] - b.lo[1]));
  std::vector<double> out;
  out.reserve(2 * n);
  while (int64_t(out.size()) < 2 * n) {
    int64_t want = n - int64_t(out.size()) / 2;
    int64_t batch = std::max<int64_t>(16, int64_t(std::ceil(double(want) / fill * 1.1)));
    auto u = unit_samples(batch, 2, s, gen);
    for (int64_t i = 0; i < batch && int64_t(out.size()) < 2 * n; ++i) {
      double p[2] = {b.lo[0] + (b.hi[0] - b.lo[0]) * u[2 * i], b.lo[1] + (b.hi[1] - b.lo[1]) * u[2 * i + 1]};
      if (contains(p, 0.0)) out.insert(out.end(), {p[0], p[1]});
    }
  }
  return to_tensor(std::move(out), n, 2);
}

BoundarySample Polygon::sample_boundary(int64_t n, Sampling s, Generator& gen) const {
  check_count(n, "polygon boundary");
  const size_t m = v_.size();
  std::vector<double> cum(m + 1, 0.0);
  for (size_t k = 0; k < m; ++k) {
    const auto &a = v_[k], &b = v_[(k + 1) % m];
    cum[k + 1] = cum[k] + std::hypot(b[0] - a[0], b[1] - a[1]);
  }
  auto u = unit_line(n, s, gen);
  std::vector<double> p(2 * n), nr(2 * n);
  std::vector<int64_t> part(n);
  for (int64_t i = 0; i < n; ++i) {
    double t = u[i] * cum[m];
    size_t k = std::min<size_t>(std::upper_bound(cum.begin(), cum.end(), t) - cum.begin() - 1, m - 1);
    const auto &a = v_[k], &b = v_[(k + 1) % m];
    double len = cum[k + 1] - cum[k], f = std::clamp((t - cum[k]) / len, 0.0, 1.0);
    p[2 * i] = a[0] + f * (b[0] - a[0]), p[2 * i + 1] = a[1] + f * (b[1] - a[1]);
    // Counter-clockwise outline: the outward normal is the edge direction turned clockwise.
    nr[2 * i] = (b[1] - a[1]) / len, nr[2 * i + 1] = -(b[0] - a[0]) / len;
    part[i] = int64_t(k);
  }
  return {to_tensor(p, n, 2), to_tensor(nr, n, 2), from_vector(part)};
}

// ---- TimeDomain --------------------------------------------------------------

TimeDomain::TimeDomain(std::shared_ptr<const Geometry> space, double t0, double t1)
    : space_(std::move(space)), t0_(t0), t1_(t1) {
  SKIFF_CHECK(space_ != nullptr, "time domain: no spatial domain");
  SKIFF_CHECK(t0 < t1 && std::isfinite(t0 + t1), "time domain: need t0 < t1, got [{}, {}]", t0, t1);
}

Box TimeDomain::bounds() const {
  Box b = space_->bounds();
  b.lo.push_back(t0_), b.hi.push_back(t1_);
  return b;
}

bool TimeDomain::contains(const double* p, double tol) const {
  double t = p[space_->dim()];
  return t >= t0_ - tol && t <= t1_ + tol && space_->contains(p, tol);
}

namespace {
// Appends a time column to [n, d] points: out [n, d + 1].
Tensor with_time(const Tensor& x, const std::vector<double>& t) {
  const int64_t n = x.size(0), d = x.size(1);
  std::vector<double> out(size_t(n) * (d + 1));
  const double* src = x.data<double>();
  for (int64_t i = 0; i < n; ++i) {
    std::copy(src + i * d, src + (i + 1) * d, &out[size_t(i) * (d + 1)]);
    out[size_t(i) * (d + 1) + d] = t[i];
  }
  return from_vector(out, Shape{n, d + 1});
}
}  // namespace

Tensor TimeDomain::sample_interior(int64_t n, Sampling s, Generator& gen) const {
  check_count(n, "time domain interior");
  Tensor x = space_->sample_interior(n, s, gen);
  auto t = unit_line(n, s, gen);
  for (double& v : t) v = t0_ + (t1_ - t0_) * v;
  return with_time(x, t);
}

BoundarySample TimeDomain::sample_boundary(int64_t n, Sampling s, Generator& gen) const {
  check_count(n, "time domain boundary");
  BoundarySample b = space_->sample_boundary(n, s, gen);
  auto t = unit_line(n, s, gen);
  for (double& v : t) v = t0_ + (t1_ - t0_) * v;
  b.points = with_time(b.points, t);
  b.normals = with_time(b.normals, std::vector<double>(n, 0.0));
  return b;
}

Tensor TimeDomain::sample_initial(int64_t n, Sampling s, Generator& gen) const {
  check_count(n, "time domain initial slice");
  return with_time(space_->sample_interior(n, s, gen), std::vector<double>(n, t0_));
}

}  // namespace skiff::science
