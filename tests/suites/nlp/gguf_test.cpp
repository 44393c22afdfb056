// GGUF export (suites/nlp/llama/gguf.h): the writer and reader round-trip every value
// type and keep tensor offsets aligned; the tiny fixture exported as F32 and F16 reads
// back with llama.cpp's metadata keys, tensor names, ggml dim order and the HF values
// (q/k after undoing the rope permutation); the permutation turns HF's rotate_half rope
// into GGML's interleaved one; bad inputs give errors naming them.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/io/file.h"
#include "framework/text/sentencepiece_tokenizer.h"
#include "framework/io/safetensors.h"
#include "framework/text/bpe_tokenizer.h"
#include "suites/nlp/llama/gguf.h"

namespace skiff::nlp {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kData = fs::path(SKIFF_SOURCE_DIR) / "tests/data/llama";

fs::path scratch_dir() {
  fs::path d = fs::temp_directory_path() / ("skiff_gguf_" + std::to_string(::getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

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

TEST(GgufWriterTest, RoundTripsEveryValueTypeAndAlignsTensors) {
  GgufWriter w;
  std::vector<std::pair<std::string, GgufValue>> kv;
  GgufValue v;
  v.type = GgufType::Uint8; v.i = 200; kv.emplace_back("t.u8", v);
  v.type = GgufType::Int8; v.i = -100; kv.emplace_back("t.i8", v);
  v.type = GgufType::Uint16; v.i = 60000; kv.emplace_back("t.u16", v);
  v.type = GgufType::Int16; v.i = -30000; kv.emplace_back("t.i16", v);
  kv.emplace_back("t.u32", GgufValue::u32(4000000000u));
  kv.emplace_back("t.i32", GgufValue::i32(-2000000000));
  kv.emplace_back("t.u64", GgufValue::u64(1ull << 40));
  v.type = GgufType::Int64; v.i = -(1ll << 40); kv.emplace_back("t.i64", v);
  kv.emplace_back("t.f32", GgufValue::f32(1e-5f));
  v = GgufValue(); v.type = GgufType::Float64; v.f = 0.1; kv.emplace_back("t.f64", v);
  kv.emplace_back("t.bool", GgufValue::boolean(true));
  kv.emplace_back("t.str", GgufValue::str("h\xc3\xa9llo"));
  kv.emplace_back("t.strs", GgufValue::strings({"a", "", "Ġb c"}));
  kv.emplace_back("t.ints", GgufValue::int32s({1, -2, 3}));
  kv.emplace_back("t.floats", GgufValue::float32s({0.5f, -1.25f}));
  kv.emplace_back("t.empty", GgufValue::strings({}));
  for (const auto& [k, x] : kv) w.add(k, x);
  // Sizes that are not multiples of 32 bytes, so the offsets need padding.
  w.add_tensor({"a", {3, 5}, GgufTensorType::F32, std::vector<float>(15, 1.5f)});
  w.add_tensor({"b", {7}, GgufTensorType::F16, {1, 2, 3, 4, 5, 6, 0.333f}});
  w.add_tensor({"c", {2, 3, 4}, GgufTensorType::F32, std::vector<float>(24, -2.f)});
  fs::path p = scratch_dir() / "x.gguf";
  w.write(p);

  GgufFile f = GgufFile::read(p);
  EXPECT_EQ(f.bytes.substr(0, 4), "GGUF");
  EXPECT_EQ(f.version, 3u);
  EXPECT_EQ(f.alignment, 32u);
  ASSERT_EQ(f.metadata.size(), kv.size());
  for (size_t i = 0; i < kv.size(); ++i) {
    EXPECT_EQ(f.metadata[i].first, kv[i].first);
    EXPECT_TRUE(f.metadata[i].second == kv[i].second) << kv[i].first;
  }
  EXPECT_EQ(f.get("t.u64").i, int64_t(1ull << 40));
  EXPECT_FLOAT_EQ(float(f.get("t.f32").f), 1e-5f);
  ASSERT_EQ(f.tensors.size(), 3u);
  EXPECT_EQ(f.tensors[0].dims, (std::vector<uint64_t>{5, 3}));  // ggml order: reversed
  EXPECT_EQ(f.tensors[2].dims, (std::vector<uint64_t>{4, 3, 2}));
  EXPECT_EQ(f.tensors[2].shape(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(f.tensors[1].type, GgufTensorType::F16);
  EXPECT_EQ(f.data_offset % 32, 0u);
  EXPECT_EQ(f.tensors[0].offset, 0u);
  EXPECT_EQ(f.tensors[1].offset, 64u);   // 60 bytes -> 64
  EXPECT_EQ(f.tensors[2].offset, 96u);   // 64 + 14 bytes -> 96
  EXPECT_EQ(f.bytes.size(), f.data_offset + 96 + 96);
  EXPECT_EQ(f.tensor_values("a"), std::vector<float>(15, 1.5f));
  EXPECT_EQ(f.tensor_values("c"), std::vector<float>(24, -2.f));
  std::vector<float> b = f.tensor_values("b");
  EXPECT_EQ(b[5], 6.f);
  EXPECT_NEAR(b[6], 0.333f, 0.333f / 1024);
}

TEST(GgufWriterTest, OtherAlignmentIsWrittenAndUsed) {
  GgufWriter w;
  w.add("k", GgufValue::u32(1));
  w.add_tensor({"a", {3}, GgufTensorType::F32, {1, 2, 3}});
  w.add_tensor({"b", {2}, GgufTensorType::F32, {4, 5}});
  fs::path p = scratch_dir() / "x.gguf";
  w.write(p, 64);
  GgufFile f = GgufFile::read(p);
  EXPECT_EQ(f.get("general.alignment").i, 64);
  EXPECT_EQ(f.alignment, 64u);
  EXPECT_EQ(f.data_offset % 64, 0u);
  EXPECT_EQ(f.tensor("b").offset, 64u);
  EXPECT_EQ(f.tensor_values("b"), (std::vector<float>{4, 5}));
}

TEST(GgufWriterTest, DuplicatesAndBadShapesAreRefused) {
  GgufWriter w;
  w.add("k", GgufValue::u32(1));
  EXPECT_NE(error_of<ValueError>([&] { w.add("k", GgufValue::u32(2)); }).find("duplicate metadata key 'k'"),
            std::string::npos);
  EXPECT_NE(error_of<ValueError>([&] { w.add_tensor({"t", {2, 2}, GgufTensorType::F32, {1, 2, 3}}); }).find("'t'"),
            std::string::npos);
}

TEST(GgufReaderTest, BadMagicAndTruncationNameTheFile) {
  fs::path d = scratch_dir();
  io::write_file_atomic(d / "bad.gguf", "GGML\x03\0\0\0");
  EXPECT_NE(error_of<ValueError>([&] { GgufFile::read(d / "bad.gguf"); }).find("bad.gguf is not a GGUF file"),
            std::string::npos);
  GgufWriter w;
  w.add("k", GgufValue::str("value"));
  w.add_tensor({"a", {8}, GgufTensorType::F32, std::vector<float>(8, 1.f)});
  w.write(d / "ok.gguf");
  std::string bytes = io::read_file(d / "ok.gguf");
  io::write_file_atomic(d / "cut.gguf", bytes.substr(0, 30));
  EXPECT_NE(error_of<ValueError>([&] { GgufFile::read(d / "cut.gguf"); }).find("cut.gguf is truncated"),
            std::string::npos);
  io::write_file_atomic(d / "short.gguf", bytes.substr(0, bytes.size() - 4));
  EXPECT_NE(error_of<ValueError>([&] { GgufFile::read(d / "short.gguf"); }).find("runs past the end"),
            std::string::npos);
}

TEST(GgufPermuteTest, ConverterLayoutAndInverse) {
  // One head of size 4 (cols 1): HF rows [x0 x1 | x2 x3] become GGML's pairs (x0 x2)(x1 x3).
  EXPECT_EQ(gguf_permute_qk({0, 1, 2, 3}, 4, 1, 1), (std::vector<float>{0, 2, 1, 3}));
  // Two heads of size 4, two columns.
  std::vector<float> w(16);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(i);
  EXPECT_EQ(gguf_permute_qk(w, 8, 2, 2),
            (std::vector<float>{0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15}));
  EXPECT_EQ(gguf_unpermute_qk(gguf_permute_qk(w, 8, 2, 2), 8, 2, 2), w);
  EXPECT_EQ(gguf_unpermute_qk(gguf_permute_qk(w, 8, 2, 1), 8, 2, 1), w);
  EXPECT_THROW(gguf_permute_qk(w, 8, 2, 3), ValueError);
}

// HF's rope (rotate_half) on a head equals, after the permutation, GGML's normal rope
// (adjacent pairs): so q.k scores in llama.cpp equal the HF model's.
TEST(GgufPermuteTest, RotateHalfRopeEqualsInterleavedRopeAfterPermutation) {
  const int64_t d = 8, heads = 2;
  const double theta = 10000.0;
  std::vector<float> x(heads * d);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(std::sin(1.7 * double(i) + 0.3));
  for (int pos : {0, 1, 5, 37}) {
    std::vector<float> hf(x.size()), ggml_in = gguf_permute_qk(x, heads * d, 1, heads), ggml(x.size());
    for (int64_t h = 0; h < heads; ++h) {
      const float* a = x.data() + h * d;
      const float* g = ggml_in.data() + h * d;
      for (int64_t j = 0; j < d / 2; ++j) {
        double ang = pos * std::pow(theta, -2.0 * double(j) / double(d));
        float c = float(std::cos(ang)), s = float(std::sin(ang));
        // rotate_half: (x_j, x_{j+D/2}) rotated together
        hf[h * d + j] = a[j] * c - a[j + d / 2] * s;
        hf[h * d + j + d / 2] = a[j + d / 2] * c + a[j] * s;
        // GGML normal rope: (x_{2j}, x_{2j+1}) rotated together
        ggml[h * d + 2 * j] = g[2 * j] * c - g[2 * j + 1] * s;
        ggml[h * d + 2 * j + 1] = g[2 * j + 1] * c + g[2 * j] * s;
      }
    }
    EXPECT_EQ(gguf_permute_qk(hf, heads * d, 1, heads), ggml) << "position " << pos;
  }
}

// The expected llama.cpp metadata of tests/data/llama/tiny.
std::map<std::string, GgufValue> expected_tiny_metadata(uint32_t file_type) {
  json tj = json::parse(io::read_file(kData / "tiny/tokenizer.json"));
  text::BpeTokenizer tok = text::BpeTokenizer::from_tokenizer_json(kData / "tiny/tokenizer.json");
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  for (int32_t i = 0; i < 272; ++i) {
    tokens.push_back(tok.id_to_token(i));
    types.push_back(i >= 270 ? 3 : 1);  // <s>, </s> are special added tokens: CONTROL
  }
  std::vector<std::string> merges = tj["model"]["merges"].get<std::vector<std::string>>();
  return {
      {"general.architecture", GgufValue::str("llama")},
      {"general.name", GgufValue::str("tiny")},
      {"general.file_type", GgufValue::u32(file_type)},
      {"llama.context_length", GgufValue::u32(64)},
      {"llama.embedding_length", GgufValue::u32(32)},
      {"llama.block_count", GgufValue::u32(2)},
      {"llama.feed_forward_length", GgufValue::u32(48)},
      {"llama.attention.head_count", GgufValue::u32(4)},
      {"llama.attention.head_count_kv", GgufValue::u32(2)},
      {"llama.attention.layer_norm_rms_epsilon", GgufValue::f32(1e-5f)},
      {"llama.rope.freq_base", GgufValue::f32(10000.f)},
      {"llama.rope.dimension_count", GgufValue::u32(8)},
      {"llama.vocab_size", GgufValue::u32(272)},
      {"tokenizer.ggml.model", GgufValue::str("gpt2")},
      {"tokenizer.ggml.pre", GgufValue::str("gpt-2")},
      {"tokenizer.ggml.tokens", GgufValue::strings(tokens)},
      {"tokenizer.ggml.token_type", GgufValue::int32s(types)},
      {"tokenizer.ggml.merges", GgufValue::strings(merges)},
      {"tokenizer.ggml.bos_token_id", GgufValue::u32(270)},
      {"tokenizer.ggml.eos_token_id", GgufValue::u32(271)},
      {"tokenizer.ggml.add_bos_token", GgufValue::boolean(true)},
      {"tokenizer.ggml.add_eos_token", GgufValue::boolean(false)},
      // llama.cpp's key for the chat template (tokenizer_config.json's, as written there)
      {"tokenizer.chat_template",
       GgufValue::str(json::parse(io::read_file(kData / "tiny/tokenizer_config.json"))["chat_template"].get<std::string>())},
  };
}

// HF name -> llama.cpp name for the tiny fixture (2 layers, untied head).
std::map<std::string, std::string> tiny_names() {
  std::map<std::string, std::string> m = {{"model.embed_tokens.weight", "token_embd.weight"},
                                          {"model.norm.weight", "output_norm.weight"},
                                          {"lm_head.weight", "output.weight"}};
  for (int l = 0; l < 2; ++l) {
    std::string hf = "model.layers." + std::to_string(l) + ".", g = "blk." + std::to_string(l) + ".";
    m[hf + "input_layernorm.weight"] = g + "attn_norm.weight";
    m[hf + "self_attn.q_proj.weight"] = g + "attn_q.weight";
    m[hf + "self_attn.k_proj.weight"] = g + "attn_k.weight";
    m[hf + "self_attn.v_proj.weight"] = g + "attn_v.weight";
    m[hf + "self_attn.o_proj.weight"] = g + "attn_output.weight";
    m[hf + "post_attention_layernorm.weight"] = g + "ffn_norm.weight";
    m[hf + "mlp.gate_proj.weight"] = g + "ffn_gate.weight";
    m[hf + "mlp.up_proj.weight"] = g + "ffn_up.weight";
    m[hf + "mlp.down_proj.weight"] = g + "ffn_down.weight";
  }
  return m;
}

void check_tiny_export(GgufTensorType dtype) {
  fs::path out = scratch_dir() / "tiny.gguf";
  GgufExportOptions opt;
  opt.dtype = dtype;
  GgufExportSummary s = export_llama_gguf(kData / "tiny", out, opt);
  GgufFile f = GgufFile::read(out);
  EXPECT_EQ(s.bytes, f.bytes.size());
  EXPECT_EQ(f.version, 3u);

  auto expected = expected_tiny_metadata(dtype == GgufTensorType::F32 ? 0 : 1);
  std::set<std::string> keys;
  for (const auto& [k, v] : f.metadata) {
    keys.insert(k);
    auto it = expected.find(k);
    if (it == expected.end()) {
      ADD_FAILURE() << "unexpected key " << k;
      continue;
    }
    EXPECT_TRUE(v == it->second) << k;
  }
  for (const auto& [k, v] : expected) EXPECT_TRUE(keys.count(k)) << "missing key " << k;

  io::SafetensorsFile hf = io::load_safetensors(kData / "tiny/model.safetensors");
  auto names = tiny_names();
  ASSERT_EQ(f.tensors.size(), names.size());
  EXPECT_EQ(f.tensors.front().name, "token_embd.weight");
  EXPECT_EQ(f.data_offset % 32, 0u);
  for (const auto& [hf_name, g_name] : names) {
    SCOPED_TRACE(g_name);
    EXPECT_EQ(gguf_llama_tensor_name(hf_name), g_name);
    const GgufTensorInfo& ti = f.tensor(g_name);
    EXPECT_EQ(ti.offset % 32, 0u);
    const Tensor& t = hf.tensors.at(hf_name);
    std::vector<uint64_t> dims(t.shape().begin(), t.shape().end());
    std::reverse(dims.begin(), dims.end());
    EXPECT_EQ(ti.dims, dims);
    EXPECT_EQ(ti.type, t.dim() == 1 ? GgufTensorType::F32 : dtype);
    std::vector<float> want = t.to_vector<float>(), got = f.tensor_values(g_name);
    bool q = hf_name.find("q_proj") != std::string::npos, k = hf_name.find("k_proj") != std::string::npos;
    if (q || k) {
      EXPECT_NE(got, want) << "q/k are stored permuted";
      got = gguf_unpermute_qk(got, t.size(0), t.size(1), q ? 4 : 2);
    }
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      if (ti.type == GgufTensorType::F32) {
        ASSERT_EQ(got[i], want[i]) << i;
      } else {
        ASSERT_NEAR(got[i], want[i], std::abs(want[i]) / 2048 + 6e-8f) << i;  // half: 11-bit significand
      }
    }
  }
}

TEST(GgufExportTest, TinyF32) { check_tiny_export(GgufTensorType::F32); }
TEST(GgufExportTest, TinyF16) { check_tiny_export(GgufTensorType::F16); }

TEST(GgufExportTest, LinearRopeScalingKeys) {
  // tiny with rope_scaling {"type": "linear", "factor": 2} (tests/data/llama/tiny_linear has no tokenizer).
  fs::path d = scratch_dir(), model = d / "tiny_linear";
  fs::copy(kData / "tiny", model, fs::copy_options::recursive);
  json cfg = json::parse(io::read_file(model / "config.json"));
  cfg["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
  io::write_file_atomic(model / "config.json", cfg.dump());
  export_llama_gguf(model, d / "linear.gguf");
  GgufFile f = GgufFile::read(d / "linear.gguf");
  EXPECT_EQ(f.get("llama.rope.scaling.type").s, "linear");
  EXPECT_EQ(f.get("llama.rope.scaling.factor").f, 2.0);
  EXPECT_EQ(f.get("general.name").s, "tiny_linear");
  // Scaling llama.cpp cannot read from these keys is refused.
  cfg["rope_scaling"] = {{"type", "dynamic"}, {"factor", 2.0}};
  io::write_file_atomic(model / "config.json", cfg.dump());
  EXPECT_NE(error_of<NotImplementedError>([&] { export_llama_gguf(model, d / "dyn.gguf"); }).find("dynamic"),
            std::string::npos);
}

TEST(GgufExportTest, SentencePieceTokenizerModel) {
  // tiny's weights with a SentencePiece BPE tokenizer.model (byte fallback), as the
  // causal_lm recipes write: llama.cpp's "llama" tokenizer with scores and piece types.
  fs::path d = scratch_dir(), model = d / "spm";
  fs::create_directories(model);
  fs::copy(kData / "tiny/model.safetensors", model / "model.safetensors");
  json cfg = json::parse(io::read_file(kData / "tiny/config.json"));
  cfg["bos_token_id"] = 1;
  cfg["eos_token_id"] = 2;
  io::write_file_atomic(model / "config.json", cfg.dump());
  std::string words;
  for (int i = 0; i < 300; ++i) words += (i % 3 ? "hello world held\n" : "low row word old hero\n");
  io::write_file_atomic(d / "words.txt", words);
  text::train_sentencepiece({.inputs = {d / "words.txt"}, .output = model / "tokenizer.model", .vocab_size = 272,
                             .model_type = "bpe", .byte_fallback = true, .normalization = "identity",
                             .remove_extra_whitespaces = false});
  export_llama_gguf(model, d / "spm.gguf");
  GgufFile f = GgufFile::read(d / "spm.gguf");
  text::SentencePieceTokenizer tok(model / "tokenizer.model");
  EXPECT_EQ(f.get("tokenizer.ggml.model").s, "llama");
  EXPECT_EQ(f.get("tokenizer.ggml.bos_token_id").i, 1);
  EXPECT_EQ(f.get("tokenizer.ggml.eos_token_id").i, 2);
  EXPECT_EQ(f.get("tokenizer.ggml.unknown_token_id").i, 0);
  EXPECT_TRUE(f.get("tokenizer.ggml.add_bos_token").b);
  EXPECT_TRUE(f.get("tokenizer.ggml.add_space_prefix").b);
  std::vector<std::string> tokens;
  std::vector<double> scores;
  std::vector<int64_t> types;
  for (const auto& v : f.get("tokenizer.ggml.tokens").array) tokens.push_back(v.s);
  for (const auto& v : f.get("tokenizer.ggml.scores").array) scores.push_back(v.f);
  for (const auto& v : f.get("tokenizer.ggml.token_type").array) types.push_back(v.i);
  ASSERT_EQ(tokens.size(), 272u);
  ASSERT_EQ(scores.size(), 272u);
  for (int32_t id = 0; id < tok.vocab_size(); ++id) {
    EXPECT_EQ(tokens[size_t(id)], tok.id_to_token(id)) << id;
    EXPECT_EQ(float(scores[size_t(id)]), tok.piece_score(id)) << id;
  }
  EXPECT_EQ(types[0], 2);  // <unk>
  EXPECT_EQ(types[1], 3);  // <s>: control
  ASSERT_GE(tok.token_to_id("\xE2\x96\x81he"), 0);
  EXPECT_EQ(types[size_t(tok.token_to_id("<0x0A>"))], 6);  // a byte piece
  EXPECT_EQ(types[size_t(tok.token_to_id("\xE2\x96\x81he"))], 1);
  // Merges happen in score order: a merge learnt later scores below an earlier one.
  EXPECT_LT(scores[size_t(tok.token_to_id("\xE2\x96\x81he"))], scores[size_t(tok.token_to_id("he"))]);
}

TEST(GgufExportTest, BadInputsNameThemselves) {
  fs::path d = scratch_dir();
  // Unwritable: the destination directory does not exist; nothing is left behind.
  fs::path bad = d / "no_such_dir" / "x.gguf";
  EXPECT_NE(error_of<IoError>([&] { export_llama_gguf(kData / "tiny", bad); }).find("no_such_dir"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(bad));
  // Read-only directory (skipped as root, who may write anyway).
  if (::geteuid() != 0) {
    fs::create_directory(d / "ro");
    fs::permissions(d / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_NE(error_of<IoError>([&] { export_llama_gguf(kData / "tiny", d / "ro" / "x.gguf"); }).find("ro"),
              std::string::npos);
    fs::permissions(d / "ro", fs::perms::owner_all);
    EXPECT_TRUE(fs::is_empty(d / "ro"));
  }
  EXPECT_NE(error_of<ValueError>([] { parse_gguf_tensor_type("q8_0"); }).find("unknown dtype 'q8_0'"),
            std::string::npos);
  EXPECT_EQ(parse_gguf_tensor_type("F16"), GgufTensorType::F16);
  EXPECT_NE(error_of<IoError>([&] { export_llama_gguf(d / "missing_model", d / "x.gguf"); }).find("missing_model"),
            std::string::npos);
  // A model directory without tokenizer.json.
  fs::copy(kData / "tiny", d / "notok", fs::copy_options::recursive);
  fs::remove(d / "notok/tokenizer.json");
  EXPECT_NE(error_of<IoError>([&] { export_llama_gguf(d / "notok", d / "x.gguf"); }).find("notok/tokenizer.json"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(d / "x.gguf"));
  EXPECT_NE(error_of<ValueError>([] { gguf_llama_tensor_name("model.layers.0.self_attn.rotary.weight"); })
                .find("model.layers.0.self_attn.rotary.weight"),
            std::string::npos);
}

}  // namespace
}  // namespace skiff::nlp
