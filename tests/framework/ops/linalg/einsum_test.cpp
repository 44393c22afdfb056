#include <gtest/gtest.h>

#include <map>

#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_allclose;
using testing::expect_gradcheck;
using testing::expect_gradgradcheck;
using testing::rand_leaf;

// einsum by definition: loop over every assignment of the letters, multiply the operand
// elements, add into the output element (plain loops in double).
Tensor naive_einsum(const std::string& lhs_a, const std::string& lhs_b, const std::string& out,
                    const std::vector<Tensor>& xs) {
  std::map<char, int64_t> sizes;
  std::vector<std::string> subs = {lhs_a, lhs_b};
  std::vector<std::vector<double>> vals;
  for (size_t o = 0; o < xs.size(); ++o) {
    for (size_t d = 0; d < subs[o].size(); ++d) sizes[subs[o][d]] = xs[o].shape()[int64_t(d)];
    vals.push_back(contiguous(to(xs[o], DType::Float64)).to_vector<double>());
  }
  std::string letters;
  for (const auto& [ch, n] : sizes) letters += ch;
  Shape out_shape;
  for (char ch : out) out_shape.push_back(sizes[ch]);
  std::vector<double> result(size_t(out_shape.numel()), 0.0);
  std::map<char, int64_t> idx;
  int64_t total = 1;
  for (char ch : letters) total *= sizes[ch];
  auto flat = [&](const std::string& s) {
    int64_t f = 0;
    for (char ch : s) f = f * sizes[ch] + idx[ch];
    return f;
  };
  for (int64_t i = 0; i < total; ++i) {
    int64_t rem = i;
    for (auto it = letters.rbegin(); it != letters.rend(); ++it) {
      idx[*it] = rem % sizes[*it];
      rem /= sizes[*it];
    }
    double p = 1.0;
    for (size_t o = 0; o < xs.size(); ++o) p *= vals[o][size_t(flat(subs[o]))];
    result[size_t(flat(out))] += p;
  }
  return from_vector(result, out_shape);
}

Tensor random(const Shape& s, uint64_t seed) {
  Generator g(seed);
  return rand(s, DType::Float64, &g, -1.0, 1.0);
}

struct Case {
  std::string equation, a, b, out;
  Shape sa, sb;
};
const std::vector<Case> kCases = {
    {"ij,jk->ik", "ij", "jk", "ik", {3, 4}, {4, 5}},
    {"bij,bjk->bik", "bij", "bjk", "bik", {2, 3, 4}, {2, 4, 5}},
    {"bhqd,bhkd->bhqk", "bhqd", "bhkd", "bhqk", {2, 3, 4, 5}, {2, 3, 6, 5}},
    {"i,i->", "i", "i", "", {5}, {5}},
    {"ij,j->i", "ij", "j", "i", {3, 4}, {4}},
    {"bi,bj->bij", "bi", "bj", "bij", {2, 3}, {2, 4}},
    {"ij,kj->ki", "ij", "kj", "ki", {3, 4}, {5, 4}},
    {"ijk,jl->lki", "ijk", "jl", "lki", {2, 3, 4}, {3, 5}},
    {"ij,jk", "ij", "jk", "ik", {3, 4}, {4, 5}},
    {"ij,ij->ij", "ij", "ij", "ij", {3, 4}, {3, 4}},
    {"ij,kl->ijkl", "ij", "kl", "ijkl", {2, 3}, {2, 2}},
    {"ij,jk->", "ij", "jk", "", {3, 4}, {4, 5}},
    {"iij,jk->ik", "iij", "jk", "ik", {3, 3, 4}, {4, 2}},
};

TEST(EinsumTest, TwoOperandPatternsMatchNaiveLoops) {
  uint64_t seed = 1;
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.equation);
    Tensor a = random(c.sa, seed++), b = random(c.sb, seed++);
    expect_allclose(einsum(c.equation, {a, b}), naive_einsum(c.a, c.b, c.out, {a, b}), 1e-12, 1e-12);
  }
}

TEST(EinsumTest, SingleOperandTransposeDiagonalTraceSum) {
  Tensor x = from_vector<double>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  EXPECT_EQ(einsum("ij->ji", {x}).to_vector<double>(), (std::vector<double>{1, 4, 7, 2, 5, 8, 3, 6, 9}));
  EXPECT_EQ(einsum("ii->i", {x}).to_vector<double>(), (std::vector<double>{1, 5, 9}));
  EXPECT_EQ(einsum("ii->", {x}).item<double>(), 15.0);
  EXPECT_EQ(einsum("ii", {x}).item<double>(), 15.0);
  EXPECT_EQ(einsum("ij->", {x}).item<double>(), 45.0);
  EXPECT_EQ(einsum("ij->j", {x}).to_vector<double>(), (std::vector<double>{12, 15, 18}));
  EXPECT_EQ(einsum("ji", {x}).to_vector<double>(), einsum("ij->ji", {x}).to_vector<double>());  // implicit: "ji->ij"
  Tensor y = random({2, 3, 4}, 7);
  expect_allclose(einsum("abc->cab", {y}), contiguous(permute(y, {2, 0, 1})), 0, 0);
}

TEST(EinsumTest, ErrorsNameTheEquation) {
  Tensor a = zeros({3, 4}), b = zeros({4, 5});
  EXPECT_THROW(einsum("ij,jk,kl->il", {a, b, b}), NotImplementedError);
  EXPECT_THROW(einsum("...ij,jk->ik", {a, b}), NotImplementedError);
  try {
    einsum("...ij,jk->...ik", {a, b});
    FAIL() << "expected NotImplementedError";
  } catch (const NotImplementedError& e) {
    EXPECT_NE(std::string(e.what()).find("...ij,jk->...ik"), std::string::npos) << e.what();
  }
  EXPECT_THROW(einsum("ij,jk->il", {a, b}), ValueError);     // output letter not in inputs
  EXPECT_THROW(einsum("ij,jk->ii", {a, b}), ValueError);     // output letter repeated
  EXPECT_THROW(einsum("ij->ij", {a, b}), ValueError);        // operand count
  EXPECT_THROW(einsum("i1,jk->ik", {a, b}), ValueError);     // not a letter
  EXPECT_THROW(einsum("ij,jk->ik", {a, a}), ShapeError);     // j = 4 vs 3
  EXPECT_THROW(einsum("ijk,jk->i", {a, b}), ShapeError);     // subscripts vs dims
  EXPECT_THROW(einsum("ii->i", {a}), ShapeError);            // diagonal of a non-square pair
}

TEST(EinsumTest, GradcheckAndGradgradcheck) {
  const std::vector<std::pair<std::string, std::pair<Shape, Shape>>> cases = {
      {"bhqd,bhkd->bhqk", {{2, 2, 3, 2}, {2, 2, 4, 2}}},
      {"ij,j->i", {{3, 4}, {4}}},
      {"bi,bj->bij", {{2, 3}, {2, 2}}},
      {"iij,jk->ik", {{2, 2, 3}, {3, 2}}},
  };
  uint64_t seed = 500;
  for (const auto& [eq, shapes] : cases) {
    SCOPED_TRACE(eq);
    Tensor a = rand_leaf(shapes.first, seed++), b = rand_leaf(shapes.second, seed++);
    auto fn = [eq = eq](const std::vector<Tensor>& in) { return einsum(eq, in); };
    expect_gradcheck(fn, {a, b});
    expect_gradgradcheck(fn, {a, b});
  }
  Tensor x = rand_leaf({3, 3}, 600);
  expect_gradcheck([](const std::vector<Tensor>& in) { return einsum("ii->i", in); }, {x});
  expect_gradcheck([](const std::vector<Tensor>& in) { return einsum("ij->ji", in); }, {x});
}

}  // namespace
}  // namespace skiff
