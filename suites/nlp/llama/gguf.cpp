#include "suites/nlp/llama/gguf.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/core/half.h"
#include "framework/io/file.h"
#include "framework/text/bpe_tokenizer.h"
#include "framework/text/chat_template.h"
#include "framework/text/sentencepiece_tokenizer.h"
#include "suites/nlp/llama/loader.h"
#include "suites/nlp/llama/tokenizer_bos.h"

namespace skiff::nlp {
namespace fs = std::filesystem;
using json = nlohmann::json;

// ---- types -------------------------------------------------------------------------

std::string gguf_type_name(GgufType t) {
  static const char* names[] = {"uint8", "int8",   "uint16", "int16", "uint32", "int32", "float32",
                                "bool",  "string", "array",  "uint64", "int64", "float64"};
  auto i = uint32_t(t);
  return i < 13 ? names[i] : fmt::format("type {}", i);
}

std::string gguf_tensor_type_name(GgufTensorType t) { return t == GgufTensorType::F32 ? "F32" : "F16"; }

GgufTensorType parse_gguf_tensor_type(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (n == "f32" || n == "float32") return GgufTensorType::F32;
  if (n == "f16" || n == "float16") return GgufTensorType::F16;
  SKIFF_THROW(ValueError, "gguf: unknown dtype '{}' (expected f32 or f16)", name);
}

GgufValue GgufValue::u32(uint32_t v) { GgufValue x; x.type = GgufType::Uint32; x.i = v; return x; }
GgufValue GgufValue::i32(int32_t v) { GgufValue x; x.type = GgufType::Int32; x.i = v; return x; }
GgufValue GgufValue::u64(uint64_t v) { GgufValue x; x.type = GgufType::Uint64; x.i = int64_t(v); return x; }
GgufValue GgufValue::f32(float v) { GgufValue x; x.type = GgufType::Float32; x.f = v; return x; }
GgufValue GgufValue::boolean(bool v) { GgufValue x; x.type = GgufType::Bool; x.b = v; return x; }
GgufValue GgufValue::str(std::string v) { GgufValue x; x.type = GgufType::String; x.s = std::move(v); return x; }
GgufValue GgufValue::strings(const std::vector<std::string>& v) {
  GgufValue x;
  x.type = GgufType::Array;
  x.elem_type = GgufType::String;
  for (const auto& s : v) x.array.push_back(str(s));
  return x;
}
GgufValue GgufValue::int32s(const std::vector<int32_t>& v) {
  GgufValue x;
  x.type = GgufType::Array;
  x.elem_type = GgufType::Int32;
  for (int32_t e : v) x.array.push_back(i32(e));
  return x;
}
GgufValue GgufValue::float32s(const std::vector<float>& v) {
  GgufValue x;
  x.type = GgufType::Array;
  x.elem_type = GgufType::Float32;
  for (float e : v) x.array.push_back(f32(e));
  return x;
}

bool GgufValue::operator==(const GgufValue& o) const {
  if (type != o.type) return false;
  switch (type) {
    case GgufType::Float32: case GgufType::Float64: return f == o.f;
    case GgufType::Bool: return b == o.b;
    case GgufType::String: return s == o.s;
    case GgufType::Array: return elem_type == o.elem_type && array == o.array;
    default: return i == o.i;
  }
}

// ---- writer ------------------------------------------------------------------------

namespace {

uint64_t align_up(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

struct Buffer {
  std::string out;
  template <class T>
  void pod(T v) { out.append(reinterpret_cast<const char*>(&v), sizeof(T)); }
  void string(const std::string& s) { pod<uint64_t>(s.size()); out += s; }
  void scalar(GgufType t, const GgufValue& v) {
    switch (t) {
      case GgufType::Uint8: pod<uint8_t>(uint8_t(v.i)); break;
      case GgufType::Int8: pod<int8_t>(int8_t(v.i)); break;
      case GgufType::Uint16: pod<uint16_t>(uint16_t(v.i)); break;
      case GgufType::Int16: pod<int16_t>(int16_t(v.i)); break;
      case GgufType::Uint32: pod<uint32_t>(uint32_t(v.i)); break;
      case GgufType::Int32: pod<int32_t>(int32_t(v.i)); break;
      case GgufType::Uint64: pod<uint64_t>(uint64_t(v.i)); break;
      case GgufType::Int64: pod<int64_t>(v.i); break;
      case GgufType::Float32: pod<float>(float(v.f)); break;
      case GgufType::Float64: pod<double>(v.f); break;
      case GgufType::Bool: pod<uint8_t>(v.b ? 1 : 0); break;
      case GgufType::String: string(v.s); break;
      case GgufType::Array:
        SKIFF_CHECK(v.elem_type != GgufType::Array, "gguf: nested arrays are not supported");
        pod<uint32_t>(uint32_t(v.elem_type));
        pod<uint64_t>(v.array.size());
        for (const auto& e : v.array) {
          SKIFF_CHECK(e.type == v.elem_type, "gguf: array of {} holds a {}", gguf_type_name(v.elem_type),
                      gguf_type_name(e.type));
          scalar(v.elem_type, e);
        }
        break;
    }
  }
};

uint64_t element_size(GgufTensorType t) { return t == GgufTensorType::F32 ? 4 : 2; }

}  // namespace

void GgufWriter::add(const std::string& key, GgufValue value) {
  for (const auto& [k, v] : kv_) SKIFF_CHECK(k != key, "gguf: duplicate metadata key '{}'", key);
  kv_.emplace_back(key, std::move(value));
}

void GgufWriter::add_tensor(GgufTensor tensor) {
  for (const auto& t : tensors_) SKIFF_CHECK(t.name != tensor.name, "gguf: duplicate tensor '{}'", tensor.name);
  int64_t n = 1;
  for (int64_t d : tensor.shape) n *= d;
  SKIFF_CHECK(n == int64_t(tensor.values.size()), "gguf: tensor '{}' has {} values for a shape of {} elements",
              tensor.name, tensor.values.size(), n);
  tensors_.push_back(std::move(tensor));
}

void GgufWriter::write(const fs::path& path, uint32_t alignment) const {
  SKIFF_CHECK(alignment > 0 && (alignment & (alignment - 1)) == 0, "gguf: alignment {} is not a power of two",
              alignment);
  auto kv = kv_;
  bool has_alignment = std::any_of(kv.begin(), kv.end(), [](const auto& p) { return p.first == "general.alignment"; });
  if (alignment != 32 && !has_alignment) kv.emplace_back("general.alignment", GgufValue::u32(alignment));

  Buffer h;
  h.out += "GGUF";
  h.pod<uint32_t>(3);
  h.pod<uint64_t>(tensors_.size());
  h.pod<uint64_t>(kv.size());
  for (const auto& [k, v] : kv) {
    h.string(k);
    h.pod<uint32_t>(uint32_t(v.type));
    h.scalar(v.type, v);
  }
  uint64_t offset = 0;
  std::vector<uint64_t> offsets;
  for (const auto& t : tensors_) {
    h.string(t.name);
    h.pod<uint32_t>(uint32_t(t.shape.size()));
    for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it) h.pod<uint64_t>(uint64_t(*it));  // ggml order
    h.pod<uint32_t>(uint32_t(t.type));
    h.pod<uint64_t>(offset);
    offsets.push_back(offset);
    offset = align_up(offset + t.values.size() * element_size(t.type), alignment);
  }
  h.out.resize(align_up(h.out.size(), alignment), '\0');

  io::AtomicFileWriter w(path);
  w.write(h.out);
  uint64_t written = 0;
  std::string chunk;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const GgufTensor& t = tensors_[i];
    if (written < offsets[i]) {
      std::string pad(offsets[i] - written, '\0');
      w.write(pad);
      written = offsets[i];
    }
    if (t.type == GgufTensorType::F32) {
      w.write(t.values.data(), t.values.size() * 4);
    } else {
      std::vector<uint16_t> half(t.values.size());
      for (size_t j = 0; j < half.size(); ++j) half[j] = Half::from_float(t.values[j]);
      w.write(half.data(), half.size() * 2);
    }
    written += t.values.size() * element_size(t.type);
  }
  if (written < offset) {  // pad the last tensor too, as ggml does
    std::string pad(offset - written, '\0');
    w.write(pad);
  }
  w.commit();
}

// ---- reader ------------------------------------------------------------------------

namespace {

struct Cursor {
  const std::string& bytes;
  const std::string& source;
  uint64_t pos = 0;

  void need(uint64_t n) const {
    SKIFF_CHECK(n <= bytes.size() && pos <= bytes.size() - n,
                "gguf: {} is truncated: {} bytes needed at offset {} of {}", source, n, pos, bytes.size());
  }
  template <class T>
  T pod() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, bytes.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
  std::string string() {
    auto n = pod<uint64_t>();
    need(n);
    std::string s = bytes.substr(pos, n);
    pos += n;
    return s;
  }
  GgufValue value(GgufType t, bool in_array = false) {
    GgufValue v;
    v.type = t;
    switch (t) {
      case GgufType::Uint8: v.i = pod<uint8_t>(); break;
      case GgufType::Int8: v.i = pod<int8_t>(); break;
      case GgufType::Uint16: v.i = pod<uint16_t>(); break;
      case GgufType::Int16: v.i = pod<int16_t>(); break;
      case GgufType::Uint32: v.i = pod<uint32_t>(); break;
      case GgufType::Int32: v.i = pod<int32_t>(); break;
      case GgufType::Uint64: v.i = int64_t(pod<uint64_t>()); break;
      case GgufType::Int64: v.i = pod<int64_t>(); break;
      case GgufType::Float32: v.f = pod<float>(); break;
      case GgufType::Float64: v.f = pod<double>(); break;
      case GgufType::Bool: v.b = pod<uint8_t>() != 0; break;
      case GgufType::String: v.s = string(); break;
      case GgufType::Array: {
        SKIFF_CHECK(!in_array, "gguf: {}: nested array at offset {}", source, pos);
        auto et = pod<uint32_t>();
        SKIFF_CHECK(et <= 12, "gguf: {}: unknown array element type {} at offset {}", source, et, pos - 4);
        v.elem_type = GgufType(et);
        auto n = pod<uint64_t>();
        need(std::min<uint64_t>(n, bytes.size()));  // at least one byte per element
        v.array.reserve(n);
        for (uint64_t k = 0; k < n; ++k) v.array.push_back(value(v.elem_type, true));
        break;
      }
      default: SKIFF_THROW(ValueError, "gguf: {}: unknown value type {} at offset {}", source, uint32_t(t), pos);
    }
    return v;
  }
};

}  // namespace

std::vector<int64_t> GgufTensorInfo::shape() const { return std::vector<int64_t>(dims.rbegin(), dims.rend()); }
uint64_t GgufTensorInfo::numel() const {
  uint64_t n = 1;
  for (auto d : dims) n *= d;
  return n;
}

GgufFile GgufFile::read(const fs::path& path) {
  GgufFile f;
  f.bytes = io::read_file(path);
  std::string source = path.string();
  Cursor c{f.bytes, source};
  c.need(4);
  SKIFF_CHECK(f.bytes.compare(0, 4, "GGUF") == 0, "gguf: {} is not a GGUF file (bad magic)", source);
  c.pos = 4;
  f.version = c.pod<uint32_t>();
  SKIFF_CHECK(f.version == 2 || f.version == 3, "gguf: {}: unsupported version {}", source, f.version);
  auto n_tensors = c.pod<uint64_t>();
  auto n_kv = c.pod<uint64_t>();
  for (uint64_t k = 0; k < n_kv; ++k) {
    std::string key = c.string();
    auto t = c.pod<uint32_t>();
    SKIFF_CHECK(t <= 12, "gguf: {}: key '{}' has unknown value type {}", source, key, t);
    f.metadata.emplace_back(key, c.value(GgufType(t)));
    if (key == "general.alignment") f.alignment = uint32_t(f.metadata.back().second.i);
  }
  for (uint64_t k = 0; k < n_tensors; ++k) {
    GgufTensorInfo ti;
    ti.name = c.string();
    auto nd = c.pod<uint32_t>();
    SKIFF_CHECK(nd <= 4, "gguf: {}: tensor '{}' has {} dims (at most 4)", source, ti.name, nd);
    for (uint32_t d = 0; d < nd; ++d) ti.dims.push_back(c.pod<uint64_t>());
    auto type = c.pod<uint32_t>();
    SKIFF_CHECK(type <= 1, "gguf: {}: tensor '{}' has ggml type {} (only F32 and F16 are read)", source, ti.name,
                type);
    ti.type = GgufTensorType(type);
    ti.offset = c.pod<uint64_t>();
    f.tensors.push_back(std::move(ti));
  }
  f.data_offset = align_up(c.pos, f.alignment);
  for (const auto& ti : f.tensors) {
    uint64_t end = f.data_offset + ti.offset + ti.numel() * element_size(ti.type);
    SKIFF_CHECK(end <= f.bytes.size(), "gguf: {}: tensor '{}' runs past the end of the file", source, ti.name);
  }
  return f;
}

bool GgufFile::has(const std::string& key) const {
  return std::any_of(metadata.begin(), metadata.end(), [&](const auto& p) { return p.first == key; });
}

const GgufValue& GgufFile::get(const std::string& key) const {
  for (const auto& [k, v] : metadata)
    if (k == key) return v;
  SKIFF_THROW(ValueError, "gguf: no metadata key '{}'", key);
}

const GgufTensorInfo& GgufFile::tensor(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return t;
  SKIFF_THROW(ValueError, "gguf: no tensor '{}'", name);
}

std::vector<float> GgufFile::tensor_values(const std::string& name) const {
  const GgufTensorInfo& t = tensor(name);
  std::vector<float> out(t.numel());
  const char* p = bytes.data() + data_offset + t.offset;
  if (t.type == GgufTensorType::F32) {
    std::memcpy(out.data(), p, out.size() * 4);
  } else {
    for (size_t i = 0; i < out.size(); ++i) {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      out[i] = Half::to_float(h);
    }
  }
  return out;
}

// ---- llama export --------------------------------------------------------------------

std::string gguf_llama_tensor_name(const std::string& hf) {
  if (hf == "model.embed_tokens.weight") return "token_embd.weight";
  if (hf == "model.norm.weight") return "output_norm.weight";
  if (hf == "lm_head.weight") return "output.weight";
  static const std::regex layer(R"(model\.layers\.(\d+)\.(.+)\.(weight|bias))");
  static const std::map<std::string, std::string> parts = {
      {"input_layernorm", "attn_norm"},       {"self_attn.q_proj", "attn_q"}, {"self_attn.k_proj", "attn_k"},
      {"self_attn.v_proj", "attn_v"},         {"self_attn.o_proj", "attn_output"},
      {"post_attention_layernorm", "ffn_norm"}, {"mlp.gate_proj", "ffn_gate"}, {"mlp.up_proj", "ffn_up"},
      {"mlp.down_proj", "ffn_down"}};
  std::smatch m;
  if (std::regex_match(hf, m, layer)) {
    auto it = parts.find(m[2].str());
    if (it != parts.end()) return fmt::format("blk.{}.{}.{}", m[1].str(), it->second, m[3].str());
  }
  SKIFF_THROW(ValueError, "gguf: no llama.cpp name for the tensor '{}'", hf);
}

namespace {

// Row r of head h: HF's row h*D + s*D/2 + j goes to GGML's row h*D + 2j + s.
std::vector<float> permute_rows(const std::vector<float>& w, int64_t rows, int64_t cols, int64_t n_head,
                                bool inverse) {
  SKIFF_CHECK(n_head > 0 && rows % n_head == 0 && (rows / n_head) % 2 == 0 && int64_t(w.size()) == rows * cols,
              "gguf: cannot permute a [{}, {}] q/k projection for {} heads (rows must be heads x an even head size)",
              rows, cols, n_head);
  int64_t d = rows / n_head, half = d / 2;
  std::vector<float> out(w.size());
  for (int64_t h = 0; h < n_head; ++h)
    for (int64_t s = 0; s < 2; ++s)
      for (int64_t j = 0; j < half; ++j) {
        int64_t hf_row = h * d + s * half + j, ggml_row = h * d + 2 * j + s;
        int64_t src = inverse ? ggml_row : hf_row, dst = inverse ? hf_row : ggml_row;
        std::copy_n(w.begin() + src * cols, cols, out.begin() + dst * cols);
      }
  return out;
}

// llama.cpp's pre-tokenizer name for a tokenizer.json's pre_tokenizer (it picks its split
// regex by this name). Known: GPT-2's ByteLevel regex, Llama 3's and Qwen2's Split regexes.
std::string pre_tokenizer_name(const json& j, const std::string& source) {
  const json& pre = j.contains("pre_tokenizer") ? j["pre_tokenizer"] : json();
  std::vector<const json*> steps;
  if (pre.is_object() && pre.value("type", "") == "Sequence" && pre.contains("pretokenizers")) {
    for (const json& s : pre["pretokenizers"]) steps.push_back(&s);
  } else if (pre.is_object()) {
    steps.push_back(&pre);
  }
  std::string split_pattern;
  bool byte_level_regex = false;
  for (const json* s : steps) {
    std::string type = s->value("type", "");
    if (type == "Split" && s->contains("pattern") && (*s)["pattern"].contains("Regex"))
      split_pattern = (*s)["pattern"]["Regex"].get<std::string>();
    if (type == "ByteLevel") byte_level_regex = s->value("use_regex", true);
  }
  static const std::string llama3 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  static const std::string qwen2 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  if (split_pattern.empty() && byte_level_regex) return "gpt-2";  // llama.cpp spells this pre-tokenizer with a hyphen
  if (split_pattern == llama3) return "llama-bpe";
  if (split_pattern == qwen2) return "qwen2";
  fmt::print(stderr, "warning: gguf: {}: pre-tokenizer not recognised; writing tokenizer.ggml.pre = \"default\"\n",
             source);
  return "default";
}


void add_tokenizer(GgufWriter& w, const fs::path& tok_path, const LlamaConfig& cfg) {
  std::string source = tok_path.string();
  std::error_code ec;
  SKIFF_CHECK_T(IoError, fs::exists(tok_path, ec), "gguf: {} is missing: the export needs the model's tokenizer",
                source);
  text::BpeTokenizer tok = text::BpeTokenizer::from_tokenizer_json(tok_path);
  json j = json::parse(io::read_file(tok_path), nullptr, false);
  SKIFF_CHECK(!j.is_discarded() && j.is_object() && j.contains("model"), "gguf: {} is not a tokenizer.json", source);
  SKIFF_CHECK(tok.vocab_size() <= cfg.vocab_size,
              "gguf: {} has {} tokens, more than the model's vocab_size {}", source, tok.vocab_size(), cfg.vocab_size);

  std::map<int32_t, bool> added;  // id -> special
  for (const auto& a : tok.config().added_tokens) added[a.id] = a.special;
  std::vector<std::string> tokens;
  std::vector<int32_t> types;  // llama.cpp token types: 1 normal, 3 control, 4 user defined, 5 unused
  for (int32_t id = 0; id < int32_t(cfg.vocab_size); ++id) {
    if (auto it = added.find(id); it != added.end()) {
      tokens.push_back(tok.id_to_token(id));
      types.push_back(it->second ? 3 : 4);
    } else if (id < tok.model().vocab_size()) {
      tokens.push_back(tok.model().id_to_token(id));
      types.push_back(1);
    } else {  // the embedding is padded past the tokenizer's last id
      tokens.push_back(fmt::format("[PAD{}]", id));
      types.push_back(5);
    }
  }
  std::vector<std::string> merges;
  const json& jm = j["model"].contains("merges") ? j["model"]["merges"] : json::array();
  for (const json& m : jm) {
    if (m.is_string()) merges.push_back(m.get<std::string>());
    else if (m.is_array() && m.size() == 2) merges.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
    else SKIFF_THROW(ValueError, "gguf: {}: model.merges holds an entry that is neither \"a b\" nor [a, b]", source);
  }
  w.add("tokenizer.ggml.model", GgufValue::str("gpt2"));  // llama.cpp's name for byte-level BPE
  w.add("tokenizer.ggml.pre", GgufValue::str(pre_tokenizer_name(j, source)));
  w.add("tokenizer.ggml.tokens", GgufValue::strings(tokens));
  w.add("tokenizer.ggml.token_type", GgufValue::int32s(types));
  w.add("tokenizer.ggml.merges", GgufValue::strings(merges));
  if (!cfg.bos_token_ids.empty()) w.add("tokenizer.ggml.bos_token_id", GgufValue::u32(uint32_t(cfg.bos_token_ids[0])));
  if (!cfg.eos_token_ids.empty()) w.add("tokenizer.ggml.eos_token_id", GgufValue::u32(uint32_t(cfg.eos_token_ids[0])));
  w.add("tokenizer.ggml.add_bos_token", GgufValue::boolean(tokenizer_bos_id(j) >= 0));
  w.add("tokenizer.ggml.add_eos_token", GgufValue::boolean(false));
}

// A SentencePiece tokenizer.model as llama.cpp's "llama" tokenizer (SPM): every piece with
// its score and type, the special ids, and whether a "▁" goes before the text. llama.cpp
// merges pieces by score as sentencepiece's BPE does; byte pieces (<0x0A>) carry the bytes
// no piece covers.
void add_sentencepiece_tokenizer(GgufWriter& w, const fs::path& model_path, const LlamaConfig& cfg) {
  const std::string source = model_path.string();
  text::SentencePieceTokenizer tok(model_path);
  SKIFF_CHECK(tok.vocab_size() <= cfg.vocab_size, "gguf: {} has {} pieces, more than the model's vocab_size {}", source,
              tok.vocab_size(), cfg.vocab_size);
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  int64_t unk = -1;
  for (int32_t id = 0; id < int32_t(cfg.vocab_size); ++id) {
    if (id < tok.vocab_size()) {
      tokens.push_back(tok.id_to_token(id));
      scores.push_back(tok.piece_score(id));
      types.push_back(int32_t(tok.piece_type(id)));
      if (tok.piece_type(id) == text::SentencePieceTokenizer::PieceType::Unknown && unk < 0) unk = id;
    } else {  // the embedding is padded past the last piece
      tokens.push_back(fmt::format("[PAD{}]", id));
      scores.push_back(-1e9f);
      types.push_back(5);
    }
  }
  w.add("tokenizer.ggml.model", GgufValue::str("llama"));  // llama.cpp's name for SentencePiece
  w.add("tokenizer.ggml.pre", GgufValue::str("default"));
  w.add("tokenizer.ggml.tokens", GgufValue::strings(tokens));
  w.add("tokenizer.ggml.scores", GgufValue::float32s(scores));
  w.add("tokenizer.ggml.token_type", GgufValue::int32s(types));
  if (!cfg.bos_token_ids.empty()) w.add("tokenizer.ggml.bos_token_id", GgufValue::u32(uint32_t(cfg.bos_token_ids[0])));
  if (!cfg.eos_token_ids.empty()) w.add("tokenizer.ggml.eos_token_id", GgufValue::u32(uint32_t(cfg.eos_token_ids[0])));
  if (unk >= 0) w.add("tokenizer.ggml.unknown_token_id", GgufValue::u32(uint32_t(unk)));
  // As skiff nlp generate and Hugging Face's LLaMA tokenizers: BOS first, when the model has one.
  w.add("tokenizer.ggml.add_bos_token", GgufValue::boolean(!cfg.bos_token_ids.empty()));
  w.add("tokenizer.ggml.add_eos_token", GgufValue::boolean(false));
  w.add("tokenizer.ggml.add_space_prefix", GgufValue::boolean(tok.adds_dummy_prefix()));
}

}  // namespace

std::vector<float> gguf_permute_qk(const std::vector<float>& w, int64_t rows, int64_t cols, int64_t n_head) {
  return permute_rows(w, rows, cols, n_head, false);
}
std::vector<float> gguf_unpermute_qk(const std::vector<float>& w, int64_t rows, int64_t cols, int64_t n_head) {
  return permute_rows(w, rows, cols, n_head, true);
}

GgufWriter build_llama_gguf(const fs::path& dir, const GgufExportOptions& options) {
  std::error_code ec;
  SKIFF_CHECK_T(IoError, fs::is_directory(dir, ec), "gguf: model directory '{}' does not exist", dir.string());
  std::shared_ptr<LlamaForCausalLM> model = load_llama(dir);
  const LlamaConfig& c = model->config();
  SKIFF_CHECK_T(NotImplementedError,
                c.rope_scaling.type == nn::RopeScaling::Type::None || c.rope_scaling.type == nn::RopeScaling::Type::Linear,
                "gguf: {}: rope_scaling type '{}' is not exported (only none and linear)",
                (dir / "config.json").string(), nn::rope_scaling_name(c.rope_scaling.type));

  GgufWriter w;
  std::string name = options.name;
  if (name.empty()) name = fs::absolute(dir).lexically_normal().filename().string();
  if (name.empty()) name = fs::absolute(dir).lexically_normal().parent_path().filename().string();
  w.add("general.architecture", GgufValue::str("llama"));
  w.add("general.name", GgufValue::str(name));
  w.add("general.file_type", GgufValue::u32(options.dtype == GgufTensorType::F32 ? 0 : 1));  // ALL_F32 / MOSTLY_F16
  w.add("llama.context_length", GgufValue::u32(uint32_t(c.max_position_embeddings)));
  w.add("llama.embedding_length", GgufValue::u32(uint32_t(c.hidden_size)));
  w.add("llama.block_count", GgufValue::u32(uint32_t(c.num_hidden_layers)));
  w.add("llama.feed_forward_length", GgufValue::u32(uint32_t(c.intermediate_size)));
  w.add("llama.attention.head_count", GgufValue::u32(uint32_t(c.num_attention_heads)));
  w.add("llama.attention.head_count_kv", GgufValue::u32(uint32_t(c.num_key_value_heads)));
  w.add("llama.attention.layer_norm_rms_epsilon", GgufValue::f32(float(c.rms_norm_eps)));
  if (c.head_dim * c.num_attention_heads != c.hidden_size) {
    w.add("llama.attention.key_length", GgufValue::u32(uint32_t(c.head_dim)));
    w.add("llama.attention.value_length", GgufValue::u32(uint32_t(c.head_dim)));
  }
  w.add("llama.rope.freq_base", GgufValue::f32(float(c.rope_theta)));
  w.add("llama.rope.dimension_count", GgufValue::u32(uint32_t(c.head_dim)));
  if (c.rope_scaling.type == nn::RopeScaling::Type::Linear) {
    w.add("llama.rope.scaling.type", GgufValue::str("linear"));
    w.add("llama.rope.scaling.factor", GgufValue::f32(float(c.rope_scaling.factor)));
  }
  w.add("llama.vocab_size", GgufValue::u32(uint32_t(c.vocab_size)));
  std::error_code exists_ec;
  if (!fs::exists(dir / "tokenizer.json", exists_ec) && fs::exists(dir / "tokenizer.model", exists_ec))
    add_sentencepiece_tokenizer(w, dir / "tokenizer.model", c);
  else
    add_tokenizer(w, dir / "tokenizer.json", c);
  // llama.cpp formats chats with the template under this key (parsed here, so a broken
  // template is refused now rather than in llama.cpp).
  if (const std::optional<text::ChatTemplate> t = text::ChatTemplate::find_in_model_dir(dir))
    w.add("tokenizer.chat_template", GgufValue::str(t->source()));

  // Tensors in llama.cpp's order: embedding, the blocks, output norm, head.
  std::map<std::string, Tensor> sd = model->state_dict();
  std::vector<std::string> order{"model.embed_tokens.weight"};
  for (int64_t l = 0; l < c.num_hidden_layers; ++l)
    for (const char* p : {"input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.q_proj.bias",
                          "self_attn.k_proj.weight", "self_attn.k_proj.bias", "self_attn.v_proj.weight",
                          "self_attn.v_proj.bias", "self_attn.o_proj.weight", "self_attn.o_proj.bias",
                          "post_attention_layernorm.weight", "mlp.gate_proj.weight", "mlp.gate_proj.bias",
                          "mlp.up_proj.weight", "mlp.up_proj.bias", "mlp.down_proj.weight", "mlp.down_proj.bias"})
      order.push_back(fmt::format("model.layers.{}.{}", l, p));
  order.push_back("model.norm.weight");
  order.push_back("lm_head.weight");
  std::set<std::string> used;
  for (const auto& hf : order) {
    auto it = sd.find(hf);
    if (it == sd.end()) continue;
    used.insert(hf);
    const Tensor& t = it->second;
    GgufTensor g;
    g.name = gguf_llama_tensor_name(hf);
    g.shape.assign(t.shape().begin(), t.shape().end());
    g.values = t.to_vector<float>();
    // Norms and biases (1-D) stay F32 as llama.cpp's converter keeps them.
    g.type = t.dim() >= 2 ? options.dtype : GgufTensorType::F32;
    bool is_q = hf.find("q_proj") != std::string::npos, is_k = hf.find("k_proj") != std::string::npos;
    if (is_q || is_k) {
      // HF applies rotary embeddings with rotate_half (dimension j pairs with j + D/2);
      // llama.cpp's "llama" architecture uses GGML's normal rope, which rotates adjacent
      // pairs (2j, 2j+1). Reordering each head's output rows turns one convention into the
      // other (gguf_permute_qk); it is what convert_hf_to_gguf.py does for llama, so
      // llama.cpp then computes the same attention scores as the HF model.
      int64_t rows = g.shape[0], cols = g.shape.size() > 1 ? g.shape[1] : 1;
      g.values = gguf_permute_qk(g.values, rows, cols, is_q ? c.num_attention_heads : c.num_key_value_heads);
    }
    w.add_tensor(std::move(g));
  }
  for (const auto& [k, v] : sd)
    SKIFF_CHECK(used.count(k), "gguf: {}: parameter '{}' has no place in the llama GGUF layout", dir.string(), k);
  return w;
}

GgufExportSummary export_llama_gguf(const fs::path& dir, const fs::path& out, const GgufExportOptions& options) {
  GgufWriter w = build_llama_gguf(dir, options);
  w.write(out);
  GgufExportSummary s;
  s.tensors = w.tensors().size();
  s.metadata = w.metadata().size();
  std::error_code ec;
  s.bytes = fs::file_size(out, ec);
  return s;
}

}  // namespace skiff::nlp
