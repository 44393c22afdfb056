// What the multimodal recipes share (recipe_common.h).
#include "suites/multimodal/train/recipe_common.h"

#include <fmt/format.h>

#include "framework/config/config.h"
#include "framework/core/error.h"
#include "framework/io/file.h"
#include "framework/train/recipe.h"
#include "framework/core/rng.h"
#include "framework/ops/ops.h"
#include "suites/multimodal/zero_shot.h"

namespace skiff::multimodal {

namespace fs = std::filesystem;
using config::Key;
using config::keys;
using config::Section;
using config::Type;

std::shared_ptr<const config::Schema> caption_split_schema() {
  static const auto s = keys({Key{.name = "dataset", .type = Type::Map, .required = true,
                                  .schema = keys({Key{.name = "captions", .type = Type::String,
                                                      .help = "COCO captions JSON or image<TAB>caption list",
                                                      .required = true},
                                                  Key{.name = "image_dir", .type = Type::String}})},
                              Key{.name = "loader", .type = Type::Map,
                                  .schema = keys({Key{.name = "batch_size_per_card", .type = Type::Integer, .min = 2}})}});
  return s;
}

config::Key tokenizer_key() {
  return Key{.name = "Tokenizer", .type = Type::Map, .required = true,
             .schema = keys({Key{.name = "vocab", .type = Type::String,
                                 .help = "vocab.txt, tokenizer.json or SentencePiece model with [SEP] and [PAD]",
                                 .required = true}})};
}

fs::path recipe_save_dir(const train::Recipe& r, const std::string& fallback) {
  return r.section("Global").text("save_model_dir", fallback);
}

std::unique_ptr<text::Tokenizer> recipe_tokenizer(const train::Recipe& r) {
  const Section t = r.section("Tokenizer");
  const fs::path vocab = t.text("vocab");
  SKIFF_CHECK_T(IoError, fs::exists(vocab), "{}: no tokenizer at '{}' (skiff mm synth writes vocab.txt)",
                t.where("vocab"), vocab.string());
  auto tok = text::load_tokenizer(vocab);
  end_and_pad_ids(*tok);  // names the file when [SEP] or [PAD] is missing
  return tok;
}

std::vector<CaptionedImage> recipe_split(const train::Recipe& r, const std::string& split) {
  const Section d = r.section(split).section("dataset");
  const fs::path captions = d.text("captions");
  SKIFF_CHECK_T(IoError, fs::exists(captions), "{}: no caption file at '{}' (make one with skiff mm synth DIR)",
                d.where("captions"), captions.string());
  return read_caption_file(captions, d.text("image_dir", ""));
}

int64_t recipe_batch_size(const train::Recipe& r, const std::string& split, int64_t fallback) {
  return r.section(split).section("loader").integer("batch_size_per_card", fallback, 2);
}

fs::path recipe_weights(const train::Recipe& r, const fs::path& save_dir) {
  const Section g = r.section("Global");
  return g.has("checkpoints") ? fs::path(g.text("checkpoints")) : save_dir / "best_model.safetensors";
}

YAML::Node image_preprocess_yaml(int64_t size) {
  YAML::Node pre;
  pre["size"] = size;
  pre["channel_order"] = "RGB";
  pre["scale"] = 1.0 / 255.0;
  pre["mean"] = std::vector<double>(3, kImageMean);
  pre["std"] = std::vector<double>(3, kImageStd);
  pre["layout"] = "NCHW";
  return pre;
}

std::vector<std::string> pick_captions(const std::vector<CaptionedImage>& images, const std::vector<int64_t>& rows,
                                       uint64_t seed, int64_t step) {
  Generator pick(seed ^ (0x9E3779B97F4A7C15ull * uint64_t(step + 1)));
  std::vector<std::string> out;
  for (int64_t i : rows) {
    const auto& c = images[size_t(i)].captions;
    out.push_back(c[size_t(pick.next_u64() % c.size())]);
  }
  return out;
}

TrainingData load_training_data(const train::Recipe& r, int64_t image_size, bool quiet) {
  TrainingData d;
  d.train = recipe_split(r, "Train");
  d.eval = recipe_split(r, "Eval");
  d.batch = recipe_batch_size(r, "Train", 64);
  SKIFF_CHECK(int64_t(d.train.size()) >= d.batch, "{}: {} training images, fewer than one batch of {}",
              r.section("Train").section("dataset").where("captions"), d.train.size(), d.batch);
  if (!quiet) fmt::print(stderr, "loading {} training and {} evaluation images\n", d.train.size(), d.eval.size());
  d.train_images = load_images(d.train, image_size);
  d.eval_images = load_images(d.eval, image_size);
  d.per_epoch = int64_t(d.train.size()) / d.batch;
  return d;
}

train::FitResult fit_recipe(const train::Recipe& r, const train::TrainRequest& request, nn::Module& model,
                            int64_t per_epoch, const std::string& default_metric,
                            const std::pair<std::string, std::string>& model_json,
                            const std::function<std::unique_ptr<train::TrainTask>(const optim::LRScheduler&)>& make_task) {
  train::TrainerOptions o = train::trainer_options(r.section("Global"), r.section("Optimizer"), per_epoch);
  o.metric = r.section("Metric").text("main_indicator", default_metric);
  o.higher_is_better = true;
  o.quiet = request.quiet;
  o.metadata["skiff.recipe"] = config::to_yaml(r.root);
  fs::create_directories(o.output_dir);
  io::write_file_atomic(o.output_dir / "config.yml", config::to_yaml(r.root));
  io::write_file_atomic(o.output_dir / model_json.first, model_json.second);
  auto opt = train::build_optimizer(r.section("Optimizer"), model.parameters(), o.epochs, per_epoch);
  std::unique_ptr<train::TrainTask> task = make_task(*opt.scheduler);
  std::vector<train::TrainPhase> phases{train::TrainPhase{.name = "train", .optimizer = opt.optimizer.get(),
                                                          .scheduler = opt.scheduler.get(),
                                                          .steps = o.max_steps > 0 ? o.max_steps : o.epochs * per_epoch}};
  train::Trainer trainer(*task, std::move(phases), nullptr, o);
  return trainer.fit(train::resume_checkpoint(request, o.output_dir));
}

std::vector<int64_t> EpochOrder::rows(int64_t step) {
  const int64_t epoch = step / per_epoch(), k = step % per_epoch();
  if (epoch != perm_epoch_) {
    Generator g(seed_ * 1000003 + uint64_t(epoch));
    perm_ = randperm(int64_t(rows_), &g).to_vector<int64_t>();
    perm_epoch_ = epoch;
  }
  return {perm_.begin() + k * batch_, perm_.begin() + (k + 1) * batch_};
}

}  // namespace skiff::multimodal
