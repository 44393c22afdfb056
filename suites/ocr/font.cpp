// The CJK font: lookup, loading and rendering through cv::freetype.
#include "suites/ocr/font.h"

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <opencv2/freetype.hpp>
#include <opencv2/imgproc.hpp>

#include "framework/core/error.h"

namespace skiff::ocr {
namespace {

// Noto Sans CJK collections order their faces JP, KR, SC, TC, HK: index 2 is
// Simplified Chinese. The single-face .otf files hold only that face.
struct KnownFont {
  const char* path;
  int face_index;
};
constexpr KnownFont kKnownFonts[] = {
    {"/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", 2},
    {"/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc", 2},
    {"/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc", 2},
    {"/usr/share/fonts/opentype/noto/NotoSansCJKsc-Regular.otf", 0},
    {"/usr/share/fonts/opentype/noto/NotoSansSC-Regular.otf", 0},
    {"/usr/local/share/fonts/NotoSansCJK-Regular.ttc", 2},
};

int parse_face_index(const char* s) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  SKIFF_CHECK(end != s && *end == '\0' && v >= 0 && v < 1024,
              "font: expected SKIFF_FONT_INDEX to be a face index >= 0, got '{}'", s);
  return static_cast<int>(v);
}

}  // namespace

FontSource find_cjk_font() {
  if (const char* env = std::getenv("SKIFF_FONT"); env != nullptr && *env != '\0') {
    SKIFF_CHECK_T(IoError, std::filesystem::is_regular_file(env),
                  "font: SKIFF_FONT names '{}', which is not a readable file", env);
    const char* idx = std::getenv("SKIFF_FONT_INDEX");
    return {env, idx != nullptr && *idx != '\0' ? parse_face_index(idx) : 0};
  }
  for (const KnownFont& f : kKnownFonts) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(f.path, ec)) return {f.path, f.face_index};
  }
  throw IoError(
      "font: no CJK font found; install the Debian/Ubuntu package fonts-noto-cjk "
      "(apt-get install fonts-noto-cjk) or set SKIFF_FONT to a .ttf/.otf/.ttc file "
      "with Chinese glyphs (SKIFF_FONT_INDEX selects the face in a .ttc)");
}

struct Font::Impl {
  std::mutex mu;
  cv::Ptr<cv::freetype::FreeType2> ft;
};

Font::Font(const FontSource& source) : source_(source), impl_(std::make_unique<Impl>()) {
  SKIFF_CHECK_T(IoError, std::filesystem::is_regular_file(source.path),
                "font: font file '{}' does not exist", source.path);
  try {
    impl_->ft = cv::freetype::createFreeType2();
    impl_->ft->loadFontData(source.path, source.face_index);
  } catch (const cv::Exception& e) {
    throw IoError(fmt::format("font: FreeType could not load face {} of '{}': {}",
                              source.face_index, source.path, e.what()));
  }
}

Font::~Font() = default;

const Font& Font::cjk() {
  // A failed load throws before `font` is set, so the next call retries.
  static std::mutex mu;
  static std::unique_ptr<Font> font;
  std::lock_guard lock(mu);
  if (!font) font = std::make_unique<Font>(find_cjk_font());
  return *font;
}

cv::Mat Font::render_mask(std::string_view utf8, int pixel_height) const {
  SKIFF_CHECK(pixel_height >= 4 && pixel_height <= 1024,
              "font: expected a pixel height in [4, 1024], got {}", pixel_height);
  const std::string text(utf8);
  if (text.find_first_not_of(' ') == std::string::npos) return {};
  cv::Mat canvas;
  {
    std::lock_guard lock(impl_->mu);
    int baseline = 0;
    const cv::Size adv = impl_->ft->getTextSize(text, pixel_height, -1, &baseline);
    // With a top-left origin FreeType puts the ink within ~1.3 em below org.y;
    // the margins leave room for glyphs that overhang their advance box.
    const int margin = pixel_height;
    canvas = cv::Mat::zeros(2 * pixel_height + 2 * margin, adv.width + 2 * margin, CV_8UC3);
    impl_->ft->putText(canvas, text, {margin, margin}, pixel_height, cv::Scalar::all(255), -1,
                       cv::LINE_AA, false);
  }
  cv::Mat gray;
  cv::extractChannel(canvas, gray, 0);
  const cv::Rect ink = cv::boundingRect(gray);
  if (ink.empty()) return {};
  return gray(ink).clone();
}

cv::Size Font::measure(std::string_view utf8, int pixel_height) const {
  return render_mask(utf8, pixel_height).size();
}

cv::Rect Font::draw(cv::Mat& image, std::string_view utf8, cv::Point top_left, int pixel_height,
                    const cv::Scalar& color) const {
  SKIFF_CHECK(image.type() == CV_8UC3, "font: expected a CV_8UC3 image to draw on, got type {}",
              image.type());
  const cv::Mat mask = render_mask(utf8, pixel_height);
  blend_mask(image, mask, top_left, color);
  return {top_left, mask.size()};
}

void blend_mask(cv::Mat& image, const cv::Mat& mask, cv::Point top_left, const cv::Scalar& color) {
  SKIFF_CHECK(image.type() == CV_8UC3, "blend_mask: expected a CV_8UC3 image, got type {}",
              image.type());
  if (mask.empty()) return;
  SKIFF_CHECK(mask.type() == CV_8UC1, "blend_mask: expected a CV_8UC1 mask, got type {}",
              mask.type());
  const cv::Rect dst = cv::Rect(top_left, mask.size()) & cv::Rect(0, 0, image.cols, image.rows);
  if (dst.empty()) return;
  const cv::Point src0 = dst.tl() - top_left;
  for (int y = 0; y < dst.height; ++y) {
    const uint8_t* m = mask.ptr<uint8_t>(src0.y + y) + src0.x;
    auto* px = image.ptr<cv::Vec3b>(dst.y + y) + dst.x;
    for (int x = 0; x < dst.width; ++x) {
      const int a = m[x];
      if (a == 0) continue;
      for (int c = 0; c < 3; ++c) {
        const double v = px[x][c] + (color[c] - px[x][c]) * (a / 255.0);
        px[x][c] = cv::saturate_cast<uint8_t>(v);
      }
    }
  }
}

std::vector<std::string> split_utf8(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
    bool ok = i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    if (!ok) n = 1;
    out.emplace_back(s.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace skiff::ocr
