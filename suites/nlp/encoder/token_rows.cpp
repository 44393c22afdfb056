#include "suites/nlp/encoder/token_rows.h"

#include <algorithm>

#include "framework/core/error.h"

namespace skiff::nlp {

TokenRows::TokenRows(const text::Tokenizer& tokenizer, std::span<const std::string> texts, const EncoderConfig& c)
    : pad_(c.pad_id()) {
  SKIFF_CHECK(tokenizer.vocab_size() == c.pieces,
              "the tokenizer {} has {} pieces but the encoder was built for {} (a different tokenizer?)",
              tokenizer.source(), tokenizer.vocab_size(), c.pieces);
  text::BatchOptions o;
  o.max_length = size_t(c.max_length - 1);  // room for [CLS]
  text::BatchEncoding enc = tokenizer.encode_batch(texts, o);
  rows_.reserve(enc.ids.size());
  for (const auto& ids : enc.ids) {
    std::vector<int64_t> row{c.cls_id()};
    row.insert(row.end(), ids.begin(), ids.end());
    rows_.push_back(std::move(row));
  }
}

Tensor TokenRows::batch(std::span<const size_t> index) const {
  size_t t = 1;
  for (size_t i : index) t = std::max(t, rows_.at(i).size());
  Tensor ids = full({int64_t(index.size()), int64_t(t)}, double(pad_), DType::Int64);
  int64_t* p = ids.data<int64_t>();
  for (size_t r = 0; r < index.size(); ++r) std::copy(rows_[index[r]].begin(), rows_[index[r]].end(), p + r * t);
  return ids;
}

}  // namespace skiff::nlp
