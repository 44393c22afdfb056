#include "framework/text/bpe_tokenizer.h"

#include <algorithm>

#include "framework/core/error.h"
#include "framework/text/unicode.h"

namespace skiff::text {

BpeTokenizer::BpeTokenizer(std::shared_ptr<const BpeModel> model, BpeTokenizerConfig config, std::string source)
    : Tokenizer(std::move(source)), model_(std::move(model)), config_(std::move(config)) {
  SKIFF_ASSERT(model_ != nullptr, "BpeTokenizer needs a model");
  for (const auto& step : config_.pre_tokenizers) {
    if (step.kind == PreTokenizerStep::Kind::ByteLevel && step.add_prefix_space) add_prefix_space_ = true;
    SKIFF_ASSERT(step.kind != PreTokenizerStep::Kind::Split || step.regex, "Split step without a regex");
  }
  splitter_ = AddedTokenSplitter(config_.added_tokens, this->source());
  for (size_t i = 0; i < config_.added_tokens.size(); ++i) added_by_id_[config_.added_tokens[i].id] = int32_t(i);
}

void BpeTokenizer::encode_stretch(std::string_view text, uint32_t base, std::vector<int32_t>& ids,
                                  std::vector<Span>* offsets) const {
  // Normalize (composing the alignments of a sequence of forms).
  std::string normalized;
  std::vector<Span> alignment;
  bool changed = false;
  for (NormalizationForm form : config_.normalizers) {
    NormalizedText nt = normalize(changed ? std::string_view(normalized) : text, form);
    if (nt.alignment.empty()) continue;
    if (changed && offsets) {
      for (Span& s : nt.alignment) s = {alignment[s.begin].begin, alignment[s.end - 1].end};
    }
    normalized = std::move(nt.text);
    alignment = std::move(nt.alignment);
    changed = true;
  }
  std::string_view work = changed ? std::string_view(normalized) : text;
  std::string prefixed;
  uint32_t prefix = 0;
  if (add_prefix_space_ && !work.starts_with(' ')) {
    prefixed.reserve(work.size() + 1);
    prefixed.push_back(' ');
    prefixed.append(work);
    work = prefixed;
    prefix = 1;
  }

  std::vector<Span> pieces{{0, uint32_t(work.size())}}, next, matches;
  for (const PreTokenizerStep& step : config_.pre_tokenizers) {
    if (!step.regex) continue;  // ByteLevel without use_regex only maps bytes
    next.clear();
    for (const Span& p : pieces) split_piece(*step.regex, step.behavior, step.invert, work, p, matches, next);
    pieces.swap(next);
  }

  for (const Span& p : pieces) {
    const size_t first = ids.size();
    model_->encode_word(work.substr(p.begin, p.end - p.begin), ids);
    if (!offsets) continue;
    uint32_t at = p.begin;
    for (size_t k = first; k < ids.size(); ++k) {
      uint32_t end = at + uint32_t(model_->token_byte_length(ids[k]));
      // Work bytes [at, end) -> input bytes: drop the prefix, then undo normalization.
      Span s;
      if (end <= prefix) {
        s = {0, 0};
      } else {
        uint32_t b = std::max(at, prefix) - prefix, e = end - prefix;
        s = changed ? Span{alignment[b].begin, alignment[e - 1].end} : Span{b, e};
      }
      offsets->push_back({base + s.begin, base + s.end});
      at = end;
    }
  }
}

void BpeTokenizer::encode_into(std::string_view text, std::vector<int32_t>& ids, std::vector<Span>* offsets) const {
  SKIFF_CHECK(text.size() < UINT32_MAX, "tokenizer: texts are limited to 4 GiB, got {} bytes", text.size());
  if (find_invalid_utf8(text) != std::string_view::npos) check_utf8(text, fmt::format("tokenizer ({})", source()));
  std::vector<AddedTokenSplitter::Section> sections;
  splitter_.split(text, sections);
  for (const auto& s : sections) {
    if (s.span.end <= s.span.begin) continue;
    if (s.added >= 0) {
      ids.push_back(config_.added_tokens[s.added].id);
      if (offsets) offsets->push_back(s.span);
    } else {
      encode_stretch(text.substr(s.span.begin, s.span.end - s.span.begin), s.span.begin, ids, offsets);
    }
  }
}

Encoding BpeTokenizer::encode(std::string_view text) const {
  Encoding e;
  encode_into(text, e.ids, &e.offsets);
  return e;
}

std::vector<int32_t> BpeTokenizer::encode_ids(std::string_view text) const {
  std::vector<int32_t> ids;
  encode_into(text, ids, nullptr);
  return ids;
}

std::string BpeTokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  std::string out, bytes;
  for (int32_t id : ids) {
    auto it = added_by_id_.find(id);
    if (it != added_by_id_.end()) {
      const AddedToken& t = config_.added_tokens[it->second];
      if (skip_special_tokens && t.special) continue;
      out += to_valid_utf8(bytes);
      bytes.clear();
      out += t.content;
      continue;
    }
    model_->append_token_bytes(id, bytes);
  }
  out += to_valid_utf8(bytes);
  return out;
}

std::string BpeTokenizer::id_to_token(int32_t id) const {
  auto it = added_by_id_.find(id);
  if (it != added_by_id_.end()) return config_.added_tokens[it->second].content;
  return model_->id_to_token(id);
}

int32_t BpeTokenizer::token_to_id(std::string_view token) const {
  for (const AddedToken& t : config_.added_tokens)
    if (t.content == token) return t.id;
  return model_->token_to_id(token);
}

int32_t BpeTokenizer::vocab_size() const {
  int32_t n = model_->vocab_size();
  for (const AddedToken& t : config_.added_tokens) n = std::max(n, t.id + 1);
  return n;
}

}  // namespace skiff::text
