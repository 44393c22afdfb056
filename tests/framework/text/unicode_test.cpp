// Tests of framework/text/unicode.h and normalizer.h.
#include "framework/text/unicode.h"

#include <gtest/gtest.h>

#include "framework/core/error.h"
#include "framework/text/normalizer.h"

namespace skiff::text {
namespace {

TEST(Utf8Test, FindsTheFirstInvalidByte) {
  EXPECT_EQ(find_invalid_utf8(""), std::string_view::npos);
  EXPECT_EQ(find_invalid_utf8("plain ASCII text, long enough for the 8-byte path"), std::string_view::npos);
  EXPECT_EQ(find_invalid_utf8("caf\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x91\x8D"), std::string_view::npos);
  EXPECT_EQ(find_invalid_utf8("abc\xFF"), 3u);                  // never valid
  EXPECT_EQ(find_invalid_utf8("abcdefghij\xC3"), 10u);          // truncated at the end
  EXPECT_EQ(find_invalid_utf8("\xC0\xAF"), 0u);                 // overlong '/'
  EXPECT_EQ(find_invalid_utf8("ab\xE0\x80\xAF"), 2u);           // overlong, 3 bytes
  EXPECT_EQ(find_invalid_utf8("x\xED\xA0\x80"), 1u);            // surrogate U+D800
  EXPECT_EQ(find_invalid_utf8("\xF4\x90\x80\x80"), 0u);         // above U+10FFFF
  EXPECT_EQ(find_invalid_utf8("ok \x80 continuation"), 3u);     // stray continuation byte
}

TEST(Utf8Test, CheckNamesTheOffsetAndByte) {
  try {
    check_utf8("hello \xFE world", "input.txt");
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("input.txt: invalid UTF-8 at byte offset 6 (byte 0xFE)"), std::string::npos)
        << e.what();
  }
}

TEST(Utf8Test, DecodesAndEncodesCodePoints) {
  std::string s;
  for (char32_t cp : {U'a', U'\u00E9', U'\u4E2D', U'\U0001F44D'}) append_utf8(s, cp);
  EXPECT_EQ(s, "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x91\x8D");
  size_t pos = 0;
  EXPECT_EQ(next_code_point(s, pos), U'a');
  EXPECT_EQ(next_code_point(s, pos), U'\u00E9');
  EXPECT_EQ(next_code_point(s, pos), U'\u4E2D');
  EXPECT_EQ(next_code_point(s, pos), U'\U0001F44D');
  EXPECT_EQ(pos, s.size());
}

// The WHATWG decoder's replacement rule (Encoding Standard, "UTF-8 decoder"): one
// U+FFFD per maximal subpart.
TEST(Utf8Test, LossyDecodingReplacesMaximalSubparts) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(to_valid_utf8("valid \xE4\xB8\xAD"), "valid \xE4\xB8\xAD");
  EXPECT_EQ(to_valid_utf8("\xE4\xB8"), r);                 // truncated 3-byte sequence: one
  EXPECT_EQ(to_valid_utf8("\xE4\xB8x"), r + "x");
  EXPECT_EQ(to_valid_utf8("\xF0\x9F\x91"), r);
  EXPECT_EQ(to_valid_utf8("\x80\x80"), r + r);             // each stray continuation
  EXPECT_EQ(to_valid_utf8("\xED\xA0\x80"), r + r + r);     // surrogate: lead byte alone
  EXPECT_EQ(to_valid_utf8("\xC0\xAF"), r + r);
  EXPECT_EQ(to_valid_utf8("\xFF" "a"), r + "a");
}

TEST(CharClassTest, FollowsEcmaScriptAndGeneralCategories) {
  EXPECT_EQ(char_class(U'a'), kClassLetter);
  EXPECT_EQ(char_class(U'\u4E2D'), kClassLetter);       // CJK ideograph: Lo
  EXPECT_EQ(char_class(U'\u30AB'), kClassLetter);       // katakana
  EXPECT_EQ(char_class(U'\U00020000'), kClassLetter);   // CJK extension B, supplementary
  EXPECT_EQ(char_class(U'7'), kClassNumber);
  EXPECT_EQ(char_class(U'\u0663'), kClassNumber);       // Arabic-Indic digit: Nd
  EXPECT_EQ(char_class(U'\u216B'), kClassNumber);       // Roman numeral: Nl
  EXPECT_EQ(char_class(U'\u00BD'), kClassNumber);       // one half: No
  EXPECT_EQ(char_class(U'\n'), kClassSpace | kClassNewline);
  EXPECT_EQ(char_class(U'\r'), kClassSpace | kClassNewline);
  for (char32_t cp : {U'\t', U'\v', U'\f', U' ', U'\u00A0', U'\u1680', U'\u2000', U'\u200A', U'\u2028', U'\u2029',
                      U'\u202F', U'\u205F', U'\u3000', U'\uFEFF'})
    EXPECT_EQ(char_class(cp), kClassSpace) << std::hex << uint32_t(cp);
  for (char32_t cp : {U'\u0085', U'\u180E', U'\u200B', U'.', U'\U0001F44D', U'\u0301'})
    EXPECT_EQ(char_class(cp), 0) << std::hex << uint32_t(cp);
}

TEST(NormalizerTest, LeavesNormalizedTextAlone) {
  NormalizedText n = normalize("caf\xC3\xA9 \xE4\xB8\xAD", NormalizationForm::NFC);
  EXPECT_EQ(n.text, "caf\xC3\xA9 \xE4\xB8\xAD");
  EXPECT_TRUE(n.alignment.empty());
  EXPECT_TRUE(normalize("x", NormalizationForm::None).alignment.empty());
}

TEST(NormalizerTest, ComposesAndAlignsWithTheInput) {
  // "cafe" + U+0301 (5 + 2 bytes) -> "caf" + U+00E9 (3 + 2 bytes) + " x".
  NormalizedText n = normalize("cafe\xCC\x81 x", NormalizationForm::NFC);
  EXPECT_EQ(n.text, "caf\xC3\xA9 x");
  ASSERT_EQ(n.alignment.size(), n.text.size());
  EXPECT_EQ(n.alignment[0], (Span{0, 1}));
  EXPECT_EQ(n.alignment[2], (Span{2, 3}));
  EXPECT_EQ(n.alignment[3], (Span{3, 6}));  // both bytes of U+00E9 come from "e" + U+0301
  EXPECT_EQ(n.alignment[4], (Span{3, 6}));
  EXPECT_EQ(n.alignment[5], (Span{6, 7}));
  EXPECT_EQ(n.alignment[6], (Span{7, 8}));
  // NFKC folds compatibility characters; NFC does not.
  EXPECT_EQ(normalize("\xEF\xAC\x81", NormalizationForm::NFKC).text, "fi");
  EXPECT_EQ(normalize("\xEF\xAC\x81", NormalizationForm::NFC).text, "\xEF\xAC\x81");
  EXPECT_EQ(normalize("\xC3\xA9", NormalizationForm::NFD).text, "e\xCC\x81");
  EXPECT_THROW(normalization_form_from_name("Lowercase"), ValueError);
}

}  // namespace
}  // namespace skiff::text
