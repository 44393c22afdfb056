// A trained dual encoder on disk (clip_files.h).
#include "suites/multimodal/clip_files.h"

#include <yaml-cpp/yaml.h>

#include "framework/core/error.h"
#include "framework/io/file.h"
#include "framework/train/trainer.h"
#include "suites/multimodal/zero_shot.h"

namespace skiff::multimodal {

namespace fs = std::filesystem;

nlohmann::json clip_config_json(const ClipConfig& c) {
  return {{"image_size", c.image_size},         {"vision_type", c.vision_type},   {"vision_channels", c.vision_channels},
          {"patch_size", c.patch_size},         {"vision_width", c.vision_width}, {"vision_layers", c.vision_layers},
          {"vision_heads", c.vision_heads},     {"vocab_size", c.vocab_size},     {"context_length", c.context_length},
          {"text_width", c.text_width},         {"text_layers", c.text_layers},   {"text_heads", c.text_heads},
          {"causal_text", c.causal_text},       {"embed_dim", c.embed_dim},       {"init_temperature", c.init_temperature},
          {"max_logit_scale", c.max_logit_scale}};
}

ClipConfig clip_config_from_json(const nlohmann::json& j, const std::string& file) {
  SKIFF_CHECK(j.is_object(), "{}: expected a JSON object", file);
  ClipConfig c;
  auto integer = [&](const char* key, int64_t& v) {
    SKIFF_CHECK(j.contains(key) && j[key].is_number_integer(), "{}: '{}' must be an integer", file, key);
    v = j[key].get<int64_t>();
  };
  integer("image_size", c.image_size);
  integer("patch_size", c.patch_size);
  integer("vision_width", c.vision_width);
  integer("vision_layers", c.vision_layers);
  integer("vision_heads", c.vision_heads);
  integer("vocab_size", c.vocab_size);
  integer("context_length", c.context_length);
  integer("text_width", c.text_width);
  integer("text_layers", c.text_layers);
  integer("text_heads", c.text_heads);
  integer("embed_dim", c.embed_dim);
  if (j.contains("vision_type")) c.vision_type = j["vision_type"].get<std::string>();
  if (j.contains("vision_channels")) c.vision_channels = j["vision_channels"].get<std::vector<int64_t>>();
  if (j.contains("causal_text")) c.causal_text = j["causal_text"].get<bool>();
  if (j.contains("init_temperature")) c.init_temperature = j["init_temperature"].get<double>();
  if (j.contains("max_logit_scale")) c.max_logit_scale = j["max_logit_scale"].get<double>();
  try {
    c.check();
  } catch (const ValueError& e) {
    SKIFF_THROW(ValueError, "{}: {}", file, e.what());
  }
  return c;
}

LoadedClip load_clip_model(const fs::path& dir) {
  SKIFF_CHECK_T(IoError, fs::is_directory(dir), "{}: no such model directory (skiff export -c "
                "configs/multimodal/clip_synth.yml writes one)", dir.string());
  const fs::path config = dir / "clip.json";
  SKIFF_CHECK_T(IoError, fs::exists(config), "{}: no clip.json", dir.string());
  fs::path weights = dir / "model.safetensors", vocab = dir / "vocab.txt";
  if (!fs::exists(weights)) weights = dir / "best_model.safetensors";  // a training run's directory
  if (!fs::exists(vocab) && fs::exists(dir / "config.yml")) {
    const YAML::Node recipe = YAML::LoadFile((dir / "config.yml").string());
    if (recipe["Tokenizer"] && recipe["Tokenizer"]["vocab"]) vocab = recipe["Tokenizer"]["vocab"].as<std::string>();
  }
  SKIFF_CHECK_T(IoError, fs::exists(weights), "{}: no model.safetensors (or best_model.safetensors)", dir.string());
  SKIFF_CHECK_T(IoError, fs::exists(vocab), "{}: no vocab.txt", dir.string());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(io::read_file(config));
  } catch (const nlohmann::json::exception& e) {
    SKIFF_THROW(ValueError, "{}: not JSON: {}", config.string(), e.what());
  }
  LoadedClip out;
  out.tokenizer = text::load_tokenizer(vocab);
  end_and_pad_ids(*out.tokenizer);
  out.model = std::make_unique<ClipModel>(clip_config_from_json(j, config.string()));
  SKIFF_CHECK(out.model->config().vocab_size == out.tokenizer->vocab_size(),
              "{}: vocab_size {} but {} holds {} tokens", config.string(), out.model->config().vocab_size,
              vocab.string(), out.tokenizer->vocab_size());
  train::load_weights(*out.model, weights);
  out.model->eval();
  return out;
}

}  // namespace skiff::multimodal
