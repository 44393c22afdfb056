#include "framework/text/added_tokens.h"

#include <algorithm>

#include "framework/core/error.h"
#include "framework/text/unicode.h"

namespace skiff::text {

AddedTokenSplitter::AddedTokenSplitter(const std::vector<AddedToken>& tokens, std::string_view source) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    const AddedToken& t = tokens[i];
    SKIFF_CHECK(!t.content.empty(), "{}: added token {} has empty content", source, t.id);
    SKIFF_CHECK(t.id >= 0, "{}: added token '{}' has a negative id {}", source, t.content, t.id);
    check_utf8(t.content, fmt::format("{}: added token {}", source, t.id));
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
    strip_.emplace_back(t.lstrip, t.rstrip);
  }
}

int32_t AddedTokenSplitter::match(std::string_view text, size_t pos, size_t& len) const {
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

void AddedTokenSplitter::split(std::string_view text, std::vector<Section>& sections) const {
  const size_t first = sections.size();
  uint32_t start = 0;
  if (!strip_.empty()) {
    for (size_t i = 0; i < text.size();) {
      size_t len = 0;
      int32_t a = first_byte_[uint8_t(text[i])] ? match(text, i, len) : -1;
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
  if (strip_.empty()) return;
  // JS String.trimEnd / trimStart white space for lstrip / rstrip.
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
  for (size_t i = first; i < sections.size(); ++i) {
    if (sections[i].added < 0) continue;
    auto [lstrip, rstrip] = strip_[size_t(sections[i].added)];
    if (lstrip && i > first && sections[i - 1].added < 0) sections[i - 1].span = trim_end(sections[i - 1].span);
    if (rstrip && i + 1 < sections.size() && sections[i + 1].added < 0)
      sections[i + 1].span = trim_start(sections[i + 1].span);
  }
}

}  // namespace skiff::text
