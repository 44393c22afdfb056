#include "suites/nlp/encoder/encoder_config.h"

#include "framework/core/error.h"
#include "framework/io/file.h"

namespace skiff::nlp {

void EncoderConfig::check(const std::string& where) const {
  auto positive = [&](int64_t v, const char* name) {
    SKIFF_CHECK(v > 0, "{}: {} must be positive, got {}", where, name, v);
  };
  positive(pieces, "the tokenizer's piece count");
  positive(hidden_size, "hidden_size");
  positive(num_layers, "num_layers");
  positive(num_heads, "num_heads");
  positive(intermediate_size, "intermediate_size");
  SKIFF_CHECK(max_length >= 2, "{}: max_length must be at least 2 ([CLS] and one token), got {}", where, max_length);
  SKIFF_CHECK(hidden_size % num_heads == 0, "{}: num_heads={} must divide hidden_size={}", where, num_heads,
              hidden_size);
  SKIFF_CHECK(pooling == "cls" || pooling == "mean", "{}: pooling must be cls or mean, got '{}'", where, pooling);
  SKIFF_CHECK(dropout >= 0 && dropout < 1, "{}: dropout must be in [0, 1), got {}", where, dropout);
  SKIFF_CHECK(positions == "learned" || positions == "rotary", "{}: positions must be learned or rotary, got '{}'",
              where, positions);
  SKIFF_CHECK(positions == "learned" || (rope_theta > 0 && (hidden_size / num_heads) % 2 == 0),
              "{}: rotary positions need rope_theta > 0 and an even head size, got rope_theta={} and head size {}",
              where, rope_theta, hidden_size / num_heads);
}

nlohmann::json to_json(const EncoderConfig& c) {
  return {{"pieces", c.pieces},         {"hidden_size", c.hidden_size},
          {"num_layers", c.num_layers}, {"num_heads", c.num_heads},
          {"intermediate_size", c.intermediate_size}, {"max_length", c.max_length},
          {"pre_norm", c.pre_norm},     {"dropout", c.dropout},
          {"layer_norm_eps", c.layer_norm_eps}, {"pooling", c.pooling},
          {"labels", c.labels},         {"positions", c.positions},
          {"rope_theta", c.rope_theta}};
}

EncoderConfig encoder_config_from_json(const nlohmann::json& j, const std::string& where) {
  SKIFF_CHECK(j.is_object(), "{}: expected a JSON object", where);
  EncoderConfig c;
  auto field = [&](const char* name, auto& out) {
    SKIFF_CHECK(j.contains(name), "{}: missing field '{}'", where, name);
    try {
      j.at(name).get_to(out);
    } catch (const nlohmann::json::exception&) {
      SKIFF_THROW(ValueError, "{}: field '{}' has the wrong type ({})", where, name, j.at(name).dump());
    }
  };
  field("pieces", c.pieces);
  field("hidden_size", c.hidden_size);
  field("num_layers", c.num_layers);
  field("num_heads", c.num_heads);
  field("intermediate_size", c.intermediate_size);
  field("max_length", c.max_length);
  field("pre_norm", c.pre_norm);
  field("dropout", c.dropout);
  field("layer_norm_eps", c.layer_norm_eps);
  field("pooling", c.pooling);
  field("labels", c.labels);
  // Written since rotary positions came; older encoder.json files have learned ones.
  if (j.contains("positions")) field("positions", c.positions);
  if (j.contains("rope_theta")) field("rope_theta", c.rope_theta);
  c.check(where);
  return c;
}

void save_encoder_config(const EncoderConfig& c, const std::filesystem::path& file) {
  io::write_file_atomic(file, to_json(c).dump(2) + "\n");
}

EncoderConfig load_encoder_config(const std::filesystem::path& file) {
  SKIFF_CHECK_T(IoError, std::filesystem::exists(file), "{} does not exist", file.string());
  auto j = nlohmann::json::parse(io::read_file(file), nullptr, false);
  SKIFF_CHECK(!j.is_discarded(), "{}: not valid JSON", file.string());
  return encoder_config_from_json(j, file.string());
}

}  // namespace skiff::nlp
