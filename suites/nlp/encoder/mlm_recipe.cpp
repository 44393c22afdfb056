#include "suites/nlp/encoder/mlm_recipe.h"

#include "framework/config/config.h"
#include "framework/core/error.h"
#include "framework/core/rng.h"
#include "framework/io/file.h"
#include "framework/ops/ops.h"
#include "suites/nlp/encoder/heads.h"
#include "suites/nlp/encoder/mlm_masking.h"
#include "suites/nlp/encoder/recipe_common.h"
#include "suites/nlp/encoder/token_rows.h"

namespace skiff::nlp {

namespace fs = std::filesystem;
using config::Key;
using config::Type;
using train::Recipe;

namespace {

const config::Schema& schema() {
  static const config::Schema s = encoder_recipe_schema(
      "masked_lm",
      {Key{.name = "MaskedLM", .type = Type::Map, .help = "BERT's corruption",
           .schema = config::keys({Key{.name = "probability", .type = Type::Number, .min = 0.01, .max = 1},
                                   Key{.name = "mask_share", .type = Type::Number, .min = 0, .max = 1},
                                   Key{.name = "random_share", .type = Type::Number, .min = 0, .max = 1}})}});
  return s;
}

MlmMaskOptions mask_options(const Recipe& r) {
  config::Section m = r.section("MaskedLM");
  MlmMaskOptions o;
  o.probability = m.number("probability", o.probability);
  o.mask_share = m.number("mask_share", o.mask_share);
  o.random_share = m.number("random_share", o.random_share);
  return o;
}

fs::path save_dir(const Recipe& r) { return recipe_save_dir(r, "output/nlp/encoder_mlm"); }

std::vector<std::string> texts(const std::vector<Mail>& mails) {
  std::vector<std::string> t;
  for (const Mail& m : mails) t.push_back(m.text);
  return t;
}

// Masked-token accuracy and mean loss over `rows`, masked with fixed draws (the same
// masks at every evaluation, so the numbers compare across steps and runs).
std::map<std::string, double> evaluate_rows(EncoderForMaskedLM& model, const TokenRows& rows, const MlmMaskOptions& o,
                                            int64_t batch, uint64_t seed) {
  NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  const EncoderConfig& c = model.encoder->config();
  double loss = 0, correct = 0, total = 0;
  for (size_t start = 0; start < rows.size(); start += size_t(batch)) {
    std::vector<size_t> index;
    for (size_t i = start; i < std::min(rows.size(), start + size_t(batch)); ++i) index.push_back(i);
    Tensor ids = rows.batch(index);
    MaskedBatch m = mask_tokens(ids, c, o, seed, uint64_t(1) << 40 | start);
    Tensor logits = model.forward(m.ids, padding_mask(ids, c.pad_id()), m.positions);
    const double n = double(m.labels.numel());
    loss += cross_entropy(logits, m.labels).item<double>() * n;
    correct += sum(to(eq(argmax(logits, -1), m.labels), DType::Float64)).item<double>();
    total += n;
  }
  model.train(was_training);
  return {{"mlm_acc", total > 0 ? correct / total : 0.0}, {"mlm_loss", total > 0 ? loss / total : 0.0},
          {"samples", double(rows.size())}};
}

class MlmTask : public train::TrainTask {
 public:
  MlmTask(EncoderForMaskedLM& model, const TokenRows& train, const TokenRows& eval, MlmMaskOptions o, int64_t batch,
          uint64_t seed, const optim::LRScheduler& schedule)
      : model_(model), train_(train), eval_(eval), o_(o), batch_(batch), seed_(seed), order_(train.size(), size_t(batch), seed),
        schedule_(schedule) {}
  nn::Module& model() override { return model_; }
  Tensor loss(const data::Example&) override {
    const int64_t step = schedule_.last_epoch();
    std::vector<size_t> rows = order_.rows(step);
    Tensor ids = train_.batch(rows);
    const EncoderConfig& c = model_.encoder->config();
    MaskedBatch m = mask_tokens(ids, c, o_, seed_, uint64_t(step));
    return cross_entropy(model_.forward(m.ids, padding_mask(ids, c.pad_id()), m.positions), m.labels);
  }
  std::map<std::string, double> evaluate() override { return evaluate_rows(model_, eval_, o_, batch_, seed_); }
  int64_t per_epoch() const { return order_.per_epoch(); }

 private:
  EncoderForMaskedLM& model_;
  const TokenRows &train_, &eval_;
  MlmMaskOptions o_;
  int64_t batch_;
  uint64_t seed_;
  BatchOrder order_;
  const optim::LRScheduler& schedule_;
};

}  // namespace

void MaskedLmRecipeRunner::check(const Recipe& r, const config::ValidateOptions& options) const {
  config::validate(r.top(), schema(), options);
  (void)mask_options(r);
}

train::FitResult MaskedLmRecipeRunner::train(const Recipe& r, const train::TrainRequest& request) const {
  const uint64_t seed = recipe_seed(r);
  manual_seed(seed);
  CorpusSplit split = recipe_corpus(r);
  auto tokenizer = recipe_tokenizer(r, split.train);
  EncoderConfig c = recipe_encoder_config(r, tokenizer->vocab_size());
  TokenRows train_rows(*tokenizer, texts(split.train), c), eval_rows(*tokenizer, texts(split.eval), c);
  EncoderForMaskedLM model(c);
  const int64_t batch = r.top().integer("batch_size", std::nullopt, 1);
  const fs::path dir = save_dir(r);
  write_model_dir(dir, c, *tokenizer);
  io::write_file_atomic(dir / "config.yml", config::to_yaml(r.root));

  auto optimizer = recipe_optimizer(r, model.parameters());
  BatchOrder probe(train_rows.size(), size_t(batch), seed);
  const int64_t per_epoch = probe.per_epoch();
  const int64_t total = recipe_total_steps(r, per_epoch);
  auto schedule = recipe_schedule(r, *optimizer, total);
  MlmTask task(model, train_rows, eval_rows, mask_options(r), batch, seed, *schedule);
  return fit_one_phase(r, request, task, *optimizer, *schedule, dir, per_epoch, total, "mlm_acc");
}

std::map<std::string, double> MaskedLmRecipeRunner::evaluate(const Recipe& r) const {
  const fs::path dir = save_dir(r);
  CorpusSplit split = recipe_corpus(r);
  auto tokenizer = recipe_tokenizer(r, split.train);
  EncoderForMaskedLM model(recipe_encoder_config(r, tokenizer->vocab_size()));
  train::load_weights(model, recipe_weights(r, dir));
  TokenRows rows(*tokenizer, texts(split.eval), model.encoder->config());
  return evaluate_rows(model, rows, mask_options(r), r.top().integer("batch_size", std::nullopt, 1), recipe_seed(r));
}

std::vector<std::string> MaskedLmRecipeRunner::predict(const Recipe& r, const train::PredictRequest&) const {
  SKIFF_THROW(ValueError, "{}: a masked_lm recipe has nothing to predict; fine-tune it with a text_classification "
              "recipe (pretrained: {}) and predict with that", r.file, save_dir(r).string());
}

fs::path MaskedLmRecipeRunner::default_export_dir(const Recipe& r) const { return save_dir(r) / "inference"; }
train::RunOutput MaskedLmRecipeRunner::run_output(const Recipe& r) const { return {save_dir(r), "save_dir"}; }

train::ExportResult MaskedLmRecipeRunner::export_model(const Recipe& r, const fs::path& dir) const {
  const fs::path run = save_dir(r);
  const fs::path weights = recipe_weights(r, run);
  EncoderConfig c = load_encoder_config(run / "encoder.json");
  EncoderForMaskedLM model(c);
  train::load_weights(model, weights);  // fails early when the weights are not this encoder's
  fs::create_directories(dir);
  io::write_file_atomic(dir / "model.safetensors", io::read_file(weights));
  io::write_file_atomic(dir / "encoder.json", io::read_file(run / "encoder.json"));
  io::write_file_atomic(dir / "tokenizer.model", io::read_file(run / "tokenizer.model"));
  train::ExportResult result;
  result.files = {dir / "model.safetensors", dir / "encoder.json", dir / "tokenizer.model"};
  return result;
}

}  // namespace skiff::nlp
