#include "suites/ocr/det_inference_config.h"

#include <string>

#include <yaml-cpp/yaml.h>

#include "framework/config/config.h"
#include "framework/config/schema.h"
#include "framework/core/error.h"
#include "framework/io/file.h"

namespace skiff::ocr {

namespace fs = std::filesystem;

namespace {
// A float setting as the decimal it prints as (0.3f -> 0.3, not 0.30000001192092896).
YAML::Node decimal(float v) { return YAML::Node(fmt::format("{}", v)); }
YAML::Node decimals(const std::array<float, 3>& v) {
  YAML::Node list(YAML::NodeType::Sequence);
  for (float x : v) list.push_back(decimal(x));
  return list;
}
}  // namespace

void write_det_inference_config(const fs::path& path, const DetInferenceConfig& c) {
  YAML::Node root;
  root["Global"]["model_name"] = c.model_name;
  YAML::Node decode, resize, norm, chw, keep;
  decode["DecodeImage"]["img_mode"] = "BGR";
  decode["DecodeImage"]["channel_first"] = false;
  resize["DetResizeForTest"]["limit_side_len"] = c.preprocess.limit_side_len;
  resize["DetResizeForTest"]["limit_type"] = c.preprocess.limit_type == LimitType::Max ? "max" : "min";
  norm["NormalizeImage"]["scale"] = decimal(c.preprocess.scale);
  norm["NormalizeImage"]["mean"] = decimals(c.preprocess.mean);
  norm["NormalizeImage"]["std"] = decimals(c.preprocess.std);
  norm["NormalizeImage"]["order"] = "hwc";
  chw["ToCHWImage"] = YAML::Node(YAML::NodeType::Null);
  keep["KeepKeys"]["keep_keys"] = std::vector<std::string>{"image", "shape"};
  YAML::Node ops(YAML::NodeType::Sequence);
  for (auto& n : {decode, resize, norm, chw, keep}) ops.push_back(n);
  root["PreProcess"]["transform_ops"] = ops;
  YAML::Node post = root["PostProcess"];
  post["name"] = "DBPostProcess";
  post["thresh"] = decimal(c.db.thresh);
  post["box_thresh"] = decimal(c.db.box_thresh);
  post["max_candidates"] = c.db.max_candidates;
  post["unclip_ratio"] = decimal(c.db.unclip_ratio);
  post["use_dilation"] = c.db.use_dilation;
  post["score_mode"] = c.db.score_mode == DbParams::Fast ? "fast" : "slow";
  io::write_file_atomic(path, config::to_yaml(root));
}

DetInferenceConfig read_det_inference_config(const fs::path& path) {
  YAML::Node root = config::load_config(path.string());
  config::Section top(root, "", path.string());
  DetInferenceConfig c;
  c.model_name = top.section("Global").text("model_name", "");
  config::Section post = top.section("PostProcess");
  std::string name = post.text("name");
  if (name != "DBPostProcess")
    throw ValueError(fmt::format("{}: post-processing '{}' is not a text detector's (DBPostProcess)", post.where("name"), name));
  auto unit = [&](const char* key, float fallback) {
    double v = post.number(key, fallback);
    if (v < 0 || v > 1) throw ValueError(fmt::format("{}: must be in [0, 1], got {}", post.where(key), v));
    return float(v);
  };
  c.db.thresh = unit("thresh", c.db.thresh);
  c.db.box_thresh = unit("box_thresh", c.db.box_thresh);
  c.db.max_candidates = int(post.integer("max_candidates", c.db.max_candidates, 1));
  c.db.unclip_ratio = float(post.positive("unclip_ratio", c.db.unclip_ratio));
  c.db.use_dilation = post.boolean("use_dilation", c.db.use_dilation);
  std::string mode = post.text("score_mode", "fast");
  if (mode != "fast" && mode != "slow")
    throw ValueError(fmt::format("{}: score_mode must be fast or slow, got '{}'", post.where("score_mode"), mode));
  c.db.score_mode = mode == "fast" ? DbParams::Fast : DbParams::Slow;
  for (const auto& op : config::component_list(top.section("PreProcess"), "transform_ops")) {
    if (op.name == "DetResizeForTest") {
      c.preprocess.limit_side_len = int(op.settings.integer("limit_side_len", c.preprocess.limit_side_len, 1));
      std::string type = op.settings.text("limit_type", "max");
      if (type != "max" && type != "min")
        throw ValueError(fmt::format("{}: limit_type must be max or min, got '{}'", op.settings.where("limit_type"), type));
      c.preprocess.limit_type = type == "max" ? LimitType::Max : LimitType::Min;
    }
    if (op.name == "NormalizeImage") {
      c.preprocess.scale = float(op.settings.number("scale", c.preprocess.scale));
      auto mean = op.settings.numbers("mean", std::vector<double>(c.preprocess.mean.begin(), c.preprocess.mean.end()));
      auto std = op.settings.numbers("std", std::vector<double>(c.preprocess.std.begin(), c.preprocess.std.end()));
      if (mean.size() != 3 || std.size() != 3)
        throw ValueError(fmt::format("{}: mean and std need three values each", op.where));
      for (size_t i = 0; i < 3; ++i) {
        if (std[i] == 0) throw ValueError(fmt::format("{}: std must not be 0", op.settings.where("std")));
        c.preprocess.mean[i] = float(mean[i]), c.preprocess.std[i] = float(std[i]);
      }
    }
  }
  return c;
}

}  // namespace skiff::ocr
