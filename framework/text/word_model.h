#pragma once
/// \file word_model.h
/// The model step of a tokenizer: the ids of one pre-tokenized word. BpeModel (byte-level
/// or on characters) and WordPieceModel implement it; SubwordTokenizer runs any of them.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace skiff::text {

/// Hash for std::string keys that also accepts std::string_view lookups.
/// Largest token id a vocabulary may use beyond its size: ids index a table, so one
/// token with id 2^31 - 1 would make a 64 GiB table. Real vocabularies are dense.
inline int64_t max_token_id(size_t vocab_size) { return int64_t(vocab_size) * 2 + 65536; }

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
/// Token string -> id.
using Vocab = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

/// Turns words into ids. Implementations are thread-safe.
class WordModel {
 public:
  virtual ~WordModel() = default;
  /// Appends the ids of `word` (valid UTF-8, after normalization and pre-tokenization) to
  /// `ids`; with `lengths`, also the number of bytes of `word` each id covers.
  virtual void encode_word(std::string_view word, std::vector<int32_t>& ids,
                           std::vector<uint32_t>* lengths = nullptr) const = 0;
  /// The token string of `id`. \throws IndexError for an unknown id.
  virtual const std::string& id_to_token(int32_t id) const = 0;
  /// The id of a token string, or -1.
  virtual int32_t token_to_id(std::string_view token) const = 0;
  /// One more than the largest id.
  virtual int32_t vocab_size() const = 0;
  /// The unknown token's id, or -1 when the model has none.
  virtual int32_t unk_id() const = 0;
  /// Drops cached words, if the model keeps any.
  virtual void clear_cache() const {}
};

}  // namespace skiff::text
