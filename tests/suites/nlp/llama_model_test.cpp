// The LLaMA decoder against an independent PyTorch implementation (the fixtures of
// tests/data/llama/, written by tests/tools/llama/make_fixture.py): logits of a batch
// with a left-padded row and greedy continuations. Then properties checked against the
// model itself: the KV cache, left padding, grouped-query head mapping, autograd.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "framework/autograd/engine.h"
#include "framework/io/safetensors.h"
#include "framework/ops/ops.h"
#include "suites/nlp/llama/generation.h"
#include "suites/nlp/llama/loader.h"

namespace skiff::nlp {
namespace {
namespace fs = std::filesystem;

const fs::path kData = fs::path(SKIFF_SOURCE_DIR) / "tests/data/llama";

std::vector<double> values(const Tensor& t) { return contiguous(to(t, DType::Float64)).to_vector<double>(); }

double max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  auto va = values(a), vb = values(b);
  double m = 0;
  for (size_t i = 0; i < va.size() && i < vb.size(); ++i) m = std::max(m, std::abs(va[i] - vb[i]));
  return m;
}

class LlamaParityTest : public ::testing::TestWithParam<const char*> {};

TEST_P(LlamaParityTest, LogitsAndGreedyMatchPyTorch) {
  std::string name = GetParam();
  auto model = load_llama(kData / name);
  io::TensorMap e = io::load_safetensors(kData / (name + "_expected.safetensors")).tensors;
  NoGradGuard no_grad;
  Tensor ids = e.at("input_ids"), mask = e.at("attention_mask"), want = e.at("logits");
  Tensor got = model->forward(ids, mask);
  ASSERT_EQ(got.shape(), want.shape());
  // Compare at real tokens only (row 1 starts with two pads whose logits mean nothing).
  int64_t b = want.size(0), t = want.size(1), v = want.size(2);
  auto m = mask.to_vector<int64_t>();
  auto g = values(got), w = values(want);
  double worst = 0;
  for (int64_t r = 0; r < b; ++r)
    for (int64_t i = 0; i < t; ++i)
      if (m[size_t(r * t + i)])
        for (int64_t j = 0; j < v; ++j) {
          size_t k = size_t((r * t + i) * v + j);
          worst = std::max(worst, std::abs(g[k] - w[k]));
        }
  std::cout << name << ": max |logits - torch| = " << worst << "\n";
  EXPECT_LT(worst, 1e-4);

  std::vector<int64_t> prompt = e.at("greedy_prompt").to_vector<int64_t>();
  GenerationConfig cfg;
  cfg.max_new_tokens = e.at("greedy_ids").numel();
  GenerationOutput out = generate(*model, {prompt}, cfg);
  EXPECT_EQ(out.tokens[0], e.at("greedy_ids").to_vector<int64_t>());
  EXPECT_EQ(out.reasons[0], StopReason::Length);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LlamaParityTest, ::testing::Values("tiny", "tiny_sharded", "tiny_linear"));

TEST(LlamaModelTest, ParameterNamesAreHuggingFaces) {
  auto model = load_llama(kData / "tiny");
  auto sd = model->state_dict();
  for (const char* k : {"model.embed_tokens.weight", "model.layers.0.input_layernorm.weight",
                        "model.layers.0.self_attn.q_proj.weight", "model.layers.1.self_attn.k_proj.weight",
                        "model.layers.1.self_attn.v_proj.weight", "model.layers.1.self_attn.o_proj.weight",
                        "model.layers.0.post_attention_layernorm.weight", "model.layers.0.mlp.gate_proj.weight",
                        "model.layers.0.mlp.up_proj.weight", "model.layers.0.mlp.down_proj.weight",
                        "model.norm.weight", "lm_head.weight"})
    EXPECT_TRUE(sd.count(k)) << k;
  EXPECT_EQ(sd.size(), 2u * 9 + 3);
  EXPECT_EQ(sd.at("model.layers.0.self_attn.k_proj.weight").shape(), (Shape{16, 32}));  // 2 kv heads x 8
  auto tied = load_llama(kData / "tiny_sharded");
  EXPECT_EQ(tied->lm_head, nullptr);
  EXPECT_FALSE(tied->state_dict().count("lm_head.weight"));
}

// Feeding the sequence in pieces through the cache gives the full forward's logits.
TEST(LlamaModelTest, KVCacheMatchesFullForward) {
  for (const char* name : {"tiny", "tiny_sharded"}) {
    auto model = load_llama(kData / name);
    NoGradGuard no_grad;
    Generator gen(3);
    int64_t v = model->config().vocab_size;
    Tensor ids = randint(0, v, {2, 9}, DType::Int64, &gen);
    Tensor full = model->forward(ids);
    LlamaCache cache;
    std::vector<Tensor> parts{model->forward(narrow(ids, 1, 0, 4), Tensor(), &cache)};
    for (int64_t i = 4; i < 9; ++i) parts.push_back(model->forward(narrow(ids, 1, i, 1), Tensor(), &cache));
    EXPECT_EQ(cache.length(), 9);
    double d = max_abs_diff(concat(parts, 1), full);
    std::cout << name << ": max |cached - full| = " << d << "\n";
    EXPECT_LT(d, 1e-5) << name;

    // The same with a left-padded row and its mask.
    std::vector<int64_t> mv(18, 1);
    mv[9] = mv[10] = mv[11] = 0;
    Tensor mask = from_vector(mv, {2, 9});
    Tensor full_m = model->forward(ids, mask);
    cache.reset();
    parts = {model->forward(narrow(ids, 1, 0, 5), narrow(mask, 1, 0, 5), &cache)};
    for (int64_t i = 5; i < 9; ++i) parts.push_back(model->forward(narrow(ids, 1, i, 1), narrow(mask, 1, 0, i + 1), &cache));
    EXPECT_LT(max_abs_diff(narrow(concat(parts, 1), 1, 3, 6), narrow(full_m, 1, 3, 6)), 1e-5) << name;
    // A left-padded row equals the same row alone at its real tokens.
    Tensor alone = model->forward(narrow(narrow(ids, 0, 1, 1), 1, 3, 6));
    EXPECT_LT(max_abs_diff(narrow(narrow(full_m, 0, 1, 1), 1, 3, 6), alone), 1e-5) << name;
    EXPECT_THROW(model->forward(ids, narrow(mask, 1, 0, 8)), ShapeError);
  }
}

// Positions count real tokens only (HF generate's cumsum(mask) - 1, pads at 1), and the
// additive mask hides pads and the future. RoPE makes logits invariant to a common shift
// of positions, so these are checked directly.
TEST(LlamaModelTest, PositionsAndMaskFromAttentionMask) {
  Tensor mask = from_vector<int64_t>({0, 0, 1, 1, 1, 1, 1, 1, 1, 1}, {2, 5});
  EXPECT_EQ(llama_positions(2, 5, 0, mask).to_vector<int64_t>(),
            (std::vector<int64_t>{1, 1, 0, 1, 2, 0, 1, 2, 3, 4}));
  EXPECT_EQ(llama_positions(2, 2, 3, mask).to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(llama_positions(1, 3, 4, Tensor()).to_vector<int64_t>(), (std::vector<int64_t>{4, 5, 6}));
  // Two new queries after three cached steps, row 0 with two pads: [B, 1, 1, T, S].
  Tensor bias = llama_attention_bias(2, 3, mask);
  ASSERT_EQ(bias.shape(), (Shape{2, 1, 1, 2, 5}));
  std::vector<float> v = bias.to_vector<float>();
  std::vector<int> allowed;
  for (float x : v) allowed.push_back(x == 0.0f);
  EXPECT_EQ(allowed, (std::vector<int>{0, 0, 1, 1, 0, 0, 0, 1, 1, 1,    // row 0: pads hidden, query 0 not the future
                                       1, 1, 1, 1, 0, 1, 1, 1, 1, 1}));  // row 1
  for (float x : v) EXPECT_TRUE(std::isfinite(x));
}

// Query head h reads K/V head h / (H / KV) (HF's repeat_kv): the GQA model equals a
// plain multi-head model whose K/V projections repeat each K/V head for its group.
TEST(LlamaModelTest, GroupedQueryHeadsShareKVHeadsInBlocks) {
  auto gqa = load_llama(kData / "tiny");  // 4 heads, 2 kv heads, head_dim 8
  LlamaConfig c = gqa->config();
  ASSERT_EQ(c.num_attention_heads, 4);
  ASSERT_EQ(c.num_key_value_heads, 2);
  c.num_key_value_heads = 4;
  LlamaForCausalLM mha(c);
  std::map<std::string, Tensor> sd = gqa->state_dict();
  for (auto& [k, t] : sd) {
    if (k.find("k_proj") == std::string::npos && k.find("v_proj") == std::string::npos) continue;
    // rows [kv0, kv1] (8 each) -> [kv0, kv0, kv1, kv1]
    auto rows = split(t, 8, 0);
    t = concat({rows[0], rows[0], rows[1], rows[1]}, 0);
  }
  mha.load_state_dict(sd);
  NoGradGuard no_grad;
  Tensor ids = from_vector<int64_t>({5, 100, 7, 42, 250, 3}, {1, 6});
  EXPECT_LT(max_abs_diff(mha.forward(ids), gqa->forward(ids)), 1e-5);
}

TEST(LlamaModelTest, BackwardReachesEveryParameter) {
  auto model = load_llama(kData / "tiny_linear");
  model->train();
  Tensor ids = from_vector<int64_t>({1, 2, 3, 4, 5}, {1, 5});
  Tensor logits = model->forward(ids);
  Tensor loss = cross_entropy(reshape(narrow(logits, 1, 0, 4), {4, 96}), from_vector<int64_t>({2, 3, 4, 5}));
  backward(loss);
  for (const auto& [name, p] : model->named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    double norm = 0;
    for (double x : values(p.grad())) norm += x * x;
    EXPECT_GT(norm, 0) << name;
  }
}

TEST(LlamaModelTest, RejectsBadInput) {
  auto model = load_llama(kData / "tiny_linear");
  EXPECT_THROW(model->forward(from_vector<int64_t>({1, 2, 3}, {3})), ShapeError);
  EXPECT_THROW(model->forward(from_vector<int64_t>({1, 200}, {1, 2})), IndexError);
}

}  // namespace
}  // namespace skiff::nlp
