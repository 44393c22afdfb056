#pragma once
/// \file recipe_common.h
/// What the encoder recipes (`task: masked_lm`, `task: text_classification`) share:
/// their schema, the mail data and its split, the tokenizer (trained on first use),
/// the encoder's shape, batch order, optimizer and schedule, and the model directory
/// a run leaves (encoder.json + tokenizer.model beside the trainer's weights).
/// The decoder recipes (`task: causal_lm`, suites/nlp/decoder/) use the task-independent
/// half: recipe_training_keys, recipe_tokenizer_key / recipe_tokenizer on plain texts,
/// the optimizer, schedule, run length and fit_one_phase.
///
///   Data:      {dataset: spam-assassin, eval_share: 0.2, split_seed: 42, max_bytes: 4000}
///              (dataset: a zoo name, pulled on first use; or dataset_dir: a local copy)
///   Tokenizer: {model: output/nlp/spam_sp8000.model, vocab_size: 8000}
///              (a SentencePiece unigram model trained on the training split's mails
///               when the file does not exist yet)
///   Encoder:   {hidden_size, num_layers, num_heads, intermediate_size, max_length,
///               pre_norm, dropout, pooling}
///   batch_size, epoch, max_iters, LearningRate: {base_lr, warmup_steps},
///   weight_decay, clip_grad_by_norm, log_iter, eval_iter, save_dir, seed, weights

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "framework/config/schema.h"
#include "framework/optim/lr_scheduler.h"
#include "framework/optim/optimizer.h"
#include "framework/text/tokenizer.h"
#include "framework/train/recipe_runner.h"
#include "suites/nlp/encoder/encoder_config.h"
#include "suites/nlp/encoder/mail_corpus.h"

namespace skiff::nlp {

/// The schema of one encoder task's recipe: the shared keys plus `extra` (the task's own).
config::Schema encoder_recipe_schema(const std::string& task, std::vector<config::Key> extra);

/// The keys of every NLP training recipe (encoder and decoder): batch_size, epoch,
/// max_iters, LearningRate, weight_decay, clip_grad_by_norm, log_iter, eval_iter,
/// save_dir, weights, seed.
std::vector<config::Key> recipe_training_keys();

/// The Tokenizer section: {model, vocab_size, model_type, byte_fallback, normalization,
/// remove_extra_whitespaces} (SentencePieceTrainOptions' defaults when absent).
config::Key recipe_tokenizer_key();

/// The messages of Data, split. \throws IoError / ValueError naming the recipe key.
CorpusSplit recipe_corpus(const train::Recipe& r);

/// The recipe's tokenizer, trained on `texts` (each line a sentence; `what` names them in
/// the progress line) first when Tokenizer.model does not exist.
std::unique_ptr<text::Tokenizer> recipe_tokenizer(const train::Recipe& r, const std::vector<std::string>& texts,
                                                  const std::string& what);
/// The same on the training mails.
std::unique_ptr<text::Tokenizer> recipe_tokenizer(const train::Recipe& r, const std::vector<Mail>& train);

/// Encoder: of the recipe for a tokenizer of `pieces` pieces.
EncoderConfig recipe_encoder_config(const train::Recipe& r, int64_t pieces);

uint64_t recipe_seed(const train::Recipe& r);
std::filesystem::path recipe_save_dir(const train::Recipe& r, const std::string& fallback);

/// The training rows of batch `step` (epoch = step / batches per epoch): a seeded
/// permutation per epoch, the last partial batch dropped. Same step, same rows.
class BatchOrder {
 public:
  BatchOrder(size_t rows, size_t batch, uint64_t seed);
  int64_t per_epoch() const { return int64_t(rows_ / batch_); }
  std::vector<size_t> rows(int64_t step);

 private:
  size_t rows_, batch_;
  uint64_t seed_;
  int64_t epoch_ = -1;
  std::vector<size_t> perm_;
};

/// AdamW (decay on weights of rank >= 2 only would need groups; one decay for all, as
/// the detection recipes) and linear warm-up into cosine decay over `total` steps.
std::unique_ptr<optim::Optimizer> recipe_optimizer(const train::Recipe& r, std::vector<Tensor> params);
std::unique_ptr<optim::LRScheduler> recipe_schedule(const train::Recipe& r, optim::Optimizer& opt, int64_t total);

/// TrainerOptions from the recipe's shared keys (metric and eval cadence left to the task).
train::TrainerOptions recipe_trainer_options(const train::Recipe& r, const std::filesystem::path& dir,
                                             int64_t per_epoch, int64_t total, bool quiet);

/// Steps of a run: `epoch` x per_epoch, capped by `max_iters` when it is set.
int64_t recipe_total_steps(const train::Recipe& r, int64_t per_epoch);

/// Trains `task` in one phase of `total` steps, keeping the best `metric`.
train::FitResult fit_one_phase(const train::Recipe& r, const train::TrainRequest& request, train::TrainTask& task,
                               optim::Optimizer& optimizer, optim::LRScheduler& schedule,
                               const std::filesystem::path& dir, int64_t per_epoch, int64_t total,
                               const std::string& metric, bool higher_is_better = true);

/// Writes encoder.json and tokenizer.model (a copy of the recipe's) into `dir`.
void write_model_dir(const std::filesystem::path& dir, const EncoderConfig& c, const text::Tokenizer& tokenizer);

/// The weights a non-training command uses: `weights:` or <save_dir>/best_model.safetensors.
/// \throws IoError naming the recipe when there are none.
std::filesystem::path recipe_weights(const train::Recipe& r, const std::filesystem::path& save_dir);

}  // namespace skiff::nlp
