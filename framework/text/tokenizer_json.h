#pragma once
// Internal to framework/text: reading Hugging Face tokenizer.json files, shared by the
// readers of byte-level BPE (tokenizer_files.cpp) and of the other models
// (subword_tokenizer_files.cpp). Errors name the file and the key path.

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "framework/core/error.h"
#include "framework/text/added_tokens.h"
#include "framework/text/bpe_model.h"
#include "framework/text/split_regex.h"
#include "framework/text/tokenizer.h"

namespace skiff::text::detail {

namespace fs = std::filesystem;
using nlohmann::json;

/// A JSON file. \throws IoError, ValueError naming the file when it is not JSON.
json parse_json_file(const fs::path& path);

// model.vocab and model.merges of a tokenizer.json, taken out of the JSON while it is
// parsed: a DOM of 150k vocabulary entries and 150k merge pairs (std::map nodes and
// small arrays) took a third of the loading time. The first malformed entry of each
// is recorded for from_tokenizer_json() to report.
struct ModelCapture {
  Vocab vocab;
  std::vector<MergeRule> merges;
  int64_t bad_merge = -1;  // index of the first malformed merge
  std::string bad_merge_text;
  std::string bad_token, bad_token_id;  // the first vocabulary entry without a valid id
};

/// A tokenizer.json with model.vocab / model.merges captured into `cap` while parsing.
json parse_tokenizer_json(const fs::path& path, ModelCapture& cap);

// Checked reads of a JSON object; errors name the file and the key path.
class Reader {
 public:
  Reader(const json& j, std::string file, std::string path = "")
      : j_(j), file_(std::move(file)), path_(std::move(path)) {}

  [[noreturn]] void fail(std::string_view what) const {
    SKIFF_THROW(ValueError, "{}: {}{}", file_, path_.empty() ? "" : path_ + ": ", what);
  }
  std::string key_path(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  bool has(std::string_view key) const {
    return j_.is_object() && j_.contains(key) && !j_.at(std::string(key)).is_null();
  }
  const json& at(std::string_view key) const {
    if (!j_.is_object()) fail("expected an object");
    auto it = j_.find(key);
    if (it == j_.end()) SKIFF_THROW(ValueError, "{}: missing key '{}'", file_, key_path(key));
    return *it;
  }
  Reader child(std::string_view key) const { return Reader(at(key), file_, key_path(key)); }
  std::string string(std::string_view key) const {
    const json& v = at(key);
    if (!v.is_string())
      SKIFF_THROW(ValueError, "{}: '{}' must be a string, got {}", file_, key_path(key), v.type_name());
    return v.get<std::string>();
  }
  bool boolean(std::string_view key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& v = at(key);
    if (!v.is_boolean())
      SKIFF_THROW(ValueError, "{}: '{}' must be true or false, got {}", file_, key_path(key), v.dump());
    return v.get<bool>();
  }
  const json& value() const { return j_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

 private:
  const json& j_;
  std::string file_, path_;
};

/// An object of token -> id (encoder.json, a WordPiece model.vocab).
Vocab read_vocab(const Reader& r);
/// "left right" with exactly one space (tokenizers < 0.20 and GPT-2's vocab.bpe).
bool split_merge_line(std::string_view line, MergeRule& rule);
/// A `pattern` key: {"Regex": ...} or {"String": ...} (a literal).
std::shared_ptr<const SplitRegex> split_regex(const Reader& r);
/// The top-level `added_tokens` list (empty when absent).
std::vector<AddedToken> read_added_tokens(const Reader& root);

/// true when the pre-tokenizer or decoder has a ByteLevel step (GPT-2's byte alphabet).
bool declares_byte_level(const json& root);
/// The tokenizer of a parsed tokenizer.json with a byte-level BPE model (tokenizer_files.cpp).
std::unique_ptr<Tokenizer> byte_level_tokenizer_from_json(const json& root, ModelCapture& cap, const std::string& file);
/// The tokenizer of a parsed tokenizer.json with a BPE model on characters or a WordPiece
/// model (subword_tokenizer_files.cpp).
std::unique_ptr<Tokenizer> subword_tokenizer_from_json(const json& root, ModelCapture& cap, const std::string& file);

}  // namespace skiff::text::detail
