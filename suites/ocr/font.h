#pragma once
/// \file font.h
/// The CJK font used to render and draw text in the OCR suite (synthetic data,
/// the sample image, result visualisation).
///
/// Rendering goes through OpenCV's freetype module with a Noto Sans CJK face
/// (Debian package fonts-noto-cjk). Lookup order:
///   1. env SKIFF_FONT: a .ttf/.otf/.ttc file; env SKIFF_FONT_INDEX picks the
///      face inside a collection (default 0);
///   2. the known install paths of Noto Sans CJK, Simplified Chinese face;
///   3. otherwise skiff::IoError naming the package that provides the font.
///
/// cv::freetype objects are not thread-safe: every Font serialises its calls
/// with its own mutex, so one Font may be shared by any number of threads.

#include <memory>
#include <opencv2/core.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace skiff::ocr {

/// A font file and the face index inside it (non-zero only for collections).
struct FontSource {
  std::string path;
  int face_index = 0;
};

/// Resolves the CJK font as described in the file comment. Does not load it.
/// \throws IoError if SKIFF_FONT names a missing file, or if no known Noto CJK
///   file is installed (the message names the Debian package fonts-noto-cjk).
/// \throws ValueError if SKIFF_FONT_INDEX is not a non-negative integer.
FontSource find_cjk_font();

/// A loaded font face that renders UTF-8 text.
class Font {
 public:
  /// Loads `source`. \throws IoError if the file is missing or FreeType cannot
  ///   load the face.
  explicit Font(const FontSource& source);
  ~Font();
  Font(const Font&) = delete;
  Font& operator=(const Font&) = delete;

  /// The process-wide CJK font (find_cjk_font()), loaded on first use. A failed
  /// load is not remembered: the next call tries again.
  /// \throws IoError as find_cjk_font() and Font(FontSource).
  static const Font& cjk();

  const FontSource& source() const { return source_; }

  /// Renders `utf8` at `pixel_height` (the em size in pixels, like a CSS font
  /// size) as a coverage mask cropped to the ink: CV_8UC1, 0 = background,
  /// 255 = fully covered, anti-aliased edges in between. Leading/trailing
  /// spaces have no ink and are not part of the mask. Returns an empty Mat when
  /// the text has no ink at all (empty or only spaces).
  /// \throws ValueError if pixel_height is not in [4, 1024].
  cv::Mat render_mask(std::string_view utf8, int pixel_height) const;

  /// Size of the ink box render_mask() would return, without keeping the mask.
  cv::Size measure(std::string_view utf8, int pixel_height) const;

  /// Draws `utf8` onto `image` (CV_8UC3) with the ink box's top-left corner at
  /// `top_left`, blending `color` (BGR) by coverage. Parts outside the image
  /// are clipped. Returns the ink box drawn (in image coordinates, unclipped).
  /// \throws ValueError if image is not CV_8UC3.
  cv::Rect draw(cv::Mat& image, std::string_view utf8, cv::Point top_left, int pixel_height,
                const cv::Scalar& color) const;

 private:
  struct Impl;
  FontSource source_;
  std::unique_ptr<Impl> impl_;
};

/// Blends `color` into `image` (CV_8UC3) at `top_left` using `mask` (CV_8UC1
/// coverage, 255 = opaque) as alpha; parts outside the image are clipped.
void blend_mask(cv::Mat& image, const cv::Mat& mask, cv::Point top_left, const cv::Scalar& color);

/// Splits UTF-8 text into code points, each returned as its UTF-8 bytes. Bytes
/// that do not form valid UTF-8 are returned one by one.
std::vector<std::string> split_utf8(std::string_view utf8);

}  // namespace skiff::ocr
