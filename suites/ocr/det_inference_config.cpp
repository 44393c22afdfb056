#include "suites/ocr/det_inference_config.h"

#include <charconv>
#include <cmath>
#include <string>
#include <string_view>

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

namespace {

double parse_scale(const config::Section& s, double fallback) {
  if (!s.has("scale")) return fallback;
  std::string text = s.text("scale");
  auto number = [&](std::string_view t) {
    double v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v))
      throw ValueError(fmt::format("{}: expected a number or a fraction such as 1./255., got '{}'", s.where("scale"), text));
    return v;
  };
  size_t slash = text.find('/');
  double v = slash == std::string::npos ? number(text) : number(std::string_view(text).substr(0, slash)) /
                                                            number(std::string_view(text).substr(slash + 1));
  if (!(v > 0) || !std::isfinite(v)) throw ValueError(fmt::format("{}: must be positive, got '{}'", s.where("scale"), text));
  return v;
}

}  // namespace

void read_det_resize(const config::Section& s, DetPreprocessParams& p) {
  std::string type = s.text("limit_type", "max");
  if (type != "max" && type != "min")
    throw ValueError(fmt::format("{}: limit_type must be max or min, got '{}'", s.where("limit_type"), type));
  if (s.has("resize_long")) {
    p.limit_side_len = int(s.integer("resize_long", std::nullopt, 1));
    p.limit_type = LimitType::Max;
  } else {
    p.limit_side_len = int(s.integer("limit_side_len", p.limit_side_len, 1));
    p.limit_type = type == "max" ? LimitType::Max : LimitType::Min;
  }
}

void read_normalize_image(const config::Section& s, DetPreprocessParams& p) {
  p.scale = float(parse_scale(s, p.scale));
  auto mean = s.numbers("mean", std::vector<double>(p.mean.begin(), p.mean.end()));
  auto std = s.numbers("std", std::vector<double>(p.std.begin(), p.std.end()));
  if (mean.size() != 3) throw ValueError(fmt::format("{}: needs three values", s.where("mean")));
  if (std.size() != 3) throw ValueError(fmt::format("{}: needs three values", s.where("std")));
  for (size_t i = 0; i < 3; ++i) {
    if (std[i] == 0) throw ValueError(fmt::format("{}: std must not be 0", s.where("std")));
    p.mean[i] = float(mean[i]), p.std[i] = float(std[i]);
  }
}

DbParams read_db_postprocess(const config::Section& s) {
  DbParams db;
  auto unit = [&](const char* key, float fallback) {
    double v = s.number(key, fallback);
    if (v < 0 || v > 1) throw ValueError(fmt::format("{}: must be in [0, 1], got {}", s.where(key), v));
    return float(v);
  };
  db.thresh = unit("thresh", db.thresh);
  db.box_thresh = unit("box_thresh", db.box_thresh);
  db.max_candidates = int(s.integer("max_candidates", db.max_candidates, 1));
  db.unclip_ratio = float(s.positive("unclip_ratio", db.unclip_ratio));
  db.use_dilation = s.boolean("use_dilation", db.use_dilation);
  std::string mode = s.text("score_mode", "fast");
  if (mode != "fast" && mode != "slow")
    throw ValueError(fmt::format("{}: score_mode must be fast or slow, got '{}'", s.where("score_mode"), mode));
  db.score_mode = mode == "fast" ? DbParams::Fast : DbParams::Slow;
  return db;
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
  c.db = read_db_postprocess(post);
  for (const auto& op : config::component_list(top.section("PreProcess"), "transform_ops")) {
    if (op.name == "DetResizeForTest") read_det_resize(op.settings, c.preprocess);
    if (op.name == "NormalizeImage") read_normalize_image(op.settings, c.preprocess);
  }
  return c;
}

}  // namespace skiff::ocr
