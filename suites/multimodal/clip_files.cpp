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
          {"pretrained_model", c.pretrained_model}, {"pretrained_output", c.pretrained_output},
          {"pretrained_random_init", c.pretrained_random_init},
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
  if (j.contains("pretrained_model")) c.pretrained_model = j["pretrained_model"].get<std::string>();
  if (j.contains("pretrained_output")) c.pretrained_output = j["pretrained_output"].get<std::string>();
  if (j.contains("pretrained_random_init")) c.pretrained_random_init = j["pretrained_random_init"].get<bool>();
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

namespace {

/// The files of a model directory: its JSON config (parsed), weights and vocabulary.
struct ModelFiles {
  nlohmann::json config;
  fs::path config_file, weights, vocab;
};

ModelFiles model_files(const fs::path& dir, const std::string& config_name, const std::string& what) {
  SKIFF_CHECK_T(IoError, fs::is_directory(dir), "{}: no such model directory (skiff export -c "
                "configs/multimodal/{}.yml writes one)", dir.string(), what);
  ModelFiles f;
  f.config_file = dir / config_name;
  SKIFF_CHECK_T(IoError, fs::exists(f.config_file), "{}: no {}", dir.string(), config_name);
  f.weights = dir / "model.safetensors";
  f.vocab = dir / "vocab.txt";
  if (!fs::exists(f.weights)) f.weights = dir / "best_model.safetensors";  // a training run's directory
  if (!fs::exists(f.vocab) && fs::exists(dir / "config.yml")) {
    const YAML::Node recipe = YAML::LoadFile((dir / "config.yml").string());
    if (recipe["Tokenizer"] && recipe["Tokenizer"]["vocab"]) f.vocab = recipe["Tokenizer"]["vocab"].as<std::string>();
  }
  SKIFF_CHECK_T(IoError, fs::exists(f.weights), "{}: no model.safetensors (or best_model.safetensors)", dir.string());
  SKIFF_CHECK_T(IoError, fs::exists(f.vocab), "{}: no vocab.txt", dir.string());
  try {
    f.config = nlohmann::json::parse(io::read_file(f.config_file));
  } catch (const nlohmann::json::exception& e) {
    SKIFF_THROW(ValueError, "{}: not JSON: {}", f.config_file.string(), e.what());
  }
  return f;
}

std::unique_ptr<text::Tokenizer> model_tokenizer(const ModelFiles& f, int64_t vocab_size) {
  auto tok = text::load_tokenizer(f.vocab);
  end_and_pad_ids(*tok);
  SKIFF_CHECK(vocab_size == tok->vocab_size(), "{}: vocab_size {} but {} holds {} tokens", f.config_file.string(),
              vocab_size, f.vocab.string(), tok->vocab_size());
  return tok;
}

}  // namespace

LoadedClip load_clip_model(const fs::path& dir) {
  const ModelFiles f = model_files(dir, "clip.json", "clip_synth");
  LoadedClip out;
  out.model = std::make_unique<ClipModel>(clip_config_from_json(f.config, f.config_file.string()));
  out.tokenizer = model_tokenizer(f, out.model->config().vocab_size);
  train::load_weights(*out.model, f.weights);
  out.model->eval();
  return out;
}

nlohmann::json captioner_config_json(const CaptionerConfig& c) {
  return {{"image_size", c.image_size}, {"vision_channels", c.vision_channels}, {"width", c.width},
          {"layers", c.layers},         {"heads", c.heads},                     {"vocab_size", c.vocab_size},
          {"context_length", c.context_length}};
}

CaptionerConfig captioner_config_from_json(const nlohmann::json& j, const std::string& file) {
  SKIFF_CHECK(j.is_object(), "{}: expected a JSON object", file);
  CaptionerConfig c;
  try {
    c.image_size = j.at("image_size").get<int64_t>();
    c.vision_channels = j.at("vision_channels").get<std::vector<int64_t>>();
    c.width = j.at("width").get<int64_t>();
    c.layers = j.at("layers").get<int64_t>();
    c.heads = j.at("heads").get<int64_t>();
    c.vocab_size = j.at("vocab_size").get<int64_t>();
    c.context_length = j.at("context_length").get<int64_t>();
    c.check();
  } catch (const nlohmann::json::exception& e) {
    SKIFF_THROW(ValueError, "{}: {}", file, e.what());
  } catch (const ValueError& e) {
    SKIFF_THROW(ValueError, "{}: {}", file, e.what());
  }
  return c;
}

LoadedCaptioner load_captioner(const fs::path& dir) {
  const ModelFiles f = model_files(dir, "captioner.json", "caption_synth");
  LoadedCaptioner out;
  out.model = std::make_unique<Captioner>(captioner_config_from_json(f.config, f.config_file.string()));
  out.tokenizer = model_tokenizer(f, out.model->config().vocab_size);
  train::load_weights(*out.model, f.weights);
  out.model->eval();
  return out;
}

}  // namespace skiff::multimodal
