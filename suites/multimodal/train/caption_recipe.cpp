// `task: caption` recipes (caption_recipe.h).
#include "suites/multimodal/train/caption_recipe.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <yaml-cpp/yaml.h>

#include "framework/config/config.h"
#include "framework/engine/predictor.h"
#include "framework/graph/onnx_export.h"
#include "framework/graph/trace.h"
#include "framework/core/error.h"
#include "framework/core/rng.h"
#include "framework/io/file.h"
#include "framework/ops/ops.h"
#include "framework/train/recipe.h"
#include "suites/multimodal/caption_metrics.h"
#include "suites/multimodal/captioner.h"
#include "suites/multimodal/clip_files.h"
#include "suites/multimodal/train/recipe_common.h"
#include "suites/multimodal/zero_shot.h"

namespace skiff::multimodal {

namespace fs = std::filesystem;
using config::Key;
using config::keys;
using config::Schema;
using config::Section;
using config::Type;
using train::Recipe;

namespace {

const Schema& schema() {
  static const Schema s{{
      Key{.name = "task", .type = Type::String, .required = true, .choices = {"caption"}},
      Key{.name = "Global", .type = Type::Map, .required = true, .schema = keys(train::global_keys())},
      Key{.name = "Architecture", .type = Type::Map, .required = true,
          .schema = keys({Key{.name = "name", .type = Type::String, .choices = {"Captioner"}},
                          Key{.name = "image_size", .type = Type::Integer, .min = 8},
                          Key{.name = "vision", .type = Type::Map,
                              .schema = keys({Key{.name = "channels", .type = Type::Any, .help = "channels per stage"}})},
                          Key{.name = "decoder", .type = Type::Map,
                              .schema = keys({Key{.name = "width", .type = Type::Integer, .min = 8},
                                              Key{.name = "layers", .type = Type::Integer, .min = 1},
                                              Key{.name = "heads", .type = Type::Integer, .min = 1},
                                              Key{.name = "context_length", .type = Type::Integer, .min = 3}})}})},
      tokenizer_key(),
      train::optimizer_key(),
      Key{.name = "Train", .type = Type::Map, .required = true, .schema = caption_split_schema()},
      Key{.name = "Eval", .type = Type::Map, .required = true, .schema = caption_split_schema()},
      Key{.name = "Metric", .type = Type::Map,
          .schema = keys({Key{.name = "main_indicator", .type = Type::String, .choices = {"cider_d", "bleu4"}},
                          Key{.name = "beam", .type = Type::Integer, .min = 1},
                          Key{.name = "max_len", .type = Type::Integer, .min = 1},
                          Key{.name = "length_penalty", .type = Type::Number, .min = 0}})},
  }};
  return s;
}

CaptionerConfig captioner_config(const Recipe& r, int64_t vocab_size) {
  const Section a = r.section("Architecture"), d = a.section("decoder");
  CaptionerConfig c;
  c.image_size = a.integer("image_size", c.image_size, 8);
  c.vision_channels = a.section("vision").integers("channels", c.vision_channels, 1);
  c.width = d.integer("width", c.width, 8);
  c.layers = d.integer("layers", c.layers, 1);
  c.heads = d.integer("heads", c.heads, 1);
  c.context_length = d.integer("context_length", c.context_length, 3);
  c.vocab_size = vocab_size;
  try {
    c.check();
  } catch (const ValueError& e) {
    SKIFF_THROW(ValueError, "{}: {}", a.where("name"), e.what());
  }
  return c;
}

fs::path save_dir(const Recipe& r) { return recipe_save_dir(r, "./output/caption"); }

struct Specials {
  int32_t start, end, pad;
};

Specials specials(const text::Tokenizer& tok) {
  const auto [end, pad] = end_and_pad_ids(tok);
  const int32_t start = tok.token_to_id("[CLS]");
  SKIFF_CHECK(start >= 0, "{}: the captioner needs a [CLS] token to start captions", tok.source());
  return {start, end, pad};
}

/// [CLS] caption [SEP] rows, padded.
Tensor caption_rows(const text::Tokenizer& tok, const std::vector<std::string>& captions, int64_t context, Specials s) {
  const CaptionTokens t = tokenize_captions(tok, captions, context - 1, s.end, s.pad);
  return concat({full({t.ids.size(0), 1}, double(s.start), DType::Int64), t.ids}, 1);
}

/// A caption's words from generated ids (the end token and anything after it dropped).
std::string caption_text(const text::Tokenizer& tok, const std::vector<int64_t>& ids, Specials s) {
  std::string out;
  for (int64_t id : ids) {
    if (id == s.end) break;
    if (id == s.pad || id == s.start) continue;
    out += (out.empty() ? "" : " ") + tok.id_to_token(int32_t(id));
  }
  return out;
}

std::vector<std::string> decode_captions(Captioner& model, const text::Tokenizer& tok, const Tensor& images,
                                         const Recipe& r) {
  const Section m = r.section("Metric");
  const int64_t beam = m.integer("beam", 3, 1), max_len = m.integer("max_len", 15, 1);
  const double penalty = m.number("length_penalty", 1.0);
  const Specials s = specials(tok);
  NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  std::vector<std::string> out;
  for (int64_t i = 0; i < images.size(0); ++i) {
    const Tensor mem = model.memory(slice(images, 0, i, i + 1));
    const auto hyps = beam_search(model.next_token_log_probs(mem), s.start, s.end,
                                  std::min(max_len, model.config().context_length - 1), beam, penalty);
    out.push_back(hyps.empty() ? "" : caption_text(tok, hyps[0].tokens, s));
  }
  model.train(was_training);
  return out;
}

std::map<std::string, double> score_captions(const std::vector<std::string>& generated,
                                             const std::vector<CaptionedImage>& data) {
  std::vector<Words> hyps;
  std::vector<std::vector<Words>> refs;
  for (size_t i = 0; i < data.size(); ++i) {
    hyps.push_back(caption_words(generated[i]));
    std::vector<Words> r;
    for (const std::string& c : data[i].captions) r.push_back(caption_words(c));
    refs.push_back(std::move(r));
  }
  const auto bleu = corpus_bleu(hyps, refs);
  return {{"bleu1", bleu[0]}, {"bleu2", bleu[1]}, {"bleu3", bleu[2]}, {"bleu4", bleu[3]},
          {"cider_d", cider_d(hyps, refs)}, {"samples", double(data.size())}};
}

class CaptionTask : public train::TrainTask {
 public:
  CaptionTask(Captioner& model, const text::Tokenizer& tok, std::vector<CaptionedImage> train, Tensor train_images,
              std::vector<CaptionedImage> eval, Tensor eval_images, const Recipe& recipe, int64_t batch, uint64_t seed,
              const optim::LRScheduler& schedule)
      : model_(model), tok_(tok), train_(std::move(train)), train_images_(std::move(train_images)),
        eval_(std::move(eval)), eval_images_(std::move(eval_images)), recipe_(recipe), seed_(seed),
        order_(train_.size(), batch, seed), schedule_(schedule) {}
  nn::Module& model() override { return model_; }
  Tensor loss(const data::Example&) override {
    const int64_t step = schedule_.last_epoch();
    const std::vector<int64_t> rows = order_.rows(step);
    const std::vector<std::string> captions = pick_captions(train_, rows, seed_, step);
    const Specials s = specials(tok_);
    const Tensor ids = caption_rows(tok_, captions, model_.config().context_length, s);
    return caption_loss(model_, index_select(train_images_, 0, from_vector(rows)), ids, s.pad);
  }
  std::map<std::string, double> evaluate() override {
    return score_captions(decode_captions(model_, tok_, eval_images_, recipe_), eval_);
  }

 private:
  Captioner& model_;
  const text::Tokenizer& tok_;
  std::vector<CaptionedImage> train_;
  Tensor train_images_;
  std::vector<CaptionedImage> eval_;
  Tensor eval_images_;
  const Recipe& recipe_;
  uint64_t seed_;
  EpochOrder order_;
  const optim::LRScheduler& schedule_;
};

fs::path weights_of(const Recipe& r) { return recipe_weights(r, save_dir(r)); }

std::unique_ptr<Captioner> trained_model(const Recipe& r, const text::Tokenizer& tok) {
  auto model = std::make_unique<Captioner>(captioner_config(r, tok.vocab_size()));
  const fs::path weights = weights_of(r);
  SKIFF_CHECK_T(IoError, fs::exists(weights), "{}: no trained weights at '{}' (run skiff train -c {} first)", r.file,
                weights.string(), r.file);
  train::load_weights(*model, weights);
  model->eval();
  return model;
}

}  // namespace

void CaptionRecipeRunner::check(const Recipe& r, const config::ValidateOptions& options) const {
  config::validate(r.top(), schema(), options);
  captioner_config(r, 1);
}

train::FitResult CaptionRecipeRunner::train(const Recipe& r, const train::TrainRequest& request) const {
  const Section global = r.section("Global");
  train::seed_run(global);
  const uint64_t seed = uint64_t(global.integer("seed", 42));
  auto tok = recipe_tokenizer(r);
  specials(*tok);
  const CaptionerConfig c = captioner_config(r, tok->vocab_size());
  Captioner model(c);
  TrainingData d = load_training_data(r, c.image_size, request.quiet);
  return fit_recipe(r, request, model, d.per_epoch, "cider_d", {"captioner.json", captioner_config_json(c).dump(1) + "\n"},
                    [&](const optim::LRScheduler& schedule) {
                      return std::make_unique<CaptionTask>(model, *tok, std::move(d.train), d.train_images,
                                                           std::move(d.eval), d.eval_images, r, d.batch, seed, schedule);
                    });
}

std::map<std::string, double> CaptionRecipeRunner::evaluate(const Recipe& r) const {
  auto tok = recipe_tokenizer(r);
  auto model = trained_model(r, *tok);
  std::vector<CaptionedImage> data = recipe_split(r, "Eval");
  return score_captions(decode_captions(*model, *tok, load_images(data, model->config().image_size), r), data);
}

std::vector<std::string> CaptionRecipeRunner::predict(const Recipe& r, const train::PredictRequest& request) const {
  SKIFF_CHECK(!request.inputs.empty(), "{}: skiff predict needs image files for a caption recipe", r.file);
  auto tok = recipe_tokenizer(r);
  auto model = trained_model(r, *tok);
  std::vector<CaptionedImage> items;
  for (const std::string& in : request.inputs) items.push_back({in, {""}, ""});
  const auto captions = decode_captions(*model, *tok, load_images(items, model->config().image_size), r);
  std::vector<std::string> lines;
  for (size_t i = 0; i < items.size(); ++i)
    lines.push_back(fmt::format("{}\t{}", request.inputs[i], nlohmann::json{{"caption", captions[i]}}.dump()));
  return lines;
}

fs::path CaptionRecipeRunner::default_export_dir(const Recipe& r) const { return save_dir(r) / "inference"; }

train::ExportResult CaptionRecipeRunner::export_model(const Recipe& r, const fs::path& dir) const {
  auto tok = recipe_tokenizer(r);
  auto model = trained_model(r, *tok);  // checks the run's files and that the weights fit
  fs::create_directories(dir);
  io::write_file_atomic(dir / "model.safetensors", io::read_file(weights_of(r)));
  io::write_file_atomic(dir / "captioner.json", captioner_config_json(model->config()).dump(1) + "\n");
  io::write_file_atomic(dir / "vocab.txt", io::read_file(r.section("Tokenizer").text("vocab")));
  // ONNX: the encoder (image -> memory) and one decoder pass over a full-context token row
  // (ids [batch, context_length], memory -> logits [batch, context_length, vocab]); the decoder
  // is causal, so with padding after the real tokens the logits at the last real position are
  // the next token's.
  const CaptionerConfig& c = model->config();
  const int64_t s = c.image_size, t = c.context_length;
  Tensor memory_probe;
  {
    NoGradGuard no_grad;
    memory_probe = model->memory(zeros({1, 3, s, s}));
  }
  graph::export_onnx(graph::trace(model.get(), [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{model->memory(in[0])}; },
                                  {zeros({1, 3, s, s})},
                                  {.dynamic_batch = true, .input_names = {"image"}, .output_names = {"memory"},
                                   .graph_name = "skiff_caption_encoder"}),
                     (dir / "encoder.onnx").string());
  graph::export_onnx(graph::trace(model.get(), [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{model->decode(in[1], in[0])}; },
                                  {zeros({1, t}, DType::Int64), memory_probe},
                                  {.dynamic_batch = true, .input_names = {"ids", "memory"}, .output_names = {"logits"},
                                   .graph_name = "skiff_caption_decoder"}),
                     (dir / "decoder.onnx").string());
  const Specials sp = specials(*tok);
  YAML::Node yml;
  yml["arch"] = "Captioner";
  yml["ImagePreprocess"] = image_preprocess_yaml(s);
  YAML::Node dec;
  dec["vocab"] = "vocab.txt";
  dec["context_length"] = t;
  dec["start_id"] = sp.start;
  dec["end_id"] = sp.end;
  dec["pad_id"] = sp.pad;
  dec["note"] = "ids: start_id, the caption so far, then pad_id to context_length; the next token's logits are at the last non-pad position";
  yml["Decoder"] = dec;
  io::write_file_atomic(dir / "inference.yml", config::to_yaml(yml));

  // The exported files must decode as the run does.
  Captioner copy(c);
  train::load_weights(copy, dir / "model.safetensors");
  copy.eval();
  Generator gen(1);
  const Tensor probe = randn({2, 3, s, s}, DType::Float32, &gen);
  std::vector<int64_t> row(size_t(2 * t), sp.pad);
  row[0] = row[size_t(t)] = sp.start;
  row[1] = 5, row[2] = 6, row[size_t(t) + 1] = 7;
  const Tensor ids = from_vector(row, {2, t});
  NoGradGuard no_grad;
  const Tensor mem = model->memory(probe), logits = model->decode(mem, ids);
  engine::Predictor encoder((dir / "encoder.onnx").string()), decoder((dir / "decoder.onnx").string());
  const Tensor onnx_mem = encoder.run(std::vector<Tensor>{probe})[0];
  double diff = amax(abs(sub(mem, copy.memory(probe)))).item<double>();
  diff = std::max(diff, amax(abs(sub(mem, onnx_mem))).item<double>());
  diff = std::max(diff, amax(abs(sub(logits, decoder.run(std::vector<Tensor>{ids, onnx_mem})[0]))).item<double>());
  train::ExportResult result;
  result.files = {dir / "model.safetensors", dir / "captioner.json", dir / "vocab.txt", dir / "encoder.onnx",
                  dir / "decoder.onnx", dir / "inference.yml"};
  result.max_abs_diff = diff;
  result.check = "ONNX encoder and decoder and exported weights vs the trained model";
  return result;
}

}  // namespace skiff::multimodal
