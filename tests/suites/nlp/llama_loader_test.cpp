// Reading config.json and the weights: defaults, every rope_scaling form, and the
// errors a user meets (missing key, missing tensor, shape mismatch, unexpected
// tensors, a shard missing), each naming the file and the key or tensor.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "framework/io/safetensors.h"
#include "framework/ops/ops.h"
#include "suites/nlp/llama/loader.h"

namespace skiff::nlp {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kData = fs::path(SKIFF_SOURCE_DIR) / "tests/data/llama";

json minimal() {
  return {{"model_type", "llama"}, {"vocab_size", 10},       {"hidden_size", 8},
          {"intermediate_size", 16}, {"num_hidden_layers", 1}, {"num_attention_heads", 2}};
}

// Message of the error `fn` throws (as type E), or "" if it throws nothing.
template <class E, class F>
std::string error_of(F fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

// A scratch copy of a fixture directory.
fs::path scratch(const std::string& fixture) {
  fs::path d = fs::temp_directory_path() / ("skiff_llama_" + fixture + "_" + std::to_string(::getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(d);
  fs::copy(kData / fixture, d, fs::copy_options::recursive);
  return d;
}

TEST(LlamaConfigTest, DefaultsAndOptionalKeys) {
  LlamaConfig c = LlamaConfig::from_json(minimal());
  EXPECT_EQ(c.num_key_value_heads, 2);
  EXPECT_EQ(c.head_dim, 4);
  EXPECT_DOUBLE_EQ(c.rope_theta, 10000.0);
  EXPECT_EQ(c.rope_scaling.type, nn::RopeScaling::Type::None);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_TRUE(c.eos_token_ids.empty());

  json j = minimal();
  j["num_key_value_heads"] = 1;
  j["head_dim"] = 6;
  j["eos_token_id"] = {128001, 128009};
  j["bos_token_id"] = 128000;
  j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0},
                       {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 8192}};
  c = LlamaConfig::from_json(j);
  EXPECT_EQ(c.num_key_value_heads, 1);
  EXPECT_EQ(c.head_dim, 6);
  EXPECT_EQ(c.eos_token_ids, (std::vector<int64_t>{128001, 128009}));
  EXPECT_EQ(c.bos_token_ids, (std::vector<int64_t>{128000}));
  EXPECT_EQ(c.rope_scaling.type, nn::RopeScaling::Type::Llama3);
  EXPECT_EQ(c.rope_scaling.original_max_position_embeddings, 8192);
  j["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
  EXPECT_EQ(LlamaConfig::from_json(j).rope_scaling.type, nn::RopeScaling::Type::Linear);
  j["rope_scaling"] = {{"type", "dynamic"}, {"factor", 2.0}};
  EXPECT_EQ(LlamaConfig::from_json(j).rope_scaling.type, nn::RopeScaling::Type::Dynamic);
}

TEST(LlamaConfigTest, ErrorsNameTheFileAndKey) {
  for (const char* key : {"hidden_size", "vocab_size", "num_attention_heads", "intermediate_size"}) {
    json j = minimal();
    j.erase(key);
    std::string msg = error_of<ConfigError>([&] { LlamaConfig::from_json(j, "dir/config.json"); });
    EXPECT_NE(msg.find("dir/config.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::string("'") + key + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("missing"), std::string::npos) << msg;
  }
  json j = minimal();
  j["model_type"] = "gpt2";
  EXPECT_NE(error_of<ConfigError>([&] { LlamaConfig::from_json(j); }).find("'model_type'"), std::string::npos);
  j = minimal();
  j["hidden_act"] = "gelu";
  EXPECT_NE(error_of<ConfigError>([&] { LlamaConfig::from_json(j); }).find("'hidden_act'"), std::string::npos);
  j = minimal();
  j["num_key_value_heads"] = 3;
  EXPECT_NE(error_of<ConfigError>([&] { LlamaConfig::from_json(j); }).find("'num_key_value_heads'"), std::string::npos);
  j = minimal();
  j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 2.0}};
  EXPECT_NE(error_of<ConfigError>([&] { LlamaConfig::from_json(j); }).find("yarn"), std::string::npos);
  j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 2.0}};
  EXPECT_NE(error_of<ConfigError>([&] { LlamaConfig::from_json(j); }).find("low_freq_factor"), std::string::npos);
  j = minimal();
  j["hidden_size"] = "8";
  EXPECT_NE(error_of<ConfigError>([&] { LlamaConfig::from_json(j); }).find("expected an integer"), std::string::npos);
  j = minimal();
  j["eos_token_id"] = "x";
  EXPECT_NE(error_of<ConfigError>([&] { LlamaConfig::from_json(j); }).find("'eos_token_id'"), std::string::npos);
}

TEST(LlamaLoaderTest, MissingConfigKeyInADirectory) {
  fs::path d = scratch("tiny_linear");
  json j = json::parse(std::ifstream(d / "config.json"));
  j.erase("num_hidden_layers");
  std::ofstream(d / "config.json") << j.dump();
  std::string msg = error_of<ConfigError>([&] { load_llama(d); });
  EXPECT_NE(msg.find((d / "config.json").string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("'num_hidden_layers'"), std::string::npos) << msg;
  fs::remove(d / "config.json");
  EXPECT_THROW(load_llama(d), IoError);
  fs::remove_all(d);
}

TEST(LlamaLoaderTest, MissingTensorNamesTensorAndFile) {
  fs::path d = scratch("tiny_linear");
  io::TensorMap t = io::load_safetensors(d / "model.safetensors", {false}).tensors;
  t.erase("model.layers.0.mlp.up_proj.bias");
  io::save_safetensors(d / "model.safetensors", t);
  std::string msg = error_of<ValueError>([&] { load_llama(d); });
  EXPECT_NE(msg.find("'model.layers.0.mlp.up_proj.bias'"), std::string::npos) << msg;
  EXPECT_NE(msg.find((d / "model.safetensors").string()), std::string::npos) << msg;
  fs::remove_all(d);
}

TEST(LlamaLoaderTest, ShapeMismatchNamesTensorFileAndShapes) {
  fs::path d = scratch("tiny_linear");
  io::TensorMap t = io::load_safetensors(d / "model.safetensors", {false}).tensors;
  t["model.norm.weight"] = zeros({15});
  io::save_safetensors(d / "model.safetensors", t);
  std::string msg = error_of<ShapeError>([&] { load_llama(d); });
  EXPECT_NE(msg.find("'model.norm.weight'"), std::string::npos) << msg;
  EXPECT_NE(msg.find((d / "model.safetensors").string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected shape [16], got [15]"), std::string::npos) << msg;
  fs::remove_all(d);
}

TEST(LlamaLoaderTest, UnexpectedTensorsAreAnErrorUnlessAllowed) {
  fs::path d = scratch("tiny_linear");
  io::TensorMap t = io::load_safetensors(d / "model.safetensors", {false}).tensors;
  t["model.layers.5.mlp.up_proj.weight"] = zeros({2});
  t["model.layers.0.self_attn.rotary_emb.inv_freq"] = zeros({6});  // old HF leftover: skipped
  io::save_safetensors(d / "model.safetensors", t);
  std::string msg = error_of<ValueError>([&] { load_llama(d); });
  EXPECT_NE(msg.find("unexpected"), std::string::npos) << msg;
  EXPECT_NE(msg.find("model.layers.5.mlp.up_proj.weight"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("inv_freq"), std::string::npos) << msg;
  EXPECT_NO_THROW(load_llama(d, LlamaLoadOptions{.allow_unexpected = true}));
  fs::remove_all(d);
}

TEST(LlamaLoaderTest, ShardedErrorsNameTheShard) {
  fs::path d = scratch("tiny_sharded");
  // A tensor the index places in shard 2, removed from shard 2.
  json index = json::parse(std::ifstream(d / "model.safetensors.index.json"));
  std::string name = "model.norm.weight", shard = index["weight_map"][name];
  io::TensorMap t = io::load_safetensors(d / shard, {false}).tensors;
  ASSERT_TRUE(t.erase(name));
  io::save_safetensors(d / shard, t);
  std::string msg = error_of<ValueError>([&] { load_llama(d); });
  EXPECT_NE(msg.find("'model.norm.weight'"), std::string::npos) << msg;
  EXPECT_NE(msg.find((d / shard).string()), std::string::npos) << msg;
  fs::remove(d / shard);
  msg = error_of<IoError>([&] { load_llama(d); });
  EXPECT_NE(msg.find(shard), std::string::npos) << msg;
  fs::remove(d / "model.safetensors.index.json");
  msg = error_of<IoError>([&] { load_llama(d); });
  EXPECT_NE(msg.find("neither model.safetensors"), std::string::npos) << msg;
  fs::remove_all(d);
}

TEST(LlamaLoaderTest, ConvertsHalfPrecisionToFloat32) {
  auto bf16 = load_llama(kData / "tiny");          // BF16 file
  auto f16 = load_llama(kData / "tiny_sharded");   // F16 shards
  for (auto* m : {bf16.get(), f16.get()})
    for (const auto& [name, p] : m->named_parameters()) EXPECT_EQ(p.dtype(), DType::Float32) << name;
  // The stored BF16 value, widened exactly.
  io::TensorMap raw = io::load_safetensors(kData / "tiny/model.safetensors").tensors;
  Tensor w = raw.at("model.norm.weight");
  ASSERT_EQ(w.dtype(), DType::BFloat16);
  EXPECT_EQ(to(w, DType::Float32).to_vector<float>(), bf16->model->norm->weight.to_vector<float>());
}

}  // namespace
}  // namespace skiff::nlp
