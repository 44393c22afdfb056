// `task: clip` recipes (clip_recipe.h).
#include "suites/multimodal/train/clip_recipe.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
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
#include "framework/text/tokenizer.h"
#include "framework/train/recipe.h"
#include "suites/multimodal/caption_dataset.h"
#include "suites/multimodal/clip_files.h"
#include "suites/multimodal/clip_model.h"
#include "suites/multimodal/retrieval_metrics.h"
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
  static const Schema s = [] {
    auto tower = [](bool text) {
      std::vector<Key> k{Key{.name = "width", .type = Type::Integer, .min = 8},
                         Key{.name = "layers", .type = Type::Integer, .min = 1},
                         Key{.name = "heads", .type = Type::Integer, .min = 1}};
      if (!text) {
        k.push_back(Key{.name = "type", .type = Type::String, .help = "vit, cnn or pretrained",
                        .choices = {"vit", "cnn", "pretrained"}});
        k.push_back(Key{.name = "channels", .type = Type::Any, .help = "cnn: channels per stage"});
        k.push_back(Key{.name = "pretrained", .type = Type::String, .help = "pretrained: zoo model (nanodet-coco)"});
        k.push_back(Key{.name = "cut_at", .type = Type::String, .help = "pretrained: the backbone value to cut at"});
        k.push_back(Key{.name = "random_init", .type = Type::Boolean,
                        .help = "pretrained: the same backbone with fresh weights (the baseline)"});
      } else {
        k.push_back(Key{.name = "context_length", .type = Type::Integer, .help = "longest token row", .min = 2});
        k.push_back(Key{.name = "causal", .type = Type::Boolean, .help = "causal mask, end-token feature (else mean)"});
      }
      return keys(std::move(k));
    };
    auto split = caption_split_schema();
    return Schema{{
        Key{.name = "task", .type = Type::String, .required = true, .choices = {"clip"}},
        Key{.name = "Global", .type = Type::Map, .required = true, .schema = keys(train::global_keys())},
        Key{.name = "Architecture", .type = Type::Map, .required = true,
            .schema = keys({Key{.name = "name", .type = Type::String, .choices = {"CLIP"}},
                            Key{.name = "image_size", .type = Type::Integer, .min = 8},
                            Key{.name = "patch_size", .type = Type::Integer, .min = 1},
                            Key{.name = "embed_dim", .type = Type::Integer, .min = 2},
                            Key{.name = "init_temperature", .type = Type::Number, .min = 1e-4, .max = 1},
                            Key{.name = "vision", .type = Type::Map, .schema = tower(false)},
                            Key{.name = "text", .type = Type::Map, .schema = tower(true)}})},
        tokenizer_key(),
        train::optimizer_key(),
        Key{.name = "Train", .type = Type::Map, .required = true, .schema = split},
        Key{.name = "Eval", .type = Type::Map, .required = true, .schema = split},
        Key{.name = "Metric", .type = Type::Map,
            .schema = keys({Key{.name = "main_indicator", .type = Type::String,
                                .choices = {"zero_shot_acc", "t2i_r1", "i2t_r1"}},
                            Key{.name = "classes", .type = Type::Any, .help = "zero-shot class names (a list)"},
                            Key{.name = "classes_file", .type = Type::String, .help = "one class name per line"},
                            Key{.name = "templates", .type = Type::Any, .help = "prompt templates with {}"}})},
    }};
  }();
  return s;
}

ClipConfig clip_config(const Recipe& r, int64_t vocab_size) {
  const Section a = r.section("Architecture"), v = a.section("vision"), t = a.section("text");
  ClipConfig c;
  c.image_size = a.integer("image_size", c.image_size, 8);
  c.patch_size = a.integer("patch_size", c.patch_size, 1);
  c.embed_dim = a.integer("embed_dim", c.embed_dim, 2);
  c.init_temperature = a.number("init_temperature", c.init_temperature);
  c.vision_type = v.text("type", c.vision_type);
  c.vision_channels = v.integers("channels", c.vision_channels, 1);
  c.pretrained_model = v.text("pretrained", c.pretrained_model);
  c.pretrained_output = v.text("cut_at", c.pretrained_output);
  c.pretrained_random_init = v.boolean("random_init", c.pretrained_random_init);
  c.vision_width = v.integer("width", c.vision_width, 8);
  c.vision_layers = v.integer("layers", c.vision_layers, 1);
  c.vision_heads = v.integer("heads", c.vision_heads, 1);
  c.text_width = t.integer("width", c.text_width, 8);
  c.text_layers = t.integer("layers", c.text_layers, 1);
  c.text_heads = t.integer("heads", c.text_heads, 1);
  c.context_length = t.integer("context_length", c.context_length, 2);
  c.causal_text = t.boolean("causal", c.causal_text);
  c.vocab_size = vocab_size;
  try {
    c.check();
  } catch (const ValueError& e) {
    SKIFF_THROW(ValueError, "{}: {}", a.where("name"), e.what());
  }
  return c;
}

fs::path save_dir(const Recipe& r) { return recipe_save_dir(r, "./output/clip"); }

std::vector<std::string> zero_shot_classes(const Recipe& r) {
  const Section m = r.section("Metric");
  if (m.has("classes")) return m.texts("classes");
  if (m.has("classes_file")) return read_text_lines(m.text("classes_file"));
  return {};
}

std::vector<std::string> templates(const Recipe& r) {
  const Section m = r.section("Metric");
  return m.has("templates") ? m.texts("templates") : default_prompt_templates();
}

/// Embeddings of every image [N, D], a batch at a time, under no-grad.
Tensor image_embeddings(ClipModel& model, const Tensor& images, int64_t batch) {
  NoGradGuard no_grad;
  std::vector<Tensor> parts;
  for (int64_t s = 0; s < images.size(0); s += batch)
    parts.push_back(model.encode_image(slice(images, 0, s, std::min(images.size(0), s + batch))));
  return concat(parts, 0);
}

std::map<std::string, double> evaluate_split(ClipModel& model, const text::Tokenizer& tok,
                                             const std::vector<CaptionedImage>& data, const Tensor& images,
                                             const std::vector<std::string>& classes,
                                             const std::vector<std::string>& prompt_templates, int64_t batch) {
  NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  const Tensor img = image_embeddings(model, images, batch);
  std::map<std::string, double> m{{"samples", double(data.size())}};
  // Zero-shot classification of the labelled images.
  if (!classes.empty()) {
    const Tensor cls = class_embeddings(model, tok, classes, prompt_templates);
    const std::vector<int64_t> pred = argmax(matmul(img, t(cls)), 1).to_vector<int64_t>();
    double right = 0, labelled = 0;
    for (size_t i = 0; i < data.size(); ++i) {
      if (data[i].label.empty()) continue;
      ++labelled;
      right += classes[size_t(pred[i])] == data[i].label;
    }
    if (labelled > 0) m["zero_shot_acc"] = right / labelled;
  }
  // Retrieval both ways over the distinct captions: a caption's correct images are all that
  // have it, an image's correct captions all of its own (synthetic captions repeat across images).
  std::vector<std::string> captions;
  std::map<std::string, int64_t> caption_index;
  std::map<std::string, std::vector<int64_t>> holders;
  std::vector<std::vector<int64_t>> image_captions(data.size());
  for (size_t i = 0; i < data.size(); ++i)
    for (const std::string& c : data[i].captions) {
      auto [it, fresh] = caption_index.emplace(c, int64_t(captions.size()));
      if (fresh) captions.push_back(c);
      image_captions[i].push_back(it->second);
      holders[c].push_back(int64_t(i));
    }
  const Tensor txt = embed_texts(model, tok, captions, batch);
  std::vector<std::vector<int64_t>> caption_images;
  for (const std::string& c : captions) caption_images.push_back(holders[c]);
  for (const auto& [k, v] : recall_at_k(matmul(txt, t(img)), caption_images)) m[fmt::format("t2i_r{}", k)] = v;
  for (const auto& [k, v] : recall_at_k(matmul(img, t(txt)), image_captions)) m[fmt::format("i2t_r{}", k)] = v;
  model.train(was_training);
  return m;
}

/// Training draws its own batches: step k takes images perm_e[(k % per_epoch) * B ...] of epoch
/// e = k / per_epoch (a seeded permutation per epoch) and one caption of each, seeded by k.
class ClipTask : public train::TrainTask {
 public:
  ClipTask(ClipModel& model, const text::Tokenizer& tok, std::vector<CaptionedImage> train, Tensor train_images,
           std::vector<CaptionedImage> eval, Tensor eval_images, std::vector<std::string> classes,
           std::vector<std::string> prompt_templates, int64_t batch, int64_t eval_batch, uint64_t seed,
           const optim::LRScheduler& schedule)
      : model_(model), tok_(tok), train_(std::move(train)), train_images_(std::move(train_images)),
        eval_(std::move(eval)), eval_images_(std::move(eval_images)), classes_(std::move(classes)),
        templates_(std::move(prompt_templates)), eval_batch_(eval_batch), seed_(seed),
        order_(train_.size(), batch, seed), schedule_(schedule) {}
  nn::Module& model() override { return model_; }
  Tensor loss(const data::Example&) override {
    const int64_t step = schedule_.last_epoch();
    const std::vector<int64_t> rows = order_.rows(step);
    const std::vector<std::string> captions = pick_captions(train_, rows, seed_, step);
    const auto [end, pad] = end_and_pad_ids(tok_);
    const CaptionTokens tk = tokenize_captions(tok_, captions, model_.config().context_length, end, pad);
    const Tensor images = index_select(train_images_, 0, from_vector(rows));
    return clip_loss(model_.encode_image(images), model_.encode_text(tk.ids, tk.pad), model_.logit_scale_value());
  }
  std::map<std::string, double> evaluate() override {
    return evaluate_split(model_, tok_, eval_, eval_images_, classes_, templates_, eval_batch_);
  }

 private:
  ClipModel& model_;
  const text::Tokenizer& tok_;
  std::vector<CaptionedImage> train_;
  Tensor train_images_;
  std::vector<CaptionedImage> eval_;
  Tensor eval_images_;
  std::vector<std::string> classes_, templates_;
  int64_t eval_batch_;
  uint64_t seed_;
  EpochOrder order_;
  const optim::LRScheduler& schedule_;
};

/// The trained model of a run: its clip.json and weights (Global.checkpoints, else the best).
std::unique_ptr<ClipModel> trained_model(const Recipe& r, const text::Tokenizer& tok) {
  auto model = std::make_unique<ClipModel>(clip_config(r, tok.vocab_size()));
  const fs::path weights = recipe_weights(r, save_dir(r));
  SKIFF_CHECK_T(IoError, fs::exists(weights), "{}: no trained weights at '{}' (run skiff train -c {} first)", r.file,
                weights.string(), r.file);
  train::load_weights(*model, weights);
  model->eval();
  return model;
}

}  // namespace

void ClipRecipeRunner::check(const Recipe& r, const config::ValidateOptions& options) const {
  config::validate(r.top(), schema(), options);
  clip_config(r, 1);  // the architecture's numbers fit together
  for (const std::string& t : templates(r))
    SKIFF_CHECK(t.find("{}") != std::string::npos, "{}: template '{}' has no {{}} for the class name",
                r.section("Metric").where("templates"), t);
}

train::FitResult ClipRecipeRunner::train(const Recipe& r, const train::TrainRequest& request) const {
  const Section global = r.section("Global");
  train::seed_run(global);
  const uint64_t seed = uint64_t(global.integer("seed", 42));
  auto tok = recipe_tokenizer(r);
  const ClipConfig c = clip_config(r, tok->vocab_size());
  ClipModel model(c);
  TrainingData d = load_training_data(r, c.image_size, request.quiet);
  const int64_t eval_batch = recipe_batch_size(r, "Eval", 128);
  return fit_recipe(r, request, model, d.per_epoch, "zero_shot_acc", {"clip.json", clip_config_json(c).dump(1) + "\n"},
                    [&](const optim::LRScheduler& schedule) {
                      return std::make_unique<ClipTask>(model, *tok, std::move(d.train), d.train_images, std::move(d.eval),
                                                        d.eval_images, zero_shot_classes(r), templates(r), d.batch,
                                                        eval_batch, seed, schedule);
                    });
}

std::map<std::string, double> ClipRecipeRunner::evaluate(const Recipe& r) const {
  auto tok = recipe_tokenizer(r);
  auto model = trained_model(r, *tok);
  std::vector<CaptionedImage> data = recipe_split(r, "Eval");
  const Tensor images = load_images(data, model->config().image_size);
  return evaluate_split(*model, *tok, data, images, zero_shot_classes(r), templates(r), recipe_batch_size(r, "Eval", 128));
}

std::vector<std::string> ClipRecipeRunner::predict(const Recipe& r, const train::PredictRequest& request) const {
  SKIFF_CHECK(!request.inputs.empty(), "{}: skiff predict needs image files for a clip recipe", r.file);
  const std::vector<std::string> classes = zero_shot_classes(r);
  SKIFF_CHECK(!classes.empty(), "{}: predicting needs Metric.classes or Metric.classes_file", r.file);
  auto tok = recipe_tokenizer(r);
  auto model = trained_model(r, *tok);
  std::vector<CaptionedImage> items;
  for (const std::string& in : request.inputs) items.push_back({in, {""}, ""});
  NoGradGuard no_grad;
  const Tensor img = image_embeddings(*model, load_images(items, model->config().image_size), 64);
  const Tensor probs = softmax(mul(matmul(img, t(class_embeddings(*model, *tok, classes, templates(r)))),
                                   model->logit_scale_value()), 1);
  std::vector<std::string> lines;
  for (size_t i = 0; i < items.size(); ++i) {
    const Tensor row = select(probs, 0, int64_t(i));
    const int64_t best = argmax(row, 0).item<int64_t>();
    lines.push_back(fmt::format("{}\t{}", request.inputs[i],
                                nlohmann::json{{"label", classes[size_t(best)]},
                                               {"score", std::round(select(row, 0, best).item<double>() * 1e4) / 1e4}}
                                    .dump()));
  }
  return lines;
}

fs::path ClipRecipeRunner::default_export_dir(const Recipe& r) const { return save_dir(r) / "inference"; }

train::ExportResult ClipRecipeRunner::export_model(const Recipe& r, const fs::path& dir) const {
  auto tok = recipe_tokenizer(r);
  auto model = trained_model(r, *tok);  // checks the run's files and that the weights fit
  const fs::path weights = recipe_weights(r, save_dir(r));
  fs::create_directories(dir);
  io::write_file_atomic(dir / "model.safetensors", io::read_file(weights));
  io::write_file_atomic(dir / "clip.json", clip_config_json(model->config()).dump(1) + "\n");
  io::write_file_atomic(dir / "vocab.txt", io::read_file(r.section("Tokenizer").text("vocab")));
  // Both towers as ONNX: image [batch, 3, S, S] -> embedding; ids and pad [batch, context_length]
  // (rows padded to the full context: the causal mask and positions are traced at that length).
  const ClipConfig& c = model->config();
  const int64_t s = c.image_size, t = c.context_length;
  graph::export_onnx(graph::trace(model.get(), [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{model->encode_image(in[0])}; },
                                  {zeros({1, 3, s, s})},
                                  {.dynamic_batch = true, .input_names = {"image"}, .output_names = {"embedding"},
                                   .graph_name = "skiff_clip_image"}),
                     (dir / "image_encoder.onnx").string());
  graph::export_onnx(graph::trace(model.get(), [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{model->encode_text(in[0], in[1])}; },
                                  {zeros({1, t}, DType::Int64), zeros({1, t}, DType::Bool)},
                                  {.dynamic_batch = true, .input_names = {"ids", "pad"}, .output_names = {"embedding"},
                                   .graph_name = "skiff_clip_text"}),
                     (dir / "text_encoder.onnx").string());
  const auto [end, pad] = end_and_pad_ids(*tok);
  YAML::Node yml;
  yml["arch"] = "CLIP";
  yml["embed_dim"] = c.embed_dim;
  yml["logit_scale"] = model->logit_scale_value().item<double>();
  yml["ImagePreprocess"] = image_preprocess_yaml(s);
  YAML::Node text;
  text["vocab"] = "vocab.txt";
  text["context_length"] = t;
  text["end_id"] = end;
  text["pad_id"] = pad;
  text["note"] = "ids cut to context_length - 1, then end_id, padded with pad_id to context_length; pad is true there";
  yml["TextPreprocess"] = text;
  io::write_file_atomic(dir / "inference.yml", config::to_yaml(yml));

  // The exported files must give the run's embeddings.
  ClipModel copy(c);
  train::load_weights(copy, dir / "model.safetensors");
  copy.eval();
  Generator gen(1);
  const Tensor probe = randn({2, 3, s, s}, DType::Float32, &gen);
  const std::vector<std::string> captions{"a red star", "two green circles left of a blue square"};
  const std::vector<std::string> padded_rows{captions[0], captions[1]};
  CaptionTokens tk = tokenize_captions(*tok, padded_rows, t, end, pad);
  if (tk.ids.size(1) < t) {  // to the full context, as the ONNX text tower takes it
    tk.ids = skiff::pad(tk.ids, {0, t - tk.ids.size(1)}, "constant", double(pad));
    tk.pad = skiff::to(skiff::pad(skiff::to(tk.pad, DType::Int64), {0, t - tk.pad.size(1)}, "constant", 1.0), DType::Bool);
  }
  NoGradGuard no_grad;
  const Tensor eager_image = model->encode_image(probe), eager_text = model->encode_text(tk.ids, tk.pad);
  double diff = amax(abs(sub(eager_image, copy.encode_image(probe)))).item<double>();
  engine::Predictor image_onnx((dir / "image_encoder.onnx").string()), text_onnx((dir / "text_encoder.onnx").string());
  diff = std::max(diff, amax(abs(sub(eager_image, image_onnx.run(std::vector<Tensor>{probe})[0]))).item<double>());
  diff = std::max(diff, amax(abs(sub(eager_text, text_onnx.run(std::vector<Tensor>{tk.ids, tk.pad})[0]))).item<double>());
  train::ExportResult result;
  result.files = {dir / "model.safetensors", dir / "clip.json", dir / "vocab.txt", dir / "image_encoder.onnx",
                  dir / "text_encoder.onnx", dir / "inference.yml"};
  result.max_abs_diff = diff;
  result.check = "ONNX towers and exported weights vs the trained model";
  return result;
}

}  // namespace skiff::multimodal
