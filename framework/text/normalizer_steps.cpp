#include "framework/text/normalizer_steps.h"

#include <unicode/uchar.h>
#include <unicode/ustring.h>

#include <algorithm>

#include "framework/core/error.h"
#include "framework/text/unicode.h"

namespace skiff::text {

namespace {

// Rebuilds `t` code point by code point: `emit(cp, i, cps, out)` appends what code point
// i becomes to `out`, and its bytes inherit that code point's input range.
template <typename Emit>
void rebuild(AlignedText& t, Emit emit) {
  std::vector<char32_t> cps;
  std::vector<uint32_t> starts;
  for (size_t pos = 0; pos < t.text.size();) {
    starts.push_back(uint32_t(pos));
    cps.push_back(next_code_point(t.text, pos));
  }
  starts.push_back(uint32_t(t.text.size()));
  AlignedText out;
  out.tracked = t.tracked;
  out.text.reserve(t.text.size());
  std::string piece;
  for (size_t i = 0; i < cps.size(); ++i) {
    piece.clear();
    emit(cps[i], i, cps, piece);
    if (t.tracked) out.append(piece, t.input_span(starts[i], starts[i + 1]));
    else out.text += piece;
  }
  t = std::move(out);
}

bool is_cased(char32_t c) { return u_hasBinaryProperty(UChar32(c), UCHAR_CASED); }
bool is_case_ignorable(char32_t c) { return u_hasBinaryProperty(UChar32(c), UCHAR_CASE_IGNORABLE); }

// Final_Sigma (Unicode 3.13): a cased letter (case-ignorables skipped) before, none after.
bool final_sigma(const std::vector<char32_t>& cps, size_t i) {
  size_t j = i;
  bool before = false;
  while (j > 0) {
    char32_t c = cps[--j];
    if (is_case_ignorable(c)) continue;
    before = is_cased(c);
    break;
  }
  if (!before) return false;
  for (size_t k = i + 1; k < cps.size(); ++k) {
    if (is_case_ignorable(cps[k])) continue;
    return !is_cased(cps[k]);
  }
  return true;
}

void append_lower(char32_t cp, size_t i, const std::vector<char32_t>& cps, std::string& out) {
  if (cp < 0x80) {
    out.push_back(char(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
    return;
  }
  if (cp == 0x03A3) {  // capital sigma: the one context-dependent mapping of the root locale
    append_utf8(out, final_sigma(cps, i) ? 0x03C2 : 0x03C3);
    return;
  }
  UChar src[2], dst[8];
  int32_t n = 0;
  U16_APPEND_UNSAFE(src, n, UChar32(cp));
  UErrorCode status = U_ZERO_ERROR;
  int32_t m = u_strToLower(dst, 8, src, n, "", &status);
  if (U_FAILURE(status) || m > 8) {
    append_utf8(out, cp);
    return;
  }
  for (int32_t k = 0; k < m;) {
    UChar32 c;
    U16_NEXT_UNSAFE(dst, k, c);
    append_utf8(out, char32_t(c));
  }
}

bool is_cjk_bmp(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0xF900 && c <= 0xFAFF);
}

void unicode_normalize(AlignedText& t, NormalizationForm form) {
  NormalizedText n = normalize(t.text, form);
  if (n.alignment.empty()) return;  // already normalized
  if (t.tracked) {
    for (Span& s : n.alignment) s = t.input_span(s.begin, s.end);
  } else {
    n.alignment.clear();
  }
  t.text = std::move(n.text);
  t.align = std::move(n.alignment);
}

void remove_if_category(AlignedText& t, bool (*drop)(int8_t)) {
  rebuild(t, [&](char32_t cp, size_t, const auto&, std::string& out) {
    if (!drop(u_charType(UChar32(cp)))) append_utf8(out, cp);
  });
}

bool is_mark(int8_t type) {
  return type == U_NON_SPACING_MARK || type == U_ENCLOSING_MARK || type == U_COMBINING_SPACING_MARK;
}
bool is_nonspacing_mark(int8_t type) { return type == U_NON_SPACING_MARK; }

void replace(AlignedText& t, const NormalizerStep& step) {
  std::vector<Span> matches;
  if (step.pattern) {
    step.pattern->find_all(t.text, matches);
  } else if (!step.literal.empty()) {  // a plain search: much faster than a regex
    for (size_t at = t.text.find(step.literal); at != std::string::npos;
         at = t.text.find(step.literal, at + step.literal.size()))
      matches.push_back({uint32_t(at), uint32_t(at + step.literal.size())});
  }
  const std::string& content = step.content;
  if (matches.empty()) return;
  AlignedText out;
  out.tracked = t.tracked;
  uint32_t at = 0;
  auto copy = [&](uint32_t begin, uint32_t end) {
    out.text.append(t.text, begin, end - begin);
    if (t.tracked) out.align.insert(out.align.end(), t.align.begin() + begin, t.align.begin() + end);
  };
  for (const Span& m : matches) {
    copy(at, m.begin);
    if (t.tracked) out.append(content, t.input_span(m.begin, m.end));
    else out.text += content;
    at = m.end;
  }
  copy(at, uint32_t(t.text.size()));
  t = std::move(out);
}

void strip(AlignedText& t, bool left, bool right) {
  size_t begin = 0, end = t.text.size();
  while (left && begin < end) {
    size_t p = begin;
    if (!is_js_space(next_code_point(t.text, p))) break;
    begin = p;
  }
  while (right && end > begin) {
    size_t b = end - 1;
    while (b > begin && (uint8_t(t.text[b]) & 0xC0) == 0x80) --b;
    size_t p = b;
    if (!is_js_space(next_code_point(t.text, p))) break;
    end = b;
  }
  if (begin == 0 && end == t.text.size()) return;
  t.text = t.text.substr(begin, end - begin);
  if (t.tracked) t.align = std::vector<Span>(t.align.begin() + begin, t.align.begin() + end);
}

// BertNormalizer on ASCII text, in one pass: no ideographs, no accents, and the
// only characters clean_text changes are the C0 controls and DEL.
void bert_ascii(const NormalizerStep& s, AlignedText& t) {
  size_t out = 0;
  for (size_t i = 0; i < t.text.size(); ++i) {
    char c = t.text[i];
    if (s.clean_text) {
      const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
      if (!space && (uint8_t(c) < 0x20 || c == 0x7F)) continue;
      if (space) c = ' ';
    }
    if (s.lowercase && c >= 'A' && c <= 'Z') c = char(c + 32);
    t.text[out] = c;
    if (t.tracked) t.align[out] = t.align[i];
    ++out;
  }
  t.text.resize(out);
  if (t.tracked) t.align.resize(out);
}

void bert(const NormalizerStep& s, AlignedText& t) {
  if (std::all_of(t.text.begin(), t.text.end(), [](char c) { return uint8_t(c) < 0x80; })) {
    bert_ascii(s, t);
    return;
  }
  if (s.clean_text || s.handle_chinese_chars) {
    rebuild(t, [&](char32_t cp, size_t, const auto&, std::string& out) {
      if (s.clean_text) {
        if (cp == 0 || cp == 0xFFFD) return;
        if (cp != '\t' && cp != '\n' && cp != '\r') {
          int8_t type = u_charType(UChar32(cp));
          if (type == U_CONTROL_CHAR || type == U_FORMAT_CHAR || type == U_PRIVATE_USE_CHAR || type == U_SURROGATE)
            return;
        }
        if (is_js_space(cp)) {
          out.push_back(' ');
          return;
        }
      }
      if (s.handle_chinese_chars && is_cjk_bmp(cp)) {
        out.push_back(' ');
        append_utf8(out, cp);
        out.push_back(' ');
        return;
      }
      append_utf8(out, cp);
    });
  }
  if (s.lowercase) rebuild(t, append_lower);
  if (s.strip_accents.value_or(s.lowercase)) {
    unicode_normalize(t, NormalizationForm::NFD);
    remove_if_category(t, is_nonspacing_mark);
  }
}

}  // namespace

AlignedText AlignedText::identity(std::string_view text, uint32_t base, bool track) {
  AlignedText t;
  t.text = std::string(text);
  t.tracked = track;
  if (track) {
    t.align.resize(text.size());
    for (uint32_t i = 0; i < text.size(); ++i) t.align[i] = {base + i, base + i + 1};
  }
  return t;
}

void AlignedText::append(std::string_view bytes, Span from) {
  text.append(bytes);
  if (tracked) align.insert(align.end(), bytes.size(), from);
}

Span AlignedText::input_span(uint32_t begin, uint32_t end) const {
  if (begin >= end) return begin < align.size() ? Span{align[begin].begin, align[begin].begin} : Span{};
  return {align[begin].begin, align[end - 1].end};
}

void apply_normalizer(const NormalizerStep& step, AlignedText& t) {
  switch (step.kind) {
    case NormalizerStep::Kind::Unicode: unicode_normalize(t, step.form); break;
    case NormalizerStep::Kind::Replace: replace(t, step); break;
    case NormalizerStep::Kind::Prepend: {
      Span at = t.tracked && !t.align.empty() ? Span{t.align[0].begin, t.align[0].begin} : Span{};
      AlignedText out;
      out.tracked = t.tracked;
      out.append(step.content, at);
      out.text += t.text;
      if (t.tracked) out.align.insert(out.align.end(), t.align.begin(), t.align.end());
      t = std::move(out);
      break;
    }
    case NormalizerStep::Kind::Lowercase: rebuild(t, append_lower); break;
    case NormalizerStep::Kind::StripAccents: remove_if_category(t, is_mark); break;
    case NormalizerStep::Kind::Strip: strip(t, step.strip_left, step.strip_right); break;
    case NormalizerStep::Kind::Bert: bert(step, t); break;
  }
}

std::string js_lowercase(std::string_view text) {
  AlignedText t = AlignedText::identity(text, 0, false);
  rebuild(t, append_lower);
  return t.text;
}

}  // namespace skiff::text
