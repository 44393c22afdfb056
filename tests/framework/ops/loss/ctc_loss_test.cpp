#include <gtest/gtest.h>

#include <cmath>

#include "framework/autograd/engine.h"
#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_allclose;
using testing::expect_gradcheck;
using testing::rand_leaf;

Tensor i64(const std::vector<int64_t>& v, const Shape& s) { return from_vector(v, s); }

// Normalized random log-probabilities [T, N, C] (float64).
Tensor random_log_probs(int64_t t, int64_t n, int64_t c, uint64_t seed) {
  Generator g(seed);
  Tensor x = randn({t, n, c}, DType::Float64, &g);
  return sub(x, log(sum(exp(x), {2}, true)));
}

// -log of the total probability of all length-`frames` paths of sample n that collapse (merge
// repeats, then drop blanks) to `target`, by enumerating every path.
double brute_force_nll(const Tensor& log_probs, int64_t n, int64_t frames, const std::vector<int64_t>& target,
                       int64_t blank) {
  const int64_t batch = log_probs.shape()[1], classes = log_probs.shape()[2];
  auto lp = contiguous(log_probs).to_vector<double>();
  int64_t paths = 1;
  for (int64_t t = 0; t < frames; ++t) paths *= classes;
  double total = 0;
  std::vector<int64_t> path(static_cast<size_t>(frames));
  for (int64_t code = 0; code < paths; ++code) {
    int64_t rest = code;
    for (int64_t t = 0; t < frames; ++t, rest /= classes) path[size_t(t)] = rest % classes;
    std::vector<int64_t> collapsed;
    for (int64_t t = 0; t < frames; ++t) {
      int64_t k = path[size_t(t)];
      if (k != blank && (t == 0 || path[size_t(t - 1)] != k)) collapsed.push_back(k);
    }
    if (collapsed != target) continue;
    double log_p = 0;
    for (int64_t t = 0; t < frames; ++t) log_p += lp[size_t((t * batch + n) * classes + path[size_t(t)])];
    total += std::exp(log_p);
  }
  return -std::log(total);
}

struct CtcCase {
  Tensor log_probs;
  Tensor padded_targets;
  Tensor concatenated_targets;
  std::vector<int64_t> input_lengths, target_lengths;
  std::vector<std::vector<int64_t>> targets;
};

// T = 5, N = 4, C = 4: a plain target, a repeated label (needs a blank in between), an empty
// target, and a full-length one.
CtcCase small_case(int64_t blank) {
  CtcCase c;
  c.log_probs = random_log_probs(5, 4, 4, 11);
  auto relabel = [&](int64_t k) { return blank == 0 ? k : k - 1; };  // keep labels off the blank
  c.targets = {{relabel(1), relabel(2)}, {relabel(3), relabel(3)}, {}, {relabel(2), relabel(1), relabel(3)}};
  c.input_lengths = {5, 4, 3, 5};
  c.target_lengths = {2, 2, 0, 3};
  std::vector<int64_t> padded(12, relabel(1)), flat;
  for (size_t n = 0; n < 4; ++n)
    for (size_t k = 0; k < c.targets[n].size(); ++k) {
      padded[n * 3 + k] = c.targets[n][k];
      flat.push_back(c.targets[n][k]);
    }
  c.padded_targets = i64(padded, {4, 3});
  c.concatenated_targets = i64(flat, {int64_t(flat.size())});
  return c;
}

TEST(CtcLossTest, MatchesBruteForceOverAllAlignments) {
  for (int64_t blank : {int64_t(0), int64_t(3)}) {
    CtcCase c = small_case(blank);
    std::vector<double> ref;
    for (int64_t n = 0; n < 4; ++n)
      ref.push_back(brute_force_nll(c.log_probs, n, c.input_lengths[size_t(n)], c.targets[size_t(n)], blank));
    for (const Tensor& targets : {c.padded_targets, c.concatenated_targets}) {
      Tensor none = ctc_loss(c.log_probs, targets, c.input_lengths, c.target_lengths, blank, Reduction::None);
      expect_allclose(none, from_vector(ref), 1e-10, 1e-10);
      EXPECT_NEAR(ctc_loss(c.log_probs, targets, c.input_lengths, c.target_lengths, blank, Reduction::Sum)
                      .item<double>(),
                  ref[0] + ref[1] + ref[2] + ref[3], 1e-10);
      // Mean: each loss over its target length (at least 1), then the batch mean.
      double mean = (ref[0] / 2 + ref[1] / 2 + ref[2] / 1 + ref[3] / 3) / 4;
      EXPECT_NEAR(ctc_loss(c.log_probs, targets, c.input_lengths, c.target_lengths, blank).item<double>(), mean,
                  1e-10);
    }
  }
}

TEST(CtcLossTest, Float32MatchesFloat64AndTensorLengthsWork) {
  CtcCase c = small_case(0);
  Tensor ref = ctc_loss(c.log_probs, c.padded_targets, c.input_lengths, c.target_lengths, 0, Reduction::None);
  Tensor f32 = ctc_loss(to(c.log_probs, DType::Float32), to(c.padded_targets, DType::Int32),
                        from_vector(std::vector<int32_t>{5, 4, 3, 5}), from_vector(c.target_lengths), 0,
                        Reduction::None);
  EXPECT_EQ(f32.dtype(), DType::Float32);
  expect_allclose(f32, ref, 1e-4, 1e-5);
}

TEST(CtcLossTest, InfeasibleTargetIsInfiniteOrZeroed) {
  // Three equal labels need five frames (a blank between repeats); four are not enough.
  Tensor lp = random_log_probs(4, 2, 3, 12).set_requires_grad();
  Tensor targets = i64({1, 1, 1, 2, 0, 0}, {2, 3});
  std::vector<int64_t> in_len = {4, 4}, tg_len = {3, 1};
  auto loss = ctc_loss(lp, targets, in_len, tg_len, 0, Reduction::None).to_vector<double>();
  EXPECT_TRUE(std::isinf(loss[0]) && loss[0] > 0);
  EXPECT_TRUE(std::isfinite(loss[1]));
  // A target longer than the input is infeasible too.
  auto longer = ctc_loss(lp, expand(i64({1, 2}, {1, 2}), {2, 2}), std::vector<int64_t>{1, 4},
                         std::vector<int64_t>{2, 2}, 0, Reduction::None)
                    .to_vector<double>();
  EXPECT_TRUE(std::isinf(longer[0]));

  Tensor zeroed = ctc_loss(lp, targets, in_len, tg_len, 0, Reduction::Sum, true);
  EXPECT_NEAR(zeroed.item<double>(), loss[1], 1e-12);
  backward(zeroed);
  Tensor g = lp.grad();
  auto gv = contiguous(g).to_vector<double>();
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t k = 0; k < 3; ++k) {
      EXPECT_EQ(gv[size_t((t * 2 + 0) * 3 + k)], 0.0) << "infeasible sample must get no gradient";
      EXPECT_TRUE(std::isfinite(gv[size_t((t * 2 + 1) * 3 + k)]));
    }
}

TEST(CtcLossTest, ZeroLengthInputs) {
  Tensor lp = random_log_probs(3, 2, 3, 13);
  auto loss = ctc_loss(lp, i64({1, 1}, {2, 1}), std::vector<int64_t>{0, 0}, std::vector<int64_t>{0, 1}, 0,
                       Reduction::None)
                  .to_vector<double>();
  EXPECT_EQ(loss[0], 0.0);  // the empty target has exactly one (empty) alignment
  EXPECT_TRUE(std::isinf(loss[1]));
}

TEST(CtcLossTest, RejectsBadArguments) {
  Tensor lp = random_log_probs(4, 2, 3, 14);
  Tensor targets = i64({1, 2, 2, 1}, {2, 2});
  std::vector<int64_t> in_len = {4, 3}, tg_len = {2, 2};
  EXPECT_THROW(ctc_loss(lp, targets, in_len, tg_len, 3), IndexError);
  EXPECT_THROW(ctc_loss(lp, targets, in_len, tg_len, -1), IndexError);
  try {
    ctc_loss(lp, i64({1, 3, 2, 1}, {2, 2}), in_len, tg_len);
    FAIL() << "expected IndexError";
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("got 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ctc_loss(lp, i64({1, 0, 2, 1}, {2, 2}), in_len, tg_len), ValueError);  // blank in a target
  EXPECT_THROW(ctc_loss(lp, targets, std::vector<int64_t>{5, 3}, tg_len), IndexError);
  EXPECT_THROW(ctc_loss(lp, targets, std::vector<int64_t>{-1, 3}, tg_len), IndexError);
  EXPECT_THROW(ctc_loss(lp, targets, in_len, std::vector<int64_t>{3, 2}), IndexError);
  EXPECT_THROW(ctc_loss(lp, targets, in_len, std::vector<int64_t>{-1, 2}), IndexError);
  EXPECT_THROW(ctc_loss(lp, i64({1, 2, 2}, {3}), in_len, tg_len), IndexError);  // lengths sum past the end
  EXPECT_THROW(ctc_loss(lp, targets, std::vector<int64_t>{4}, std::vector<int64_t>{2}), ShapeError);
  EXPECT_THROW(ctc_loss(lp, i64({1, 2, 2, 1, 1, 1}, {3, 2}), in_len, tg_len), ShapeError);
  EXPECT_THROW(ctc_loss(select(lp, 1, 0), targets, in_len, tg_len), ShapeError);
  EXPECT_THROW(ctc_loss(to(lp, DType::Float16), targets, in_len, tg_len), TypeError);
  EXPECT_THROW(ctc_loss(lp, to(targets, DType::Float32), in_len, tg_len), TypeError);
}

TEST(CtcLossTest, GradcheckWrtLogProbs) {
  CtcCase c = small_case(0);
  Tensor lp = rand_leaf({5, 4, 4}, 41, -3.0, 0.0);  // free log_probs, not normalized
  for (Reduction r : {Reduction::None, Reduction::Sum, Reduction::Mean}) {
    expect_gradcheck([&](const std::vector<Tensor>& v) {
      return ctc_loss(v[0], c.padded_targets, c.input_lengths, c.target_lengths, 0, r);
    }, {lp});
  }
  // Through a log_softmax, as in training.
  Tensor logits = rand_leaf({5, 4, 4}, 42, -2.0, 2.0);
  expect_gradcheck([&](const std::vector<Tensor>& v) {
    Tensor log_probs = sub(v[0], log(sum(exp(v[0]), {2}, true)));
    return ctc_loss(log_probs, c.concatenated_targets, c.input_lengths, c.target_lengths, 0, Reduction::Mean);
  }, {logits});
}

TEST(CtcLossTest, GradientVanishesPastInputLength) {
  CtcCase c = small_case(0);
  Tensor lp = detach(c.log_probs).set_requires_grad();
  backward(ctc_loss(lp, c.padded_targets, c.input_lengths, c.target_lengths, 0, Reduction::Sum));
  auto g = contiguous(lp.grad()).to_vector<double>();
  for (int64_t k = 0; k < 4; ++k) {
    EXPECT_EQ(g[size_t((4 * 4 + 1) * 4 + k)], 0.0);  // sample 1 has 4 frames: t = 4 is padding
    EXPECT_EQ(g[size_t((3 * 4 + 2) * 4 + k)], 0.0);  // sample 2 has 3 frames
  }
  // For each live frame the gradient w.r.t. log_probs is minus the posterior of each class: it sums to -1.
  double frame_sum = 0;
  for (int64_t k = 0; k < 4; ++k) frame_sum += g[size_t((2 * 4 + 0) * 4 + k)];
  EXPECT_NEAR(frame_sum, -1.0, 1e-10);
}

TEST(CtcLossTest, ParallelBatchMatchesPerSample) {
  const int64_t T = 60, N = 32, C = 6, S = 10;
  Tensor lp = random_log_probs(T, N, C, 15);
  Generator g(16);
  Tensor targets = randint(1, C, {N, S}, DType::Int64, &g);
  std::vector<int64_t> in_len, tg_len;
  for (int64_t n = 0; n < N; ++n) {
    in_len.push_back(T - n);
    tg_len.push_back(n % (S + 1));
  }
  Tensor all = ctc_loss(lp, targets, in_len, tg_len, 0, Reduction::None);
  auto values = all.to_vector<double>();
  for (int64_t n = 0; n < N; n += 7) {
    Tensor one = ctc_loss(narrow(lp, 1, n, 1), narrow(targets, 0, n, 1), std::vector<int64_t>{in_len[size_t(n)]},
                          std::vector<int64_t>{tg_len[size_t(n)]}, 0, Reduction::None);
    EXPECT_EQ(one.item<double>(), values[size_t(n)]) << "sample " << n;
  }
}

}  // namespace
}  // namespace skiff
