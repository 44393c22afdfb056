// `skiff nlp chat`: a conversation with a LLaMA-style model directory, each turn formatted
// with the model's chat template (tokenizer_config.json or chat_template.jinja), as
// Hugging Face's apply_chat_template formats it.
//   skiff nlp chat --model DIR                       (reads your turns from stdin)
//   skiff nlp chat --model DIR --message "Hi" --message "And then?"
//   skiff nlp chat --model DIR --message "Hi" --print_prompt
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "framework/cli/command_registry.h"
#include "framework/core/error.h"
#include "framework/core/threading.h"
#include "framework/io/file.h"
#include "framework/text/chat_template.h"
#include "suites/nlp/cli/sampling_options.h"
#include "suites/nlp/llama/generation.h"
#include "suites/nlp/llama/model_dir.h"
#include "suites/nlp/llama/streamer.h"

namespace skiff::nlp {
namespace {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

struct Options {
  std::string model, template_file, template_name, system, messages_file, save;
  std::vector<std::string> messages, variables;
  SamplingOptions sampling;
  bool print_prompt = false;
};

text::ChatTemplate load_template(const Options& o, const fs::path& dir) {
  if (!o.template_file.empty()) {
    SKIFF_CHECK(fs::exists(o.template_file), "nlp chat: template file '{}' does not exist", o.template_file);
    return text::ChatTemplate::from_file(o.template_file, dir / "tokenizer_config.json");
  }
  SKIFF_CHECK(fs::is_directory(dir), "nlp chat: model directory '{}' does not exist", o.model);
  if (!o.template_name.empty()) return text::ChatTemplate::from_model_dir(dir, o.template_name);
  std::optional<text::ChatTemplate> found = text::ChatTemplate::find_in_model_dir(dir);
  SKIFF_CHECK(found.has_value(),
              "nlp chat: {} has no chat template (no chat_template.jinja, and tokenizer_config.json has no "
              "chat_template): the model was not given a chat format; pass one with --template FILE.jinja",
              dir.string());
  return std::move(*found);
}

// --set KEY=VALUE: VALUE as JSON when it parses (false, 3, "x", [1]), else as a string.
ojson template_variables(const std::vector<std::string>& sets) {
  ojson vars = ojson::object();
  for (const auto& kv : sets) {
    const size_t eq = kv.find('=');
    SKIFF_CHECK(eq != std::string::npos && eq > 0, "nlp chat: --set expects KEY=VALUE, got '{}'", kv);
    const std::string value = kv.substr(eq + 1);
    ojson parsed = ojson::parse(value, nullptr, false);
    vars[kv.substr(0, eq)] = parsed.is_discarded() ? ojson(value) : parsed;
  }
  return vars;
}

ojson initial_messages(const Options& o) {
  ojson messages = ojson::array();
  if (!o.messages_file.empty()) {
    messages = ojson::parse(io::read_file(o.messages_file), nullptr, false);
    SKIFF_CHECK(!messages.is_discarded() && messages.is_array(),
                "nlp chat: --messages {} must be a JSON array of {{\"role\": ..., \"content\": ...}} objects",
                o.messages_file);
  }
  if (!o.system.empty()) messages.insert(messages.begin(), ojson{{"role", "system"}, {"content", o.system}});
  return messages;
}

void save_conversation(const std::string& path, const ojson& messages) {
  if (!path.empty()) io::write_file_atomic(path, messages.dump(1, ' ', false, ojson::error_handler_t::replace) + "\n");
}

// The next user turn: from --message in order, else a line of stdin ("" at the end).
std::optional<std::string> next_user_turn(const Options& o, size_t& used) {
  if (!o.messages.empty()) {
    if (used >= o.messages.size()) return std::nullopt;
    return o.messages[used++];
  }
  const bool interactive = ::isatty(STDIN_FILENO);
  while (true) {
    if (interactive) fmt::print(stderr, "> ");
    std::string line;
    if (!std::getline(std::cin, line)) return std::nullopt;
    if (!line.empty()) return line;
  }
}

// One assistant reply to `messages`, streamed to stdout; returns its text.
std::string reply(const ModelDir& m, const text::ChatTemplate& tmpl, const ojson& messages, const ojson& vars,
                  const GenerationConfig& g) {
  const std::string prompt = tmpl.render(messages, {.add_generation_prompt = true, .extra = vars});
  // The template writes the BOS token itself where the model wants one (Hugging Face
  // tokenizes a chat prompt without adding special tokens).
  const std::vector<int64_t> ids = encode_prompt(m, prompt, /*add_bos=*/false, "nlp chat");
  const std::vector<int32_t> prompt32(ids.begin(), ids.end());
  TextStreamer streamer(*m.tokenizer, prompt32);
  std::vector<int32_t> generated;
  const auto t0 = std::chrono::steady_clock::now();
  GenerationOutput out = generate(*m.model, {ids}, g, [&](size_t, int64_t id) {
    generated.push_back(int32_t(id));
    const std::string piece = streamer.push(int32_t(id));
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
    return false;
  });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("{}\n", streamer.flush());
  std::fflush(stdout);
  fmt::print(stderr, "[{} prompt tokens, {} new in {:.2f} s; stopped: {}]\n", ids.size(), generated.size(), s,
             stop_reason_name(out.reasons[0]));
  return continuation_text(*m.tokenizer, prompt32, generated);
}

void run_chat(const Options& o) {
  if (o.sampling.threads > 0) set_num_threads(o.sampling.threads);
  const fs::path dir = model_dir_argument(o.model, "nlp chat");
  const text::ChatTemplate tmpl = load_template(o, dir);
  const ojson vars = template_variables(o.variables);
  ojson messages = initial_messages(o);

  if (o.print_prompt) {
    for (const auto& m : o.messages) messages.push_back({{"role", "user"}, {"content", m}});
    fmt::print("{}", tmpl.render(messages, {.add_generation_prompt = true, .extra = vars}));
    std::fflush(stdout);
    return;
  }

  const ModelDir m = open_model_dir(dir.string(), "nlp chat");
  GenerationConfig stops = m.defaults;
  // The template's end-of-turn token ends a reply too (Qwen's <|im_end|>, Gemma's <end_of_turn>).
  if (const int64_t eot = special_token_id(m, tmpl.special_token("eos_token")); eot >= 0)
    stops.eos_token_ids.push_back(eot);
  const GenerationConfig g = sampling_config(stops, o.sampling);

  size_t used = 0;
  while (std::optional<std::string> turn = next_user_turn(o, used)) {
    messages.push_back({{"role", "user"}, {"content", *turn}});
    messages.push_back({{"role", "assistant"}, {"content", reply(m, tmpl, messages, vars, g)}});
    save_conversation(o.save, messages);
  }
}

void add_chat_command(CLI::App& nlp) {
  auto o = std::make_shared<Options>();
  auto* chat = nlp.add_subcommand("chat", "Chat with a LLaMA-style model, formatted by its chat template");
  chat->footer(
      "Each user turn is added to the conversation, the whole conversation is formatted with the\n"
      "model's chat template (chat_template.jinja, or tokenizer_config.json's chat_template; a\n"
      "Jinja template rendered as Hugging Face's apply_chat_template renders it) and the model's\n"
      "reply is streamed to stdout, one reply per turn. Turns come from --message (in order), or\n"
      "else one per line of stdin (type them, or pipe a file; an empty line is skipped, end of\n"
      "input ends the chat). A reply ends at an eos token (config.json, generation_config.json and\n"
      "the template's eos_token), or after --max_new_tokens. Its length and speed go to stderr.\n"
      "--print_prompt prints the formatted prompt for the --message turns instead (no model is\n"
      "loaded): what the model would see.\n"
      "Examples:\n"
      "  skiff nlp chat --model tests/data/llama/tiny --message 'hello' --max_new_tokens 8\n"
      "  skiff nlp chat --model DIR --set enable_thinking=false --save chat.json");
  chat->add_option("--model,-m", o->model, "Model directory or zoo name (as for `skiff nlp generate`)")->required();
  chat->add_option("--message", o->messages, "A user turn; repeat for several (default: read turns from stdin)");
  chat->add_option("--system", o->system, "A system message to start the conversation with");
  chat->add_option("--messages", o->messages_file, "JSON file with earlier messages to continue from (as --save writes)");
  chat->add_option("--save", o->save, "Write the conversation to this JSON file after each reply");
  chat->add_option("--template", o->template_file, "A Jinja chat template file to use instead of the model's");
  chat->add_option("--template_name", o->template_name, "Which of tokenizer_config.json's named templates (default: default)");
  chat->add_option("--set", o->variables, "KEY=VALUE: a variable for the template (VALUE parsed as JSON if it is), repeatable");
  chat->add_flag("--print_prompt", o->print_prompt, "Print the formatted prompt and exit");
  o->sampling.max_new_tokens = 256;  // a reply runs longer than generate's default continuation
  add_sampling_options(*chat, o->sampling, "reply");
  chat->callback([o] { run_chat(*o); });
}

}  // namespace
}  // namespace skiff::nlp

SKIFF_REGISTER_COMMAND("nlp chat", skiff::nlp::add_chat_command);
