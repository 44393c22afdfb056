#include "framework/text/bpe_tokenizer.h"

#include <algorithm>

#include "framework/core/error.h"
#include "framework/text/unicode.h"

namespace skiff::text {

namespace {

// Cuts the pieces of one Split step out of `piece`, Hugging Face's way: the regex's
// matches and the gaps between them tile the piece; `invert` swaps the two roles.
void split_piece(const PreTokenizerStep& step, std::string_view work, Span piece, std::vector<Span>& matches,
                 std::vector<Span>& out) {
  matches.clear();
  step.regex->find_all(work.substr(piece.begin, piece.end - piece.begin), matches, piece.begin);
  // Fast path: a tiling of matches, the usual case for the shipped patterns.
  if (!step.invert && step.behavior == SplitBehavior::Isolated) {
    uint32_t at = piece.begin;
    for (const Span& m : matches) {
      if (m.begin > at) out.push_back({at, m.begin});
      out.push_back(m);
      at = m.end;
    }
    if (at < piece.end) out.push_back({at, piece.end});
    return;
  }
  struct Segment {
    Span span;
    bool is_match;
  };
  std::vector<Segment> segments;
  uint32_t at = piece.begin;
  for (const Span& m : matches) {
    if (m.begin > at) segments.push_back({{at, m.begin}, step.invert});
    segments.push_back({m, !step.invert});
    at = m.end;
  }
  if (at < piece.end) segments.push_back({{at, piece.end}, step.invert});

  const size_t first = out.size();
  bool previous_match = false;
  switch (step.behavior) {
    case SplitBehavior::Removed:
      for (const auto& s : segments)
        if (!s.is_match) out.push_back(s.span);
      break;
    case SplitBehavior::Isolated:
      for (const auto& s : segments) out.push_back(s.span);
      break;
    case SplitBehavior::MergedWithPrevious:
      for (const auto& s : segments) {
        if (s.is_match && !previous_match && out.size() > first) out.back().end = s.span.end;
        else out.push_back(s.span);
        previous_match = s.is_match;
      }
      break;
    case SplitBehavior::MergedWithNext:
      for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
        if (it->is_match && !previous_match && out.size() > first) out.back().begin = it->span.begin;
        else out.push_back(it->span);
        previous_match = it->is_match;
      }
      std::reverse(out.begin() + std::ptrdiff_t(first), out.end());
      break;
    case SplitBehavior::Contiguous:
      for (const auto& s : segments) {
        if (s.is_match && previous_match && out.size() > first) out.back().end = s.span.end;
        else out.push_back(s.span);
        previous_match = s.is_match;
      }
      break;
  }
}

}  // namespace

BpeTokenizer::BpeTokenizer(std::shared_ptr<const BpeModel> model, BpeTokenizerConfig config, std::string source)
    : model_(std::move(model)), config_(std::move(config)), source_(std::move(source)) {
  SKIFF_ASSERT(model_ != nullptr, "BpeTokenizer needs a model");
  for (const auto& step : config_.pre_tokenizers) {
    if (step.kind == PreTokenizerStep::Kind::ByteLevel && step.add_prefix_space) add_prefix_space_ = true;
    SKIFF_ASSERT(step.kind != PreTokenizerStep::Kind::Split || step.regex, "Split step without a regex");
  }
  trie_.emplace_back();
  for (size_t i = 0; i < config_.added_tokens.size(); ++i) {
    const AddedToken& t = config_.added_tokens[i];
    SKIFF_CHECK(!t.content.empty(), "{}: added token {} has empty content", source_, t.id);
    SKIFF_CHECK(t.id >= 0, "{}: added token '{}' has a negative id {}", source_, t.content, t.id);
    check_utf8(t.content, fmt::format("{}: added token {}", source_, t.id));
    int32_t node = 0;
    for (char ch : t.content) {
      uint8_t c = uint8_t(ch);
      auto& next = trie_[node].next;
      auto it = std::find_if(next.begin(), next.end(), [c](const auto& e) { return e.first == c; });
      if (it != next.end()) {
        node = it->second;
      } else {
        int32_t child = int32_t(trie_.size());
        next.emplace_back(c, child);
        trie_.emplace_back();
        node = child;
      }
    }
    trie_[node].added = int32_t(i);
    first_byte_[uint8_t(t.content[0])] = true;
    added_by_id_[t.id] = int32_t(i);
  }
}

int32_t BpeTokenizer::match_added(std::string_view text, size_t pos, size_t& len) const {
  int32_t node = 0, found = -1;
  for (size_t j = pos; j < text.size(); ++j) {
    const auto& next = trie_[node].next;
    uint8_t c = uint8_t(text[j]);
    auto it = std::find_if(next.begin(), next.end(), [c](const auto& e) { return e.first == c; });
    if (it == next.end()) break;
    node = it->second;
    if (trie_[node].added >= 0) found = trie_[node].added, len = j + 1 - pos;
  }
  return found;
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
    for (const Span& p : pieces) split_piece(step, work, p, matches, next);
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
  if (find_invalid_utf8(text) != std::string_view::npos) check_utf8(text, fmt::format("tokenizer ({})", source_));
  // Stretches of text and added tokens; JS String.trim's white space for lstrip/rstrip.
  auto trim_end = [&](Span s) {
    while (s.end > s.begin) {
      size_t b = s.end - 1;
      while (b > s.begin && (uint8_t(text[b]) & 0xC0) == 0x80) --b;
      size_t p = b;
      if (!is_js_space(next_code_point(text, p))) break;
      s.end = uint32_t(b);
    }
    return s;
  };
  auto trim_start = [&](Span s) {
    while (s.begin < s.end) {
      size_t p = s.begin;
      if (!is_js_space(next_code_point(text, p))) break;
      s.begin = uint32_t(p);
    }
    return s;
  };
  struct Section {
    Span span;
    int32_t added;
  };
  std::vector<Section> sections;
  uint32_t start = 0;
  if (!config_.added_tokens.empty()) {
    for (size_t i = 0; i < text.size();) {
      size_t len = 0;
      int32_t a = first_byte_[uint8_t(text[i])] ? match_added(text, i, len) : -1;
      if (a < 0) {
        ++i;
        continue;
      }
      if (i > start) sections.push_back({{start, uint32_t(i)}, -1});
      sections.push_back({{uint32_t(i), uint32_t(i + len)}, a});
      i += len;
      start = uint32_t(i);
    }
  }
  if (start < text.size()) sections.push_back({{start, uint32_t(text.size())}, -1});
  for (size_t i = 0; i < sections.size(); ++i) {
    if (sections[i].added < 0) continue;
    const AddedToken& t = config_.added_tokens[sections[i].added];
    if (t.lstrip && i > 0 && sections[i - 1].added < 0) sections[i - 1].span = trim_end(sections[i - 1].span);
    if (t.rstrip && i + 1 < sections.size() && sections[i + 1].added < 0)
      sections[i + 1].span = trim_start(sections[i + 1].span);
  }
  for (const Section& s : sections) {
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

BatchEncoding BpeTokenizer::encode_batch(std::span<const std::string> texts, const BatchOptions& options) const {
  SKIFF_CHECK(!options.pad || options.pad_id >= 0, "encode_batch: padding needs a pad id >= 0, got {}",
              options.pad_id);
  SKIFF_CHECK(!options.pad_to_max_length || options.max_length > 0,
              "encode_batch: pad_to_max_length needs max_length > 0");
  BatchEncoding out;
  const int64_t n = int64_t(texts.size());
  out.ids.resize(texts.size());
  std::vector<std::string> errors(texts.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t i = 0; i < n; ++i) {
    try {
      out.ids[i] = encode_ids(texts[i]);
    } catch (const Error& e) {
      errors[i] = e.what();
    }
  }
  for (int64_t i = 0; i < n; ++i)
    if (!errors[i].empty()) SKIFF_THROW(ValueError, "encode_batch: text {}: {}", i, errors[i]);
  size_t width = 0;
  for (auto& row : out.ids) {
    if (options.max_length > 0 && row.size() > options.max_length) row.resize(options.max_length);
    width = std::max(width, row.size());
  }
  if (options.pad_to_max_length) width = options.max_length;
  out.attention_mask.resize(texts.size());
  for (size_t i = 0; i < out.ids.size(); ++i) {
    auto& row = out.ids[i];
    out.attention_mask[i].assign(row.size(), 1);
    if (options.pad && row.size() < width) {
      out.attention_mask[i].resize(width, 0);
      row.resize(width, options.pad_id);
    }
  }
  return out;
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
