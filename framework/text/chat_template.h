#pragma once
/// \file chat_template.h
/// A model's chat template: the Jinja template in `tokenizer_config.json` (or the
/// `chat_template.jinja` file newer `save_pretrained` writes beside it) that turns a list of
/// messages into the prompt text the model was trained on, rendered as Hugging Face's
/// `apply_chat_template` renders it (same variables, same special tokens).

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "framework/text/jinja.h"

namespace skiff::text {

struct ChatOptions {
  /// Ends the prompt with the assistant's header, so the model answers next.
  bool add_generation_prompt = true;
  /// `tools` (a JSON array of function schemas), or null.
  nlohmann::ordered_json tools = nullptr;
  /// More variables, e.g. {"enable_thinking": false} for Qwen3.
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
};

class ChatTemplate {
 public:
  /// The template of a model directory: `chat_template.jinja` if present, else
  /// `tokenizer_config.json`'s `chat_template` (a string, or a list of named templates of
  /// which `default` is taken, or `name` when given). Special tokens (`bos_token`,
  /// `eos_token`, ...) come from `tokenizer_config.json` as Hugging Face passes them.
  /// \throws IoError, ValueError naming the file when there is no template or it is invalid.
  static ChatTemplate from_model_dir(const std::filesystem::path& dir, const std::string& name = "");
  /// A template file of your own, with the special tokens of `tokenizer_config` when given.
  static ChatTemplate from_file(const std::filesystem::path& jinja_file,
                                const std::optional<std::filesystem::path>& tokenizer_config = std::nullopt);
  /// The default template of `dir` as from_model_dir() reads it, or nullopt when the
  /// directory has none (so a caller can fall back without catching).
  /// \throws IoError, ValueError naming the file when a file is unreadable or invalid.
  static std::optional<ChatTemplate> find_in_model_dir(const std::filesystem::path& dir);

  /// The prompt for `messages` (a JSON array of {"role", "content", ...} objects).
  /// \throws ValueError naming the template when it fails (the template's own
  ///   raise_exception included, e.g. roles that do not alternate).
  std::string render(const nlohmann::ordered_json& messages, const ChatOptions& options = {}) const;

  const std::string& source() const { return source_; }
  /// A special token's text ("eos_token" -> "<|im_end|>"), or "" when the config has none.
  std::string special_token(const std::string& key) const;

 private:
  ChatTemplate(std::string source, std::string name, nlohmann::ordered_json special_tokens);

  std::string source_;
  JinjaTemplate template_;
  nlohmann::ordered_json special_tokens_;  // bos_token, eos_token, ...: strings, as HF passes them
};

}  // namespace skiff::text
