#include "framework/nn/lora.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "framework/core/error.h"
#include "framework/io/file.h"
#include "framework/io/safetensors.h"
#include "framework/nn/linear.h"

namespace skiff::nn {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// PEFT names an adapter tensor after the wrapped model ("base_model.model." + name).
constexpr std::string_view kPeftPrefix = "base_model.model.";

std::string last_part(const std::string& name) {
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

// Every adapted Linear of `root` with its name.
std::vector<std::pair<std::string, Linear*>> adapted_layers(Module& root) {
  std::vector<std::pair<std::string, Linear*>> out;
  for (auto& [name, m] : root.named_modules())
    if (auto* l = dynamic_cast<Linear*>(m); l != nullptr && l->has_lora()) out.emplace_back(name, l);
  return out;
}

}  // namespace

std::vector<std::string> add_lora(Module& root, const LoraOptions& o, Generator* gen) {
  SKIFF_CHECK(o.rank > 0, "add_lora: rank must be positive, got {}", o.rank);
  SKIFF_CHECK(o.alpha > 0, "add_lora: alpha must be positive, got {}", o.alpha);
  SKIFF_CHECK(!o.targets.empty(), "add_lora: no target layers named");
  std::vector<std::pair<std::string, Linear*>> chosen;
  std::vector<std::string> linear_names;  // for the error message
  for (auto& [name, m] : root.named_modules()) {
    auto* l = dynamic_cast<Linear*>(m);
    if (l == nullptr || name.find("lora_") != std::string::npos) continue;
    const std::string own = last_part(name);
    if (std::find(linear_names.begin(), linear_names.end(), own) == linear_names.end()) linear_names.push_back(own);
    if (std::find(o.targets.begin(), o.targets.end(), own) != o.targets.end()) chosen.emplace_back(name, l);
  }
  SKIFF_CHECK(!chosen.empty(), "add_lora: no Linear layer is named {}; the model's Linear layers are named {}",
              fmt::join(o.targets, " / "), fmt::join(linear_names, ", "));
  root.requires_grad_(false);
  std::vector<std::string> names;
  for (auto& [name, l] : chosen) {
    l->add_lora(o.rank, o.alpha, gen);
    names.push_back(name);
  }
  return names;
}

void merge_lora(Module& root) {
  auto layers = adapted_layers(root);
  SKIFF_CHECK(!layers.empty(), "merge_lora: the model has no LoRA adapter");
  for (auto& [name, l] : layers) l->merge_lora();
}

void unmerge_lora(Module& root) {
  auto layers = adapted_layers(root);
  SKIFF_CHECK(!layers.empty(), "unmerge_lora: the model has no LoRA adapter");
  for (auto& [name, l] : layers) l->unmerge_lora();
}

std::map<std::string, Tensor> lora_state_dict(const Module& root) {
  std::map<std::string, Tensor> out;
  for (auto& [name, t] : root.state_dict())
    if (name.find(".lora_A.") != std::string::npos || name.find(".lora_B.") != std::string::npos) out[name] = t;
  return out;
}

void save_lora(const Module& root, const LoraOptions& o, const fs::path& dir, const std::string& base_model) {
  std::map<std::string, Tensor> sd = lora_state_dict(root);
  SKIFF_CHECK(!sd.empty(), "save_lora: the model has no LoRA adapter");
  io::TensorMap tensors;
  for (auto& [name, t] : sd) tensors[std::string(kPeftPrefix) + name] = t;
  fs::create_directories(dir);
  io::save_safetensors(dir / "adapter_model.safetensors", tensors, {{"format", "pt"}});
  const json config = {{"peft_type", "LORA"}, {"r", o.rank}, {"lora_alpha", o.alpha},
                       {"target_modules", o.targets}, {"lora_dropout", 0.0}, {"bias", "none"},
                       {"base_model_name_or_path", base_model}};
  io::write_file_atomic(dir / "adapter_config.json", config.dump(2) + "\n");
}

LoraOptions load_lora_options(const fs::path& dir) {
  const fs::path file = dir / "adapter_config.json";
  const json j = json::parse(io::read_file(file), nullptr, false);
  SKIFF_CHECK_T(ConfigError, j.is_object(), "{}: not a JSON object", file.string());
  SKIFF_CHECK_T(ConfigError, j.value("peft_type", std::string("LORA")) == "LORA",
                "{}: peft_type is {}, only LORA adapters are supported", file.string(), j["peft_type"].dump());
  LoraOptions o;
  try {
    o.rank = j.at("r").get<int64_t>();
    o.alpha = j.at("lora_alpha").get<double>();
    o.targets = j.at("target_modules").get<std::vector<std::string>>();
  } catch (const json::exception& e) {
    SKIFF_THROW(ConfigError, "{}: needs r (integer), lora_alpha (number) and target_modules (list of names): {}",
                file.string(), e.what());
  }
  return o;
}

void load_lora(Module& root, const fs::path& dir) {
  const fs::path file = dir / "adapter_model.safetensors";
  io::SafetensorsFile f = io::load_safetensors(file);
  std::map<std::string, Tensor> expected = lora_state_dict(root);
  SKIFF_CHECK(!expected.empty(), "load_lora: the model has no LoRA adapter to load {} into", file.string());
  std::map<std::string, Tensor> found;
  for (auto& [name, t] : f.tensors)
    found[name.starts_with(kPeftPrefix) ? name.substr(kPeftPrefix.size()) : name] = t;
  std::vector<std::string> missing, unexpected, wrong_shape;
  for (auto& [name, t] : expected) {
    auto it = found.find(name);
    if (it == found.end()) missing.push_back(name);
    else if (it->second.shape() != t.shape())
      wrong_shape.push_back(fmt::format("{} (file {}, model {})", name, it->second.shape(), t.shape()));
  }
  for (auto& [name, t] : found)
    if (!expected.count(name)) unexpected.push_back(name);
  SKIFF_CHECK(missing.empty() && unexpected.empty() && wrong_shape.empty(),
              "{}: adapters do not fit the model: missing [{}], unexpected [{}], wrong shape [{}]", file.string(),
              fmt::join(missing, ", "), fmt::join(unexpected, ", "), fmt::join(wrong_shape, ", "));
  std::map<std::string, Tensor> sd;
  for (auto& [name, t] : expected) sd[name] = found[name];
  root.load_state_dict(sd, /*strict=*/false);
}

}  // namespace skiff::nn
