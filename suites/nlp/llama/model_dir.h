#pragma once
/// \file model_dir.h
/// A Hugging Face model directory opened for generation, shared by `skiff nlp generate`
/// and `skiff nlp chat`: its tokenizer (tokenizer.json or a SentencePiece
/// tokenizer.model), the decoder, the stop tokens of config.json and
/// generation_config.json, and the BOS token a plain prompt starts with.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "framework/text/tokenizer.h"
#include "suites/nlp/llama/generation.h"
#include "suites/nlp/llama/model.h"

namespace skiff::nlp {

struct ModelDir {
  std::filesystem::path dir;
  std::unique_ptr<text::Tokenizer> tokenizer;
  std::shared_ptr<LlamaForCausalLM> model;
  /// eos ids (config.json and generation_config.json) and generation_config.json's pad id.
  GenerationConfig defaults;
  /// tokenizer.json's post-processor BOS, else config.json's bos_token_id with a
  /// tokenizer.model (Hugging Face's add_bos_token); -1: none.
  int64_t bos_token_id = -1;
  double load_seconds = 0;
};

/// What a --model argument names: an existing path (or one with a '/') as it is, else a
/// zoo model, whose files are pulled on first use (its directory in the cache).
/// \throws ValueError for a name that is neither, IoError when the pull fails.
std::filesystem::path model_dir_argument(const std::string& arg, const std::string& command);

/// Opens the model directory `arg` names (model_dir_argument()). `command` ("nlp
/// generate") starts the error messages.
/// \throws ValueError when the directory, its tokenizer or a file in it is missing or
///   malformed (naming the file), IoError when a file cannot be read.
ModelDir open_model_dir(const std::string& arg, const std::string& command);

/// The ids of `text`, after the BOS token when `add_bos` and the model has one.
/// \throws ValueError for an empty result, IndexError for an id outside the vocabulary.
std::vector<int64_t> encode_prompt(const ModelDir& m, const std::string& text, bool add_bos, const std::string& command);

/// The id of `token` (an added/special token such as "<|im_end|>") in the model's
/// tokenizer, or -1 when it has none.
int64_t special_token_id(const ModelDir& m, const std::string& token);

}  // namespace skiff::nlp
