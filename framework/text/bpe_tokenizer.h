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

#include "framework/text/bpe_model.h"
#include "framework/text/normalizer.h"
#include "framework/text/split_regex.h"

namespace skiff::text {

/// What a Split step does with the pieces its regex matches (tokenizer.json `behavior`).
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

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

/// A token added on top of the model's vocabulary (tokenizer.json `added_tokens`).
struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool special = false;  ///< dropped by decode(..., skip_special_tokens = true)
  bool lstrip = false;   ///< removes white space before it
  bool rstrip = false;   ///< removes white space after it
};

/// Everything around the BPE model.
struct BpeTokenizerConfig {
  std::vector<NormalizationForm> normalizers;  ///< applied in order; empty: none
  std::vector<PreTokenizerStep> pre_tokenizers;
  std::vector<AddedToken> added_tokens;
};

/// Token ids and, for each, the byte range of the input text it came from. A token
/// made from a normalized stretch (e.g. NFC composing "e" + U+0301) covers the input
/// bytes of that stretch; a prefix space added by ByteLevel is an empty range.
struct Encoding {
  std::vector<int32_t> ids;
  std::vector<Span> offsets;
};

/// Options of encode_batch().
struct BatchOptions {
  /// Keep at most this many ids per text (from the start); 0: no limit.
  size_t max_length = 0;
  /// Pad every row to the longest row (or to max_length when `pad_to_max_length`).
  bool pad = false;
  bool pad_to_max_length = false;
  /// The id used for padding. Required (>= 0) when padding.
  int32_t pad_id = -1;
};

/// Rows of ids with their attention masks (1 for a real token, 0 for padding).
struct BatchEncoding {
  std::vector<std::vector<int32_t>> ids;
  std::vector<std::vector<uint8_t>> attention_mask;
};

/// A byte-level BPE tokenizer. Immutable after loading; encode and decode may run on
/// several threads at once.
class BpeTokenizer {
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
  Encoding encode(std::string_view text) const;
  /// The ids alone (a little faster than encode()). \throws as encode().
  std::vector<int32_t> encode_ids(std::string_view text) const;
  /// Encodes several texts (in parallel over the OpenMP threads), truncating and padding
  /// as `options` say. \throws ValueError when padding without a pad id, or as encode().
  BatchEncoding encode_batch(std::span<const std::string> texts, const BatchOptions& options = {}) const;

  /// The text of `ids`: token bytes joined and read as UTF-8, each ill-formed byte
  /// sequence (a multi-byte character cut between tokens) becoming U+FFFD; added
  /// tokens appear as written. \throws IndexError naming an id that is no token.
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const;

  /// The token string of `id` as the files spell it (byte alphabet for model tokens).
  /// \throws IndexError for an unknown id.
  std::string id_to_token(int32_t id) const;
  /// The id of a token string (an added token's content, or a model token), or -1.
  int32_t token_to_id(std::string_view token) const;
  /// One more than the largest id (model and added tokens).
  int32_t vocab_size() const;

  const BpeModel& model() const { return *model_; }
  const BpeTokenizerConfig& config() const { return config_; }
  /// What the tokenizer was read from.
  const std::string& source() const { return source_; }

 private:
  struct TrieNode {
    std::vector<std::pair<uint8_t, int32_t>> next;
    int32_t added = -1;  // index into config_.added_tokens
  };
  void encode_into(std::string_view text, std::vector<int32_t>& ids, std::vector<Span>* offsets) const;
  void encode_stretch(std::string_view text, uint32_t base, std::vector<int32_t>& ids,
                      std::vector<Span>* offsets) const;
  /// Longest added token starting at text[pos]: its index, and its length in `len`; -1 if none.
  int32_t match_added(std::string_view text, size_t pos, size_t& len) const;

  std::shared_ptr<const BpeModel> model_;
  BpeTokenizerConfig config_;
  std::string source_;
  bool add_prefix_space_ = false;
  std::vector<TrieNode> trie_;
  bool first_byte_[256] = {};
  std::unordered_map<int32_t, int32_t> added_by_id_;
};

}  // namespace skiff::text
