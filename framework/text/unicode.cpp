#include "framework/text/unicode.h"

#include <unicode/uchar.h>

#include <cstring>
#include <memory>

#include "framework/core/error.h"

namespace skiff::text {

namespace {

// Length of the well-formed sequence starting at s[i], or 0 (Unicode Table 3-7).
size_t utf8_sequence_length(const unsigned char* s, size_t n, size_t i) {
  unsigned char c = s[i];
  if (c < 0x80) return 1;
  auto cont = [&](size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return i + k < n && s[i + k] >= lo && s[i + k] <= hi;
  };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;  // no surrogates
  if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

// ECMAScript WhiteSpace and LineTerminator code points (ECMA-262, "White Space").
bool js_space(char32_t cp) {
  switch (cp) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000: case 0xFEFF:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

uint8_t compute_class(char32_t cp) {
  uint8_t c = 0;
  uint32_t mask = U_GET_GC_MASK(UChar32(cp));
  if (mask & U_GC_L_MASK) c |= kClassLetter;
  if (mask & U_GC_N_MASK) c |= kClassNumber;
  if (js_space(cp)) c |= kClassSpace;
  if (cp == '\n' || cp == '\r') c |= kClassNewline;
  return c;
}

}  // namespace

size_t find_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    // ASCII runs eight bytes at a time.
    while (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, s + i, 8);
      if (w & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= n) break;
    size_t len = utf8_sequence_length(s, n, i);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
}

void check_utf8(std::string_view text, std::string_view what) {
  size_t bad = find_invalid_utf8(text);
  if (bad != std::string_view::npos)
    SKIFF_THROW(ValueError, "{}: invalid UTF-8 at byte offset {} (byte 0x{:02X})", what, bad,
                unsigned(static_cast<unsigned char>(text[bad])));
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(char(cp));
  } else if (cp < 0x800) {
    out.push_back(char(0xC0 | (cp >> 6)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(char(0xE0 | (cp >> 12)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(char(0xF0 | (cp >> 18)));
    out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(char(0x80 | (cp & 0x3F)));
  }
}

std::string to_valid_utf8(std::string_view bytes) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  std::string out;
  out.reserve(n);
  size_t i = 0;
  while (i < n) {
    size_t len = utf8_sequence_length(s, n, i);
    if (len > 0) {
      out.append(bytes.substr(i, len));
      i += len;
      continue;
    }
    // A maximal subpart: the lead byte plus the continuation bytes that could still
    // have completed a valid sequence (the WHATWG decoder's rule).
    unsigned char c = s[i];
    size_t need = c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : 0;
    size_t k = 1;
    for (; k <= need && i + k < n; ++k) {
      unsigned char lo = 0x80, hi = 0xBF;
      if (k == 1) {
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
      }
      if (s[i + k] < lo || s[i + k] > hi) break;
    }
    out.append("\xEF\xBF\xBD");
    i += need == 0 ? 1 : k;
  }
  return out;
}

namespace detail {

const uint8_t* bmp_char_classes() {
  static const std::unique_ptr<uint8_t[]> table = [] {
    auto t = std::make_unique<uint8_t[]>(0x10000);
    for (char32_t cp = 0; cp < 0x10000; ++cp) t[cp] = compute_class(cp);
    return t;
  }();
  return table.get();
}

uint8_t supplementary_char_class(char32_t cp) { return compute_class(cp); }

}  // namespace detail

}  // namespace skiff::text
