// `skiff det IMAGE|DIR|GLOB ...`: objects in images with a COCO detector from the
// zoo (NanoDet by default): labelled boxes on stdout, or one JSON object per image
// with PaddleX's object-detection keys, and drawn pictures under --save_path.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "framework/cli/command_registry.h"
#include "framework/core/error.h"
#include "framework/core/threading.h"
#include "framework/data/image_io.h"
#include "framework/io/file.h"
#include "suites/detection/deploy_config.h"
#include "suites/detection/detector.h"
#include "suites/detection/draw.h"

namespace skiff::detection {

void add_det_synth_command(CLI::App& det);  // det_synth_command.cpp

namespace {

namespace fs = std::filesystem;

struct DetOptions {
  std::vector<std::string> inputs;
  DetectorConfig config;
  std::string model_dir;
  bool json = false;
  std::string save_path;
  int threads = 0;
};

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

/// PaddleX's object-detection result: {input_path, boxes: [{cls_id, label, score, coordinate}]}.
nlohmann::json result_json(const std::string& path, const Detector& det, const DetectionResult& r, double total_ms) {
  nlohmann::json boxes = nlohmann::json::array();
  for (const auto& d : r.boxes)
    boxes.push_back({{"cls_id", d.class_id},
                     {"label", det.label(d.class_id)},
                     {"score", round3(d.score)},
                     {"coordinate", {round3(d.box.x0), round3(d.box.y0), round3(d.box.x1), round3(d.box.y1)}}});
  return {{"input_path", path},
          {"boxes", boxes},
          {"timings_ms",
           {{"total", total_ms}, {"preprocess", r.preprocess_ms}, {"inference", r.inference_ms}, {"postprocess", r.postprocess_ms}}}};
}

void save_results(const std::string& dir, const std::string& input, const cv::Mat& image, const Detector& det,
                  const DetectionResult& r, const nlohmann::json& j) {
  fs::create_directories(dir);
  const fs::path in(input);
  const std::string stem = in.stem().string();
  io::write_file_atomic((fs::path(dir) / (stem + "_res.json")).string(), j.dump(2) + "\n");
  std::string ext = in.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), ::tolower);
  if (ext != ".png" && ext != ".jpg" && ext != ".jpeg" && ext != ".bmp") ext = ".png";
  data::write_image_file((fs::path(dir) / (stem + "_res_img" + ext)).string(),
                         draw_detections(image, r.boxes, [&](int c) { return det.label(c); }));
}

int run_det(DetOptions& o) {
  if (o.threads > 0) set_num_threads(o.threads);
  std::vector<std::string> files = data::expand_image_inputs(o.inputs, "skiff det");
  SKIFF_CHECK(!files.empty(), "det: no input images");
  Detector det(o.config);
  int failures = 0;
  const bool many = files.size() > 1;
  for (const auto& file : files) {
    try {
      const auto t0 = std::chrono::steady_clock::now();
      cv::Mat image = data::read_image_file(file);
      DetectionResult r = det.detect(image);
      const double total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      nlohmann::json j = result_json(file, det, r, total_ms);
      if (o.json) {
        fmt::print("{}\n", j.dump());
      } else {
        if (many) fmt::print("==> {} <==\n", file);
        for (const auto& d : r.boxes)
          fmt::print("{:<14} {:.2f}  [{:.0f}, {:.0f}, {:.0f}, {:.0f}]\n", det.label(d.class_id), d.score, d.box.x0,
                     d.box.y0, d.box.x1, d.box.y1);
        if (r.boxes.empty()) fmt::print("(nothing above {:.2f})\n", o.config.score_threshold);
      }
      std::fflush(stdout);
      if (!o.save_path.empty()) save_results(o.save_path, file, image, det, r, j);
    } catch (const Error& e) {
      // One bad image does not stop the others; the exit code reports it.
      fmt::print(stderr, "skiff det: {}: {}\n", e.kind(), e.full_message());
      ++failures;
    }
  }
  if (failures) fmt::print(stderr, "skiff det: {} of {} images failed\n", failures, files.size());
  return failures ? 2 : 0;
}

void add_det_command(CLI::App& app) {
  auto o = std::make_shared<DetOptions>();
  auto* det = app.add_subcommand("det", "Detect objects (80 COCO classes) in images with NanoDet");
  det->footer(
      "Examples:\n"
      "  skiff det photo.jpg                     one line per object: label, score, [x0, y0, x1, y1]\n"
      "  skiff det photos/ --json                one JSON object per image (PaddleX keys: boxes[].cls_id,\n"
      "                                          label, score, coordinate)\n"
      "  skiff det 'shots/*.png' --save_path out also write out/<name>_res.json and <name>_res_img.png\n"
      "  skiff det shot.png --model_dir output/picodet_lcnet_synth/inference\n"
      "                                          a model from skiff export (inference.onnx + inference.yml)\n"
      "  skiff det synth data/shapes             a synthetic COCO-format training set (skiff det synth --help)\n"
      "The model is pulled from the zoo on first use (skiff zoo info nanodet-coco); later runs work offline.\n"
      "Exit code: 0 when every image was processed, 2 when some could not be (reported on stderr).");
  det->add_option("inputs", o->inputs, "Image files, directories or glob patterns");
  auto* model = det->add_option("--model", o->config.model, "Detector: zoo name, .onnx file or TF.js model.json")
                    ->capture_default_str();
  det->add_option("--model_dir,--model-dir", o->model_dir,
                  "An exported detector (skiff export): inference.onnx, and inference.yml giving the\n"
                  "preprocessing, labels and threshold; --threshold, --topk, --nms_iou still override")
      ->excludes(model);
  det->add_option("--threshold", o->config.score_threshold, "Drop boxes scoring below this")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  det->add_option("--topk", o->config.max_detections, "Keep at most this many boxes per image")
      ->capture_default_str()->check(CLI::PositiveNumber);
  det->add_option("--nms_iou,--nms-iou", o->config.nms_iou,
                  "Drop a box overlapping a better one of its class by more than this IoU")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  det->add_flag("--json", o->json, "Print one JSON object per image instead of lines");
  det->add_option("--save_path,--save-path", o->save_path,
                  "Directory for <name>_res.json and <name>_res_img.<ext> (labelled boxes drawn)");
  det->add_option("--threads", o->threads, "CPU threads (default: SKIFF_NUM_THREADS or all cores)")
      ->check(CLI::PositiveNumber);
  add_det_synth_command(*det);
  det->callback([o, det] {
    if (det->got_subcommand("synth")) return;
    if (o->inputs.empty()) throw CLI::CallForHelp();
    if (!o->model_dir.empty()) {
      // The deploy file gives the defaults; options on the command line win.
      DetectorConfig c = read_deploy_config(o->model_dir);
      if (det->count("--threshold")) c.score_threshold = o->config.score_threshold;
      if (det->count("--topk")) c.max_detections = o->config.max_detections;
      if (det->count("--nms_iou")) c.nms_iou = o->config.nms_iou;
      o->config = std::move(c);
    }
    int rc = run_det(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace
}  // namespace skiff::detection

SKIFF_REGISTER_COMMAND("det", skiff::detection::add_det_command);
