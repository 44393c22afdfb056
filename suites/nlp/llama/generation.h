#pragma once
/// \file generation.h
/// Text generation with a LlamaForCausalLM: greedy decoding or sampling with
/// temperature, top-k, top-p and a repetition penalty, stop tokens, a KV cache, and
/// batches of prompts of different lengths (left padding + attention mask).
///
/// Each step, for every unfinished row, the last position's logits (float32, [V]) go
/// through, in Hugging Face's order:
///   1. repetition penalty r (when r != 1): for every token already in the row (prompt
///      and generated), logit < 0 ? logit * r : logit / r;
///   2. greedy (do_sample false): the argmax (lowest id on ties); otherwise
///   3. temperature: logits / T;  4. top-k: all but the k largest -> -inf;
///   5. top-p: sorted by probability, keep the smallest prefix whose mass reaches p (at
///      least one token), the rest -> -inf;  6. draw from softmax with the seeded generator.
/// Sampling draws one uniform number per unfinished row per step, rows in order, from a
/// mt19937_64 seeded with `seed`: same seed, same prompts -> same tokens.
/// A row finishes on an eos id (the eos token is kept in its output), when the
/// callback asks, or after max_new_tokens.

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "framework/core/rng.h"
#include "suites/nlp/llama/model.h"

namespace skiff::nlp {

struct GenerationConfig {
  int64_t max_new_tokens = 32;
  bool do_sample = false;  ///< false: greedy
  double temperature = 1.0;
  int64_t top_k = 0;     ///< 0: off
  double top_p = 1.0;    ///< 1: off
  double repetition_penalty = 1.0;
  uint64_t seed = 0;
  std::vector<int64_t> eos_token_ids;  ///< stop tokens
  int64_t pad_token_id = -1;           ///< fed for padding and finished rows; -1: first eos id, else 0
};

/// Why a row stopped.
enum class StopReason { Length, EosToken, Callback };
std::string stop_reason_name(StopReason r);

struct GenerationOutput {
  std::vector<std::vector<int64_t>> tokens;  ///< per prompt: the new tokens only
  std::vector<StopReason> reasons;
};

/// Called after each new token of row `row`; returning true finishes that row (stop strings).
using TokenCallback = std::function<bool(size_t row, int64_t token)>;

// ---- the steps, on one row of logits (exposed for tests) ---------------------------------

/// Step 1 in place. \throws ValueError for penalty <= 0.
void apply_repetition_penalty(std::span<float> logits, std::span<const int64_t> seen, double penalty);
/// Step 3 in place. \throws ValueError for temperature <= 0.
void apply_temperature(std::span<float> logits, double temperature);
/// Step 4 in place (k <= 0 or k >= size: unchanged). Ties at the k-th value are all kept.
void apply_top_k(std::span<float> logits, int64_t k);
/// Step 5 in place (p >= 1: unchanged). \throws ValueError unless 0 < p <= 1.
void apply_top_p(std::span<float> logits, double p);
/// Index of the largest logit (the first one on ties).
int64_t argmax_token(std::span<const float> logits);
/// Step 6: draws an index with probability softmax(logits) using one gen.uniform().
int64_t sample_token(std::span<const float> logits, Generator& gen);

/// Checks a config. \throws ValueError naming the bad field.
void validate(const GenerationConfig& config);

/// Generates continuations of `prompts` (each a non-empty list of token ids) in one batch.
/// \throws ValueError for an empty prompt or a bad config, IndexError for ids outside the vocabulary.
GenerationOutput generate(LlamaForCausalLM& model, const std::vector<std::vector<int64_t>>& prompts,
                          const GenerationConfig& config, const TokenCallback& on_token = {});

}  // namespace skiff::nlp
