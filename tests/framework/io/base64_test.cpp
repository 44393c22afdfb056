// Base64 as RFC 4648 defines it: its test vectors, the URL-safe alphabet, MIME line
// breaks, and clear errors for text no encoder writes.
#include "framework/io/base64.h"

#include <gtest/gtest.h>

#include "framework/core/error.h"

namespace skiff::io {
namespace {

TEST(Base64, Rfc4648Vectors) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},  {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(base64_encode(plain), encoded);
    EXPECT_EQ(base64_decode(encoded, "v"), plain);
  }
}

TEST(Base64, EveryByteRoundTrips) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(char(i));
  for (size_t n = 0; n <= all.size(); n += 37) EXPECT_EQ(base64_decode(base64_encode(all.substr(0, n)), "v"), all.substr(0, n));
}

TEST(Base64, AcceptsUrlSafeUnpaddedAndWrappedText) {
  EXPECT_EQ(base64_decode("-_8", "v"), "\xfb\xff");  // URL-safe "+/8="
  EXPECT_EQ(base64_decode("Zm9vYg", "v"), "foob");  // padding left out
  EXPECT_EQ(base64_decode("Zm9v\r\nYmFy\n", "v"), "foobar");
}

TEST(Base64, RejectsWhatNoEncoderWritesNamingTheInput) {
  try {
    base64_decode("Zm9v!mFy", "file");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("file: not base64 (character 0x21 at offset 4)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(base64_decode("Zm9vY", "v"), ValueError);     // one digit left over
  EXPECT_THROW(base64_decode("Zg===", "v"), ValueError);     // three '='
  EXPECT_THROW(base64_decode("Zg==Zg==", "v"), ValueError);  // data after padding
  EXPECT_THROW(base64_decode("Zm9v=", "v"), ValueError);     // padding where no group is short
  EXPECT_EQ(base64_decode("Zm9=", "v"), "fo");
}

}  // namespace
}  // namespace skiff::io
