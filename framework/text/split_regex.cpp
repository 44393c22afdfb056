#include "framework/text/split_regex.h"

#include <algorithm>

#include <unicode/uregex.h>
#include <unicode/utext.h>


#include "framework/core/error.h"
#include "framework/text/unicode.h"

namespace skiff::text {

namespace {

constexpr std::string_view kContractionsIcase = "(?i:'s|'t|'re|'ve|'m|'ll|'d)";
constexpr std::string_view kCl100kHead = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|)";
constexpr std::string_view kCl100kTail = R"(| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kJsSpaceSet =
    R"([\t-\r\x{20}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}])";

// The class bits of the code point at `pos`; sets `next` past it.
inline uint8_t class_at(std::string_view t, size_t pos, size_t& next, char32_t& cp) {
  unsigned char c = static_cast<unsigned char>(t[pos]);
  if (c < 0x80) {
    static const uint8_t* table = detail::bmp_char_classes();
    next = pos + 1;
    cp = c;
    return table[c];
  }
  next = pos;
  cp = next_code_point(t, next);
  return char_class(cp);
}

constexpr uint8_t kL = kClassLetter, kN = kClassNumber, kS = kClassSpace, kNL = kClassNewline;

// End of the run of code points from `j` whose class satisfies `pred`.
template <typename Pred>
inline size_t run_end(std::string_view t, size_t j, Pred pred) {
  const size_t n = t.size();
  while (j < n) {
    size_t next;
    char32_t cp;
    if (!pred(class_at(t, j, next, cp))) break;
    j = next;
  }
  return j;
}

inline bool is_letter(uint8_t k) { return k & kL; }
inline bool is_number(uint8_t k) { return k & kN; }
inline bool is_other(uint8_t k) { return !(k & (kL | kN | kS)); }
inline bool is_space(uint8_t k) { return k & kS; }
inline bool is_newline(uint8_t k) { return k & kNL; }

inline char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? char(c + 32) : c; }

// 's 't 're 've 'm 'll 'd after the apostrophe at t[i1 - 1]; returns the match end or 0.
inline size_t contraction_end(std::string_view t, size_t i1, bool ignore_case) {
  const size_t n = t.size();
  if (i1 >= n) return 0;
  char a = t[i1], b = i1 + 1 < n ? t[i1 + 1] : '\0';
  if (ignore_case) a = ascii_lower(a), b = ascii_lower(b);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return i1 + 1;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i1 + 2;
  return 0;
}

// `\s+(?!\S)|\s+` from a white-space code point at i (next code point at i1). With
// `newlines`, `\s*[\r\n]+` is tried first: it ends after the run's last newline.
inline size_t whitespace_end(std::string_view t, size_t i, size_t i1, bool newlines) {
  const size_t n = t.size();
  size_t last = i, j = i1;
  size_t newline_end = 0;
  char32_t cp = static_cast<unsigned char>(t[i]);
  if (newlines && (cp == '\n' || cp == '\r')) newline_end = i1;
  while (j < n) {
    size_t next;
    uint8_t k = class_at(t, j, next, cp);
    if (!(k & kS)) break;
    if (newlines && (k & kNL)) newline_end = next;
    last = j;
    j = next;
  }
  if (newline_end) return newline_end;
  if (j == n) return n;     // the lookahead sees the end: the whole run
  if (last > i) return last;  // backtrack one code point so a space follows
  return j;                 // `\s+` on a single white-space code point
}

// GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
size_t match_gpt2(std::string_view t, size_t i) {
  const size_t n = t.size();
  size_t i1;
  char32_t c0;
  uint8_t k0 = class_at(t, i, i1, c0);
  if (c0 == '\'') {
    if (size_t e = contraction_end(t, i1, false)) return e;
  }
  if (c0 == ' ' && i1 < n) {
    size_t i2;
    char32_t c1;
    uint8_t k1 = class_at(t, i1, i2, c1);
    if (is_letter(k1)) return run_end(t, i2, is_letter);
    if (is_number(k1)) return run_end(t, i2, is_number);
    if (is_other(k1)) return run_end(t, i2, is_other);
  }
  if (is_letter(k0)) return run_end(t, i1, is_letter);
  if (is_number(k0)) return run_end(t, i1, is_number);
  if (is_other(k0)) return run_end(t, i1, is_other);
  return whitespace_end(t, i, i1, false);
}

// cl100k: (?i:'s|...)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,d}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
size_t match_cl100k(std::string_view t, size_t i, int max_digits) {
  const size_t n = t.size();
  size_t i1;
  char32_t c0;
  uint8_t k0 = class_at(t, i, i1, c0);
  if (c0 == '\'') {
    if (size_t e = contraction_end(t, i1, true)) return e;
  }
  if (!(k0 & (kNL | kL | kN)) && i1 < n) {
    size_t i2;
    char32_t c1;
    if (is_letter(class_at(t, i1, i2, c1))) return run_end(t, i2, is_letter);
  }
  if (is_letter(k0)) return run_end(t, i1, is_letter);
  if (is_number(k0)) {
    size_t j = i1;
    for (int count = 1; count < max_digits && j < n; ++count) {
      size_t next;
      char32_t cp;
      if (!is_number(class_at(t, j, next, cp))) break;
      j = next;
    }
    return j;
  }
  size_t punct_end = 0;
  if (c0 == ' ' && i1 < n) {
    size_t i2;
    char32_t c1;
    if (is_other(class_at(t, i1, i2, c1))) punct_end = run_end(t, i2, is_other);
  }
  if (!punct_end && is_other(k0)) punct_end = run_end(t, i1, is_other);
  if (punct_end) return run_end(t, punct_end, is_newline);
  return whitespace_end(t, i, i1, true);
}

}  // namespace

std::string js_pattern_for_icu(std::string_view pattern) {
  std::string p(pattern);
  for (size_t at; (at = p.find(kContractionsIcase)) != std::string::npos;)
    p.replace(at, kContractionsIcase.size(), "(?:'([sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD]))");
  std::string out;
  out.reserve(p.size() + 64);
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\' && i + 1 < p.size()) {
      char c = p[i + 1];
      if (c == 's') {
        out += kJsSpaceSet;
      } else if (c == 'S') {
        out += "[^";
        out += kJsSpaceSet.substr(1);
      } else {
        out += p[i];
        out += c;
      }
      ++i;
      continue;
    }
    out += p[i];
  }
  return out;
}

struct SplitRegex::IcuState {
  URegularExpression* compiled = nullptr;
  ~IcuState() {
    if (compiled) uregex_close(compiled);
  }
};

SplitRegex::SplitRegex(std::string pattern, Engine engine) : pattern_(std::move(pattern)) {
  std::string_view p = pattern_;
  if (engine == Engine::Auto) {
    if (p == kGpt2Pattern) {
      kind_ = Kind::Gpt2;
      return;
    }
    if (p.starts_with(kCl100kHead) && p.ends_with(kCl100kTail)) {
      std::string_view digits = p.substr(kCl100kHead.size(), p.size() - kCl100kHead.size() - kCl100kTail.size());
      if (digits == R"(\p{N})" || digits == R"(\p{N}{1,3})") {
        kind_ = Kind::Cl100k;
        max_digits_ = digits.size() > 5 ? 3 : 1;
        return;
      }
    }
  }
  kind_ = Kind::Icu;
  std::string rewritten = js_pattern_for_icu(pattern_);
  UParseError pe{};
  UErrorCode status = U_ZERO_ERROR;
  icu_ = std::make_unique<IcuState>();
  UText* text = utext_openUTF8(nullptr, rewritten.data(), int64_t(rewritten.size()), &status);
  icu_->compiled = uregex_openUText(text, 0, &pe, &status);
  utext_close(text);
  if (U_FAILURE(status))
    SKIFF_THROW(ValueError, "split regex: cannot compile '{}': {} at offset {}", pattern_, u_errorName(status),
                pe.offset);
}

SplitRegex::~SplitRegex() = default;
SplitRegex::SplitRegex(SplitRegex&&) noexcept = default;
SplitRegex& SplitRegex::operator=(SplitRegex&&) noexcept = default;

void SplitRegex::find_all(std::string_view text, std::vector<Span>& out, uint32_t base) const {
  const size_t n = text.size();
  if (kind_ == Kind::Gpt2 || kind_ == Kind::Cl100k) {
    for (size_t pos = 0; pos < n;) {
      size_t end = kind_ == Kind::Gpt2 ? match_gpt2(text, pos) : match_cl100k(text, pos, max_digits_);
      out.push_back({uint32_t(base + pos), uint32_t(base + end)});
      pos = end;
    }
    return;
  }
  // A compiled ICU regex holds match state: each call works on its own clone.
  UErrorCode status = U_ZERO_ERROR;
  URegularExpression* re = uregex_clone(icu_->compiled, &status);
  UText* ut = utext_openUTF8(nullptr, text.data(), int64_t(n), &status);
  uregex_setUText(re, ut, &status);
  while (U_SUCCESS(status) && uregex_findNext(re, &status)) {
    int64_t b = uregex_start64(re, 0, &status), e = uregex_end64(re, 0, &status);
    if (e > b) out.push_back({uint32_t(base + b), uint32_t(base + e)});
  }
  uregex_close(re);
  utext_close(ut);
  if (U_FAILURE(status))
    SKIFF_THROW(ValueError, "split regex '{}': ICU matching failed: {}", pattern_, u_errorName(status));
}

// Cuts the pieces of one Split step out of `piece`, Hugging Face's way: the regex's
// matches and the gaps between them tile the piece; `invert` swaps the two roles.
void split_piece(const SplitRegex& regex, SplitBehavior behavior, bool invert, std::string_view work, Span piece,
                 std::vector<Span>& matches, std::vector<Span>& out) {
  matches.clear();
  regex.find_all(work.substr(piece.begin, piece.end - piece.begin), matches, piece.begin);
  // Fast path: a tiling of matches, the usual case for the shipped patterns.
  if (!invert && behavior == SplitBehavior::Isolated) {
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
    if (m.begin > at) segments.push_back({{at, m.begin}, invert});
    segments.push_back({m, !invert});
    at = m.end;
  }
  if (at < piece.end) segments.push_back({{at, piece.end}, invert});

  const size_t first = out.size();
  bool previous_match = false;
  switch (behavior) {
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

}  // namespace skiff::text
