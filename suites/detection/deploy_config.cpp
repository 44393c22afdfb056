#include "suites/detection/deploy_config.h"

#include <fmt/format.h>

#include <yaml-cpp/yaml.h>

#include "framework/config/config.h"
#include "framework/config/section.h"
#include "framework/core/error.h"

namespace skiff::detection {
namespace {

namespace fs = std::filesystem;

/// One Preprocess step as PaddleDetection's deploy file writes it (`- type: Resize` with
/// its keys beside), or as a reader's transform list does (`- Resize: {keys}`).
config::Section step_section(const YAML::Node& step, size_t index, const std::string& file, std::string& type) {
  const std::string path = fmt::format("Preprocess[{}]", index);
  if (step.IsMap() && step["type"]) {
    type = config::Section(step, path, file).text("type");
    return config::Section(step, path, file);
  }
  if (step.IsMap() && step.size() == 1) {
    type = config::key_text(step.begin()->first, file);
    return config::Section(step.begin()->second, path + "." + type, file);
  }
  throw ValueError(fmt::format("{}:{}: {}: expected '- type: NAME' with its keys", file, step.Mark().line + 1, path));
}

void read_preprocess(const config::Section& top, DetectorConfig& c) {
  const YAML::Node steps = top.get("Preprocess");
  if (!steps.IsSequence()) throw ValueError(fmt::format("{}: expected a list of preprocessing steps", top.where("Preprocess")));
  bool normalized = false;
  for (size_t i = 0; i < steps.size(); ++i) {
    std::string type;
    const config::Section s = step_section(steps[i], i, top.file(), type);
    if (type == "Resize") {
      // The exported model has a fixed input size; only how the image fits it matters.
      c.keep_ratio = s.boolean("keep_ratio", true);
      // PaddleDetection's keep_ratio places the image at the top left (PadBatch pads after it).
      c.centre = false;
      const int64_t interp = s.integer("interp", 2);  // PaddleDetection's default: cubic
      if (interp > 4) throw ValueError(fmt::format("{}: expected 0..4 (OpenCV's interpolations)", s.where("interp")));
      c.interpolation = int(interp);
    } else if (type == "NormalizeImage") {
      // PaddleDetection decodes to RGB; is_scale divides by 255 before the mean and std.
      const std::vector<double> mean = s.numbers("mean", std::vector<double>{0.485, 0.456, 0.406});
      const std::vector<double> std = s.numbers("std", std::vector<double>{0.229, 0.224, 0.225});
      if (mean.size() != 3 || std.size() != 3)
        throw ValueError(fmt::format("{}: expected 3 means and 3 stds", s.where(mean.size() != 3 ? "mean" : "std")));
      const double unit = s.boolean("is_scale", true) ? 255.0 : 1.0;
      for (size_t k = 0; k < 3; ++k) {
        if (std[k] <= 0) throw ValueError(fmt::format("{}: a std must be > 0", s.where("std")));
        c.mean[k] = float(mean[k] * unit);
        c.std[k] = float(std[k] * unit);
      }
      normalized = true;
    } else if (type != "Decode" && type != "Permute" && type != "PadStride" && type != "PadBatch") {
      throw ValueError(fmt::format("{}: preprocessing step '{}' is not supported by skiff det "
                                   "(Decode, Resize, NormalizeImage, Permute, PadStride)",
                                   top.where("Preprocess"), type));
    }
  }
  // Without NormalizeImage the model takes 0..255 RGB.
  if (!normalized) c.mean = {0, 0, 0}, c.std = {1, 1, 1};
  c.rgb = true;
}

}  // namespace

DetectorConfig read_deploy_config(const fs::path& model_dir) {
  const fs::path onnx = model_dir / "inference.onnx", yml = model_dir / "inference.yml";
  for (const fs::path& p : {onnx, yml})
    SKIFF_CHECK_T(IoError, fs::is_regular_file(p), "{}: no {} (skiff export -c RECIPE writes it)", model_dir.string(),
                  p.filename().string());
  YAML::Node root;
  try {
    root = YAML::LoadFile(yml.string());
  } catch (const YAML::Exception& e) {
    throw ValueError(fmt::format("{}:{}: {}", yml.string(), e.mark.line + 1, e.msg));
  }
  const config::Section top(root, "", yml.string());
  DetectorConfig c;
  c.model = onnx.string();
  c.labels = top.texts("label_list");
  SKIFF_CHECK(!c.labels.empty(), "{}: label_list is empty", top.where("label_list"));
  c.score_threshold = float(top.number("draw_threshold", 0.5));
  SKIFF_CHECK(c.score_threshold >= 0 && c.score_threshold <= 1, "{}: expected a score in 0..1",
              top.where("draw_threshold"));
  c.reg_max = int(top.integer("reg_max", 7, 1));
  read_preprocess(top, c);
  return c;
}

}  // namespace skiff::detection
