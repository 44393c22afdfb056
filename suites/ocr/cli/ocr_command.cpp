// `skiff ocr IMAGE|DIR|GLOB ...`: PP-OCRv4 text detection + recognition, lines in
// reading order on stdout (or PaddleOCR 3.x-style JSON), with result files and
// pictures under --save_path. `skiff ocr synth` renders labelled text images.
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "framework/cli/command_registry.h"
#include "framework/core/error.h"
#include "framework/core/threading.h"
#include "framework/data/image_io.h"
#include "framework/io/file.h"
#include "suites/ocr/draw_result.h"
#include "suites/ocr/pipeline.h"
#include "suites/ocr/result_output.h"
#include "suites/ocr/synth.h"

namespace skiff::ocr {
namespace {

namespace fs = std::filesystem;

struct OcrOptions {
  std::vector<std::string> inputs;
  bool json = false;
  std::string save_path;
  std::string use_orientation = "true";
  std::string restore_spaces = "true";
  int threads = 0;
  ocr::PipelineConfig config;
};

void write_atomically(const fs::path& path, const std::string& bytes) {
  io::AtomicFileWriter out(path);
  out.write(bytes);
  out.commit();
}

void save_results(const std::string& dir, const std::string& input, const cv::Mat& image, const ocr::OcrResult& r,
                  const nlohmann::json& j) {
  fs::create_directories(dir);
  fs::path in(input);
  std::string stem = in.stem().string();
  write_atomically(fs::path(dir) / (stem + "_res.json"), j.dump(2) + "\n");
  cv::Mat vis = draw_result_lines(image, r);
  std::string ext = in.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), ::tolower);
  if (ext != ".png" && ext != ".jpg" && ext != ".jpeg" && ext != ".bmp") ext = ".png";
  const std::vector<uint8_t> encoded = data::encode_image(vis, ext);
  write_atomically(fs::path(dir) / (stem + "_ocr_res_img" + ext), std::string(encoded.begin(), encoded.end()));
}

bool parse_bool(const std::string& flag, const std::string& v) {
  std::string s = v;
  std::transform(s.begin(), s.end(), s.begin(), ::tolower);
  if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "0" || s == "no" || s == "off") return false;
  SKIFF_THROW(ValueError, "{}: expected true or false, got '{}'", flag, v);
}

int run_ocr(OcrOptions& o) {
  if (o.threads > 0) set_num_threads(o.threads);
  o.config.use_textline_orientation = parse_bool("--use_textline_orientation", o.use_orientation);
  o.config.restore_word_spaces = parse_bool("--restore_spaces", o.restore_spaces);
  std::vector<std::string> files = data::expand_image_inputs(o.inputs, "skiff ocr");
  SKIFF_CHECK(!files.empty(), "ocr: no input images");
  ocr::Pipeline pipeline(o.config);
  int failures = 0;
  bool many = files.size() > 1;
  for (const auto& file : files) {
    try {
      cv::Mat image = ocr::read_image(file);
      ocr::OcrResult r = pipeline.run(image);
      nlohmann::json j = result_json(r);
      j["input_path"] = file;
      if (o.json) {
        fmt::print("{}\n", j.dump());
      } else {
        if (many) fmt::print("==> {} <==\n", file);
        for (const auto& l : r.lines) fmt::print("{}\n", l.text);
      }
      std::fflush(stdout);
      if (!o.save_path.empty()) save_results(o.save_path, file, image, r, j);
    } catch (const Error& e) {
      // One bad image does not stop the others; the exit code reports it.
      fmt::print(stderr, "skiff ocr: {}: {}\n", e.kind(), e.full_message());
      ++failures;
    }
  }
  if (failures) fmt::print(stderr, "skiff ocr: {} of {} images failed\n", failures, files.size());
  return failures ? 2 : 0;
}

struct SynthCommandOptions {
  std::string out;
  int count = 10;
  uint64_t seed = 0;
  bool sample = false;
  float noise = -1;         // max Gaussian noise sigma; < 0: the renderer's default
  float blur = 0;           // Gaussian blur sigma applied to every image
  std::string texts_file;   // one line of text per line; empty: the built-in corpus
};

void run_synth(const SynthCommandOptions& o) {
  if (o.sample) {
    ocr::SynthImage img = ocr::render_sample_receipt();
    const std::vector<uint8_t> png = data::encode_image(img.image, ".png");
    write_atomically(o.out, std::string(png.begin(), png.end()));
    for (const auto& l : img.lines) fmt::print("{}\n", l.text);
    return;
  }
  ocr::SynthOptions options;
  if (o.noise >= 0) options.max_noise_sigma = o.noise;
  options.blur_sigma = o.blur;
  if (!o.texts_file.empty()) {
    std::ifstream in(o.texts_file);
    if (!in) throw IoError(fmt::format("{}: cannot open the texts file", o.texts_file));
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty()) options.texts.push_back(line);
    }
    SKIFF_CHECK(!options.texts.empty(), "{}: no text lines in the file", o.texts_file);
  }
  ocr::write_synth_dataset(o.out, o.count, o.seed, options);
  fmt::print(stderr, "wrote {} images with det_gt.txt and rec_gt.txt to {}\n", o.count, o.out);
}

void add_ocr_command(CLI::App& app) {
  auto o = std::make_shared<OcrOptions>();
  auto* ocr = app.add_subcommand("ocr", "Read the text in images with PP-OCRv4 (detection, orientation, recognition)");
  ocr->footer(
      "Examples:\n"
      "  skiff ocr photo.jpg                    lines in reading order\n"
      "  skiff ocr scans/ --json                one JSON object per image (PaddleOCR 3.x keys)\n"
      "  skiff ocr 'shots/*.png' --save_path out  also write out/<name>_res.json and <name>_ocr_res_img.png\n"
      "Models are pulled from the zoo on first use (skiff zoo list); later runs work offline.\n"
      "Exit code: 0 when every image was read, 2 when some could not be (reported on stderr).");
  ocr->add_option("inputs", o->inputs, "Image files, directories or glob patterns");
  ocr->add_flag("--json", o->json, "Print one JSON object per image instead of the text");
  ocr->add_option("--save_path,--save-path", o->save_path,
                  "Directory for <name>_res.json and <name>_ocr_res_img.<ext> (boxes and text drawn)");
  auto& c = o->config;
  ocr->add_option("--text_detection_model_dir,--text-detection-model-dir,--text_detection_model_name", c.det_model,
                  "Detector: zoo name, .onnx file, or a skiff export directory (its inference.yml sets the size limit, "
                  "normalization and thresholds)")->capture_default_str();
  ocr->add_option("--text_recognition_model_dir,--text-recognition-model-dir,--text_recognition_model_name",
                  c.rec_model, "Recognizer: zoo name, .onnx file, or a skiff export directory (its inference.yml sets the "
                  "input size and dictionary)")->capture_default_str();
  ocr->add_option("--textline_orientation_model_dir,--textline-orientation-model-dir,--textline_orientation_model_name",
                  c.cls_model, "Text-line orientation classifier: zoo name or .onnx file")->capture_default_str();
  ocr->add_option("--text_rec_dict_path,--text-rec-dict-path", c.rec_dict,
                  "Recognizer character dictionary (default: the recognizer's ppocr_keys_v1.txt)");
  ocr->add_option("--use_textline_orientation,--use-textline-orientation", o->use_orientation,
                  "Turn upside-down lines before reading them (true/false)")->capture_default_str();
  ocr->add_option("--restore_spaces,--restore-spaces", o->restore_spaces,
                  "Put back the spaces between Latin words that the recognizer drops, e.g. FRESHTIMEMART -> "
                  "FRESH TIME MART (true/false; false gives PaddleOCR's text; Chinese is never changed)")
      ->capture_default_str();
  ocr->add_option("--text_det_limit_side_len,--text-det-limit-side-len", c.det.limit_side_len,
                  "Longest image side given to the detector")->capture_default_str()->check(CLI::PositiveNumber);
  ocr->add_option("--text_det_thresh,--text-det-thresh", c.db.thresh, "Detector pixel threshold")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  ocr->add_option("--text_det_box_thresh,--text-det-box-thresh", c.db.box_thresh, "Minimum box score")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  ocr->add_option("--text_det_unclip_ratio,--text-det-unclip-ratio", c.db.unclip_ratio, "Box expansion ratio")
      ->capture_default_str()->check(CLI::PositiveNumber);
  ocr->add_option("--text_rec_score_thresh,--text-rec-score-thresh", c.rec_score_thresh,
                  "Drop lines scoring below this")->capture_default_str()->check(CLI::Range(0.0, 1.0));
  ocr->add_option("--batch,--text_recognition_batch_size", c.rec_batch, "Text lines per recognizer batch")
      ->capture_default_str()->check(CLI::PositiveNumber);
  ocr->add_option("--threads", o->threads, "CPU threads (default: SKIFF_NUM_THREADS or all cores)")
      ->check(CLI::PositiveNumber);

  auto s = std::make_shared<SynthCommandOptions>();
  auto* synth = ocr->add_subcommand("synth", "Render labelled text images (PaddleOCR det/rec label files)");
  // CLI11 copies the parent's footer into a new subcommand; synth has its own examples.
  synth->footer(
      "Examples:\n"
      "  skiff ocr synth data/synth --count 50 --seed 1    50 pages with det_gt.txt, rec_gt.txt and crops/\n"
      "  skiff ocr synth data/noisy --noise 60 --blur 2.0  harder pages: pixel noise and blur\n"
      "  skiff ocr synth sample.png --sample               the bundled receipt (assets/samples/ocr_sample.png)");
  synth->add_option("out", s->out, "Output directory (or, with --sample, the PNG file to write)")->required();
  synth->add_option("--count", s->count, "Number of images")->capture_default_str()->check(CLI::NonNegativeNumber);
  synth->add_option("--seed", s->seed, "Random seed (same seed, same images)")->capture_default_str();
  synth->add_flag("--sample", s->sample, "Write the bundled receipt sample image instead and print its lines");
  synth->add_option("--noise", s->noise, "Largest Gaussian pixel-noise sigma, 0..255 units (default 6)")
      ->check(CLI::Range(0.0, 128.0));
  synth->add_option("--blur", s->blur, "Gaussian blur sigma in pixels applied to every image (default 0)")
      ->check(CLI::Range(0.0, 10.0));
  synth->add_option("--texts", s->texts_file, "File of text lines to draw from (default: the built-in corpus)")
      ->check(CLI::ExistingFile);
  synth->callback([s] { run_synth(*s); });

  ocr->callback([o, ocr] {
    if (ocr->got_subcommand("synth")) return;
    if (o->inputs.empty()) throw CLI::CallForHelp();
    // An exported detector's inference.yml gives the detector settings; flags given on
    // the command line still win over it.
    ocr::PipelineConfig given = o->config;
    if (ocr::apply_det_inference_config(o->config)) {
      auto& c = o->config;
      if (ocr->count("--text_det_limit_side_len")) c.det.limit_side_len = given.det.limit_side_len;
      if (ocr->count("--text_det_thresh")) c.db.thresh = given.db.thresh;
      if (ocr->count("--text_det_box_thresh")) c.db.box_thresh = given.db.box_thresh;
      if (ocr->count("--text_det_unclip_ratio")) c.db.unclip_ratio = given.db.unclip_ratio;
    }
    o->config.read_det_inference_config = false;
    int rc = run_ocr(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace
}  // namespace skiff::ocr

SKIFF_REGISTER_COMMAND("ocr", skiff::ocr::add_ocr_command);
