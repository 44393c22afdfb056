#include <gtest/gtest.h>

#include <cmath>

#include "framework/autograd/engine.h"
#include "framework/ops/nn/norm.h"
#include "framework/ops/ops.h"
#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_allclose;
using testing::expect_gradcheck;
using testing::expect_gradgradcheck;
using testing::rand_leaf;

// Two-pass reference: x viewed as [outer, C, inner]; statistics per (outer, c) when
// `per_outer`, else per c over outer and inner. Affine per c (empty = none).
Tensor naive_normalize(const Tensor& x, int64_t outer, int64_t channels, int64_t inner, bool per_outer,
                       const std::vector<double>& w, const std::vector<double>& b, double eps) {
  std::vector<double> v = contiguous(to(x, DType::Float64)).to_vector<double>(), y(v.size());
  auto idx = [&](int64_t o, int64_t c, int64_t i) { return size_t((o * channels + c) * inner + i); };
  auto normalize_group = [&](const std::vector<size_t>& ids, int64_t c) {
    double mean = 0, var = 0;
    for (size_t k : ids) mean += v[k];
    mean /= double(ids.size());
    for (size_t k : ids) var += (v[k] - mean) * (v[k] - mean);
    var /= double(ids.size());
    for (size_t k : ids) {
      double z = (v[k] - mean) / std::sqrt(var + eps);
      y[k] = z * (w.empty() ? 1 : w[size_t(c)]) + (b.empty() ? 0 : b[size_t(c)]);
    }
  };
  for (int64_t c = 0; c < channels; ++c) {
    if (per_outer) {
      for (int64_t o = 0; o < outer; ++o) {
        std::vector<size_t> ids;
        for (int64_t i = 0; i < inner; ++i) ids.push_back(idx(o, c, i));
        normalize_group(ids, c);
      }
    } else {
      std::vector<size_t> ids;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) ids.push_back(idx(o, c, i));
      normalize_group(ids, c);
    }
  }
  return from_vector(y, x.shape());
}

std::vector<double> values(const Tensor& t) { return contiguous(to(t, DType::Float64)).to_vector<double>(); }

// ---- layer_norm ----

TEST(LayerNormTest, MatchesReferenceWithAndWithoutAffine) {
  Generator g(1);
  Tensor x = randn({4, 3, 5}, DType::Float64, &g, 2.0, 3.0);
  Tensor w = randn({3, 5}, DType::Float64, &g), b = randn({3, 5}, DType::Float64, &g);
  // Over the last two dims: each of the 4 rows of 15 is one group; the affine is per element.
  Tensor plain = naive_normalize(reshape(x, {4, 1, 15}), 4, 1, 15, true, {}, {}, 1e-5);
  expect_allclose(layer_norm(x, {3, 5}), reshape(plain, {4, 3, 5}), 1e-12, 1e-12);
  Tensor affine = add(mul(reshape(plain, {4, 3, 5}), w), b);
  expect_allclose(layer_norm(x, {3, 5}, w, b), affine, 1e-12, 1e-12);
  expect_allclose(layer_norm(x, {3, 5}, w), mul(reshape(plain, {4, 3, 5}), w), 1e-12, 1e-12);
  expect_allclose(layer_norm(x, {3, 5}, Tensor(), b), add(reshape(plain, {4, 3, 5}), b), 1e-12, 1e-12);
  // Over the last dim only.
  Tensor last = naive_normalize(reshape(x, {12, 1, 5}), 12, 1, 5, true, {}, {}, 1e-3);
  expect_allclose(layer_norm(x, {5}, Tensor(), Tensor(), 1e-3), reshape(last, {4, 3, 5}), 1e-12, 1e-12);
}

TEST(LayerNormTest, HandComputedRow) {
  // mean 2.5, biased var 1.25 -> (x - 2.5) / sqrt(1.25)
  Tensor y = layer_norm(from_vector<double>({1, 2, 3, 4}, {1, 4}), {4}, Tensor(), Tensor(), 0.0);
  double s = std::sqrt(1.25);
  expect_allclose(y, from_vector<double>({-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s}, {1, 4}), 1e-15, 0);
}

TEST(LayerNormTest, LargeOffsetKeepsVarianceFloat32) {
  // A common offset of 1e4 must not cancel the unit-scale variance away.
  Generator g(2);
  Tensor base = randn({6, 64}, DType::Float64, &g);
  Tensor x = to(add(base, 1e4), DType::Float32);
  Tensor ref = naive_normalize(reshape(x, {6, 1, 64}), 6, 1, 64, true, {}, {}, 1e-5);
  expect_allclose(layer_norm(x, {64}), reshape(ref, {6, 64}), 2e-3, 1e-3);
}

TEST(LayerNormTest, HalfTypesAndStridedInput) {
  Generator g(3);
  Tensor x = randn({5, 16}, DType::Float32, &g);
  Tensor ref = reshape(naive_normalize(reshape(x, {5, 1, 16}), 5, 1, 16, true, {}, {}, 1e-5), {5, 16});
  expect_allclose(layer_norm(to(x, DType::Float16), {16}), ref, 1e-2, 1e-2);
  expect_allclose(layer_norm(to(x, DType::BFloat16), {16}), ref, 5e-2, 2e-2);
  Tensor xt = transpose(randn({16, 5}, DType::Float64, &g), 0, 1);  // strided [5, 16]
  Tensor ref_t = reshape(naive_normalize(reshape(contiguous(xt), {5, 1, 16}), 5, 1, 16, true, {}, {}, 1e-5), {5, 16});
  expect_allclose(layer_norm(xt, {16}), ref_t, 1e-12, 1e-12);
}

TEST(LayerNormTest, RejectsBadShapesAndDtypes) {
  Tensor x = zeros({2, 3, 4});
  EXPECT_THROW(layer_norm(x, {3}), ShapeError);
  EXPECT_THROW(layer_norm(x, {2, 3, 4, 1}), ShapeError);
  EXPECT_THROW(layer_norm(x, {}), ValueError);
  EXPECT_THROW(layer_norm(x, {4}, ones({3})), ShapeError);
  EXPECT_THROW(layer_norm(x, {4}, ones({4}, DType::Float64)), TypeError);
  EXPECT_THROW(layer_norm(zeros({2, 4}, DType::Int64), {4}), TypeError);
}

TEST(LayerNormTest, Gradcheck) {
  Tensor x = rand_leaf({3, 2, 4}, 21), w = rand_leaf({2, 4}, 22), b = rand_leaf({2, 4}, 23);
  expect_gradcheck([](const std::vector<Tensor>& in) { return layer_norm(in[0], {2, 4}, in[1], in[2]); }, {x, w, b});
  expect_gradcheck([](const std::vector<Tensor>& in) { return layer_norm(in[0], {4}); }, {x});
}

TEST(LayerNormTest, Gradgradcheck) {
  Tensor x = rand_leaf({3, 5}, 24), w = rand_leaf({5}, 25), b = rand_leaf({5}, 26);
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return layer_norm(in[0], {5}, in[1], in[2]); },
                       {x, w, b});
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return layer_norm(in[0], {5}); }, {x});
}

// ---- group_norm ----

TEST(GroupNormTest, MatchesReference) {
  Generator g(4);
  Tensor x = randn({2, 6, 3, 2}, DType::Float64, &g, 1.0, 2.0);
  Tensor w = randn({6}, DType::Float64, &g), b = randn({6}, DType::Float64, &g);
  // Groups of 2 channels: view as [N * 3, 1, 2 * 6] for the statistics.
  Tensor z = reshape(naive_normalize(reshape(x, {6, 1, 12}), 6, 1, 12, true, {}, {}, 1e-5), {2, 6, 3, 2});
  Tensor expect = add(mul(z, reshape(w, {6, 1, 1})), reshape(b, {6, 1, 1}));
  expect_allclose(group_norm(x, 3, w, b), expect, 1e-12, 1e-12);
  // groups == C is instance norm; groups == 1 is layer norm over [C, H, W].
  Tensor inst = naive_normalize(reshape(x, {12, 1, 6}), 12, 1, 6, true, {}, {}, 1e-5);
  expect_allclose(group_norm(x, 6), reshape(inst, {2, 6, 3, 2}), 1e-12, 1e-12);
  expect_allclose(group_norm(x, 1), layer_norm(x, {6, 3, 2}), 1e-12, 1e-12);
}

TEST(GroupNormTest, RejectsBadGroupsAndShapes) {
  Tensor x = zeros({2, 6, 4});
  EXPECT_THROW(group_norm(x, 4), ValueError);
  EXPECT_THROW(group_norm(x, 0), ValueError);
  EXPECT_THROW(group_norm(zeros({6}), 2), ShapeError);
  EXPECT_THROW(group_norm(x, 3, ones({3})), ShapeError);
}

TEST(GroupNormTest, Gradcheck) {
  Tensor x = rand_leaf({2, 4, 3}, 31), w = rand_leaf({4}, 32), b = rand_leaf({4}, 33);
  expect_gradcheck([](const std::vector<Tensor>& in) { return group_norm(in[0], 2, in[1], in[2]); }, {x, w, b});
}

// ---- batch_norm ----

TEST(BatchNormTest, TrainingUsesBatchStatsAndUpdatesRunningStats) {
  Generator g(5);
  Tensor x = randn({4, 3, 5}, DType::Float64, &g, 3.0, 2.0);
  std::vector<double> w = {0.5, 1.0, 2.0}, b = {0.1, -0.2, 0.3};
  Tensor rm = zeros({3}, DType::Float32), rv = ones({3}, DType::Float32);
  Tensor y = batch_norm(x, rm, rv, from_vector(w), from_vector(b), true, 0.1, 1e-5);
  expect_allclose(y, naive_normalize(x, 4, 3, 5, false, w, b, 1e-5), 1e-12, 1e-12);
  // Running stats: momentum 0.1 towards the batch mean and the unbiased variance.
  std::vector<double> xv = values(x);
  std::vector<double> rm_v = values(rm), rv_v = values(rv);
  for (int64_t c = 0; c < 3; ++c) {
    double mean = 0, ss = 0;
    for (int64_t o = 0; o < 4; ++o)
      for (int64_t i = 0; i < 5; ++i) mean += xv[size_t((o * 3 + c) * 5 + i)];
    mean /= 20;
    for (int64_t o = 0; o < 4; ++o)
      for (int64_t i = 0; i < 5; ++i) ss += std::pow(xv[size_t((o * 3 + c) * 5 + i)] - mean, 2);
    EXPECT_NEAR(rm_v[size_t(c)], 0.1 * mean, 1e-6);
    EXPECT_NEAR(rv_v[size_t(c)], 0.9 + 0.1 * ss / 19, 1e-6);
  }
  EXPECT_EQ(rm.dtype(), DType::Float32);
}

TEST(BatchNormTest, EvalUsesRunningStats) {
  Tensor x = from_vector<double>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  Tensor rm = from_vector<double>({1.0, -1.0}), rv = from_vector<double>({4.0, 0.25});
  Tensor y = batch_norm(x, rm, rv, from_vector<double>({2.0, 1.0}), from_vector<double>({0.0, 1.0}), false, 0.1, 0.0);
  // channel 0: (x - 1) / 2 * 2 = x - 1; channel 1: (x + 1) / 0.5 + 1 = 2x + 3
  expect_allclose(y, from_vector<double>({0, 1, 9, 11, 4, 5, 17, 19}, {2, 2, 2}), 1e-12, 0);
  EXPECT_EQ(values(rm), (std::vector<double>{1.0, -1.0}));  // untouched in eval
}

TEST(BatchNormTest, WithoutRunningStatsAlwaysUsesBatchStats) {
  Generator g(6);
  Tensor x = randn({3, 2}, DType::Float64, &g);
  Tensor expect = naive_normalize(x, 3, 2, 1, false, {}, {}, 1e-5);
  expect_allclose(batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), false), expect, 1e-12, 1e-12);
  expect_allclose(batch_norm(to(x, DType::Float32), Tensor(), Tensor(), Tensor(), Tensor(), true), expect, 1e-5,
                  1e-5);
}

TEST(BatchNormTest, RejectsBadInputs) {
  Tensor x = zeros({4, 3, 2});
  EXPECT_THROW(batch_norm(zeros({3}), Tensor(), Tensor(), Tensor(), Tensor(), true), ShapeError);
  EXPECT_THROW(batch_norm(x, zeros({3}), Tensor()), ValueError);
  EXPECT_THROW(batch_norm(x, zeros({2}), ones({2})), ShapeError);
  EXPECT_THROW(batch_norm(x, Tensor(), Tensor(), ones({4}), Tensor(), true), ShapeError);
  EXPECT_THROW(batch_norm(zeros({1, 3}), zeros({3}), ones({3}), Tensor(), Tensor(), true), ValueError);
  EXPECT_THROW(batch_norm(zeros({4, 3}, DType::Int32), Tensor(), Tensor(), Tensor(), Tensor(), true), TypeError);
}

TEST(BatchNormTest, GradcheckTrainingAndEval) {
  Tensor x = rand_leaf({3, 2, 4}, 41), w = rand_leaf({2}, 42), b = rand_leaf({2}, 43);
  expect_gradcheck(
      [](const std::vector<Tensor>& in) { return batch_norm(in[0], Tensor(), Tensor(), in[1], in[2], true); },
      {x, w, b});
  Tensor rm = from_vector<double>({0.1, -0.2}), rv = from_vector<double>({1.5, 0.5});
  expect_gradcheck(
      [&](const std::vector<Tensor>& in) { return batch_norm(in[0], rm, rv, in[1], in[2], false); }, {x, w, b});
}

// First-order gradients take the fused batch_norm_backward kernel; with
// create_graph they take the composite formula. Both must agree, with and
// without weight, for float32 and float64 and a strided incoming gradient.
TEST(BatchNormTest, FusedBackwardEqualsTheCompositeFormula) {
  for (DType dt : {DType::Float64, DType::Float32}) {
    for (bool affine : {true, false}) {
      Tensor x = detach(to(rand_leaf({3, 4, 5, 2}, 51, -2.0, 3.0), dt)).set_requires_grad();
      Tensor w = detach(to(rand_leaf({4}, 52), dt)).set_requires_grad();
      Tensor b = detach(to(rand_leaf({4}, 53), dt)).set_requires_grad();
      Tensor g = transpose(detach(to(rand_leaf({3, 4, 2, 5}, 54), dt)), 2, 3);  // non-contiguous
      auto grads = [&](bool create_graph) {
        Tensor y = affine ? batch_norm(x, Tensor(), Tensor(), w, b, true) : batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true);
        std::vector<Tensor> wrt = affine ? std::vector<Tensor>{x, w, b} : std::vector<Tensor>{x};
        return autograd::grad({y}, wrt, {g}, create_graph);
      };
      std::vector<Tensor> fused = grads(false), composite = grads(true);
      const double tol = dt == DType::Float64 ? 1e-12 : 2e-5;
      for (size_t i = 0; i < fused.size(); ++i)
        expect_allclose(to(fused[i], DType::Float64), to(detach(composite[i]), DType::Float64), tol, tol);
    }
  }
}

TEST(BatchNormTest, Gradgradcheck) {
  Tensor x = rand_leaf({4, 2}, 44), w = rand_leaf({2}, 45);
  expect_gradgradcheck(
      [](const std::vector<Tensor>& in) { return batch_norm(in[0], Tensor(), Tensor(), in[1], Tensor(), true); },
      {x, w});
}

}  // namespace
}  // namespace skiff
