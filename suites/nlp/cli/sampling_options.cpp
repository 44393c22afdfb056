#include "suites/nlp/cli/sampling_options.h"

#include <fmt/format.h>

namespace skiff::nlp {

void add_sampling_options(CLI::App& cmd, SamplingOptions& o, const char* what_per) {
  cmd.add_option("--max_new_tokens,-n", o.max_new_tokens,
                 fmt::format("Most tokens to generate per {} (default {})", what_per, o.max_new_tokens));
  cmd.add_option("--temperature", o.temperature, "0: greedy (default); > 0: sample with this temperature");
  cmd.add_option("--top_k", o.top_k, "Sample among the k most likely tokens (0: all; sampling only)");
  cmd.add_option("--top_p", o.top_p, "Sample from the smallest set of tokens whose probability reaches p (1: off)");
  cmd.add_option("--repetition_penalty", o.repetition_penalty,
                 "> 1 discourages tokens already in the text (HF's rule; 1: off)");
  cmd.add_option("--seed", o.seed, "Seed of the sampler: same seed, same output (default 0)");
  cmd.add_option("--threads", o.threads, "CPU threads (default: SKIFF_NUM_THREADS or all cores)")
      ->check(CLI::PositiveNumber);
}

GenerationConfig sampling_config(GenerationConfig g, const SamplingOptions& o) {
  g.max_new_tokens = o.max_new_tokens;
  g.do_sample = o.temperature > 0;
  g.temperature = o.temperature > 0 ? o.temperature : 1.0;
  g.top_k = o.top_k;
  g.top_p = o.top_p;
  g.repetition_penalty = o.repetition_penalty;
  g.seed = o.seed;
  validate(g);
  return g;
}

}  // namespace skiff::nlp
