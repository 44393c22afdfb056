#include "suites/nlp/decoder/causal_lm_recipe.h"

#include <cmath>
#include <random>

#include <nlohmann/json.hpp>

#include "framework/config/config.h"
#include "framework/core/error.h"
#include "framework/core/rng.h"
#include "framework/io/file.h"
#include "framework/io/safetensors.h"
#include "framework/nn/init.h"
#include "framework/nn/lora.h"
#include "framework/ops/ops.h"
#include "suites/nlp/decoder/text_documents.h"
#include "suites/nlp/encoder/recipe_common.h"
#include "suites/nlp/llama/generation.h"
#include "suites/nlp/llama/model.h"

namespace skiff::nlp {

namespace fs = std::filesystem;
using config::Key;
using config::keys;
using config::Schema;
using config::Section;
using config::Type;
using json = nlohmann::json;
using train::Recipe;

namespace {

const Schema& schema() {
  static const Schema s = [] {
    Key tokenizer = recipe_tokenizer_key();
    tokenizer.required = false;  // a LoRA recipe uses its base's
    std::vector<Key> k{
        Key{.name = "task", .type = Type::String, .required = true, .choices = {"causal_lm"}},
        Key{.name = "Data", .type = Type::Map, .help = "the text and its split", .required = true,
            .schema = keys({Key{.name = "files", .type = Type::Paths, .help = "text files or directories",
                                .required = true},
                            Key{.name = "exclude", .type = Type::Strings, .help = "file names to leave out"},
                            Key{.name = "separator", .type = Type::String,
                                .help = "the line that ends a document (\"%\" in fortune files; \"\": whole files)"},
                            Key{.name = "eval_share", .type = Type::Number, .min = 0.001, .max = 0.9},
                            Key{.name = "split_seed", .type = Type::Integer, .min = 0},
                            Key{.name = "eval_windows", .type = Type::Integer,
                                .help = "at most this many held-out windows per evaluation", .min = 1}})},
        tokenizer,
        Key{.name = "Decoder", .type = Type::Map, .help = "the model's shape (not with Lora)",
            .schema = keys({Key{.name = "hidden_size", .type = Type::Integer, .min = 8},
                            Key{.name = "num_layers", .type = Type::Integer, .min = 1, .max = 64},
                            Key{.name = "num_heads", .type = Type::Integer, .min = 1},
                            Key{.name = "num_kv_heads", .type = Type::Integer, .min = 1},
                            Key{.name = "intermediate_size", .type = Type::Integer, .min = 8},
                            Key{.name = "context", .type = Type::Integer, .help = "tokens per training window",
                                .min = 8, .max = 32768},
                            Key{.name = "rope_theta", .type = Type::Number, .min = 1},
                            Key{.name = "rms_norm_eps", .type = Type::Number, .min = 0},
                            Key{.name = "tie_word_embeddings", .type = Type::Boolean}})},
        Key{.name = "Lora", .type = Type::Map, .help = "train LoRA adapters on a trained model instead",
            .schema = keys({Key{.name = "base", .type = Type::String,
                                .help = "the base model directory (a causal_lm run or its export)", .required = true},
                            Key{.name = "rank", .type = Type::Integer, .min = 1},
                            Key{.name = "alpha", .type = Type::Number, .min = 0},
                            Key{.name = "targets", .type = Type::Strings, .help = "layer names (q_proj, v_proj, ...)"}})},
        Key{.name = "Sample", .type = Type::Map, .help = "what skiff predict generates",
            .schema = keys({Key{.name = "prompts", .type = Type::Strings},
                            Key{.name = "max_new_tokens", .type = Type::Integer, .min = 1},
                            Key{.name = "temperature", .type = Type::Number, .min = 0},
                            Key{.name = "top_k", .type = Type::Integer, .min = 0},
                            Key{.name = "top_p", .type = Type::Number, .min = 0, .max = 1},
                            Key{.name = "seed", .type = Type::Integer, .min = 0}})},
    };
    for (Key& e : recipe_training_keys()) k.push_back(std::move(e));
    return Schema{std::move(k)};
  }();
  return s;
}

bool is_lora(const Recipe& r) { return r.top().has("Lora"); }

fs::path save_dir(const Recipe& r) { return recipe_save_dir(r, "output/nlp/causal_lm"); }

nn::LoraOptions lora_options(const Recipe& r) {
  Section l = r.section("Lora");
  nn::LoraOptions o;
  o.rank = l.integer("rank", o.rank, 1);
  o.alpha = l.number("alpha", o.alpha);
  o.targets = l.texts("targets", o.targets);
  return o;
}

fs::path lora_base(const Recipe& r) {
  const fs::path base = r.section("Lora").text("base");
  SKIFF_CHECK_T(IoError, fs::exists(base / "config.json"),
                "{}: {} is not a trained model directory (no config.json); train the base recipe first",
                r.section("Lora").where("base"), base.string());
  return base;
}

// The weights of a model directory: model.safetensors (an export) or best_model.safetensors (a run).
fs::path model_dir_weights(const fs::path& dir) {
  for (const char* name : {"model.safetensors", "best_model.safetensors"})
    if (fs::exists(dir / name)) return dir / name;
  SKIFF_THROW(IoError, "{}: no model.safetensors or best_model.safetensors", dir.string());
}

DocumentSplit recipe_documents(const Recipe& r) {
  Section d = r.section("Data");
  std::vector<fs::path> files;
  for (const std::string& f : d.texts("files")) files.emplace_back(f);
  try {
    return split_documents(read_text_documents(files, d.text("separator", "%"), d.texts("exclude", std::vector<std::string>{})),
                           d.number("eval_share", 0.05), uint64_t(d.integer("split_seed", 42, 0)));
  } catch (Error& e) {
    e.add_context(d.where("files"));
    throw;
  }
}

// The tokenizer file of the run: the recipe's, or the LoRA base's.
std::unique_ptr<text::Tokenizer> run_tokenizer(const Recipe& r, const DocumentSplit* docs) {
  if (is_lora(r)) return text::load_tokenizer(lora_base(r) / "tokenizer.model");
  SKIFF_CHECK(r.top().has("Tokenizer"), "{}: a causal_lm recipe without Lora needs a Tokenizer section", r.file);
  if (docs) return recipe_tokenizer(r, docs->train, "documents");
  return text::load_tokenizer(r.section("Tokenizer").text("model"));
}

LlamaConfig recipe_decoder_config(const Recipe& r, const text::Tokenizer& tok) {
  if (is_lora(r)) return LlamaConfig::load(lora_base(r) / "config.json");
  SKIFF_CHECK(r.top().has("Decoder"), "{}: a causal_lm recipe without Lora needs a Decoder section", r.file);
  Section d = r.section("Decoder");
  LlamaConfig c;
  c.vocab_size = tok.vocab_size();
  c.hidden_size = d.integer("hidden_size", 192, 8);
  c.num_hidden_layers = d.integer("num_layers", 4, 1);
  c.num_attention_heads = d.integer("num_heads", 6, 1);
  c.num_key_value_heads = d.integer("num_kv_heads", c.num_attention_heads, 1);
  c.intermediate_size = d.integer("intermediate_size", 512, 8);
  c.max_position_embeddings = d.integer("context", 128, 8);
  c.rope_theta = d.number("rope_theta", 10000.0);
  c.rms_norm_eps = d.number("rms_norm_eps", 1e-5);
  c.tie_word_embeddings = d.boolean("tie_word_embeddings", true);
  SKIFF_CHECK(c.hidden_size % c.num_attention_heads == 0 && c.num_attention_heads % c.num_key_value_heads == 0 &&
                  (c.hidden_size / c.num_attention_heads) % 2 == 0,
              "{}: hidden_size {} must split into num_heads {} even-sized heads, and num_kv_heads {} divide num_heads",
              d.where("hidden_size"), c.hidden_size, c.num_attention_heads, c.num_key_value_heads);
  c.head_dim = c.hidden_size / c.num_attention_heads;
  const int32_t bos = tok.token_to_id("<s>"), eos = tok.token_to_id("</s>");
  SKIFF_CHECK(bos >= 0 && eos >= 0, "{}: the tokenizer {} has no <s> / </s> pieces", r.file, tok.source());
  c.bos_token_ids = {bos};
  c.eos_token_ids = {eos};
  return c;
}

// Training context: the recipe's Decoder.context, or the base model's for LoRA.
int64_t context_length(const Recipe& r, const LlamaConfig& c) {
  return is_lora(r) ? c.max_position_embeddings : r.section("Decoder").integer("context", 128, 8);
}

// <s> doc </s> for every document, end to end.
std::vector<int32_t> pack(const text::Tokenizer& tok, const std::vector<std::string>& docs, const LlamaConfig& c) {
  std::vector<int32_t> ids;
  for (const std::string& d : docs) {
    ids.push_back(int32_t(c.bos_token_ids.at(0)));
    for (int32_t id : tok.encode_ids(d)) ids.push_back(id);
    ids.push_back(int32_t(c.eos_token_ids.at(0)));
  }
  return ids;
}

// Inputs [B, T] and next-token targets [B*T] of windows starting at `starts`.
std::pair<Tensor, Tensor> windows(const std::vector<int32_t>& stream, const std::vector<size_t>& starts, int64_t t) {
  std::vector<int64_t> x, y;
  for (size_t s : starts)
    for (int64_t i = 0; i < t; ++i) {
      x.push_back(stream[s + size_t(i)]);
      y.push_back(stream[s + size_t(i) + 1]);
    }
  return {from_vector<int64_t>(x, {int64_t(starts.size()), t}), from_vector<int64_t>(y, {int64_t(y.size())})};
}

Tensor next_token_loss(LlamaForCausalLM& model, const Tensor& x, const Tensor& y) {
  Tensor logits = model.forward(x, Tensor());
  return cross_entropy(reshape(logits, {-1, logits.size(-1)}), y);
}

// Mean next-token loss and perplexity over consecutive windows of the held-out stream.
std::map<std::string, double> evaluate_stream(LlamaForCausalLM& model, const std::vector<int32_t>& stream, int64_t t,
                                              int64_t batch, int64_t max_windows) {
  NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  std::vector<size_t> starts;
  for (size_t s = 0; s + size_t(t) + 1 <= stream.size() && int64_t(starts.size()) < max_windows; s += size_t(t))
    starts.push_back(s);
  SKIFF_CHECK(!starts.empty(), "causal_lm: the held-out text has {} tokens, fewer than one window of {}",
              stream.size(), t + 1);
  double loss = 0, tokens = 0;
  for (size_t i = 0; i < starts.size(); i += size_t(batch)) {
    std::vector<size_t> part(starts.begin() + int64_t(i), starts.begin() + int64_t(std::min(starts.size(), i + size_t(batch))));
    auto [x, y] = windows(stream, part, t);
    loss += next_token_loss(model, x, y).item<double>() * double(y.numel());
    tokens += double(y.numel());
  }
  model.train(was_training);
  return {{"loss", loss / tokens}, {"ppl", std::exp(loss / tokens)}, {"tokens", tokens}};
}

class CausalLmTask : public train::TrainTask {
 public:
  CausalLmTask(LlamaForCausalLM& model, std::vector<int32_t> train, std::vector<int32_t> eval, int64_t t, int64_t batch,
               int64_t eval_windows, uint64_t seed, const optim::LRScheduler& schedule)
      : model_(model), train_(std::move(train)), eval_(std::move(eval)), t_(t), batch_(batch),
        eval_windows_(eval_windows), seed_(seed), schedule_(schedule) {
    SKIFF_CHECK(train_.size() > size_t(t_) + 1, "causal_lm: the training text has {} tokens, fewer than one window of {}",
                train_.size(), t_ + 1);
  }
  nn::Module& model() override { return model_; }
  // The same step draws the same windows, so a resumed run continues the same sequence.
  Tensor loss(const data::Example&) override {
    std::mt19937_64 gen(seed_ ^ (uint64_t(schedule_.last_epoch()) * 0x9e3779b97f4a7c15ULL));
    std::vector<size_t> starts;
    for (int64_t b = 0; b < batch_; ++b) starts.push_back(size_t(gen() % (train_.size() - size_t(t_) - 1)));
    auto [x, y] = windows(train_, starts, t_);
    return next_token_loss(model_, x, y);
  }
  std::map<std::string, double> evaluate() override {
    return evaluate_stream(model_, eval_, t_, batch_, eval_windows_);
  }
  int64_t per_epoch() const { return std::max<int64_t>(1, int64_t(train_.size()) / (batch_ * t_)); }

 private:
  LlamaForCausalLM& model_;
  std::vector<int32_t> train_, eval_;
  int64_t t_, batch_, eval_windows_;
  uint64_t seed_;
  const optim::LRScheduler& schedule_;
};

// config.json, generation_config.json and tokenizer.model of a model directory.
void write_model_files(const fs::path& dir, const LlamaConfig& c, const text::Tokenizer& tok) {
  fs::create_directories(dir);
  io::write_file_atomic(dir / "config.json", c.to_json().dump(2) + "\n");
  const json gen = {{"bos_token_id", c.bos_token_ids.at(0)}, {"eos_token_id", c.eos_token_ids.at(0)}};
  io::write_file_atomic(dir / "generation_config.json", gen.dump(2) + "\n");
  io::write_file_atomic(dir / "tokenizer.model", io::read_file(tok.source()));
}

// A fresh model with GPT-2 / LLaMA's initialization: N(0, 0.02) matrices and embeddings.
std::unique_ptr<LlamaForCausalLM> new_model(const LlamaConfig& c, uint64_t seed) {
  auto model = std::make_unique<LlamaForCausalLM>(c);
  Generator gen(seed);
  for (auto& [name, t] : model->named_parameters())
    if (t.dim() == 2) nn::init::normal_(t, 0.0, 0.02, &gen);
  return model;
}

// The model a trained recipe describes: its weights, plus the adapters for LoRA.
std::unique_ptr<LlamaForCausalLM> trained_model(const Recipe& r) {
  const fs::path run = save_dir(r);
  if (!is_lora(r)) {
    auto model = std::make_unique<LlamaForCausalLM>(LlamaConfig::load(run / "config.json"));
    train::load_weights(*model, recipe_weights(r, run));
    model->eval();
    return model;
  }
  const fs::path base = lora_base(r);
  auto model = std::make_unique<LlamaForCausalLM>(LlamaConfig::load(base / "config.json"));
  train::load_weights(*model, model_dir_weights(base));
  nn::add_lora(*model, nn::load_lora_options(run));
  nn::load_lora(*model, run);
  model->eval();
  return model;
}

}  // namespace

void CausalLmRecipeRunner::check(const Recipe& r, const config::ValidateOptions& options) const {
  config::validate(r.top(), schema(), options);
  SKIFF_CHECK(is_lora(r) || (r.top().has("Tokenizer") && r.top().has("Decoder")),
              "{}: a causal_lm recipe needs Tokenizer and Decoder sections (or a Lora section naming a base model)",
              r.file);
}

train::FitResult CausalLmRecipeRunner::train(const Recipe& r, const train::TrainRequest& request) const {
  const uint64_t seed = recipe_seed(r);
  manual_seed(seed);
  DocumentSplit docs = recipe_documents(r);
  auto tokenizer = run_tokenizer(r, &docs);
  LlamaConfig c = recipe_decoder_config(r, *tokenizer);
  const int64_t t = context_length(r, c);
  SKIFF_CHECK(t <= c.max_position_embeddings, "{}: context {} exceeds the base model's {}", r.file, t,
              c.max_position_embeddings);
  const fs::path dir = save_dir(r);
  std::unique_ptr<LlamaForCausalLM> model;
  nn::LoraOptions lora;
  if (is_lora(r)) {
    model = std::make_unique<LlamaForCausalLM>(c);
    train::load_weights(*model, model_dir_weights(lora_base(r)));
    lora = lora_options(r);
    Generator gen(seed);
    auto adapted = nn::add_lora(*model, lora, &gen);
    if (!request.quiet)
      std::fprintf(stderr, "LoRA rank %lld on %zu layers: %lld trainable of %lld parameters\n", (long long)lora.rank,
                   adapted.size(), (long long)model->num_parameters(true), (long long)model->num_parameters());
  } else {
    model = new_model(c, seed);
  }
  write_model_files(dir, c, *tokenizer);
  io::write_file_atomic(dir / "config.yml", config::to_yaml(r.root));

  std::vector<Tensor> trainable;
  for (auto& [name, p] : model->named_parameters())
    if (p.requires_grad()) trainable.push_back(p);
  auto optimizer = recipe_optimizer(r, trainable);
  const int64_t batch = r.top().integer("batch_size", std::nullopt, 1);
  std::vector<int32_t> train_ids = pack(*tokenizer, docs.train, c), eval_ids = pack(*tokenizer, docs.eval, c);
  if (!request.quiet)
    std::fprintf(stderr, "%zu training documents (%zu tokens), %zu held out (%zu tokens)\n", docs.train.size(),
                 train_ids.size(), docs.eval.size(), eval_ids.size());
  const int64_t per_epoch = std::max<int64_t>(1, int64_t(train_ids.size()) / (batch * t));
  const int64_t total = recipe_total_steps(r, per_epoch);
  auto schedule = recipe_schedule(r, *optimizer, total);
  CausalLmTask task(*model, std::move(train_ids), std::move(eval_ids), t, batch,
                    r.section("Data").integer("eval_windows", 64, 1), seed, *schedule);
  train::FitResult result = fit_one_phase(r, request, task, *optimizer, *schedule, dir, per_epoch, total, "loss",
                                          /*higher_is_better=*/false);
  if (is_lora(r) && fs::exists(dir / "best_model.safetensors")) {
    // The run keeps the adapters alone beside the trainer's files.
    train::load_weights(*model, dir / "best_model.safetensors");
    nn::save_lora(*model, lora, dir, lora_base(r).string());
  }
  return result;
}

std::map<std::string, double> CausalLmRecipeRunner::evaluate(const Recipe& r) const {
  DocumentSplit docs = recipe_documents(r);
  auto model = trained_model(r);
  const LlamaConfig& c = model->config();
  auto tokenizer = text::load_tokenizer(save_dir(r) / "tokenizer.model");
  const int64_t t = context_length(r, c), batch = r.top().integer("batch_size", std::nullopt, 1);
  const int64_t max_windows = r.section("Data").integer("eval_windows", 64, 1);
  std::vector<int32_t> ids = pack(*tokenizer, docs.eval, c);
  std::map<std::string, double> m = evaluate_stream(*model, ids, t, batch, max_windows);
  if (is_lora(r)) {
    // The same text through the base model: what the adapters gained.
    LlamaForCausalLM base(c);
    train::load_weights(base, model_dir_weights(lora_base(r)));
    std::map<std::string, double> b = evaluate_stream(base, ids, t, batch, max_windows);
    m["base_loss"] = b["loss"];
    m["base_ppl"] = b["ppl"];
  }
  return m;
}

std::vector<std::string> CausalLmRecipeRunner::predict(const Recipe& r, const train::PredictRequest& request) const {
  auto model = trained_model(r);
  auto tokenizer = text::load_tokenizer(save_dir(r) / "tokenizer.model");
  Section s = r.section("Sample");
  std::vector<std::string> prompts = request.inputs.empty() ? s.texts("prompts", std::vector<std::string>{"The"})
                                                            : request.inputs;
  GenerationConfig g;
  g.max_new_tokens = s.integer("max_new_tokens", 48, 1);
  g.temperature = s.number("temperature", 0.8);
  g.do_sample = g.temperature > 0;
  if (!g.do_sample) g.temperature = 1.0;
  g.top_k = s.integer("top_k", 40, 0);
  g.top_p = s.number("top_p", 1.0);
  g.seed = uint64_t(s.integer("seed", 1, 0));
  g.eos_token_ids = model->config().eos_token_ids;
  std::vector<std::string> out;
  for (const std::string& p : prompts) {
    std::vector<int64_t> ids{model->config().bos_token_ids.at(0)};
    for (int32_t id : tokenizer->encode_ids(p)) ids.push_back(id);
    GenerationOutput o = generate(*model, {ids}, g);
    std::vector<int32_t> all;
    for (size_t i = 1; i < ids.size(); ++i) all.push_back(int32_t(ids[i]));
    for (int64_t id : o.tokens[0]) all.push_back(int32_t(id));
    out.push_back(tokenizer->decode(all, true) + "\n---");
  }
  return out;
}

fs::path CausalLmRecipeRunner::default_export_dir(const Recipe& r) const { return save_dir(r) / "inference"; }
train::RunOutput CausalLmRecipeRunner::run_output(const Recipe& r) const { return {save_dir(r), "save_dir"}; }

train::ExportResult CausalLmRecipeRunner::export_model(const Recipe& r, const fs::path& dir) const {
  auto model = trained_model(r);
  auto tokenizer = text::load_tokenizer(save_dir(r) / "tokenizer.model");
  Tensor probe = from_vector<int64_t>({1, 5, 9, 13, 17, 21, 25, 29}, {1, 8});
  Tensor before;
  {
    NoGradGuard no_grad;
    before = model->forward(probe);
    if (is_lora(r)) nn::merge_lora(*model);
  }
  std::map<std::string, Tensor> weights;
  for (auto& [name, t] : model->state_dict())
    if (name.find(".lora_") == std::string::npos) weights[name] = t;
  write_model_files(dir, model->config(), *tokenizer);
  io::save_safetensors(dir / "model.safetensors", weights, {{"format", "pt"}});
  // The exported directory, loaded as `skiff nlp generate` loads it, must give the same logits.
  LlamaForCausalLM check(model->config());
  train::load_weights(check, dir / "model.safetensors");
  NoGradGuard no_grad;
  check.eval();
  Tensor after = check.forward(probe);
  train::ExportResult result;
  result.files = {dir / "config.json", dir / "generation_config.json", dir / "model.safetensors",
                  dir / "tokenizer.model"};
  result.max_abs_diff = amax(abs(after - before)).item<double>();
  result.check = is_lora(r) ? "merged export vs adapters" : "export vs trained";
  return result;
}

}  // namespace skiff::nlp
