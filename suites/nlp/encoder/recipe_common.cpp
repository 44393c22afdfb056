#include "suites/nlp/encoder/recipe_common.h"

#include <algorithm>
#include <random>

#include "framework/config/config.h"
#include "framework/core/error.h"
#include "framework/io/file.h"
#include "framework/optim/optimizers.h"
#include "framework/text/sentencepiece_tokenizer.h"
#include "framework/zoo/zoo.h"

namespace skiff::nlp {

namespace fs = std::filesystem;
using config::Key;
using config::keys;
using config::Schema;
using config::Section;
using config::Type;
using train::Recipe;

Key recipe_tokenizer_key() {
  return Key{.name = "Tokenizer", .type = Type::Map, .required = true,
             .schema = keys({Key{.name = "model", .type = Type::String,
                                 .help = "SentencePiece .model (trained on the training split when absent)",
                                 .required = true},
                             Key{.name = "vocab_size", .type = Type::Integer, .min = 100, .max = 1000000},
                             Key{.name = "model_type", .type = Type::String, .choices = {"unigram", "bpe"}},
                             Key{.name = "byte_fallback", .type = Type::Boolean,
                                 .help = "unknown characters (and newlines) as <0xNN> byte pieces"},
                             Key{.name = "normalization", .type = Type::String,
                                 .choices = {"nmt_nfkc", "nfkc", "identity"}},
                             Key{.name = "remove_extra_whitespaces", .type = Type::Boolean}})};
}

std::vector<Key> recipe_training_keys() {
  return {
      Key{.name = "batch_size", .type = Type::Integer, .required = true, .min = 1},
      Key{.name = "epoch", .type = Type::Integer, .required = true, .min = 1},
      Key{.name = "max_iters", .type = Type::Integer, .help = "stop after this many steps (0: all epochs)", .min = 0},
      Key{.name = "LearningRate", .type = Type::Map, .required = true,
          .schema = keys({Key{.name = "base_lr", .type = Type::Number, .required = true, .min = 0},
                          Key{.name = "warmup_steps", .type = Type::Integer, .min = 0}})},
      Key{.name = "weight_decay", .type = Type::Number, .min = 0},
      Key{.name = "clip_grad_by_norm", .type = Type::Number, .min = 0},
      Key{.name = "log_iter", .type = Type::Integer, .min = 1},
      Key{.name = "eval_iter", .type = Type::Integer, .help = "evaluate and save every N steps (0: each epoch)",
          .min = 0},
      Key{.name = "save_dir", .type = Type::String},
      Key{.name = "weights", .type = Type::String, .help = "weights for eval / predict / export"},
      Key{.name = "seed", .type = Type::Integer, .min = 0},
  };
}

Schema encoder_recipe_schema(const std::string& task, std::vector<Key> extra) {
  std::vector<Key> k{
      Key{.name = "task", .type = Type::String, .help = task, .required = true, .choices = {task}},
      Key{.name = "Data", .type = Type::Map, .help = "the mail corpus and its split", .required = true,
          .schema = keys({Key{.name = "dataset", .type = Type::String, .help = "zoo name of the data (spam-assassin)"},
                          Key{.name = "dataset_dir", .type = Type::String, .help = "a local copy instead of the zoo"},
                          Key{.name = "eval_share", .type = Type::Number, .help = "held-out share per label",
                              .min = 0.01, .max = 0.99},
                          Key{.name = "split_seed", .type = Type::Integer, .min = 0},
                          Key{.name = "max_bytes", .type = Type::Integer, .help = "bytes of each mail read",
                              .min = 16}})},
      recipe_tokenizer_key(),
      Key{.name = "Encoder", .type = Type::Map, .required = true,
          .schema = keys({Key{.name = "hidden_size", .type = Type::Integer, .min = 8},
                          Key{.name = "num_layers", .type = Type::Integer, .min = 1, .max = 48},
                          Key{.name = "num_heads", .type = Type::Integer, .min = 1},
                          Key{.name = "intermediate_size", .type = Type::Integer, .min = 8},
                          Key{.name = "max_length", .type = Type::Integer, .min = 2, .max = 8192},
                          Key{.name = "pre_norm", .type = Type::Boolean},
                          Key{.name = "positions", .type = Type::String, .help = "learned embeddings or rotary (RoPE)",
                              .choices = {"learned", "rotary"}},
                          Key{.name = "rope_theta", .type = Type::Number, .help = "rotary base", .min = 1},
                          Key{.name = "dropout", .type = Type::Number, .min = 0, .max = 0.9},
                          Key{.name = "pooling", .type = Type::String, .choices = {"cls", "mean"}}})},
  };
  for (Key& e : recipe_training_keys()) k.push_back(std::move(e));
  for (Key& e : extra) k.push_back(std::move(e));
  return Schema{std::move(k)};
}

CorpusSplit recipe_corpus(const Recipe& r) {
  Section data = r.section("Data");
  fs::path dir;
  if (data.has("dataset_dir")) {
    dir = data.text("dataset_dir");
    SKIFF_CHECK_T(IoError, fs::is_directory(dir), "{}: no directory {}", data.where("dataset_dir"), dir.string());
  } else {
    const std::string name = data.text("dataset", "spam-assassin");
    zoo::Zoo z(zoo::ZooOptions::from_env());
    const auto& entry = z.model(name);
    SKIFF_CHECK(!entry.files.empty(), "{}: zoo entry '{}' has no files", data.where("dataset"), name);
    dir = z.fetch_file(name, entry.files[0].path);
  }
  auto mails = read_spam_assassin(dir, size_t(data.integer("max_bytes", 4000, 16)));
  return split_corpus(std::move(mails), data.number("eval_share", 0.2), uint64_t(data.integer("split_seed", 42, 0)));
}

std::unique_ptr<text::Tokenizer> recipe_tokenizer(const Recipe& r, const std::vector<std::string>& texts,
                                                  const std::string& what) {
  Section tok = r.section("Tokenizer");
  const fs::path model = tok.text("model");
  if (!fs::exists(model)) {
    // One line per sentence for spm_train: each line of each training text.
    fs::create_directories(model.parent_path().empty() ? fs::path(".") : model.parent_path());
    std::string corpus;
    for (const std::string& t : texts) (corpus += t) += '\n';
    const fs::path text_file = fs::path(model).concat(".train.txt");
    io::write_file_atomic(text_file, corpus);
    text::SentencePieceTrainOptions o;
    o.inputs = {text_file};
    o.output = model;
    o.vocab_size = int(tok.integer("vocab_size", 8000, 100));
    o.model_type = tok.text("model_type", o.model_type);
    o.byte_fallback = tok.boolean("byte_fallback", o.byte_fallback);
    o.normalization = tok.text("normalization", o.normalization);
    o.remove_extra_whitespaces = tok.boolean("remove_extra_whitespaces", o.remove_extra_whitespaces);
    std::fprintf(stderr, "training the tokenizer %s (%d pieces) on %zu training %s\n", model.c_str(), o.vocab_size,
                 texts.size(), what.c_str());
    text::train_sentencepiece(o);
    fs::remove(text_file);
  }
  return std::make_unique<text::SentencePieceTokenizer>(model);
}

std::unique_ptr<text::Tokenizer> recipe_tokenizer(const Recipe& r, const std::vector<Mail>& train) {
  std::vector<std::string> texts;
  for (const Mail& m : train) texts.push_back(m.text);
  return recipe_tokenizer(r, texts, "mails");
}

EncoderConfig recipe_encoder_config(const Recipe& r, int64_t pieces) {
  Section e = r.section("Encoder");
  EncoderConfig c;
  c.pieces = pieces;
  c.hidden_size = e.integer("hidden_size", c.hidden_size, 8);
  c.num_layers = e.integer("num_layers", c.num_layers, 1);
  c.num_heads = e.integer("num_heads", c.num_heads, 1);
  c.intermediate_size = e.integer("intermediate_size", c.intermediate_size, 8);
  c.max_length = e.integer("max_length", c.max_length, 2);
  c.pre_norm = e.boolean("pre_norm", c.pre_norm);
  c.positions = e.text("positions", c.positions);
  c.rope_theta = e.number("rope_theta", c.rope_theta);
  c.dropout = e.number("dropout", c.dropout);
  c.pooling = e.text("pooling", c.pooling);
  c.check(r.file + ": Encoder");
  return c;
}

uint64_t recipe_seed(const Recipe& r) { return uint64_t(r.top().integer("seed", 42, 0)); }

fs::path recipe_save_dir(const Recipe& r, const std::string& fallback) { return r.top().text("save_dir", fallback); }

BatchOrder::BatchOrder(size_t rows, size_t batch, uint64_t seed) : rows_(rows), batch_(batch), seed_(seed) {
  SKIFF_CHECK(batch > 0 && rows >= batch, "BatchOrder: {} rows make no batch of {}", rows, batch);
}

std::vector<size_t> BatchOrder::rows(int64_t step) {
  const int64_t epoch = step / per_epoch(), k = step % per_epoch();
  if (epoch != epoch_) {
    perm_.resize(rows_);
    for (size_t i = 0; i < rows_; ++i) perm_[i] = i;
    std::mt19937_64 gen(seed_ + uint64_t(epoch) * 0x9e3779b97f4a7c15ULL);
    for (size_t i = rows_; i > 1; --i) std::swap(perm_[i - 1], perm_[size_t(gen() % i)]);
    epoch_ = epoch;
  }
  return {perm_.begin() + k * int64_t(batch_), perm_.begin() + (k + 1) * int64_t(batch_)};
}

std::unique_ptr<optim::Optimizer> recipe_optimizer(const Recipe& r, std::vector<Tensor> params) {
  return std::make_unique<optim::AdamW>(
      std::move(params), optim::AdamOptions{.lr = r.section("LearningRate").number("base_lr"),
                                            .weight_decay = r.top().number("weight_decay", 0.01)});
}

std::unique_ptr<optim::LRScheduler> recipe_schedule(const Recipe& r, optim::Optimizer& opt, int64_t total) {
  const int64_t warmup = std::min<int64_t>(r.section("LearningRate").integer("warmup_steps", 0, 0), total);
  auto cosine = std::make_unique<optim::CosineAnnealingLR>(opt, std::max<int64_t>(1, total - warmup));
  return std::make_unique<optim::LinearWarmup>(std::move(cosine), warmup, 0.0);
}

int64_t recipe_total_steps(const Recipe& r, int64_t per_epoch) {
  int64_t total = r.top().integer("epoch", std::nullopt, 1) * per_epoch;
  if (const int64_t cap = r.top().integer("max_iters", 0, 0); cap > 0) total = std::min(total, cap);
  return total;
}

train::FitResult fit_one_phase(const Recipe& r, const train::TrainRequest& request, train::TrainTask& task,
                               optim::Optimizer& optimizer, optim::LRScheduler& schedule, const fs::path& dir,
                               int64_t per_epoch, int64_t total, const std::string& metric, bool higher_is_better) {
  train::TrainerOptions o = recipe_trainer_options(r, dir, per_epoch, total, request.quiet);
  o.metric = metric;
  o.higher_is_better = higher_is_better;
  std::vector<train::TrainPhase> phases{
      train::TrainPhase{.name = "train", .optimizer = &optimizer, .scheduler = &schedule, .steps = total}};
  train::Trainer trainer(task, std::move(phases), nullptr, o);
  return trainer.fit(train::resume_checkpoint(request, dir));
}

train::TrainerOptions recipe_trainer_options(const Recipe& r, const fs::path& dir, int64_t per_epoch, int64_t total,
                                             bool quiet) {
  Section top = r.top();
  train::TrainerOptions o;
  o.output_dir = dir;
  o.epochs = top.integer("epoch", std::nullopt, 1);
  o.max_steps = total;
  o.log_every = top.integer("log_iter", 20, 1);
  const int64_t every = top.integer("eval_iter", 0, 0);
  o.eval_every = every > 0 ? std::min(every, total) : std::min(per_epoch, total);
  o.checkpoint_every = o.eval_every;
  o.clip_norm = top.number("clip_grad_by_norm", 1.0);
  o.quiet = quiet;
  o.metadata["skiff.recipe"] = config::to_yaml(r.root);
  return o;
}

void write_model_dir(const fs::path& dir, const EncoderConfig& c, const text::Tokenizer& tokenizer) {
  fs::create_directories(dir);
  save_encoder_config(c, dir / "encoder.json");
  io::write_file_atomic(dir / "tokenizer.model", io::read_file(tokenizer.source()));
}

fs::path recipe_weights(const Recipe& r, const fs::path& save_dir) {
  fs::path w = r.top().has("weights") ? fs::path(r.top().text("weights")) : save_dir / "best_model.safetensors";
  SKIFF_CHECK_T(IoError, fs::exists(w), "{}: no trained weights at {} (train first, or set weights:)", r.file,
                w.string());
  return w;
}

}  // namespace skiff::nlp
