#include "suites/ocr/rec_inference_config.h"

#include <cmath>

#include <yaml-cpp/yaml.h>

#include "framework/config/config.h"
#include "framework/config/schema.h"
#include "framework/core/error.h"
#include "framework/io/file.h"

namespace skiff::ocr {

namespace fs = std::filesystem;

void write_rec_inference_config(const fs::path& path, const RecInferenceConfig& c) {
  YAML::Node root;
  root["Global"]["model_name"] = c.model_name;
  root["Global"]["batch_size"] = c.batch_size;
  YAML::Node ops(YAML::NodeType::Sequence);
  YAML::Node decode;
  decode["DecodeImage"]["img_mode"] = "BGR";
  decode["DecodeImage"]["channel_first"] = false;
  YAML::Node resize;
  resize["RecResizeImg"]["image_shape"] = std::vector<int>{3, c.height, c.width};
  resize["RecResizeImg"]["dynamic_width"] = !c.fixed_width;
  YAML::Node norm;
  norm["NormalizeImage"]["scale"] = config::number_node(1.0 / 255.0);
  norm["NormalizeImage"]["mean"] = std::vector<double>{0.5, 0.5, 0.5};
  norm["NormalizeImage"]["std"] = std::vector<double>{0.5, 0.5, 0.5};
  YAML::Node keep;
  keep["KeepKeys"]["keep_keys"] = std::vector<std::string>{"image"};
  for (auto& n : {decode, resize, norm, keep}) ops.push_back(n);
  root["PreProcess"]["transform_ops"] = ops;
  root["PostProcess"]["name"] = "CTCLabelDecode";
  root["PostProcess"]["use_space_char"] = c.use_space_char;
  root["PostProcess"]["character_dict"] = c.characters;
  io::write_file_atomic(path, config::to_yaml(root));
}

RecInferenceConfig read_rec_inference_config(const fs::path& path) {
  YAML::Node root = config::load_config(path.string());
  config::Section top(root, "", path.string());
  RecInferenceConfig c;
  c.model_name = top.section("Global").text("model_name", "");
  c.batch_size = int(top.section("Global").integer("batch_size", 0, 0));
  config::Section post = top.section("PostProcess");
  std::string name = post.text("name");
  if (name != "CTCLabelDecode")
    throw ValueError(fmt::format("{}: post-processing '{}' is not supported (CTCLabelDecode is)", post.where("name"), name));
  c.use_space_char = post.boolean("use_space_char", true);
  c.characters = post.texts("character_dict");
  if (c.characters.empty()) throw ValueError(fmt::format("{}: the dictionary is empty", post.where("character_dict")));
  bool resized = false;
  for (const auto& op : config::component_list(top.section("PreProcess"), "transform_ops")) {
    if (op.name == "RecResizeImg") {
      auto shape = op.settings.integers("image_shape", std::nullopt, 1);
      if (shape.size() != 3 || shape[0] != 3)
        throw ValueError(fmt::format("{}: expected [3, H, W]", op.settings.where("image_shape")));
      c.height = int(shape[1]), c.width = int(shape[2]);
      c.fixed_width = !op.settings.boolean("dynamic_width", true);
      resized = true;
    }
    if (op.name == "NormalizeImage") {
      double scale = op.settings.number("scale", 1.0 / 255.0);
      auto mean = op.settings.numbers("mean", std::vector<double>{0.5, 0.5, 0.5});
      auto std = op.settings.numbers("std", std::vector<double>{0.5, 0.5, 0.5});
      bool standard = std::abs(scale - 1.0 / 255.0) < 1e-9 && mean.size() == 3 && std.size() == 3;
      for (size_t i = 0; standard && i < 3; ++i) standard = mean[i] == 0.5 && std[i] == 0.5;
      if (!standard)
        throw ValueError(fmt::format("{}: only (x / 255 - 0.5) / 0.5 is supported for recognizers", op.where));
    }
  }
  if (!resized) throw ValueError(fmt::format("{}: PreProcess.transform_ops has no RecResizeImg", path.string()));
  return c;
}

std::optional<fs::path> rec_inference_config_beside(const fs::path& model) {
  fs::path dir = fs::is_directory(model) ? model : model.parent_path();
  fs::path p = dir / "inference.yml";
  if (fs::exists(p)) return p;
  return std::nullopt;
}

}  // namespace skiff::ocr
