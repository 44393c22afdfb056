#include "suites/nlp/llama/config.h"

#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/io/file.h"

namespace skiff::nlp {
namespace {
using json = nlohmann::json;

[[noreturn]] void fail(const std::string& source, const std::string& key, const std::string& what) {
  SKIFF_THROW(ConfigError, "{}: key '{}': {}", source, key, what);
}

const json* find(const json& j, const std::string& key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

int64_t get_int(const json& j, const std::string& source, const std::string& key, int64_t fallback, bool required,
                int64_t min_value) {
  const json* v = find(j, key);
  if (!v) {
    if (required) fail(source, key, "required key is missing");
    return fallback;
  }
  if (!v->is_number_integer()) fail(source, key, "expected an integer, got " + v->dump());
  int64_t x = v->get<int64_t>();
  if (x < min_value) fail(source, key, "expected an integer >= " + std::to_string(min_value) + ", got " + v->dump());
  return x;
}

double get_double(const json& j, const std::string& source, const std::string& key, double fallback, bool positive) {
  const json* v = find(j, key);
  if (!v) return fallback;
  if (!v->is_number()) fail(source, key, "expected a number, got " + v->dump());
  double x = v->get<double>();
  if (positive && !(x > 0)) fail(source, key, "expected a positive number, got " + v->dump());
  return x;
}

bool get_bool(const json& j, const std::string& source, const std::string& key, bool fallback) {
  const json* v = find(j, key);
  if (!v) return fallback;
  if (!v->is_boolean()) fail(source, key, "expected true or false, got " + v->dump());
  return v->get<bool>();
}

nn::RopeScaling parse_rope_scaling(const json& j, const std::string& source) {
  nn::RopeScaling s;
  const json* v = find(j, "rope_scaling");
  if (!v) return s;
  if (!v->is_object()) fail(source, "rope_scaling", "expected null or an object, got " + v->dump());
  const json* type = find(*v, "rope_type");
  if (!type) type = find(*v, "type");
  if (!type || !type->is_string()) fail(source, "rope_scaling.rope_type", "missing (or not a string)");
  std::string name = type->get<std::string>();
  if (name == "default") return s;
  if (name == "linear") s.type = nn::RopeScaling::Type::Linear;
  else if (name == "dynamic") s.type = nn::RopeScaling::Type::Dynamic;
  else if (name == "llama3") s.type = nn::RopeScaling::Type::Llama3;
  else fail(source, "rope_scaling.rope_type", "'" + name + "' is not supported (none, linear, dynamic, llama3)");
  const std::string prefix = "rope_scaling.";
  if (!find(*v, "factor")) fail(source, prefix + "factor", "required key is missing");
  s.factor = get_double(*v, source, "factor", 1.0, true);
  if (s.type == nn::RopeScaling::Type::Llama3) {
    for (const char* k : {"low_freq_factor", "high_freq_factor", "original_max_position_embeddings"})
      if (!find(*v, k)) fail(source, prefix + k, "required key is missing for llama3 scaling");
    s.low_freq_factor = get_double(*v, source, "low_freq_factor", 1.0, true);
    s.high_freq_factor = get_double(*v, source, "high_freq_factor", 4.0, true);
    if (!(s.high_freq_factor > s.low_freq_factor))
      fail(source, prefix + "high_freq_factor", "must be larger than low_freq_factor");
  }
  s.original_max_position_embeddings = get_int(*v, source, "original_max_position_embeddings", 0, false, 1);
  return s;
}

}  // namespace

std::vector<int64_t> token_ids_from_json(const json& v, const std::string& source, const std::string& key) {
  if (v.is_null()) return {};
  if (v.is_number_integer()) return {v.get<int64_t>()};
  if (v.is_array()) {
    std::vector<int64_t> ids;
    for (const json& x : v) {
      if (!x.is_number_integer()) fail(source, key, "expected integers, got " + v.dump());
      ids.push_back(x.get<int64_t>());
    }
    return ids;
  }
  fail(source, key, "expected an integer, a list of integers or null, got " + v.dump());
}

LlamaConfig LlamaConfig::from_json(const json& j, const std::string& source) {
  if (!j.is_object()) SKIFF_THROW(ConfigError, "{}: expected a JSON object", source);
  const json* type = find(j, "model_type");
  if (!type) fail(source, "model_type", "required key is missing (expected \"llama\")");
  if (!type->is_string() || type->get<std::string>() != "llama")
    fail(source, "model_type", "unsupported model type " + type->dump() + " (this loader reads \"llama\")");
  LlamaConfig c;
  c.vocab_size = get_int(j, source, "vocab_size", 0, true, 1);
  c.hidden_size = get_int(j, source, "hidden_size", 0, true, 1);
  c.intermediate_size = get_int(j, source, "intermediate_size", 0, true, 1);
  c.num_hidden_layers = get_int(j, source, "num_hidden_layers", 0, true, 1);
  c.num_attention_heads = get_int(j, source, "num_attention_heads", 0, true, 1);
  c.num_key_value_heads = get_int(j, source, "num_key_value_heads", c.num_attention_heads, false, 1);
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    fail(source, "num_key_value_heads",
         fmt::format("{} does not divide num_attention_heads = {}", c.num_key_value_heads, c.num_attention_heads));
  if (!find(j, "head_dim") && c.hidden_size % c.num_attention_heads != 0)
    fail(source, "num_attention_heads",
         fmt::format("{} does not divide hidden_size = {} (and no head_dim is given)", c.num_attention_heads,
                     c.hidden_size));
  c.head_dim = get_int(j, source, "head_dim", c.hidden_size / c.num_attention_heads, false, 2);
  if (c.head_dim % 2 != 0) fail(source, "head_dim", fmt::format("must be even for rotary embeddings, got {}", c.head_dim));
  c.rms_norm_eps = get_double(j, source, "rms_norm_eps", 1e-6, true);
  c.rope_theta = get_double(j, source, "rope_theta", 10000.0, true);
  c.rope_scaling = parse_rope_scaling(j, source);
  c.max_position_embeddings = get_int(j, source, "max_position_embeddings", 2048, false, 1);
  if (c.rope_scaling.type == nn::RopeScaling::Type::Llama3 && c.rope_scaling.original_max_position_embeddings == 0)
    fail(source, "rope_scaling.original_max_position_embeddings", "required key is missing for llama3 scaling");
  c.tie_word_embeddings = get_bool(j, source, "tie_word_embeddings", false);
  c.attention_bias = get_bool(j, source, "attention_bias", false);
  c.mlp_bias = get_bool(j, source, "mlp_bias", false);
  if (const json* act = find(j, "hidden_act"); act && (!act->is_string() || act->get<std::string>() != "silu"))
    fail(source, "hidden_act", "only \"silu\" is supported, got " + act->dump());
  if (auto it = j.find("bos_token_id"); it != j.end()) c.bos_token_ids = token_ids_from_json(*it, source, "bos_token_id");
  if (auto it = j.find("eos_token_id"); it != j.end()) c.eos_token_ids = token_ids_from_json(*it, source, "eos_token_id");
  return c;
}

LlamaConfig LlamaConfig::load(const std::filesystem::path& path) {
  std::string text = io::read_file(path);
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) SKIFF_THROW(ConfigError, "{}: not valid JSON", path.string());
  return from_json(j, path.string());
}

json LlamaConfig::to_json() const {
  SKIFF_CHECK_T(NotImplementedError, rope_scaling.type == nn::RopeScaling::Type::None,
                "LlamaConfig::to_json: writing rope_scaling is not implemented");
  json j = {{"architectures", {"LlamaForCausalLM"}},
            {"model_type", "llama"},
            {"vocab_size", vocab_size},
            {"hidden_size", hidden_size},
            {"intermediate_size", intermediate_size},
            {"num_hidden_layers", num_hidden_layers},
            {"num_attention_heads", num_attention_heads},
            {"num_key_value_heads", num_key_value_heads},
            {"head_dim", head_dim},
            {"hidden_act", "silu"},
            {"rms_norm_eps", rms_norm_eps},
            {"rope_theta", rope_theta},
            {"rope_scaling", nullptr},
            {"max_position_embeddings", max_position_embeddings},
            {"tie_word_embeddings", tie_word_embeddings},
            {"attention_bias", attention_bias},
            {"mlp_bias", mlp_bias},
            {"torch_dtype", "float32"}};
  auto ids = [](const std::vector<int64_t>& v) { return v.empty() ? json(nullptr) : v.size() == 1 ? json(v[0]) : json(v); };
  j["bos_token_id"] = ids(bos_token_ids);
  j["eos_token_id"] = ids(eos_token_ids);
  return j;
}

}  // namespace skiff::nlp
