#pragma once
/// \file beam_search.h
/// Decoding a token sequence from a model that gives, for a batch of prefixes, the
/// log-probabilities of the next token: greedy (the most likely token at each step) and beam
/// search (the `beam` best prefixes by total log-probability kept at each step; a finished
/// hypothesis, one that produced `end_id`, is scored by its log-probability divided by
/// length^length_penalty, as in Wu et al. 2016's length normalisation without the +5 offset).
/// Both stop after `max_len` generated tokens. The model is a callback, so any decoder (the
/// captioner, or a toy table in tests) can be searched.

#include <cstdint>
#include <functional>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff::multimodal {

/// prefixes (each starting with the start token) -> log-probabilities [prefixes, vocab].
using NextTokenLogProbs = std::function<Tensor(const std::vector<std::vector<int64_t>>& prefixes)>;

struct Hypothesis {
  std::vector<int64_t> tokens;  ///< generated tokens, without the start token, end token included if reached
  double log_prob = 0;          ///< sum of the tokens' log-probabilities
  double score = 0;             ///< log_prob / length^length_penalty
};

/// \throws ValueError if max_len < 1.
Hypothesis greedy_decode(const NextTokenLogProbs& step, int64_t start_id, int64_t end_id, int64_t max_len);

/// The best hypotheses, best first (at most `beam`). \throws ValueError if beam < 1 or max_len < 1.
std::vector<Hypothesis> beam_search(const NextTokenLogProbs& step, int64_t start_id, int64_t end_id, int64_t max_len,
                                    int64_t beam, double length_penalty = 1.0);

}  // namespace skiff::multimodal
