#include "suites/nlp/llama/loader.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/nn/init.h"
#include "framework/io/file.h"
#include "framework/io/safetensors.h"

namespace skiff::nlp {
namespace {
namespace fs = std::filesystem;

struct Found {
  Tensor tensor;
  std::string file;
};

std::string join(const std::vector<std::string>& items, size_t limit = 10) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < limit; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > limit) out += fmt::format(" and {} more", items.size() - limit);
  return out;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

void load_llama_weights(LlamaForCausalLM& model, const fs::path& dir, const LlamaLoadOptions& options) {
  std::error_code ec;
  fs::path single = dir / "model.safetensors", index = dir / "model.safetensors.index.json";
  // Tensor name -> the file the index assigns it (sharded checkpoints only).
  std::map<std::string, std::string> weight_map;
  std::vector<std::string> files;
  if (fs::exists(index, ec)) {
    nlohmann::json j = nlohmann::json::parse(io::read_file(index), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
      SKIFF_THROW(IoError, "llama: {}: not a safetensors index (no \"weight_map\" object)", index.string());
    std::set<std::string> unique;
    for (const auto& [name, file] : j["weight_map"].items()) {
      if (!file.is_string())
        SKIFF_THROW(IoError, "llama: {}: weight_map[\"{}\"] is not a file name", index.string(), name);
      weight_map[name] = (dir / file.get<std::string>()).string();
      unique.insert(weight_map[name]);
    }
    files.assign(unique.begin(), unique.end());
    for (const auto& f : files)
      if (!fs::is_regular_file(f, ec))
        SKIFF_THROW(IoError, "llama: shard {} named in {} does not exist", f, index.string());
  } else if (fs::exists(single, ec)) {
    files.push_back(single.string());
  } else {
    SKIFF_THROW(IoError, "llama: {} holds neither model.safetensors nor model.safetensors.index.json",
                dir.string());
  }

  std::map<std::string, Found> found;
  for (const auto& f : files) {
    io::SafetensorsFile sf = io::load_safetensors(f, io::LoadOptions{options.mmap});
    for (auto& [name, t] : sf.tensors) found.emplace(name, Found{t, f});
  }

  std::map<std::string, Tensor> sd;
  for (const auto& [name, param] : model.named_parameters()) {
    auto it = found.find(name);
    if (it == found.end()) {
      auto wm = weight_map.find(name);
      std::string where = wm != weight_map.end() ? wm->second + " (where " + index.string() + " puts it)"
                                                 : join(files, files.size());
      SKIFF_THROW(ValueError, "llama: tensor '{}' not found in {}", name, where);
    }
    const Tensor& t = it->second.tensor;
    SKIFF_CHECK_SHAPE(t.shape() == param.shape(), "llama: tensor '{}' in {}: expected shape {}, got {}", name,
                      it->second.file, param.shape(), t.shape());
    SKIFF_CHECK_DTYPE(t.dtype() == DType::Float32 || t.dtype() == DType::Float16 || t.dtype() == DType::BFloat16,
                      "llama: tensor '{}' in {}: expected F32, F16 or BF16, got {}", name, it->second.file,
                      dtype_name(t.dtype()));
    sd[name] = t;
  }
  std::vector<std::string> unexpected;
  for (const auto& [name, f] : found) {
    if (sd.count(name) || ends_with(name, ".rotary_emb.inv_freq")) continue;
    if (name == "lm_head.weight" && model.config().tie_word_embeddings) continue;
    unexpected.push_back(name + " (" + f.file + ")");
  }
  if (!unexpected.empty()) {
    std::string msg = fmt::format("llama: {} unexpected tensor(s) that the model has no parameter for: {}",
                                  unexpected.size(), join(unexpected));
    if (!options.allow_unexpected) SKIFF_THROW(ValueError, "{}", msg);
    fmt::print(stderr, "warning: {} (ignored)\n", msg);
  }
  model.load_state_dict(sd, /*strict=*/true);
}

std::shared_ptr<LlamaForCausalLM> load_llama(const fs::path& dir, const LlamaLoadOptions& options) {
  std::error_code ec;
  SKIFF_CHECK(fs::is_directory(dir, ec), "llama: model directory '{}' does not exist", dir.string());
  fs::path config = dir / "config.json";
  if (!fs::exists(config, ec)) SKIFF_THROW(IoError, "llama: {} is missing (a Hugging Face model directory)", config.string());
  std::shared_ptr<LlamaForCausalLM> model;
  {
    nn::init::SkipRandomInitGuard no_init;  // every parameter is loaded next (missing ones are an error)
    model = std::make_shared<LlamaForCausalLM>(LlamaConfig::load(config));
  }
  load_llama_weights(*model, dir, options);
  model->eval();
  return model;
}

}  // namespace skiff::nlp
