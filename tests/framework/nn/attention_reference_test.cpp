// MultiheadAttention and the Transformer encoder/decoder layers against a naive
// reference written here with plain loops in double: projections, the 1/sqrt(head_dim)
// scaling, heads taken as consecutive head_dim-wide column blocks of the projections
// and merged back in head order, additive/bool masks (causal, per-head, key padding),
// softmax, layer norm, the feed-forward block, post- and pre-norm residuals, and
// incremental decoding with a KV cache checked against the full-sequence reference.
// float64 modules must agree to 1e-11; float32 modules to ~1e-5.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "framework/nn/attention.h"
#include "framework/nn/transformer.h"
#include "tests/framework/nn/nn_test_utils.h"

namespace skiff::nn {
namespace {

using testing::values;
using Vec = std::vector<double>;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// Gives every parameter of `m` (float64 or float32, contiguous) seeded values in [-0.5, 0.5):
// biases and norm affines are non-trivial, unlike their default init.
void randomize(Module& m, uint64_t seed) {
  Generator g(seed);
  for (auto& p : m.parameters()) {
    ASSERT_TRUE(p.is_contiguous());
    Tensor r = rand(p.shape(), DType::Float64, &g, -0.5, 0.5);
    auto v = r.to_vector<double>();
    if (p.dtype() == DType::Float64) {
      std::copy(v.begin(), v.end(), static_cast<double*>(p.data_ptr()));
    } else {
      ASSERT_EQ(p.dtype(), DType::Float32);
      float* d = static_cast<float*>(p.data_ptr());
      for (size_t i = 0; i < v.size(); ++i) d[i] = float(v[i]);
    }
  }
}

void expect_vec_near(const Vec& got, const Vec& want, double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << what << " at " << i;
      continue;
    }
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << what << " at flat index " << i;
  }
}

// ---- the reference ---------------------------------------------------------------------------

struct LinearRef {
  Vec w, b;  // w [out, in] row-major, b [out] (empty: no bias)
  int64_t in = 0, out = 0;
  explicit LinearRef(const Linear& l) : w(values(l.weight)), in(l.weight.size(1)), out(l.weight.size(0)) {
    if (l.bias.defined()) b = values(l.bias);
  }
  // x [rows, in] -> [rows, out]
  Vec operator()(const Vec& x) const {
    const int64_t rows = int64_t(x.size()) / in;
    Vec y(size_t(rows * out));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < out; ++o) {
        double s = b.empty() ? 0.0 : b[size_t(o)];
        for (int64_t i = 0; i < in; ++i) s += x[size_t(r * in + i)] * w[size_t(o * in + i)];
        y[size_t(r * out + o)] = s;
      }
    return y;
  }
};

struct LayerNormRef {
  Vec g, b;
  double eps;
  LayerNormRef(const LayerNorm& n, double e) : g(values(n.weight)), b(values(n.bias)), eps(e) {}
  Vec operator()(const Vec& x) const {
    const int64_t d = int64_t(g.size()), rows = int64_t(x.size()) / d;
    Vec y(x.size());
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (int64_t i = 0; i < d; ++i) mean += x[size_t(r * d + i)];
      mean /= double(d);
      for (int64_t i = 0; i < d; ++i) var += (x[size_t(r * d + i)] - mean) * (x[size_t(r * d + i)] - mean);
      var /= double(d);  // biased, as LayerNorm
      for (int64_t i = 0; i < d; ++i)
        y[size_t(r * d + i)] = (x[size_t(r * d + i)] - mean) / std::sqrt(var + eps) * g[size_t(i)] + b[size_t(i)];
    }
    return y;
  }
};

// Additive mask value for (batch, head, query, key); kNegInf blocks the key.
using MaskFn = std::function<double(int64_t b, int64_t h, int64_t i, int64_t j)>;
const MaskFn kNoMask = [](int64_t, int64_t, int64_t, int64_t) { return 0.0; };
const MaskFn kCausal = [](int64_t, int64_t, int64_t i, int64_t j) { return j > i ? kNegInf : 0.0; };

struct MhaRef {
  LinearRef q, k, v, o;
  int64_t e, h;
  explicit MhaRef(const MultiheadAttention& m)
      : q(*m.q_proj), k(*m.k_proj), v(*m.v_proj), o(*m.out_proj), e(m.embed_dim()), h(m.num_heads()) {}

  // query [B, Tq, E], key [B, Tk, kdim], value [B, Tk, vdim] -> [B, Tq, E]; weights [B, H, Tq, Tk].
  Vec operator()(const Vec& query, const Vec& key, const Vec& value, int64_t B, const MaskFn& mask,
                 Vec* weights = nullptr) const {
    const int64_t tq = int64_t(query.size()) / (B * e), tk = int64_t(key.size()) / (B * k.in), dh = e / h;
    const Vec Q = q(query), K = k(key), V = v(value);  // [B, T, E]; head hh owns columns hh*dh .. hh*dh+dh-1
    const double scale = 1.0 / std::sqrt(double(dh));
    Vec ctx(size_t(B * tq * e), 0.0);  // heads merged back: head hh's output goes to columns hh*dh...
    if (weights) weights->assign(size_t(B * h * tq * tk), 0.0);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t hh = 0; hh < h; ++hh)
        for (int64_t i = 0; i < tq; ++i) {
          Vec s(static_cast<size_t>(tk));
          double mx = kNegInf;
          for (int64_t j = 0; j < tk; ++j) {
            double dot = 0;
            for (int64_t d = 0; d < dh; ++d)
              dot += Q[size_t((b * tq + i) * e + hh * dh + d)] * K[size_t((b * tk + j) * e + hh * dh + d)];
            s[size_t(j)] = dot * scale + mask(b, hh, i, j);
            mx = std::max(mx, s[size_t(j)]);
          }
          double z = 0;
          for (auto& x : s) z += (x = std::isinf(x) ? 0.0 : std::exp(x - mx));
          for (int64_t j = 0; j < tk; ++j) {
            const double w = s[size_t(j)] / z;
            if (weights) (*weights)[size_t(((b * h + hh) * tq + i) * tk + j)] = w;
            for (int64_t d = 0; d < dh; ++d)
              ctx[size_t((b * tq + i) * e + hh * dh + d)] += w * V[size_t((b * tk + j) * e + hh * dh + d)];
          }
        }
    return o(ctx);
  }
};

Vec add(Vec a, const Vec& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}

Vec activate(TransformerActivation act, Vec x) {
  for (auto& v : x) v = act == TransformerActivation::GELU ? 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))) : std::max(v, 0.0);
  return x;
}

struct EncoderRef {
  MhaRef sa;
  LinearRef l1, l2;
  LayerNormRef n1, n2;
  TransformerLayerOptions opt;
  EncoderRef(const TransformerEncoderLayer& m, TransformerLayerOptions o)
      : sa(*m.self_attn), l1(*m.linear1), l2(*m.linear2), n1(*m.norm1, o.layer_norm_eps),
        n2(*m.norm2, o.layer_norm_eps), opt(o) {}
  Vec operator()(const Vec& x, int64_t B, const MaskFn& mask) const {
    auto attn = [&](const Vec& y) { return sa(y, y, y, B, mask); };
    auto ff = [&](const Vec& y) { return l2(activate(opt.activation, l1(y))); };
    if (opt.norm_first) {
      Vec y = add(x, attn(n1(x)));
      return add(y, ff(n2(y)));
    }
    Vec y = n1(add(x, attn(x)));
    return n2(add(y, ff(y)));
  }
};

struct DecoderRef {
  MhaRef sa, ca;
  LinearRef l1, l2;
  LayerNormRef n1, n2, n3;
  TransformerLayerOptions opt;
  DecoderRef(const TransformerDecoderLayer& m, TransformerLayerOptions o)
      : sa(*m.self_attn), ca(*m.multihead_attn), l1(*m.linear1), l2(*m.linear2), n1(*m.norm1, o.layer_norm_eps),
        n2(*m.norm2, o.layer_norm_eps), n3(*m.norm3, o.layer_norm_eps), opt(o) {}
  Vec operator()(const Vec& x, const Vec& mem, int64_t B, const MaskFn& self_mask, const MaskFn& mem_mask) const {
    auto self = [&](const Vec& y) { return sa(y, y, y, B, self_mask); };
    auto cross = [&](const Vec& y) { return ca(y, mem, mem, B, mem_mask); };
    auto ff = [&](const Vec& y) { return l2(activate(opt.activation, l1(y))); };
    if (opt.norm_first) {
      Vec y = add(x, self(n1(x)));
      y = add(y, cross(n2(y)));
      return add(y, ff(n3(y)));
    }
    Vec y = n1(add(x, self(x)));
    y = n2(add(y, cross(y)));
    return n3(add(y, ff(y)));
  }
};

// ---- MultiheadAttention ---------------------------------------------------------------------

TEST(AttentionReferenceTest, MultiheadAttentionMatchesNaiveFloat64) {
  // E = 12 in 3 heads of 4, keys and values of other widths, 2 batches, Tq != Tk.
  Generator g(31);
  MultiheadAttention mha(12, 3, 0.0, true, 5, 7, &g);
  mha.to(DType::Float64);
  randomize(mha, 32);
  const int64_t B = 2, tq = 3, tk = 4;
  Tensor q = testing::rand64({B, tq, 12}, 33), k = testing::rand64({B, tk, 5}, 34), v = testing::rand64({B, tk, 7}, 35);
  auto r = mha.attend(q, k, v);
  Vec w;
  Vec ref = MhaRef(mha)(values(q), values(k), values(v), B, kNoMask, &w);
  expect_vec_near(values(r.output), ref, 1e-11, "output");
  expect_vec_near(values(r.weights), w, 1e-11, "weights");
  // Self-attention through forward() is attend(x, x, x).
  MultiheadAttention self(8, 4, 0.0, true, -1, -1, &g);
  self.to(DType::Float64);
  randomize(self, 36);
  Tensor x = testing::rand64({B, 5, 8}, 37);
  Vec xv = values(x);
  expect_vec_near(values(self(x)), MhaRef(self)(xv, xv, xv, B, kNoMask), 1e-11, "forward");
}

TEST(AttentionReferenceTest, ScoresAreScaledByInverseSqrtHeadDim) {
  // One head of width 4 with identity projections: weights are softmax(q.k / 2), by hand.
  MultiheadAttention mha(4, 1, 0.0, false);
  mha.to(DType::Float64);
  ASSERT_EQ(mha.parameters().size(), 4u);  // four [4, 4] weights, no biases
  for (auto& p : mha.parameters()) {
    double* d = static_cast<double*>(p.data_ptr());
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 4; ++j) d[i * 4 + j] = i == j ? 1.0 : 0.0;
  }
  Tensor q = from_vector(std::vector<double>{1, 2, 0, -1}, Shape{1, 1, 4});
  Tensor k = from_vector(std::vector<double>{1, 0, 0, 0, 0, 2, 0, 0}, Shape{1, 2, 4});  // q.k = 1 and 4
  auto r = mha.attend(q, k, k);
  const double s0 = 1.0 / 2.0, s1 = 4.0 / 2.0;  // divided by sqrt(head_dim) = 2
  const double w1 = std::exp(s1) / (std::exp(s0) + std::exp(s1));
  auto w = values(r.weights);
  EXPECT_NEAR(w[1], w1, 1e-14);
  EXPECT_NEAR(w[0], 1 - w1, 1e-14);
  // Output = w0 * k0 + w1 * k1 (identity value and output projections).
  expect_vec_near(values(r.output), {1 - w1, 2 * w1, 0, 0}, 1e-14, "output");
}

TEST(AttentionReferenceTest, MasksMatchNaiveFloat64) {
  Generator g(41);
  MultiheadAttention mha(8, 2, 0.0, true, -1, -1, &g);
  mha.to(DType::Float64);
  randomize(mha, 42);
  const int64_t B = 2, T = 5, H = 2;
  Tensor x = testing::rand64({B, T, 8}, 43), mem = testing::rand64({B, 4, 8}, 44);
  Vec xv = values(x), mv = values(mem);
  MhaRef ref(mha);
  auto check = [&](const char* what, const AttentionOutput& got, const Vec& want_out, const Vec& want_w) {
    SCOPED_TRACE(what);
    expect_vec_near(values(got.output), want_out, 1e-11, "output");
    expect_vec_near(values(got.weights), want_w, 1e-11, "weights");
  };
  Vec w;
  // Causal, additive float [T, T].
  Vec want = ref(xv, xv, xv, B, kCausal, &w);
  check("causal float", mha.attend(x, x, x, {}, causal_mask(T, DType::Float64)), want, w);
  // Key padding (bool [B, Tk]): batch 0 keeps all 4 memory keys, batch 1 only the first 2.
  Tensor pad = from_vector<bool>({false, false, false, false, false, false, true, true}, {2, 4});
  MaskFn pad_fn = [](int64_t b, int64_t, int64_t, int64_t j) { return b == 1 && j >= 2 ? kNegInf : 0.0; };
  want = ref(xv, mv, mv, B, pad_fn, &w);
  check("key padding", mha.attend(x, mem, mem, pad), want, w);
  // A per-batch, per-head bool mask [B, H, T, T] (true = blocked) with a float bias on top:
  // head 0 may not look at the key right after the query, head 1 not at key 0 (except query 0).
  std::vector<bool> blocked;
  std::vector<double> bias;
  auto blocked_at = [](int64_t b, int64_t h, int64_t i, int64_t j) {
    return h == 0 ? j == i + 1 : (j == 0 && i > 0 && b == 1);
  };
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j) blocked.push_back(blocked_at(b, h, i, j));
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) bias.push_back(0.25 * double(i - j));
  Tensor bmask = from_vector<bool>(blocked, {B, H, T, T});
  Tensor kpm = from_vector(std::vector<double>{0, 0, -1.5, 0, 0, 0, 0, 0, 0, 0.5}, Shape{B, T});  // float padding
  MaskFn all = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
    return (blocked_at(b, h, i, j) ? kNegInf : 0.0) + (b == 0 && j == 2 ? -1.5 : b == 1 && j == 4 ? 0.5 : 0.0);
  };
  want = ref(xv, xv, xv, B, all, &w);
  check("per-head bool mask + float key padding", mha.attend(x, x, x, kpm, bmask), want, w);
  // The same blocked pattern as a 3-D [B*H, T, T] mask, plus a 2-D float bias [T, T].
  MaskFn with_bias = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
    return (blocked_at(b, h, i, j) ? kNegInf : 0.0) + 0.25 * double(i - j);
  };
  want = ref(xv, xv, xv, B, with_bias, &w);
  Tensor m3 = where(reshape(bmask, {B * H, T, T}), kNegInf,
                    expand(reshape(from_vector(bias, Shape{T, T}), {1, T, T}), {B * H, T, T}));
  check("3-D additive mask", mha.attend(x, x, x, {}, m3), want, w);
}

TEST(AttentionReferenceTest, Float32MatchesNaiveWithinRounding) {
  Generator g(51);
  MultiheadAttention mha(16, 4, 0.0, true, -1, -1, &g);
  randomize(mha, 52);  // float32 parameters; the reference reads the same (rounded) values
  Generator gx(53);
  Tensor x = rand({3, 6, 16}, DType::Float32, &gx, -1.0, 1.0);
  Vec xv = values(x), w;
  Vec want = MhaRef(mha)(xv, xv, xv, 3, kCausal, &w);
  auto r = mha.attend(x, x, x, {}, causal_mask(6));
  expect_vec_near(values(r.output), want, 1e-5, "output");
  expect_vec_near(values(r.weights), w, 1e-5, "weights");
}

TEST(AttentionReferenceTest, KVCacheDecodingMatchesNaiveFullSequence) {
  Generator g(61);
  MultiheadAttention mha(8, 2, 0.0, true, -1, -1, &g);
  mha.to(DType::Float64);
  randomize(mha, 62);
  const int64_t B = 2, T = 6;
  Tensor x = testing::rand64({B, T, 8}, 63);
  Vec xv = values(x);
  Vec want = MhaRef(mha)(xv, xv, xv, B, kCausal);
  // One token at a time.
  KVCache cache;
  std::vector<Tensor> steps;
  for (int64_t t = 0; t < T; ++t) {
    Tensor xt = slice(x, 1, t, t + 1);
    steps.push_back(mha.attend(xt, xt, xt, {}, {}, &cache).output);
  }
  EXPECT_EQ(cache.length(), T);
  expect_vec_near(values(concat(steps, 1)), want, 1e-11, "one token per step");
  // Chunks of 2, 1 and 3 tokens; each chunk's mask spans the cache.
  KVCache c2;
  std::vector<Tensor> chunks;
  int64_t at = 0;
  for (int64_t n : {2, 1, 3}) {
    Tensor xs = slice(x, 1, at, at + n);
    Tensor m = slice(causal_mask(at + n, DType::Float64), 0, at, at + n);  // [n, at + n]
    chunks.push_back(mha.attend(xs, xs, xs, {}, m, &c2).output);
    at += n;
  }
  expect_vec_near(values(concat(chunks, 1)), want, 1e-11, "chunks");
}

// ---- Transformer layers ---------------------------------------------------------------------

TransformerLayerOptions layer_opts(bool norm_first, TransformerActivation act, Generator* g) {
  TransformerLayerOptions o;
  o.dim_feedforward = 10;
  o.dropout = 0.0;
  o.norm_first = norm_first;
  o.activation = act;
  o.layer_norm_eps = 1e-5;
  o.gen = g;
  return o;
}

TEST(AttentionReferenceTest, EncoderLayerMatchesNaiveFloat64) {
  for (bool nf : {false, true})
    for (auto act : {TransformerActivation::ReLU, TransformerActivation::GELU}) {
      SCOPED_TRACE(std::string(nf ? "pre-norm " : "post-norm ") + (act == TransformerActivation::GELU ? "gelu" : "relu"));
      Generator g(71);
      auto o = layer_opts(nf, act, &g);
      TransformerEncoderLayer layer(8, 2, o);
      layer.to(DType::Float64);
      randomize(layer, 72);
      layer.eval();
      const int64_t B = 2, T = 5;
      Tensor x = testing::rand64({B, T, 8}, 73);
      Vec xv = values(x);
      EncoderRef ref(layer, o);
      expect_vec_near(values(layer(x)), ref(xv, B, kNoMask), 1e-11, "no mask");
      // Causal self-attention with the last key of batch 1 padded.
      Tensor pad = from_vector<bool>({false, false, false, false, false, false, false, false, false, true}, {B, T});
      MaskFn m = [](int64_t b, int64_t, int64_t i, int64_t j) {
        return j > i || (b == 1 && j == 4) ? kNegInf : 0.0;
      };
      expect_vec_near(values(layer.forward(x, causal_mask(T, DType::Float64), pad)), ref(xv, B, m), 1e-11,
                      "causal + padding");
    }
}

TEST(AttentionReferenceTest, EncoderLayerFloat32MatchesNaiveWithinRounding) {
  Generator g(75);
  auto o = layer_opts(false, TransformerActivation::GELU, &g);
  TransformerEncoderLayer layer(16, 4, o);
  randomize(layer, 76);
  layer.eval();
  Generator gx(77);
  Tensor x = rand({2, 7, 16}, DType::Float32, &gx, -1.0, 1.0);
  expect_vec_near(values(layer(x)), EncoderRef(layer, o)(values(x), 2, kNoMask), 1e-5, "float32");
}

TEST(AttentionReferenceTest, DecoderLayerMatchesNaiveFloat64AndCachedDecoding) {
  for (bool nf : {false, true}) {
    SCOPED_TRACE(nf ? "pre-norm" : "post-norm");
    Generator g(81);
    auto o = layer_opts(nf, TransformerActivation::GELU, &g);
    TransformerDecoderLayer layer(8, 2, o);
    layer.to(DType::Float64);
    randomize(layer, 82);
    layer.eval();
    const int64_t B = 2, T = 5, S = 3;
    Tensor tgt = testing::rand64({B, T, 8}, 83), mem = testing::rand64({B, S, 8}, 84);
    Tensor mem_pad = from_vector<bool>({false, false, false, false, true, false}, {B, S});
    MaskFn mem_fn = [](int64_t b, int64_t, int64_t, int64_t j) { return b == 1 && j == 1 ? kNegInf : 0.0; };
    Vec want = DecoderRef(layer, o)(values(tgt), values(mem), B, kCausal, mem_fn);
    expect_vec_near(values(layer.forward(tgt, mem, causal_mask(T, DType::Float64), {}, {}, mem_pad)), want, 1e-11,
                    "full sequence");
    KVCache cache;
    std::vector<Tensor> steps;
    for (int64_t t = 0; t < T; ++t)
      steps.push_back(layer.forward(slice(tgt, 1, t, t + 1), mem, {}, {}, {}, mem_pad, &cache));
    expect_vec_near(values(concat(steps, 1)), want, 1e-11, "incremental with KV cache");
  }
}

}  // namespace
}  // namespace skiff::nn
