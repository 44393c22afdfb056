#include "framework/text/subword_tokenizer.h"

#include <algorithm>

#include "framework/core/error.h"
#include "framework/text/unicode.h"

namespace skiff::text {

SubwordTokenizer::SubwordTokenizer(std::shared_ptr<const WordModel> model, SubwordTokenizerConfig config,
                                   std::string source, std::string kind)
    : Tokenizer(std::move(source)), model_(std::move(model)), config_(std::move(config)), kind_(std::move(kind)) {
  SKIFF_ASSERT(model_ != nullptr, "SubwordTokenizer needs a model");
  splitter_ = AddedTokenSplitter(config_.added_tokens, this->source());
  for (size_t i = 0; i < config_.added_tokens.size(); ++i) added_by_id_[config_.added_tokens[i].id] = int32_t(i);
}

void SubwordTokenizer::encode_into(std::string_view text, std::vector<int32_t>& ids,
                                   std::vector<Span>* offsets) const {
  SKIFF_CHECK(text.size() < UINT32_MAX, "tokenizer: texts are limited to 4 GiB, got {} bytes", text.size());
  if (find_invalid_utf8(text) != std::string_view::npos) check_utf8(text, fmt::format("tokenizer ({})", source()));
  std::vector<AddedTokenSplitter::Section> sections;
  splitter_.split(text, sections);
  std::vector<uint32_t> lengths;
  const int32_t unk = model_->unk_id();
  for (size_t index = 0; index < sections.size(); ++index) {
    const auto& section = sections[index];
    const Span s = section.span;
    if (s.end <= s.begin) continue;
    if (section.added >= 0) {
      ids.push_back(config_.added_tokens[section.added].id);
      if (offsets) offsets->push_back(s);
      continue;
    }
    Words words;
    words.text = AlignedText::identity(text.substr(s.begin, s.end - s.begin), s.begin, offsets != nullptr);
    for (const NormalizerStep& step : config_.normalizers) apply_normalizer(step, words.text);
    if (words.text.text.empty()) continue;
    words.spans.push_back({0, uint32_t(words.text.text.size())});
    for (const PreTokenizerSpec& step : config_.pre_tokenizers) apply_pre_tokenizer(step, words, index == 0);

    const size_t first = ids.size();
    lengths.clear();
    for (const Span& w : words.spans) {
      std::string_view word(words.text.text.data() + w.begin, w.end - w.begin);
      const size_t before = lengths.size();
      model_->encode_word(word, ids, offsets ? &lengths : nullptr);
      if (!offsets) continue;
      uint32_t at = w.begin;
      for (size_t k = before; k < lengths.size(); ++k) {
        offsets->push_back(words.text.input_span(at, at + lengths[k]));
        at += lengths[k];
      }
    }
    if (config_.fuse_unk && unk >= 0) {
      // A run of unknown tokens becomes one, covering the run's input.
      size_t out = first;
      for (size_t k = first; k < ids.size(); ++k) {
        if (ids[k] == unk && out > first && ids[out - 1] == unk) {
          if (offsets) (*offsets)[out - 1].end = (*offsets)[k].end;
          continue;
        }
        ids[out] = ids[k];
        if (offsets) (*offsets)[out] = (*offsets)[k];
        ++out;
      }
      ids.resize(out);
      if (offsets) offsets->resize(out);
    }
  }
}

Encoding SubwordTokenizer::encode(std::string_view text) const {
  Encoding e;
  encode_into(text, e.ids, &e.offsets);
  return e;
}

std::vector<int32_t> SubwordTokenizer::encode_ids(std::string_view text) const {
  std::vector<int32_t> ids;
  encode_into(text, ids, nullptr);
  return ids;
}

std::string SubwordTokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    auto it = added_by_id_.find(id);
    if (it != added_by_id_.end()) {
      const AddedToken& t = config_.added_tokens[size_t(it->second)];
      if (!(skip_special_tokens && t.special)) tokens.push_back(t.content);
      continue;
    }
    tokens.push_back(model_->id_to_token(id));
  }
  if (config_.decoders.empty()) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
    return out;
  }
  for (const DecoderSpec& step : config_.decoders) apply_decoder(step, tokens);
  std::string out;
  for (const std::string& t : tokens) out += t;
  return out;
}

std::string SubwordTokenizer::id_to_token(int32_t id) const {
  auto it = added_by_id_.find(id);
  if (it != added_by_id_.end()) return config_.added_tokens[size_t(it->second)].content;
  return model_->id_to_token(id);
}

int32_t SubwordTokenizer::token_to_id(std::string_view token) const {
  for (const AddedToken& t : config_.added_tokens)
    if (t.content == token) return t.id;
  return model_->token_to_id(token);
}

int32_t SubwordTokenizer::vocab_size() const {
  int32_t n = model_->vocab_size();
  for (const AddedToken& t : config_.added_tokens) n = std::max(n, t.id + 1);
  return n;
}

}  // namespace skiff::text
