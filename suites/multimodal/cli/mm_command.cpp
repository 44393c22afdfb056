// `skiff mm`: the multimodal suite's commands. `skiff mm synth DIR` writes the compositional
// image-caption set (suites/multimodal/synth.h).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "framework/cli/command_registry.h"
#include "framework/core/progress_bar.h"
#include "suites/multimodal/synth.h"

namespace skiff::multimodal {
namespace {

struct SynthOptions {
  std::string out;
  SynthCounts counts;
  uint64_t seed = 0;
  int size = 64;
  bool quiet = false;
};

void run_synth(const SynthOptions& o) {
  ProgressBar bar(!o.quiet);
  const int total = o.counts.train + o.counts.val + o.counts.heldout;
  const int step = total >= 2000 ? total / 4 : 0;  // off a terminal, a line every quarter of a long run
  write_synth_mm_dataset(o.out, o.counts, o.seed, o.size, [&](int done, int all) {
    if (bar.active()) bar.draw(double(done) / all, fmt::format("{}/{} images", done, all));
    else if (!o.quiet && step > 0 && done % step == 0 && done < all) fmt::print(stderr, "mm synth: {}/{} images\n", done, all);
  });
  bar.finish(false);
  fmt::print("wrote {} images ({}x{}): {} train, {} val, {} heldout (unseen colour-shape pairs) to {}\n", total,
             o.size, o.size, o.counts.train, o.counts.val, o.counts.heldout, o.out);
  fmt::print("captions: {0}/captions_<split>.json (COCO captions) and .tsv; summary: {0}/synth.json\n", o.out);
}

void add_mm_command(CLI::App& app) {
  auto* mm = app.add_subcommand("mm", "Image-text models: data (more commands as the suite grows)");
  mm->require_subcommand(1);
  auto s = std::make_shared<SynthOptions>();
  auto* synth = mm->add_subcommand("synth", "Render a compositional image-caption set with held-out combinations");
  synth->footer(
      "Scenes: one object (\"a large red triangle\"), two or three equal ones (\"two green circles\"), two\n"
      "in a relation (\"a red triangle left of a blue circle\"), or a written word (\"the word tree written\n"
      "in yellow\"); 6 shapes, 6 colours, 2 sizes, on grey flat, gradient or noise backgrounds. Six\n"
      "colour-shape pairs (circle-blue, square-yellow, triangle-purple, star-orange, cross-red,\n"
      "diamond-green) never appear in train or val; the heldout split shows only them, so zero-shot\n"
      "accuracy there measures generalisation. Writes DIR/images/<split>_<id>.png,\n"
      "DIR/captions_<split>.json (COCO captions; single-object images carry \"label\"), DIR/captions_<split>.tsv\n"
      "(file<TAB>caption) and DIR/synth.json last. The same seed gives the same bytes.\n"
      "Examples:\n"
      "  skiff mm synth data/mm                          1000 train, 200 val, 200 heldout images of 64x64\n"
      "  skiff mm synth data/mm --train 5000 --size 96 --seed 3");
  synth->add_option("dir", s->out, "Output directory")->required();
  synth->add_option("--train", s->counts.train, "Training images")->capture_default_str()->check(CLI::NonNegativeNumber);
  synth->add_option("--val", s->counts.val, "Validation images (seen combinations)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  synth->add_option("--heldout", s->counts.heldout, "Images of the held-out colour-shape pairs")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  synth->add_option("--seed", s->seed, "Random seed (same seed, same files)")->capture_default_str();
  synth->add_option("--size", s->size, "Image side in pixels (32..1024)")->capture_default_str()->check(CLI::Range(32, 1024));
  synth->add_flag("--quiet,-q", s->quiet, "No progress on stderr");
  synth->callback([s] { run_synth(*s); });
}

}  // namespace
}  // namespace skiff::multimodal

SKIFF_REGISTER_COMMAND("mm", skiff::multimodal::add_mm_command);
