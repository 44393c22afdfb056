#include "suites/nlp/encoder/classifier_recipe.h"

#include <nlohmann/json.hpp>

#include "framework/config/config.h"
#include "framework/core/error.h"
#include "framework/core/rng.h"
#include "framework/io/file.h"
#include "framework/io/safetensors.h"
#include "framework/ops/ops.h"
#include "suites/nlp/encoder/heads.h"
#include "suites/nlp/encoder/recipe_common.h"
#include "suites/nlp/encoder/text_classifier.h"
#include "suites/nlp/encoder/token_rows.h"

namespace skiff::nlp {

namespace fs = std::filesystem;
using config::Key;
using config::Type;
using train::Recipe;

namespace {

const std::vector<std::string> kLabels{"ham", "spam"};

const config::Schema& schema() {
  static const config::Schema s = encoder_recipe_schema(
      "text_classification",
      {Key{.name = "pretrained", .type = Type::String,
           .help = "a masked_lm run directory (or its weights file) to start the encoder from"}});
  return s;
}

fs::path save_dir(const Recipe& r) { return recipe_save_dir(r, "output/nlp/spam_classifier"); }

struct Rows {
  std::vector<std::string> texts;
  std::vector<int> labels;
};

Rows rows_of(const std::vector<Mail>& mails) {
  Rows r;
  for (const Mail& m : mails) {
    r.texts.push_back(m.text);
    r.labels.push_back(m.label);
  }
  return r;
}

// The encoder.* tensors of a masked-LM run into `model`; its head starts fresh.
void load_pretrained(const Recipe& r, EncoderForSequenceClassification& model) {
  fs::path p = r.top().text("pretrained");
  if (fs::is_directory(p)) p /= "best_model.safetensors";
  SKIFF_CHECK_T(IoError, fs::exists(p), "{}: no pretrained weights at {} (run the masked_lm recipe first)",
                r.top().where("pretrained"), p.string());
  io::SafetensorsFile f = io::load_safetensors(p);
  std::map<std::string, Tensor> encoder;
  for (auto& [name, t] : f.tensors)
    if (name.starts_with("encoder.")) encoder[name] = t;
  SKIFF_CHECK(!encoder.empty(), "{}: {} holds no encoder.* tensors", r.top().where("pretrained"), p.string());
  nn::LoadResult result;
  try {
    result = model.load_state_dict(encoder, false);
  } catch (const Error& e) {
    SKIFF_THROW(ValueError, "{}: {} does not fit the Encoder section: {}", r.top().where("pretrained"), p.string(),
                e.what());
  }
  for (const std::string& k : result.missing_keys)
    SKIFF_CHECK(!k.starts_with("encoder."), "{}: {} lacks {} (a different Encoder shape?)",
                r.top().where("pretrained"), p.string(), k);
  std::fprintf(stderr, "encoder initialised from %s (%zu tensors)\n", p.c_str(), encoder.size());
}

std::map<std::string, double> evaluate_rows(EncoderForSequenceClassification& model, const TokenRows& rows,
                                            const std::vector<int>& truth, int64_t batch) {
  NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  const int64_t pad = model.encoder->config().pad_id();
  std::vector<int> predicted;
  double loss = 0;
  for (size_t start = 0; start < rows.size(); start += size_t(batch)) {
    std::vector<size_t> index;
    std::vector<int64_t> labels;
    for (size_t i = start; i < std::min(rows.size(), start + size_t(batch)); ++i) {
      index.push_back(i);
      labels.push_back(truth[i]);
    }
    Tensor ids = rows.batch(index);
    Tensor logits = model.forward(ids, padding_mask(ids, pad));
    loss += cross_entropy(logits, from_vector(labels), {}, -100, Reduction::Sum).item<double>();
    for (int64_t v : contiguous(argmax(logits, -1)).to_vector<int64_t>()) predicted.push_back(int(v));
  }
  model.train(was_training);
  auto m = binary_metrics(predicted, truth);
  m["loss"] = loss / double(std::max<size_t>(1, rows.size()));
  m["samples"] = double(rows.size());
  return m;
}

class ClassifierTask : public train::TrainTask {
 public:
  ClassifierTask(EncoderForSequenceClassification& model, const TokenRows& train, std::vector<int> train_labels,
                 const TokenRows& eval, std::vector<int> eval_labels, int64_t batch, uint64_t seed,
                 const optim::LRScheduler& schedule)
      : model_(model), train_(train), eval_(eval), train_labels_(std::move(train_labels)),
        eval_labels_(std::move(eval_labels)), batch_(batch), order_(train.size(), size_t(batch), seed),
        schedule_(schedule) {}
  nn::Module& model() override { return model_; }
  Tensor loss(const data::Example&) override {
    std::vector<size_t> rows = order_.rows(schedule_.last_epoch());
    std::vector<int64_t> labels;
    for (size_t i : rows) labels.push_back(train_labels_[i]);
    Tensor ids = train_.batch(rows);
    return cross_entropy(model_.forward(ids, padding_mask(ids, model_.encoder->config().pad_id())),
                         from_vector(labels));
  }
  std::map<std::string, double> evaluate() override { return evaluate_rows(model_, eval_, eval_labels_, batch_); }
  int64_t per_epoch() const { return order_.per_epoch(); }

 private:
  EncoderForSequenceClassification& model_;
  const TokenRows &train_, &eval_;
  std::vector<int> train_labels_, eval_labels_;
  int64_t batch_;
  BatchOrder order_;
  const optim::LRScheduler& schedule_;
};

EncoderConfig classifier_config(const Recipe& r, const text::Tokenizer& tokenizer) {
  EncoderConfig c = recipe_encoder_config(r, tokenizer.vocab_size());
  c.labels = kLabels;
  return c;
}

}  // namespace

fs::path classifier_model_dir(const Recipe& r) { return save_dir(r); }

std::map<std::string, double> binary_metrics(const std::vector<int>& predicted, const std::vector<int>& truth) {
  SKIFF_CHECK(predicted.size() == truth.size(), "binary_metrics: {} predictions for {} labels", predicted.size(),
              truth.size());
  double tp = 0, fp = 0, fn = 0, correct = 0;
  for (size_t i = 0; i < truth.size(); ++i) {
    correct += predicted[i] == truth[i];
    tp += predicted[i] == 1 && truth[i] == 1;
    fp += predicted[i] == 1 && truth[i] != 1;
    fn += predicted[i] != 1 && truth[i] == 1;
  }
  const double precision = tp + fp > 0 ? tp / (tp + fp) : 0, recall = tp + fn > 0 ? tp / (tp + fn) : 0;
  return {{"accuracy", truth.empty() ? 0 : correct / double(truth.size())},
          {"precision", precision},
          {"recall", recall},
          {"f1", precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0}};
}

void TextClassificationRecipeRunner::check(const Recipe& r, const config::ValidateOptions& options) const {
  config::validate(r.top(), schema(), options);
}

train::FitResult TextClassificationRecipeRunner::train(const Recipe& r, const train::TrainRequest& request) const {
  const uint64_t seed = recipe_seed(r);
  manual_seed(seed);
  CorpusSplit split = recipe_corpus(r);
  auto tokenizer = recipe_tokenizer(r, split.train);
  EncoderConfig c = classifier_config(r, *tokenizer);
  Rows train_data = rows_of(split.train), eval_data = rows_of(split.eval);
  TokenRows train_rows(*tokenizer, train_data.texts, c), eval_rows(*tokenizer, eval_data.texts, c);
  EncoderForSequenceClassification model(c);
  if (r.top().has("pretrained")) load_pretrained(r, model);
  const int64_t batch = r.top().integer("batch_size", std::nullopt, 1);
  const fs::path dir = save_dir(r);
  write_model_dir(dir, c, *tokenizer);
  io::write_file_atomic(dir / "config.yml", config::to_yaml(r.root));

  auto optimizer = recipe_optimizer(r, model.parameters());
  const int64_t per_epoch = BatchOrder(train_rows.size(), size_t(batch), seed).per_epoch();
  const int64_t total = recipe_total_steps(r, per_epoch);
  auto schedule = recipe_schedule(r, *optimizer, total);
  ClassifierTask task(model, train_rows, train_data.labels, eval_rows, eval_data.labels, batch, seed, *schedule);
  return fit_one_phase(r, request, task, *optimizer, *schedule, dir, per_epoch, total, "accuracy");
}

std::map<std::string, double> TextClassificationRecipeRunner::evaluate(const Recipe& r) const {
  const fs::path dir = save_dir(r);
  CorpusSplit split = recipe_corpus(r);
  auto tokenizer = recipe_tokenizer(r, split.train);
  EncoderForSequenceClassification model(classifier_config(r, *tokenizer));
  train::load_weights(model, recipe_weights(r, dir));
  Rows eval_data = rows_of(split.eval);
  TokenRows rows(*tokenizer, eval_data.texts, model.encoder->config());
  return evaluate_rows(model, rows, eval_data.labels, r.top().integer("batch_size", std::nullopt, 1));
}

std::vector<std::string> TextClassificationRecipeRunner::predict(const Recipe& r,
                                                                 const train::PredictRequest& request) const {
  SKIFF_CHECK(!request.inputs.empty(), "{}: skiff predict needs text or mail files for a text_classification recipe",
              r.file);
  const fs::path dir = save_dir(r);
  TextClassifier classifier(dir);
  std::vector<std::string> texts;
  for (const std::string& in : request.inputs) {
    SKIFF_CHECK_T(IoError, fs::is_regular_file(in), "{}: no such file", in);
    std::string raw = io::read_file(in);
    texts.push_back(looks_like_mail(raw) ? mail_text(raw, size_t(r.section("Data").integer("max_bytes", 4000, 16)))
                                         : raw);
  }
  std::vector<std::string> lines;
  auto results = classifier.classify(texts);
  for (size_t i = 0; i < results.size(); ++i)
    lines.push_back(fmt::format("{}\t{}", request.inputs[i],
                                nlohmann::json{{"label", results[i].label},
                                               {"score", std::round(results[i].probability * 1e4) / 1e4}}
                                    .dump()));
  return lines;
}

fs::path TextClassificationRecipeRunner::default_export_dir(const Recipe& r) const {
  return save_dir(r) / "inference";
}

train::RunOutput TextClassificationRecipeRunner::run_output(const Recipe& r) const { return {save_dir(r), "save_dir"}; }

train::ExportResult TextClassificationRecipeRunner::export_model(const Recipe& r, const fs::path& dir) const {
  const fs::path run = save_dir(r);
  const fs::path weights = recipe_weights(r, run);
  TextClassifier trained(run);  // checks the run's files and that the weights fit
  fs::create_directories(dir);
  io::write_file_atomic(dir / "model.safetensors", io::read_file(weights));
  io::write_file_atomic(dir / "encoder.json", io::read_file(run / "encoder.json"));
  io::write_file_atomic(dir / "tokenizer.model", io::read_file(run / "tokenizer.model"));
  // The exported directory must classify as the run does.
  const std::vector<std::string> probe{"Subject: meeting moved\nSee you at 3pm in room 2.",
                                       "Subject: WIN $$$ NOW\nClick here to claim your FREE prize!!!"};
  auto a = trained.classify(probe), b = TextClassifier(dir).classify(probe);
  train::ExportResult result;
  result.files = {dir / "model.safetensors", dir / "encoder.json", dir / "tokenizer.model"};
  result.max_abs_diff = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t k = 0; k < a[i].probabilities.size(); ++k)
      result.max_abs_diff = std::max(result.max_abs_diff, std::abs(a[i].probabilities[k] - b[i].probabilities[k]));
  return result;
}

}  // namespace skiff::nlp
