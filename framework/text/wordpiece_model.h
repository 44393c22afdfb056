#pragma once
/// \file wordpiece_model.h
/// WordPiece (Schuster & Nakajima 2012, as in BERT): a word becomes the longest
/// vocabulary token that starts it, then, repeatedly, the longest token spelled
/// `continuing_prefix` + the rest's start ("##ing"); a word with a stretch no token
/// matches, or longer than `max_input_chars_per_word` code points, becomes the unknown
/// token as a whole. The search is greedy from the left, as in BERT's reference code,
/// Hugging Face's tokenizers and transformers.js.

#include <string>
#include <string_view>
#include <vector>

#include "framework/text/word_model.h"

namespace skiff::text {

class WordPieceModel : public WordModel {
 public:
  /// \throws ValueError naming `source` when `unk_token` is not in `vocab` or two tokens share an id.
  WordPieceModel(Vocab vocab, std::string unk_token, std::string continuing_prefix, size_t max_input_chars_per_word,
                 const std::string& source);

  void encode_word(std::string_view word, std::vector<int32_t>& ids,
                   std::vector<uint32_t>* lengths = nullptr) const override;
  const std::string& id_to_token(int32_t id) const override;
  int32_t token_to_id(std::string_view token) const override;
  int32_t vocab_size() const override { return int32_t(id_to_token_.size()); }
  int32_t unk_id() const override { return unk_id_; }
  const std::string& continuing_prefix() const { return prefix_; }

 private:
  Vocab vocab_;
  std::vector<std::string> id_to_token_;
  std::string prefix_;
  size_t max_chars_;
  size_t max_token_bytes_ = 0;  // longest token without the prefix: bounds the search
  int32_t unk_id_ = -1;
};

}  // namespace skiff::text
