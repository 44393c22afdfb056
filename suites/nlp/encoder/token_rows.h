#pragma once
/// \file token_rows.h
/// Texts as encoder inputs: each text tokenized once, [CLS] prepended and cut to
/// max_length ids; batches of rows padded with [PAD] to their longest row (not to
/// max_length: short mails then cost short batches).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "framework/tensor/tensor.h"
#include "framework/text/tokenizer.h"
#include "suites/nlp/encoder/encoder_config.h"

namespace skiff::nlp {

class TokenRows {
 public:
  /// Tokenizes `texts` (in parallel over the OpenMP threads).
  /// \throws ValueError when the tokenizer's vocabulary differs from c.pieces.
  TokenRows(const text::Tokenizer& tokenizer, std::span<const std::string> texts, const EncoderConfig& c);
  size_t size() const { return rows_.size(); }
  const std::vector<int64_t>& row(size_t i) const { return rows_[i]; }
  /// ids [B, T] int64 of rows `index` (T = the longest of them), padded with [PAD].
  Tensor batch(std::span<const size_t> index) const;

 private:
  std::vector<std::vector<int64_t>> rows_;
  int64_t pad_ = 0;
};

}  // namespace skiff::nlp
