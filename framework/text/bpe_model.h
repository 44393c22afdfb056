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

namespace skiff::text {

/// The code point that stands for byte `b` in byte-level vocabularies (GPT-2's
/// bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68
/// bytes map to U+0100.. in order).
char32_t byte_to_char(uint8_t b);
/// The inverse of byte_to_char(), or -1 for a code point that stands for no byte.
int char_to_byte(char32_t cp);

/// Hash for std::string keys that also accepts std::string_view lookups.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
/// Token string -> id.
using Vocab = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

/// One merge rule "left right", in rank order.
struct MergeRule {
  std::string left, right;
};

/// A byte-level BPE model. Thread-safe: encode_word() may run on several threads
/// (its word cache is guarded by a mutex).
class BpeModel {
 public:
  /// Builds the model. `where(i)` describes merge i for error messages ("vocab.bpe:
  /// line 7", "tokenizer.json: model.merges[5]"); `source` names the vocabulary's file.
  /// With `ignore_merges`, a word that is itself in the vocabulary becomes that
  /// token without merging (Llama 3's option).
  /// \throws ValueError when a byte has no token, a merge names a token that is not in the
  ///   vocabulary or produces one that is not, or two tokens share an id.
  BpeModel(Vocab vocab, const std::vector<MergeRule>& merges, const std::function<std::string(size_t)>& where,
           const std::string& source, bool ignore_merges = false);
  ~BpeModel();

  /// Appends the ids of the word `bytes` (raw text bytes, any length) to `ids`.
  void encode_word(std::string_view bytes, std::vector<int32_t>& ids) const;

  /// Appends the text bytes token `id` stands for. \throws IndexError for an unknown id.
  void append_token_bytes(int32_t id, std::string& out) const;

  /// Number of text bytes token `id` stands for (`id` must be valid).
  int32_t token_byte_length(int32_t id) const { return byte_length_[size_t(id)]; }
  /// The id of a token string (byte alphabet), or -1.
  int32_t token_to_id(std::string_view token) const;
  /// The token string of `id` (byte alphabet). \throws IndexError for an unknown id.
  const std::string& id_to_token(int32_t id) const;
  /// One more than the largest id.
  int32_t vocab_size() const { return int32_t(id_to_token_.size()); }
  /// Number of merge rules.
  size_t merge_count() const { return merges_.size(); }

  /// Drops the cached words (for benchmarks of cold runs).
  void clear_cache() const;

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

  Vocab vocab_;
  std::vector<std::string> id_to_token_;
  std::vector<int32_t> byte_length_;
  std::unordered_map<uint64_t, Merge> merges_;
  int32_t byte_ids_[256];
  bool ignore_merges_ = false;

  static constexpr size_t kMaxCachedWord = 256;
  static constexpr size_t kCacheCapacity = 1 << 17;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace skiff::text
