// `skiff det synth DIR`: a synthetic COCO-format detection set (suites/detection/synth.h).
// Registered as a subcommand of `skiff det` (det_command.cpp), which calls add_det_synth_command().
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "framework/core/error.h"
#include "framework/core/progress_bar.h"
#include "suites/detection/synth.h"

namespace skiff::detection {
namespace {

struct SynthCommandOptions {
  std::string out;
  int count = 200;
  uint64_t seed = 0;
  std::string size = "320";
  int max_objects = 6;
  int64_t start_id = 0;
  bool quiet = false;
};

// "N" or "WxH".
std::pair<int, int> parse_size(const std::string& text) {
  auto number = [&](const std::string& s) {
    SKIFF_CHECK(!s.empty() && s.size() <= 6 && s.find_first_not_of("0123456789") == std::string::npos,
                "det synth: --size: expected N or WxH (e.g. 320 or 416x320), got '{}'", text);
    return std::stoi(s);
  };
  const auto x = text.find_first_of("xX");
  if (x == std::string::npos) {
    int n = number(text);
    return {n, n};
  }
  return {number(text.substr(0, x)), number(text.substr(x + 1))};
}

void run_synth(const SynthCommandOptions& o) {
  SynthDetOptions options;
  std::tie(options.width, options.height) = parse_size(o.size);
  options.max_objects = o.max_objects;
  check_synth_options(options);
  ProgressBar bar(!o.quiet);
  // Off a terminal, a plain line every quarter of a long run.
  const int step = o.count >= 400 ? o.count / 4 : 0;
  auto progress = [&](int done, int total) {
    if (bar.active()) bar.draw(double(done) / total, fmt::format("{}/{} images", done, total));
    else if (!o.quiet && step > 0 && done % step == 0 && done < total)
      fmt::print(stderr, "det synth: {}/{} images\n", done, total);
  };
  SynthDetSummary sum = write_synth_detection_dataset(o.out, o.count, o.seed, options, o.start_id, progress);
  bar.finish(false);
  fmt::print("wrote {} images ({}x{}) with {} objects of {} classes to {}\n", sum.images, options.width,
             options.height, sum.annotations, synth_class_names().size(), o.out);
  fmt::print("objects by COCO area: {} small, {} medium, {} large\n", sum.small, sum.medium, sum.large);
  fmt::print("annotations: {}/annotations.json, images: {}/images/\n", o.out, o.out);
}

}  // namespace

void add_det_synth_command(CLI::App& det) {
  auto s = std::make_shared<SynthCommandOptions>();
  auto* synth = det.add_subcommand("synth", "Render a synthetic COCO-format detection set of drawn shapes");
  // CLI11 copies the parent's footer into a new subcommand; synth has its own.
  synth->footer(
      "Writes DIR/images/000000.jpg ... and DIR/annotations.json (COCO: images, annotations with exact\n"
      "bbox [x, y, w, h] and visible-pixel area, categories 1..10: circle square triangle star ring cross\n"
      "diamond hexagon arrow crescent). Shapes vary in size (12 px up), aspect, rotation and colour, on flat,\n"
      "gradient, noise or textured backgrounds with distractor strokes; an object may hide another, but never\n"
      "more than 60% of it. The same seed gives the same bytes. annotations.json is written last, so a set\n"
      "without it is incomplete.\n"
      "Examples:\n"
      "  skiff det synth data/shapes                       200 images of 320x320\n"
      "  skiff det synth data/val --count 50 --seed 1      another 50 for evaluation\n"
      "  skiff det synth data/wide --size 416x320 --max_objects 10");
  synth->add_option("dir", s->out, "Output directory")->required();
  synth->add_option("--count", s->count, "Number of images")->capture_default_str()->check(CLI::NonNegativeNumber);
  synth->add_option("--seed", s->seed, "Random seed (same seed, same files)")->capture_default_str();
  synth->add_option("--size", s->size, "Image size: N (square) or WxH, each 64..4096")->capture_default_str();
  synth->add_option("--max_objects,--max-objects", s->max_objects, "At most this many objects per image (1..50)")
      ->capture_default_str();
  synth->add_option("--start_id,--start-id", s->start_id,
                    "First image id and file number (to extend a set or write disjoint ones)")
      ->capture_default_str();
  synth->add_flag("--quiet,-q", s->quiet, "No progress on stderr");
  synth->callback([s] { run_synth(*s); });
}

}  // namespace skiff::detection
