#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "framework/core/error.h"
#include "suites/science/geometry.h"

using namespace skiff;
using namespace skiff::science;

namespace {

// Every sampled point lies in the domain; boundary points have unit normals
// and sit on the outline.
void expect_valid(const Geometry& g, Sampling s) {
  Generator gen(7);
  Tensor in = g.sample_interior(500, s, gen);
  ASSERT_EQ(in.shape(), (Shape{500, g.dim()}));
  const double* p = in.data<double>();
  for (int64_t i = 0; i < 500; ++i) EXPECT_TRUE(g.contains(p + i * g.dim(), 1e-12)) << g.name() << " point " << i;
  BoundarySample b = g.sample_boundary(300, s, gen);
  ASSERT_EQ(b.points.shape(), (Shape{300, g.dim()}));
  ASSERT_EQ(b.normals.shape(), (Shape{300, g.dim()}));
  const double *q = b.points.data<double>(), *nr = b.normals.data<double>();
  for (int64_t i = 0; i < 300; ++i) {
    double len = 0;
    for (int k = 0; k < g.dim(); ++k) len += nr[i * g.dim() + k] * nr[i * g.dim() + k];
    EXPECT_NEAR(std::sqrt(len), 1.0, 1e-12);
    EXPECT_TRUE(g.contains(q + i * g.dim(), 1e-9));
    // Stepping out along the normal leaves the domain, stepping in stays.
    std::vector<double> out(q + i * g.dim(), q + (i + 1) * g.dim()), in_pt = out;
    for (int k = 0; k < g.dim(); ++k) out[k] += 1e-6 * nr[i * g.dim() + k], in_pt[k] -= 1e-6 * nr[i * g.dim() + k];
    EXPECT_FALSE(g.contains(out.data(), 0.0)) << g.name() << " boundary point " << i;
    EXPECT_TRUE(g.contains(in_pt.data(), 0.0)) << g.name() << " boundary point " << i;
  }
}

}  // namespace

TEST(Geometry, SamplesLieInsideWithOutwardNormals) {
  for (Sampling s : {Sampling::Uniform, Sampling::LatinHypercube}) {
    expect_valid(Interval(-1, 2), s);
    expect_valid(Rectangle(0, 0, 2, 3), s);
    expect_valid(Disk(1, -1, 0.5), s);
    expect_valid(Polygon({{0, 0}, {2, 0}, {2, 1}, {1, 1}, {1, 2}, {0, 2}}), s);  // L shape, concave corner
  }
}

TEST(Geometry, LatinHypercubeFillsEveryStratum) {
  Generator gen(3);
  const int64_t n = 64;
  Tensor x = Rectangle(0, 0, 1, 1).sample_interior(n, Sampling::LatinHypercube, gen);
  for (int k = 0; k < 2; ++k) {
    std::vector<int> hits(n, 0);
    for (int64_t i = 0; i < n; ++i) hits[int(x.data<double>()[2 * i + k] * n)]++;
    for (int64_t s = 0; s < n; ++s) EXPECT_EQ(hits[s], 1) << "coordinate " << k << " stratum " << s;
  }
}

TEST(Geometry, SameSeedSamePoints) {
  Generator a(11), b(11), c(12);
  Disk d(0, 0, 1);
  auto pa = d.sample_interior(50, Sampling::LatinHypercube, a).to_vector<double>();
  auto pb = d.sample_interior(50, Sampling::LatinHypercube, b).to_vector<double>();
  auto pc = d.sample_interior(50, Sampling::LatinHypercube, c).to_vector<double>();
  EXPECT_EQ(pa, pb);
  EXPECT_NE(pa, pc);
}

TEST(Geometry, RectangleBoundaryPartsAndProportions) {
  Generator gen(5);
  Rectangle r(0, 0, 3, 1);  // perimeter 8: left/right 1/8 each, bottom/top 3/8 each
  BoundarySample b = r.sample_boundary(800, Sampling::LatinHypercube, gen);
  std::vector<int> count(4, 0);
  auto part = b.part.to_vector<int64_t>();
  auto p = b.points.to_vector<double>();
  for (size_t i = 0; i < part.size(); ++i) {
    count[part[i]]++;
    if (part[i] == 0) EXPECT_EQ(p[2 * i], 0.0);
    if (part[i] == 1) EXPECT_EQ(p[2 * i], 3.0);
    if (part[i] == 2) EXPECT_EQ(p[2 * i + 1], 0.0);
    if (part[i] == 3) EXPECT_EQ(p[2 * i + 1], 1.0);
  }
  EXPECT_EQ(count[0], 100);
  EXPECT_EQ(count[1], 100);
  EXPECT_EQ(count[2], 300);
  EXPECT_EQ(count[3], 300);
}

TEST(Geometry, TimeDomainSlices) {
  auto space = std::make_shared<Interval>(-1, 1);
  TimeDomain td(space, 0, 1);
  Generator gen(1);
  Tensor x0 = td.sample_initial(40, Sampling::Uniform, gen);
  for (int64_t i = 0; i < 40; ++i) EXPECT_EQ(x0.data<double>()[2 * i + 1], 0.0);
  BoundarySample b = td.sample_boundary(40, Sampling::LatinHypercube, gen);
  auto p = b.points.to_vector<double>(), n = b.normals.to_vector<double>();
  for (int64_t i = 0; i < 40; ++i) {
    EXPECT_EQ(std::abs(p[2 * i]), 1.0);
    EXPECT_EQ(n[2 * i], p[2 * i]);  // outward: -1 at x = -1, +1 at x = 1
    EXPECT_EQ(n[2 * i + 1], 0.0);
    EXPECT_GE(p[2 * i + 1], 0.0);
    EXPECT_LE(p[2 * i + 1], 1.0);
  }
  expect_valid(td, Sampling::LatinHypercube);
}

TEST(Geometry, BadDomainsAreErrors) {
  EXPECT_THROW(Interval(1, 1), ValueError);
  EXPECT_THROW(Rectangle(0, 0, -1, 1), ValueError);
  EXPECT_THROW(Disk(0, 0, 0), ValueError);
  EXPECT_THROW(Polygon({{0, 0}, {1, 0}}), ValueError);
  EXPECT_THROW(Polygon({{0, 0}, {1, 1}, {1, 0}, {0, 1}}), ValueError);  // bow tie
  Generator gen;
  EXPECT_THROW(Rectangle(0, 0, 1, 1).sample_interior(0, Sampling::Uniform, gen), ValueError);
  EXPECT_THROW(parse_sampling("sobol"), ValueError);
}
