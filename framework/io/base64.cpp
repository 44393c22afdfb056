#include "framework/io/base64.h"

#include <array>
#include <cstdint>

#include "framework/core/error.h"

namespace skiff::io {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Value of each byte as a base64 digit: 0..63, -1 for anything else.
constexpr std::array<int8_t, 256> make_digit_table() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 64; ++i) t[uint8_t(kAlphabet[i])] = int8_t(i);
  t[uint8_t('-')] = 62;  // URL-safe alphabet
  t[uint8_t('_')] = 63;
  return t;
}
constexpr std::array<int8_t, 256> kDigit = make_digit_table();

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = uint32_t(uint8_t(bytes[i])) << 16 | uint32_t(uint8_t(bytes[i + 1])) << 8 | uint8_t(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(kAlphabet[(v >> shift) & 63]);
  }
  if (const size_t rest = bytes.size() - i; rest > 0) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
    if (rest == 2) v |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::string base64_decode(std::string_view text, std::string_view what) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;
  size_t digits = 0, padding = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (is_space(c)) continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    const int d = kDigit[uint8_t(c)];
    if (d < 0 || padding > 0)
      SKIFF_THROW(ValueError, "{}: not base64 (character {} at offset {})", what,
                  d < 0 ? fmt::format("0x{:02x}", uint8_t(c)) : fmt::format("'{}' after '='", c), i);
    acc = (acc << 6) | uint32_t(d);
    bits += 6;
    ++digits;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(char((acc >> bits) & 0xff));
    }
  }
  // A final group of one digit encodes no whole byte; more than two '=' is no padding.
  SKIFF_CHECK(digits % 4 != 1 && padding <= 2 && (padding == 0 || (digits + padding) % 4 == 0),
              "{}: not base64 (its length, {} digits and {} '=', is not one an encoder writes)", what, digits,
              padding);
  return out;
}

}  // namespace skiff::io
