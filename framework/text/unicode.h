#pragma once
/// \file unicode.h
/// UTF-8 and character-class helpers shared by the tokenizers.
///
/// Text in skiff is UTF-8 in std::string / std::string_view. Tokenizers accept only
/// well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF): a
/// tokenizer cannot give ids to bytes that are not text without guessing, and the
/// reference implementations (JavaScript strings) never see such bytes either, so
/// check_utf8() raises ValueError naming the first bad byte's offset instead.
///
/// The character classes are the ones the pre-tokenizer regexes use, with the
/// semantics of ECMAScript regexes in `u` mode (the JavaScript references):
///   - letter:  General_Category L (Lu, Ll, Lt, Lm, Lo), from ICU;
///   - number:  General_Category N (Nd, Nl, No), from ICU;
///   - space:   ECMAScript `\s`: U+0009..U+000D, U+0020, U+00A0, U+1680, U+2000..U+200A,
///              U+2028, U+2029, U+202F, U+205F, U+3000 and U+FEFF (ICU's `\s` lacks
///              U+000B and U+FEFF);
///   - newline: U+000A and U+000D (the `[\r\n]` of the patterns).
/// The categories come from the system ICU's Unicode version (ICU 72: Unicode 15.0);
/// Node's bundled ICU may be newer, which only matters for characters assigned since.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace skiff::text {

/// Byte offset of the first byte that does not start a well-formed UTF-8 sequence
/// (or starts one that is truncated), or std::string_view::npos when `text` is valid.
size_t find_invalid_utf8(std::string_view text);

/// \throws ValueError "<what>: invalid UTF-8 at byte offset N (byte 0xXX)" when `text`
///   is not well-formed UTF-8.
void check_utf8(std::string_view text, std::string_view what);

/// Decodes the code point at `text[pos]` and advances `pos` past it. `text` must be
/// valid UTF-8 (checked by the caller); reading past the end is not checked.
inline char32_t next_code_point(std::string_view text, size_t& pos) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  unsigned char c = s[pos];
  if (c < 0x80) {
    ++pos;
    return c;
  }
  if (c < 0xE0) {
    char32_t cp = (char32_t(c & 0x1F) << 6) | (s[pos + 1] & 0x3F);
    pos += 2;
    return cp;
  }
  if (c < 0xF0) {
    char32_t cp = (char32_t(c & 0x0F) << 12) | (char32_t(s[pos + 1] & 0x3F) << 6) | (s[pos + 2] & 0x3F);
    pos += 3;
    return cp;
  }
  char32_t cp = (char32_t(c & 0x07) << 18) | (char32_t(s[pos + 1] & 0x3F) << 12) |
                (char32_t(s[pos + 2] & 0x3F) << 6) | (s[pos + 3] & 0x3F);
  pos += 4;
  return cp;
}

/// Appends the UTF-8 encoding of `cp` (a Unicode scalar value) to `out`.
void append_utf8(std::string& out, char32_t cp);

/// Decodes arbitrary bytes as UTF-8 the way the WHATWG TextDecoder does (and
/// JavaScript's references with it): each maximal ill-formed subpart becomes one
/// U+FFFD. Valid input is returned unchanged.
std::string to_valid_utf8(std::string_view bytes);

/// Character-class bits (see the file comment).
enum CharClass : uint8_t {
  kClassLetter = 1,
  kClassNumber = 2,
  kClassSpace = 4,
  kClassNewline = 8,
};

namespace detail {
/// Classes of U+0000..U+FFFF, built once from ICU.
const uint8_t* bmp_char_classes();
uint8_t supplementary_char_class(char32_t cp);
}  // namespace detail

/// The CharClass bits of a code point.
inline uint8_t char_class(char32_t cp) {
  static const uint8_t* bmp = detail::bmp_char_classes();
  return cp < 0x10000 ? bmp[cp] : detail::supplementary_char_class(cp);
}

/// true for ECMAScript `\s` (see the file comment).
inline bool is_js_space(char32_t cp) { return (char_class(cp) & kClassSpace) != 0; }

}  // namespace skiff::text
