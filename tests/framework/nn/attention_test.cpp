// MultiheadAttention and Transformer layers: shapes, masks, KV-cache
// equivalence, causality, and float64 gradient checks.

#include <gtest/gtest.h>

#include <cmath>

#include "framework/nn/attention.h"
#include "framework/nn/transformer.h"
#include "tests/framework/nn/nn_test_utils.h"

namespace skiff::nn {
namespace {

using testing::expect_close;
using testing::expect_module_gradcheck;
using testing::rand64;
using testing::values;

TEST(MultiheadAttentionTest, ShapesAndNormalizedWeights) {
  Generator g(1);
  MultiheadAttention mha(8, 2, 0.0, true, -1, 6, &g);
  Tensor q = rand({2, 3, 8}), k = rand({2, 5, 8}), v = rand({2, 5, 6});
  auto r = mha.attend(q, k, v);
  EXPECT_EQ(r.output.shape(), (Shape{2, 3, 8}));
  EXPECT_EQ(r.weights.shape(), (Shape{2, 2, 3, 5}));
  for (double s : values(sum(r.weights, {-1}))) EXPECT_NEAR(s, 1.0, 1e-6);
  EXPECT_THROW(mha(rand({2, 4, 8})), ShapeError);  // self-attention needs vdim == embed_dim
  EXPECT_EQ(MultiheadAttention(8, 4)(rand({2, 4, 8})).shape(), (Shape{2, 4, 8}));
  EXPECT_EQ(mha.state_dict().count("v_proj.weight"), 1u);
  EXPECT_EQ(mha.v_proj->weight.shape(), (Shape{8, 6}));
  EXPECT_THROW(MultiheadAttention(10, 3), ValueError);
  EXPECT_THROW(mha.attend(rand({2, 3, 7}), k, v), ShapeError);
  EXPECT_THROW(mha.attend(q, k, v, ones({2, 4}, DType::Bool)), ShapeError);
  EXPECT_THROW(mha.attend(q, k, v, {}, zeros({3, 4})), ShapeError);
  EXPECT_THROW(mha.attend(q, k, v, zeros({2, 5}, DType::Int64)), TypeError);
}

TEST(MultiheadAttentionTest, KeyPaddingMaskZeroesWeightsAndMatchesTruncatedKeys) {
  Generator g(2);
  MultiheadAttention mha(4, 2, 0.0, true, -1, -1, &g);
  Tensor q = rand({2, 3, 4}), kv = rand({2, 5, 4});
  // Batch 1 has only 3 real keys.
  Tensor pad = from_vector<bool>({false, false, false, false, false, false, false, false, true, true}, {2, 5});
  auto r = mha.attend(q, kv, kv, pad);
  auto w = values(select(r.weights, 0, 1));  // [H, Tq, Tk]
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(w[(h * 3 + i) * 5 + 3], 0.0);
      EXPECT_EQ(w[(h * 3 + i) * 5 + 4], 0.0);
      EXPECT_GT(w[(h * 3 + i) * 5 + 2], 0.0);
    }
  Tensor kv1 = slice(slice(kv, 0, 1, 2), 1, 0, 3);
  auto t = mha.attend(slice(q, 0, 1, 2), kv1, kv1);
  expect_close(slice(r.output, 0, 1, 2), t.output);
  // The same mask written as an additive float mask gives the same result.
  Tensor fpad = where(pad, -INFINITY, zeros({}));
  expect_close(mha.attend(q, kv, kv, fpad).output, r.output);
}

TEST(MultiheadAttentionTest, BoolAndFloatCausalMasksAgree) {
  Generator g(3);
  MultiheadAttention mha(6, 3, 0.0, true, -1, -1, &g);
  Tensor x = rand({2, 4, 6});
  Tensor fmask = causal_mask(4);
  Tensor bmask = gt(reshape(arange(4), {1, 4}), reshape(arange(4), {4, 1}));
  auto a = mha.attend(x, x, x, {}, fmask);
  auto b = mha.attend(x, x, x, {}, bmask);
  expect_close(a.output, b.output);
  auto w = values(a.weights);
  for (int bh = 0; bh < 6; ++bh)
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j) EXPECT_EQ(w[(bh * 4 + i) * 4 + j], 0.0);
  // 3-D [B*H, Tq, Tk] and 4-D [B, 1, Tq, Tk] forms.
  Tensor m3 = contiguous(expand(reshape(bmask, {1, 4, 4}), {6, 4, 4}));
  expect_close(mha.attend(x, x, x, {}, m3).output, a.output);
  expect_close(mha.attend(x, x, x, {}, contiguous(expand(reshape(fmask, {1, 1, 4, 4}), {2, 1, 4, 4}))).output,
               a.output);
}

TEST(MultiheadAttentionTest, IncrementalDecodingWithCacheEqualsFullDecoding) {
  Generator g(4);
  MultiheadAttention mha(8, 2, 0.0, true, -1, -1, &g);
  Tensor x = rand({2, 5, 8});
  Tensor full = mha.attend(x, x, x, {}, causal_mask(5)).output;

  KVCache cache;
  std::vector<Tensor> steps;
  for (int64_t t = 0; t < 5; ++t) {
    Tensor xt = slice(x, 1, t, t + 1);
    steps.push_back(mha.attend(xt, xt, xt, {}, {}, &cache).output);
    EXPECT_EQ(cache.length(), t + 1);
  }
  expect_close(concat(steps, 1), full);

  // A 3-token prefix, then 2 tokens at once with a mask spanning the cache.
  KVCache c2;
  Tensor p = slice(x, 1, 0, 3), s = slice(x, 1, 3, 5);
  Tensor out1 = mha.attend(p, p, p, {}, causal_mask(3), &c2).output;
  Tensor m = slice(causal_mask(5), 0, 3, 5);  // rows 3..4 of the full mask: [2, 5]
  Tensor out2 = mha.attend(s, s, s, {}, m, &c2).output;
  expect_close(concat({out1, out2}, 1), full);
  c2.reset();
  EXPECT_EQ(c2.length(), 0);
}

// With rotary embeddings and one repeated token, a logit depends only on the offset j - i
// between query and key, so within a row the weights of neighbouring keys keep the same
// ratio from row to row.
TEST(MultiheadAttentionTest, RotaryScoresDependOnRelativePositions) {
  Generator g(6);
  MultiheadAttention mha(8, 1, 0.0, true, -1, -1, &g);
  mha.set_rotary(10000.0);
  Tensor x = expand(rand({1, 1, 8}), {1, 5, 8});
  std::vector<double> w = values(mha.attend(x, x, x).weights);  // [1, 1, 5, 5]
  auto at = [&](int i, int j) { return w[size_t(i * 5 + j)]; };
  for (int i = 0; i + 1 < 5; ++i)
    for (int j = 0; j + 2 < 5; ++j) EXPECT_NEAR(at(i, j) / at(i, j + 1), at(i + 1, j + 1) / at(i + 1, j + 2), 1e-4);
  MultiheadAttention plain(8, 1, 0.0, true, -1, -1, &g);
  std::vector<double> u = values(plain.attend(x, x, x).weights);
  EXPECT_NEAR(u[0], 0.2, 1e-6) << "without positions, identical tokens get equal weights";
  EXPECT_GT(std::abs(at(0, 0) - 0.2), 1e-3) << "rotary embeddings must tell the positions apart";
  EXPECT_THROW(mha.set_rotary(-1.0), ValueError);
}

// Decoding step by step through the KV cache rotates each new step by its own position.
TEST(MultiheadAttentionTest, RotaryWithCacheEqualsFullCausalPass) {
  Generator g(7);
  MultiheadAttention mha(8, 2, 0.0, true, -1, -1, &g);
  mha.set_rotary(100.0);
  Tensor x = rand({2, 5, 8});
  Tensor full = mha.attend(x, x, x, {}, causal_mask(5)).output;
  KVCache cache;
  std::vector<Tensor> steps;
  for (int64_t t = 0; t < 5; ++t) {
    Tensor xt = slice(x, 1, t, t + 1);
    steps.push_back(mha.attend(xt, xt, xt, {}, {}, &cache).output);
  }
  expect_close(concat(steps, 1), full);
}

TEST(KVCacheTest, AppendingStepsEqualsConcatenatingThem) {
  // Steps of 1, 5, 20 and 1 positions cross the buffer's 16-step start and a doubling.
  KVCache cache;
  std::vector<Tensor> ks, vs;
  Tensor first_view;
  for (int64_t t : {1, 5, 20, 1}) {
    ks.push_back(rand({2, 3, t, 4}));
    vs.push_back(rand({2, 3, t, 4}));
    cache.append(ks.back(), vs.back(), "test");
    if (!first_view.defined()) first_view = cache.k;
    EXPECT_EQ(cache.length(), concat(ks, 2).size(2));
    expect_close(cache.k, concat(ks, 2), 0.0, 0.0);
    expect_close(cache.v, concat(vs, 2), 0.0, 0.0);
  }
  expect_close(first_view, ks[0], 0.0, 0.0);  // an earlier view still shows what it showed
  EXPECT_THROW(cache.append(rand({1, 3, 1, 4}), rand({1, 3, 1, 4}), "test"), ShapeError);
  cache.reset();
  EXPECT_EQ(cache.length(), 0);
  cache.append(ks[0], vs[0], "test");
  expect_close(cache.k, ks[0], 0.0, 0.0);
}

TEST(KVCacheTest, UnderAutogradConcatenatesSoGradientsFlow) {
  KVCache cache;
  Tensor a = rand({1, 2, 3, 4}).set_requires_grad(), b = rand({1, 2, 2, 4}).set_requires_grad();
  cache.append(a, a, "test");
  cache.append(b, b, "test");
  backward(sum(cache.k * 2.0));
  expect_close(a.grad(), full(a.shape(), 2.0));
  expect_close(b.grad(), full(b.shape(), 2.0));
}

TEST(MultiheadAttentionTest, GradcheckFloat64WithMask) {
  Generator g(5);
  MultiheadAttention mha(4, 2, 0.0, true, -1, -1, &g);
  mha.to(DType::Float64);
  Tensor x = rand64({1, 3, 4}, 6, true);
  Tensor mem = rand64({1, 2, 4}, 7, true);
  Tensor pad = from_vector<bool>({false, true}, {1, 2});
  std::vector<Tensor> leaves{x, mem};
  for (auto& p : mha.parameters()) leaves.push_back(p);
  expect_module_gradcheck([&] { return mha.attend(x, mem, mem, pad).output; }, leaves);
  expect_module_gradcheck([&] { return mha.attend(x, x, x, {}, causal_mask(3, DType::Float64)).output; }, {x});
}

TransformerLayerOptions small_opts(bool norm_first, TransformerActivation act) {
  TransformerLayerOptions o;
  o.dim_feedforward = 6;
  o.dropout = 0.0;
  o.norm_first = norm_first;
  o.activation = act;
  return o;
}

TEST(TransformerEncoderLayerTest, ShapesKeysAndPaddingIndependence) {
  for (bool nf : {false, true}) {
    Generator g(8);
    auto o = small_opts(nf, TransformerActivation::GELU);
    o.gen = &g;
    TransformerEncoderLayer layer(8, 2, o);
    auto sd = layer.state_dict();
    for (const char* k : {"self_attn.q_proj.weight", "linear1.weight", "linear2.bias", "norm1.weight", "norm2.bias"})
      EXPECT_EQ(sd.count(k), 1u) << k;
    Tensor x = rand({2, 4, 8});
    Tensor pad = from_vector<bool>({false, false, false, true, false, false, false, false}, {2, 4});
    Tensor y = layer.forward(x, {}, pad);
    EXPECT_EQ(y.shape(), (Shape{2, 4, 8}));
    // Changing the padded token does not change the real tokens' outputs.
    Tensor x2 = clone(x);
    detail::fill(select(select(x2, 0, 0), 0, 3), 5.0);
    Tensor y2 = layer.forward(x2, {}, pad);
    expect_close(slice(select(y2, 0, 0), 0, 0, 3), slice(select(y, 0, 0), 0, 0, 3));
    expect_close(select(y2, 0, 1), select(y, 0, 1));
  }
}

TEST(TransformerEncoderLayerTest, GradcheckFloat64) {
  Generator g(9);
  auto o = small_opts(true, TransformerActivation::ReLU);
  o.gen = &g;
  TransformerEncoderLayer layer(4, 2, o);
  layer.to(DType::Float64);
  Tensor x = rand64({1, 3, 4}, 10, true);
  std::vector<Tensor> leaves{x};
  for (auto& p : layer.parameters()) leaves.push_back(p);
  expect_module_gradcheck([&] { return layer(x); }, leaves);
}

TEST(TransformerEncoderLayerTest, DropoutActiveOnlyInTraining) {
  Generator g(11);
  TransformerLayerOptions o;
  o.dim_feedforward = 16;
  o.dropout = 0.5;
  o.gen = &g;
  TransformerEncoderLayer layer(8, 2, o);
  Tensor x = rand({1, 4, 8});
  Tensor a = layer(x), b = layer(x);
  EXPECT_NE(values(a), values(b));
  layer.eval();
  expect_close(layer(x), layer(x), 0, 0);
}

TEST(TransformerDecoderLayerTest, CausalAndCachedDecodingMatch) {
  for (bool nf : {false, true}) {
    Generator g(12);
    auto o = small_opts(nf, TransformerActivation::ReLU);
    o.gen = &g;
    TransformerDecoderLayer layer(8, 2, o);
    Tensor tgt = rand({2, 5, 8}), mem = rand({2, 3, 8});
    Tensor full = layer.forward(tgt, mem, causal_mask(5));
    EXPECT_EQ(full.shape(), (Shape{2, 5, 8}));
    // Position t does not see positions after t.
    Tensor tgt2 = clone(tgt);
    detail::fill(slice(tgt2, 1, 3, 5), 2.0);
    expect_close(slice(layer.forward(tgt2, mem, causal_mask(5)), 1, 0, 3), slice(full, 1, 0, 3));
    KVCache cache;
    std::vector<Tensor> steps;
    for (int64_t t = 0; t < 5; ++t)
      steps.push_back(layer.forward(slice(tgt, 1, t, t + 1), mem, {}, {}, {}, {}, &cache));
    expect_close(concat(steps, 1), full);
    EXPECT_THROW(layer(tgt), NotImplementedError);
  }
}

TEST(TransformerDecoderLayerTest, GradcheckFloat64) {
  Generator g(13);
  auto o = small_opts(false, TransformerActivation::GELU);
  o.gen = &g;
  TransformerDecoderLayer layer(4, 2, o);
  layer.to(DType::Float64);
  Tensor tgt = rand64({1, 2, 4}, 14, true), mem = rand64({1, 3, 4}, 15, true);
  std::vector<Tensor> leaves{tgt, mem};
  for (auto& p : layer.parameters()) leaves.push_back(p);
  expect_module_gradcheck([&] { return layer.forward(tgt, mem, causal_mask(2, DType::Float64)); }, leaves);
}

}  // namespace
}  // namespace skiff::nn
