#include "framework/text/wordpiece_model.h"

#include <algorithm>

#include "framework/core/error.h"
#include "framework/text/unicode.h"

namespace skiff::text {

WordPieceModel::WordPieceModel(Vocab vocab, std::string unk_token, std::string continuing_prefix,
                               size_t max_input_chars_per_word, const std::string& source)
    : vocab_(std::move(vocab)), prefix_(std::move(continuing_prefix)), max_chars_(max_input_chars_per_word) {
  int32_t max_id = -1;
  for (const auto& [token, id] : vocab_) {
    SKIFF_CHECK(id >= 0, "{}: token '{}' has a negative id {}", source, token, id);
    max_id = std::max(max_id, id);
  }
  SKIFF_CHECK(max_id <= max_token_id(vocab_.size()), "{}: token id {} is far beyond the vocabulary's {} tokens (at most {})",
              source, max_id, vocab_.size(), max_token_id(vocab_.size()));
  id_to_token_.resize(size_t(max_id) + 1);
  std::vector<bool> taken(id_to_token_.size());
  for (const auto& [token, id] : vocab_) {
    SKIFF_CHECK(!taken[id], "{}: tokens '{}' and '{}' share the id {}", source, id_to_token_[id], token, id);
    taken[id] = true;
    id_to_token_[id] = token;
    size_t n = token.starts_with(prefix_) && !prefix_.empty() ? token.size() - prefix_.size() : token.size();
    max_token_bytes_ = std::max(max_token_bytes_, n);
  }
  auto it = vocab_.find(unk_token);
  SKIFF_CHECK(it != vocab_.end(), "{}: the unknown token '{}' is not in the vocabulary", source, unk_token);
  unk_id_ = it->second;
}

const std::string& WordPieceModel::id_to_token(int32_t id) const {
  SKIFF_CHECK_INDEX(id >= 0 && size_t(id) < id_to_token_.size(), "WordPiece: expected a token id in [0, {}), got {}",
                    id_to_token_.size(), id);
  return id_to_token_[size_t(id)];
}

int32_t WordPieceModel::token_to_id(std::string_view token) const {
  auto it = vocab_.find(token);
  return it == vocab_.end() ? -1 : it->second;
}

void WordPieceModel::encode_word(std::string_view word, std::vector<int32_t>& ids,
                                 std::vector<uint32_t>* lengths) const {
  if (word.empty()) return;
  auto unknown = [&] {
    ids.push_back(unk_id_);
    if (lengths) lengths->push_back(uint32_t(word.size()));
  };
  size_t chars = 0;
  for (size_t pos = 0; pos < word.size() && chars <= max_chars_; ++chars) next_code_point(word, pos);
  if (chars > max_chars_) return unknown();

  const size_t first_id = ids.size(), first_length = lengths ? lengths->size() : 0;
  std::string candidate;
  for (size_t start = 0; start < word.size();) {
    // Longest first: the end starts at the longest token's length (on a character boundary).
    size_t end = std::min(word.size(), start + max_token_bytes_);
    while (end < word.size() && (uint8_t(word[end]) & 0xC0) == 0x80) --end;
    int32_t found = -1;
    while (end > start) {
      candidate.assign(start > 0 ? prefix_ : std::string());
      candidate.append(word.substr(start, end - start));
      if (auto it = vocab_.find(candidate); it != vocab_.end()) {
        found = it->second;
        break;
      }
      do --end;
      while (end > start && (uint8_t(word[end]) & 0xC0) == 0x80);
    }
    if (found < 0) {
      ids.resize(first_id);
      if (lengths) lengths->resize(first_length);
      return unknown();
    }
    ids.push_back(found);
    if (lengths) lengths->push_back(uint32_t(end - start));
    start = end;
  }
}

}  // namespace skiff::text
