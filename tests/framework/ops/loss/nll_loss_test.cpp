#include <gtest/gtest.h>

#include <cmath>

#include "framework/autograd/engine.h"
#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_allclose;
using testing::expect_gradcheck;
using testing::expect_gradgradcheck;
using testing::rand_leaf;

Tensor i64(const std::vector<int64_t>& v, const Shape& s) { return from_vector(v, s); }

// Naive log_softmax over dim 1 of a contiguous [N, C, inner] buffer.
std::vector<double> naive_log_softmax(const std::vector<double>& x, int64_t n, int64_t c, int64_t inner) {
  std::vector<double> out(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t s = 0; s < inner; ++s) {
      double total = 0;
      for (int64_t k = 0; k < c; ++k) total += std::exp(x[size_t((b * c + k) * inner + s)]);
      for (int64_t k = 0; k < c; ++k)
        out[size_t((b * c + k) * inner + s)] = x[size_t((b * c + k) * inner + s)] - std::log(total);
    }
  return out;
}

struct NaiveLoss {
  std::vector<double> per_target;
  double weight_total = 0;
  double sum() const {
    double s = 0;
    for (double v : per_target) s += v;
    return s;
  }
};

// PyTorch's cross-entropy-with-label-smoothing definition on log-probabilities [N, C, inner],
// written out per element (eps = 0 gives nll_loss).
NaiveLoss naive_nll(const std::vector<double>& lp, const std::vector<int64_t>& target, const std::vector<double>& w,
                    int64_t n, int64_t c, int64_t inner, int64_t ignore_index, double eps = 0.0) {
  NaiveLoss r;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t s = 0; s < inner; ++s) {
      int64_t t = target[size_t(b * inner + s)];
      if (t == ignore_index) {
        r.per_target.push_back(0.0);
        continue;
      }
      double smooth = 0;
      for (int64_t k = 0; k < c; ++k) smooth -= w[size_t(k)] * lp[size_t((b * c + k) * inner + s)];
      double nll = -w[size_t(t)] * lp[size_t((b * c + t) * inner + s)];
      r.per_target.push_back((1 - eps) * nll + eps / double(c) * smooth);
      r.weight_total += w[size_t(t)];
    }
  return r;
}

TEST(NllLossTest, MatchesNaiveWithWeightsAndIgnoreIndex) {
  Tensor lp = rand(Shape{5, 3}, DType::Float64, nullptr, -3.0, 0.0);
  std::vector<int64_t> target = {0, 2, -100, 1, 2};
  std::vector<double> w = {0.2, 1.0, 3.0};
  NaiveLoss ref = naive_nll(lp.to_vector<double>(), target, w, 5, 3, 1, -100);
  Tensor tt = i64(target, {5}), wt = from_vector(w);
  expect_allclose(nll_loss(lp, tt, wt, -100, Reduction::None), from_vector(ref.per_target), 1e-12);
  EXPECT_NEAR(nll_loss(lp, tt, wt, -100, Reduction::Sum).item<double>(), ref.sum(), 1e-12);
  EXPECT_NEAR(nll_loss(lp, tt, wt).item<double>(), ref.sum() / ref.weight_total, 1e-12);
  // Without weights the mean is over the non-ignored targets.
  NaiveLoss plain = naive_nll(lp.to_vector<double>(), target, {1, 1, 1}, 5, 3, 1, -100);
  EXPECT_NEAR(nll_loss(lp, tt).item<double>(), plain.sum() / 4.0, 1e-12);
  // A custom ignore_index, and a ignore_index that is a valid class.
  NaiveLoss ignore_two = naive_nll(lp.to_vector<double>(), {0, 2, 1, 1, 2}, w, 5, 3, 1, 2);
  EXPECT_NEAR(nll_loss(lp, i64({0, 2, 1, 1, 2}, {5}), wt, 2).item<double>(),
              ignore_two.sum() / ignore_two.weight_total, 1e-12);
}

TEST(NllLossTest, SpatialTargetsAndUnbatchedInput) {
  Tensor lp = rand(Shape{2, 3, 2, 2}, DType::Float64, nullptr, -3.0, 0.0);
  std::vector<int64_t> target = {0, 1, 2, -100, 2, 2, 0, 1};
  NaiveLoss ref = naive_nll(lp.to_vector<double>(), target, {1, 1, 1}, 2, 3, 4, -100);
  Tensor none = nll_loss(lp, i64(target, {2, 2, 2}), {}, -100, Reduction::None);
  EXPECT_EQ(none.shape(), (Shape{2, 2, 2}));
  expect_allclose(none, from_vector(ref.per_target, {2, 2, 2}), 1e-12);
  EXPECT_NEAR(nll_loss(lp, i64(target, {2, 2, 2})).item<double>(), ref.sum() / 7.0, 1e-12);

  Tensor row = from_vector(std::vector<double>{-0.5, -1.5, -2.5});
  Tensor unbatched = nll_loss(row, scalar_tensor(1, DType::Int64), {}, -100, Reduction::None);
  EXPECT_EQ(unbatched.dim(), 0);
  EXPECT_DOUBLE_EQ(unbatched.item<double>(), 1.5);
}

TEST(NllLossTest, NonContiguousLogProbsAndInt32Targets) {
  Tensor base = rand(Shape{3, 4}, DType::Float32, nullptr, -2.0, 0.0);
  Tensor lp = t(base);  // [4, 3], not contiguous
  Tensor target = from_vector(std::vector<int32_t>{2, 0, 1, 1});
  auto v = contiguous(lp).to_vector<float>();
  double expected = -(v[2] + v[3] + v[7] + v[10]) / 4.0;
  EXPECT_NEAR(nll_loss(lp, target).item<double>(), expected, 1e-6);
}

TEST(NllLossTest, RejectsBadTargetsShapesAndDtypes) {
  Tensor lp = zeros({2, 3});
  try {
    nll_loss(lp, i64({0, 3}, {2}));
    FAIL() << "expected IndexError";
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("got 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[0, 3)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(nll_loss(lp, i64({-1, 0}, {2})), IndexError);
  EXPECT_THROW(nll_loss(lp, i64({0, 1, 2}, {3})), ShapeError);
  EXPECT_THROW(nll_loss(lp, zeros({2})), TypeError);
  EXPECT_THROW(nll_loss(zeros({2, 3}, DType::Int64), i64({0, 1}, {2})), TypeError);
  EXPECT_THROW(nll_loss(lp, i64({0, 1}, {2}), ones({2})), ShapeError);
  EXPECT_THROW(nll_loss(zeros({3}), i64({0}, {1})), ShapeError);
}

TEST(NllLossTest, AllIgnoredMeanIsNaN) {
  Tensor loss = nll_loss(zeros({2, 3}), i64({-100, -100}, {2}));
  EXPECT_TRUE(std::isnan(loss.item<float>()));
}

TEST(NllLossTest, GradcheckAndGradgradcheck) {
  Tensor lp = rand_leaf({4, 3, 2}, 21, -3, 0);
  Tensor target = i64({0, 2, 1, -100, 2, 2, 0, 1}, {4, 2});
  Tensor w = from_vector(std::vector<double>{0.5, 2.0, 1.25});
  for (Reduction r : {Reduction::None, Reduction::Sum, Reduction::Mean})
    expect_gradcheck([&](const std::vector<Tensor>& v) { return nll_loss(v[0], target, w, -100, r); }, {lp});
  // nll_loss is linear in log_probs, so its second derivative w.r.t. them is zero; what must be right
  // is the backward of its backward, i.e. the gradient w.r.t. the incoming gradient.
  Tensor grad_out = rand_leaf({4, 2}, 22);
  expect_gradcheck([&](const std::vector<Tensor>& v) {
    return autograd::grad({nll_loss(lp, target, w, -100, Reduction::None)}, {lp}, {v[0]}, true)[0];
  }, {grad_out});
}

TEST(CrossEntropyTest, HandComputedValue) {
  // Two equal logits: -log(1/2).
  Tensor loss = cross_entropy(zeros({1, 2}), i64({0}, {1}));
  EXPECT_NEAR(loss.item<float>(), std::log(2.0), 1e-6);
}

TEST(CrossEntropyTest, MatchesNaiveLogSoftmaxNll) {
  Tensor logits = rand(Shape{4, 5, 3}, DType::Float64, nullptr, -4.0, 4.0);
  std::vector<int64_t> target = {0, 4, 2, 1, -100, 3, 3, 3, 0, 2, 1, 4};
  std::vector<double> w = {1.0, 0.5, 2.0, 1.5, 0.25};
  auto lp = naive_log_softmax(logits.to_vector<double>(), 4, 5, 3);
  NaiveLoss ref = naive_nll(lp, target, w, 4, 5, 3, -100);
  Tensor tt = i64(target, {4, 3}), wt = from_vector(w);
  expect_allclose(cross_entropy(logits, tt, wt, -100, Reduction::None), from_vector(ref.per_target, {4, 3}), 1e-12);
  EXPECT_NEAR(cross_entropy(logits, tt, wt, -100, Reduction::Sum).item<double>(), ref.sum(), 1e-12);
  EXPECT_NEAR(cross_entropy(logits, tt, wt).item<double>(), ref.sum() / ref.weight_total, 1e-12);
}

TEST(CrossEntropyTest, LabelSmoothingWithWeightsAndIgnoreIndex) {
  Tensor logits = rand(Shape{6, 4}, DType::Float64, nullptr, -3.0, 3.0);
  std::vector<int64_t> target = {3, 0, -1, 2, 1, 3};
  std::vector<double> w = {0.5, 1.0, 2.0, 1.5};
  auto lp = naive_log_softmax(logits.to_vector<double>(), 6, 4, 1);
  for (double eps : {0.1, 0.45}) {
    NaiveLoss ref = naive_nll(lp, target, w, 6, 4, 1, -1, eps);
    Tensor tt = i64(target, {6}), wt = from_vector(w);
    expect_allclose(cross_entropy(logits, tt, wt, -1, Reduction::None, eps), from_vector(ref.per_target), 1e-12);
    EXPECT_NEAR(cross_entropy(logits, tt, wt, -1, Reduction::Sum, eps).item<double>(), ref.sum(), 1e-12);
    EXPECT_NEAR(cross_entropy(logits, tt, wt, -1, Reduction::Mean, eps).item<double>(),
                ref.sum() / ref.weight_total, 1e-12);
    NaiveLoss plain = naive_nll(lp, target, {1, 1, 1, 1}, 6, 4, 1, -1, eps);
    EXPECT_NEAR(cross_entropy(logits, tt, {}, -1, Reduction::Mean, eps).item<double>(), plain.sum() / 5.0, 1e-12);
  }
}

TEST(CrossEntropyTest, ProbabilityTargets) {
  Tensor logits = rand(Shape{3, 4, 2}, DType::Float64, nullptr, -2.0, 2.0);
  Tensor probs = rand(Shape{3, 4, 2}, DType::Float64, nullptr, 0.0, 1.0);
  probs = div(probs, sum(probs, {1}, true));
  std::vector<double> w = {1.0, 2.0, 0.5, 1.0};
  const double eps = 0.2;
  auto lp = naive_log_softmax(logits.to_vector<double>(), 3, 4, 2);
  auto p = probs.to_vector<double>();
  std::vector<double> ref;
  double total = 0;
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t s = 0; s < 2; ++s) {
      double l = 0;
      for (int64_t k = 0; k < 4; ++k) {
        size_t i = size_t((b * 4 + k) * 2 + s);
        l -= w[size_t(k)] * ((1 - eps) * p[i] + eps / 4.0) * lp[i];
      }
      ref.push_back(l);
      total += l;
    }
  Tensor wt = from_vector(w);
  expect_allclose(cross_entropy(logits, probs, wt, -100, Reduction::None, eps), from_vector(ref, {3, 2}), 1e-12);
  EXPECT_NEAR(cross_entropy(logits, probs, wt, -100, Reduction::Mean, eps).item<double>(), total / 6.0, 1e-12);
  EXPECT_THROW(cross_entropy(logits, zeros({3, 4}, DType::Float64)), ShapeError);
}

TEST(CrossEntropyTest, StableForLargeLogitsInFloat32) {
  Tensor logits = from_vector(std::vector<float>{1000.f, 0.f, -1000.f, 500.f, 500.f, 0.f}, {2, 3});
  auto loss = cross_entropy(logits, i64({1, 0}, {2}), {}, -100, Reduction::None).to_vector<float>();
  EXPECT_FLOAT_EQ(loss[0], 1000.f);
  EXPECT_NEAR(loss[1], std::log(2.0), 1e-4);  // float32 spacing near the logit 500 is 3e-5
}

TEST(CrossEntropyTest, RejectsBadArguments) {
  EXPECT_THROW(cross_entropy(zeros({2, 3}), i64({0, 1}, {2}), {}, -100, Reduction::Mean, 1.5), ValueError);
  EXPECT_THROW(cross_entropy(zeros({2, 3}), i64({0, 7}, {2})), IndexError);
  EXPECT_THROW(cross_entropy(zeros({2, 3}), i64({0, 1, 2}, {3})), ShapeError);
  EXPECT_THROW(cross_entropy(zeros({2, 3}), i64({0, 1}, {2}), ones({4})), ShapeError);
  EXPECT_THROW(cross_entropy(zeros({2, 3}, DType::Int64), i64({0, 1}, {2})), TypeError);
}

TEST(CrossEntropyTest, GradcheckAndGradgradcheck) {
  Tensor logits = rand_leaf({3, 4, 2}, 31, -2, 2);
  Tensor target = i64({0, 3, 1, -100, 2, 2}, {3, 2});
  Tensor w = from_vector(std::vector<double>{0.5, 2.0, 1.25, 1.0});
  for (double eps : {0.0, 0.3}) {
    auto fn = [&](const std::vector<Tensor>& v) { return cross_entropy(v[0], target, w, -100, Reduction::Mean, eps); };
    expect_gradcheck(fn, {logits});
    expect_gradgradcheck(fn, {logits});
  }
  Tensor probs = rand_leaf({3, 4, 2}, 32, 0, 1);
  auto prob_fn = [&](const std::vector<Tensor>& v) {
    return cross_entropy(v[0], v[1], w, -100, Reduction::Sum, 0.1);
  };
  expect_gradcheck(prob_fn, {logits, probs});
  expect_gradgradcheck(prob_fn, {logits, probs});
}

}  // namespace
}  // namespace skiff
