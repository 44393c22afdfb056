#pragma once
/// \file geometry.h
/// Domains of the science suite and how points are drawn from them.
///
/// Every domain samples its interior and its boundary, uniformly or by Latin
/// hypercube (one point per stratum in every coordinate, so a few thousand
/// points cover the domain without the clumps of plain uniform draws). All
/// points are float64 tensors [n, dim] in the domain's own (physical) units;
/// boundary samples carry outward unit normals and the index of the boundary
/// part (edge) each point lies on. Draws come from the caller's Generator, so a
/// seed fixes every point.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "framework/core/rng.h"
#include "framework/tensor/tensor.h"

namespace skiff::science {

enum class Sampling { Uniform, LatinHypercube };

/// "uniform" or "lhs". \throws ValueError naming the other accepted value.
Sampling parse_sampling(const std::string& name);

/// Points on a boundary with their outward unit normals.
struct BoundarySample {
  Tensor points;   ///< [n, dim] float64
  Tensor normals;  ///< [n, dim] float64, unit length, pointing out of the domain
  Tensor part;     ///< [n] int64: which boundary part (see each domain) the point is on
};

/// Axis-aligned bounding box: lo[i] <= x_i <= hi[i].
struct Box {
  std::vector<double> lo, hi;
};

class Geometry {
 public:
  virtual ~Geometry() = default;
  virtual std::string name() const = 0;
  virtual int dim() const = 0;
  virtual Box bounds() const = 0;
  /// Whether p (dim() coordinates) lies in the closed domain (within tol).
  virtual bool contains(const double* p, double tol = 1e-12) const = 0;
  /// n points of the interior. \throws ValueError for n < 1.
  virtual Tensor sample_interior(int64_t n, Sampling s, Generator& gen) const = 0;
  /// n points of the boundary, spread over the parts in proportion to their size.
  virtual BoundarySample sample_boundary(int64_t n, Sampling s, Generator& gen) const = 0;
};

/// [a, b]. Boundary parts: 0 = a (normal -1), 1 = b (normal +1); n boundary
/// points alternate between the two ends.
class Interval : public Geometry {
 public:
  Interval(double a, double b);
  std::string name() const override { return "interval"; }
  int dim() const override { return 1; }
  Box bounds() const override { return {{a_}, {b_}}; }
  bool contains(const double* p, double tol) const override;
  Tensor sample_interior(int64_t n, Sampling s, Generator& gen) const override;
  BoundarySample sample_boundary(int64_t n, Sampling s, Generator& gen) const override;

 private:
  double a_, b_;
};

/// [x0, x1] x [y0, y1]. Boundary parts: 0 = left (x = x0), 1 = right,
/// 2 = bottom (y = y0), 3 = top.
class Rectangle : public Geometry {
 public:
  Rectangle(double x0, double y0, double x1, double y1);
  std::string name() const override { return "rectangle"; }
  int dim() const override { return 2; }
  Box bounds() const override { return {{x0_, y0_}, {x1_, y1_}}; }
  bool contains(const double* p, double tol) const override;
  Tensor sample_interior(int64_t n, Sampling s, Generator& gen) const override;
  BoundarySample sample_boundary(int64_t n, Sampling s, Generator& gen) const override;

 private:
  double x0_, y0_, x1_, y1_;
};

/// Disk of radius r around (cx, cy); one boundary part (0, the circle).
class Disk : public Geometry {
 public:
  Disk(double cx, double cy, double r);
  std::string name() const override { return "disk"; }
  int dim() const override { return 2; }
  Box bounds() const override { return {{cx_ - r_, cy_ - r_}, {cx_ + r_, cy_ + r_}}; }
  bool contains(const double* p, double tol) const override;
  Tensor sample_interior(int64_t n, Sampling s, Generator& gen) const override;
  BoundarySample sample_boundary(int64_t n, Sampling s, Generator& gen) const override;

 private:
  double cx_, cy_, r_;
};

/// Simple polygon from its vertices (either orientation, not repeated at the
/// end). Boundary part k is the edge from vertex k to vertex k+1.
class Polygon : public Geometry {
 public:
  /// \throws ValueError for fewer than 3 vertices, zero area or a self-intersecting outline.
  explicit Polygon(std::vector<std::array<double, 2>> vertices);
  std::string name() const override { return "polygon"; }
  int dim() const override { return 2; }
  Box bounds() const override;
  bool contains(const double* p, double tol) const override;
  /// Rejection sampling from the bounding box (Latin hypercube candidates
  /// when asked, so strata stay even where the polygon fills the box).
  Tensor sample_interior(int64_t n, Sampling s, Generator& gen) const override;
  BoundarySample sample_boundary(int64_t n, Sampling s, Generator& gen) const override;
  double area() const;

 private:
  std::vector<std::array<double, 2>> v_;  // counter-clockwise
};

/// A spatial domain over a time interval [t0, t1]: points are (x..., t), time
/// last. The boundary is the lateral one (spatial boundary x (t0, t1]) with
/// spatial normals and a zero time component; the initial slice has its own sampler.
class TimeDomain : public Geometry {
 public:
  TimeDomain(std::shared_ptr<const Geometry> space, double t0, double t1);
  std::string name() const override { return "time(" + space_->name() + ")"; }
  int dim() const override { return space_->dim() + 1; }
  Box bounds() const override;
  bool contains(const double* p, double tol) const override;
  Tensor sample_interior(int64_t n, Sampling s, Generator& gen) const override;
  BoundarySample sample_boundary(int64_t n, Sampling s, Generator& gen) const override;
  /// n points of the spatial interior at t = t0.
  Tensor sample_initial(int64_t n, Sampling s, Generator& gen) const;
  const Geometry& space() const { return *space_; }
  double t0() const { return t0_; }
  double t1() const { return t1_; }

 private:
  std::shared_ptr<const Geometry> space_;
  double t0_, t1_;
};

/// n x d values in [0, 1): uniform, or a Latin hypercube (each column a random
/// permutation of the n strata, jittered inside its stratum). Row-major.
std::vector<double> unit_samples(int64_t n, int d, Sampling s, Generator& gen);

}  // namespace skiff::science
