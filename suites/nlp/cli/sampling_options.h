#pragma once
// The decoding options `skiff nlp generate` and `skiff nlp chat` share: their flags and
// the GenerationConfig they make.
#include <CLI/CLI.hpp>

#include <cstdint>

#include "suites/nlp/llama/generation.h"

namespace skiff::nlp {

struct SamplingOptions {
  int64_t max_new_tokens = 32;
  double temperature = 0.0, top_p = 1.0, repetition_penalty = 1.0;
  int64_t top_k = 0;
  uint64_t seed = 0;
  int threads = 0;
};

/// --max_new_tokens/-n (`what_per` names what the limit counts: "prompt", "reply"),
/// --temperature, --top_k, --top_p, --repetition_penalty, --seed, --threads.
void add_sampling_options(CLI::App& cmd, SamplingOptions& o, const char* what_per);

/// `defaults` (a model's eos and pad ids) with the options applied: greedy at temperature
/// 0, sampling above. \throws ValueError naming a bad option (GenerationConfig's validate()).
GenerationConfig sampling_config(GenerationConfig defaults, const SamplingOptions& o);

}  // namespace skiff::nlp
