// `skiff nlp generate`: text generation with a LLaMA-style model directory in the
// Hugging Face layout (suites/nlp/llama/).
//   skiff nlp generate --model DIR --prompt "Once upon a time" [--max_new_tokens 32] ...
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <optional>

#include "framework/cli/command_registry.h"
#include "framework/core/error.h"
#include "framework/core/threading.h"
#include "framework/text/tokenizer.h"
#include "suites/nlp/cli/sampling_options.h"
#include "suites/nlp/llama/generation.h"
#include "suites/nlp/llama/model_dir.h"
#include "suites/nlp/llama/streamer.h"

namespace skiff::nlp {
namespace {
struct Options {
  std::string model;
  std::vector<std::string> prompts, stops;
  SamplingOptions sampling;
  bool stream = true, no_bos = false, ids = false;
};

void run_generate(const Options& o) {
  if (o.sampling.threads > 0) set_num_threads(o.sampling.threads);
  SKIFF_CHECK(!o.prompts.empty(), "nlp generate: --prompt is required");
  const ModelDir m = open_model_dir(o.model, "nlp generate");
  const GenerationConfig g = sampling_config(m.defaults, o.sampling);
  const text::Tokenizer& tokenizer = *m.tokenizer;
  std::vector<std::vector<int64_t>> prompts;
  for (const auto& p : o.prompts) prompts.push_back(encode_prompt(m, p, !o.no_bos, "nlp generate"));

  // Stop strings: a row stops once its text contains one (the text keeps it).
  std::vector<std::vector<int32_t>> generated(prompts.size());
  bool stream = o.stream && prompts.size() == 1 && !o.ids;
  TextStreamer streamer(tokenizer, {prompts[0].begin(), prompts[0].end()});
  // The first token marks the end of the prompt's forward pass (prefill); the rest is decoding.
  std::optional<std::chrono::steady_clock::time_point> t_first;
  auto on_token = [&](size_t row, int64_t id) {
    if (!t_first) t_first = std::chrono::steady_clock::now();
    generated[row].push_back(int32_t(id));
    if (stream) {
      std::string piece = streamer.push(int32_t(id));
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    }
    if (o.stops.empty()) return false;
    std::string text = continuation_text(tokenizer, {prompts[row].begin(), prompts[row].end()}, generated[row]);
    for (const auto& s : o.stops)
      if (text.find(s) != std::string::npos) return true;
    return false;
  };
  auto t0 = std::chrono::steady_clock::now();
  GenerationOutput out = generate(*m.model, prompts, g, on_token);
  auto t1 = std::chrono::steady_clock::now();
  if (stream) {
    std::string rest = streamer.flush();
    fmt::print("{}\n", rest);
  } else {
    for (size_t r = 0; r < prompts.size(); ++r) {
      if (o.ids) fmt::print("{}\n", fmt::join(out.tokens[r], " "));
      else fmt::print("{}\n", continuation_text(tokenizer, {prompts[r].begin(), prompts[r].end()}, generated[r]));
    }
  }
  std::fflush(stdout);  // the text before the stats when both go to one pipe
  size_t n = 0;
  for (const auto& t : out.tokens) n += t.size();
  double s = std::chrono::duration<double>(t1 - t0).count();
  fmt::print(stderr, "{} new tokens in {:.2f} s ({:.1f} tokens/s; model loaded in {:.3f} s); stopped: {}\n", n, s,
             s > 0 ? double(n) / s : 0.0, m.load_seconds, stop_reason_name(out.reasons[0]));
  if (t_first && prompts.size() == 1 && n > 1) {
    // As llama.cpp reports them: the prompt's tokens per second, then one token per step.
    const double prefill = std::chrono::duration<double>(*t_first - t0).count();
    const double decode = std::chrono::duration<double>(t1 - *t_first).count();
    fmt::print(stderr, "prefill: {} tokens in {:.1f} ms ({:.1f} tokens/s); decode: {} tokens in {:.1f} ms ({:.1f} tokens/s)\n",
               prompts[0].size(), prefill * 1e3, double(prompts[0].size()) / prefill, n - 1, decode * 1e3,
               double(n - 1) / decode);
  }
}

void add_generate_command(CLI::App& nlp) {
  auto o = std::make_shared<Options>();
  auto* gen = nlp.add_subcommand("generate", "Generate text with a LLaMA-style model (Hugging Face layout)");
  gen->footer(
      "The model directory holds config.json (model_type \"llama\"), model.safetensors or\n"
      "model.safetensors.index.json + its shards (F32, F16 or BF16), and tokenizer.json or a\n"
      "SentencePiece tokenizer.model; an optional generation_config.json adds eos ids. A BOS token\n"
      "is put first when tokenizer.json's post-processor adds one, or config.json's bos_token_id\n"
      "with a tokenizer.model (--no_bos leaves it out).\n"
      "Decoding: greedy by default (--temperature 0); --temperature T > 0 samples, after\n"
      "--top_k and --top_p filtering; --repetition_penalty applies in both modes. Generation stops\n"
      "at an eos token, a --stop string (kept in the output) or after --max_new_tokens.\n"
      "Output: the continuation on stdout, streamed as it is decoded (only whole UTF-8 characters\n"
      "are printed); with several --prompt, one line per prompt once all are done (one batch, left\n"
      "padded). The token count, speed and stop reason go to stderr.\n"
      "Example:\n"
      "  skiff nlp generate --model tests/data/llama/tiny --prompt 'hello world' --max_new_tokens 8");
  gen->add_option("--model,-m", o->model, "Model directory (config.json, safetensors, tokenizer.json or tokenizer.model), or the name of a zoo model that is one")->required();
  gen->add_option("--prompt,-p", o->prompts, "Prompt text; repeat for a batch")->required();
  add_sampling_options(*gen, o->sampling, "prompt");
  gen->add_option("--stop", o->stops, "Stop when the generated text contains this string; repeatable");
  gen->add_flag("--stream,!--no-stream", o->stream, "Print tokens as they are decoded (default; single prompt only)");
  gen->add_flag("--no_bos", o->no_bos, "Do not put the tokenizer's BOS token before the prompt");
  gen->add_flag("--ids", o->ids, "Print the generated token ids instead of the text");
  gen->callback([o] { run_generate(*o); });
}

}  // namespace
}  // namespace skiff::nlp

SKIFF_REGISTER_COMMAND("nlp generate", skiff::nlp::add_generate_command);
