#pragma once
/// \file bpe_model.h
/// Byte-level byte-pair encoding (GPT-2, Sennrich et al. 2016 as adapted by Radford
/// et al. 2019): the model step of a BPE tokenizer, after pre-tokenization.
///
/// Vocabulary strings are written in GPT-2's byte alphabet (byte_to_char()): each
/// byte of the UTF-8 text is one printable code point, so a space is "Ġ" (U+0120).
/// A word (a pre-token, raw bytes) starts as one symbol per byte; then, repeatedly,
/// the adjacent pair of symbols with the lowest merge rank is merged, the leftmost
/// one on a tie, until no adjacent pair has a rank. This is the order of the
/// reference implementations (transformers.js's priority queue, Hugging Face's
/// tokenizers; the original GPT-2 loop, which merges every occurrence of the best
/// pair at once, gives the same result for merge tables in which a merge's parts
/// exist before it). Words of up to 64 bytes use a scan per merge; longer ones a
/// heap, so a hostile 1 MB "word" costs O(n log n), not O(n^2).
///
/// The same merge loop serves SentencePiece-style BPE (Llama 2, Gemma; tokenizer.json
/// `byte_fallback`): there the vocabulary spells text as it is ("▁" for a space, put in by
/// the normalizer), a word starts as one symbol per code point, and a code point without
/// a token becomes one `<0xNN>` token per UTF-8 byte (byte fallback) or the unknown token.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "framework/text/word_model.h"

namespace skiff::text {

/// The code point that stands for byte `b` in byte-level vocabularies (GPT-2's
/// bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68
/// bytes map to U+0100.. in order).
char32_t byte_to_char(uint8_t b);
/// The inverse of byte_to_char(), or -1 for a code point that stands for no byte.
int char_to_byte(char32_t cp);

/// One merge rule "left right", in rank order.
struct MergeRule {
  std::string left, right;
};

/// The byte a byte-fallback token such as "<0x0A>" stands for, or -1 for any other token.
int byte_fallback_value(std::string_view token);

/// How a BPE model's tokens spell text.
enum class BpeAlphabet {
  Bytes,       ///< GPT-2's byte alphabet; a word starts as one symbol per byte
  Characters,  ///< text as is; a word starts as one symbol per code point
};

/// Options of a BPE model beyond its vocabulary and merges (tokenizer.json `model`).
struct BpeOptions {
  BpeAlphabet alphabet = BpeAlphabet::Bytes;
  /// A word that is itself in the vocabulary becomes that token without merging (Llama 3).
  bool ignore_merges = false;
  /// Characters only: a code point without a token becomes its UTF-8 bytes as <0xNN> tokens.
  bool byte_fallback = false;
  /// Characters only: the token for a code point that has none (and no byte tokens); "" for none.
  std::string unk_token{};
};

/// A BPE model. Thread-safe: encode_word() may run on several threads
/// (its word cache is guarded by a mutex).
class BpeModel : public WordModel {
 public:
  /// Builds the model. `where(i)` describes merge i for error messages ("vocab.bpe:
  /// line 7", "tokenizer.json: model.merges[5]"); `source` names the vocabulary's file.
  /// With `ignore_merges`, a word that is itself in the vocabulary becomes that
  /// token without merging (Llama 3's option).
  /// \throws ValueError when a byte has no token, a merge names a token that is not in the
  ///   vocabulary or produces one that is not, or two tokens share an id.
  BpeModel(Vocab vocab, const std::vector<MergeRule>& merges, const std::function<std::string(size_t)>& where,
           const std::string& source, bool ignore_merges = false);
  /// As above, with `options` (the alphabet among them). With Characters, `options.unk_token`
  /// must be in the vocabulary when it is not empty (\throws ValueError otherwise), and the
  /// byte alphabet is not required.
  BpeModel(Vocab vocab, const std::vector<MergeRule>& merges, const std::function<std::string(size_t)>& where,
           const std::string& source, const BpeOptions& options);
  ~BpeModel() override;

  /// Appends the ids of the word `bytes` (raw text bytes, any length; valid UTF-8 with
  /// Characters) to `ids`, and with `lengths` the number of bytes of `bytes` each id covers.
  /// \throws ValueError (Characters) when a code point has no token, no byte tokens and
  ///   there is no unknown token.
  void encode_word(std::string_view bytes, std::vector<int32_t>& ids,
                   std::vector<uint32_t>* lengths = nullptr) const override;

  /// Appends the text bytes token `id` stands for (Characters: the token as written,
  /// <0xNN> as its byte). \throws IndexError for an unknown id.
  void append_token_bytes(int32_t id, std::string& out) const;

  /// Number of text bytes token `id` stands for (`id` must be valid).
  int32_t token_byte_length(int32_t id) const { return byte_length_[size_t(id)]; }
  /// The id of a token string (as the vocabulary spells it), or -1.
  int32_t token_to_id(std::string_view token) const override;
  /// The token string of `id` (as the vocabulary spells it). \throws IndexError for an unknown id.
  const std::string& id_to_token(int32_t id) const override;
  /// One more than the largest id.
  int32_t vocab_size() const override { return int32_t(id_to_token_.size()); }
  /// The unknown token's id, or -1.
  int32_t unk_id() const override { return unk_id_; }
  /// Number of merge rules.
  size_t merge_count() const { return merges_.size(); }
  const BpeOptions& options() const { return options_; }

  /// Drops the cached words (for benchmarks of cold runs).
  void clear_cache() const override;

  /// Runs the merge loop on `symbols` (token ids) in place; exposed for tests.
  /// `use_heap` picks the algorithm regardless of the length.
  void merge(std::vector<int32_t>& symbols, bool use_heap) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t id;
  };
  const Merge* find_merge(int32_t left, int32_t right) const {
    auto it = merges_.find((uint64_t(uint32_t(left)) << 32) | uint32_t(right));
    return it == merges_.end() ? nullptr : &it->second;
  }
  void merge_scan(std::vector<int32_t>& symbols) const;
  void merge_heap(std::vector<int32_t>& symbols) const;
  // Characters: the symbols of a word before merging; a code point without a token is
  // -(1 + its byte offset), which no merge names.
  void char_symbols(std::string_view word, std::vector<int32_t>& symbols) const;
  // Characters: merged symbols -> ids (byte fallback, unknown token), with byte lengths.
  void resolve_symbols(std::string_view word, const std::vector<int32_t>& symbols, std::vector<int32_t>& ids,
                       std::vector<uint32_t>* lengths) const;

  Vocab vocab_;
  std::vector<std::string> id_to_token_;
  std::vector<int32_t> byte_length_;
  std::unordered_map<uint64_t, Merge> merges_;
  int32_t byte_ids_[256];              // Bytes: the token of each byte; Characters: its <0xNN> token or -1
  std::vector<int32_t> bmp_char_ids_;  // Characters: token of each BMP code point, or -1
  std::unordered_map<char32_t, int32_t> astral_char_ids_;
  BpeOptions options_;
  int32_t unk_id_ = -1;

  static constexpr size_t kMaxCachedWord = 256;
  static constexpr size_t kCacheCapacity = 1 << 17;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace skiff::text
