#pragma once
/// \file caption_dataset.h
/// Image-caption data as the multimodal recipes read it, in two layouts:
///  - COCO captions JSON: {"images": [{"id", "file_name", ["label"]}], "annotations":
///    [{"image_id", "caption"}]}; file_name is relative to the image directory (by default
///    <json dir>/images when it exists, else the JSON's directory);
///  - a list of "image<TAB>caption" lines (.tsv / .txt), paths relative to the list's directory;
///    an image's lines may repeat it for more captions ('#' lines and blank lines skipped).
/// Images keep their first-seen order; each has at least one caption.

#include <filesystem>
#include <string>
#include <vector>

#include "framework/tensor/tensor.h"

namespace skiff::multimodal {

struct CaptionedImage {
  std::filesystem::path file;
  std::vector<std::string> captions;
  std::string label;  ///< the image's class name where the file gives one ("red star"), else ""
};

/// \throws IoError when the file cannot be read; ValueError naming the file and the entry (JSON
///         index or line number) for malformed data, an image without captions or a caption of
///         an unknown image.
std::vector<CaptionedImage> read_caption_file(const std::filesystem::path& file,
                                              const std::filesystem::path& image_dir = {});

/// How the multimodal models see pixels: (v / 255 - kImageMean) / kImageStd per RGB channel.
inline constexpr float kImageMean = 0.5f, kImageStd = 0.25f;

/// The images decoded, resized to size x size and normalised as above: [N, 3, size, size]
/// float32. \throws IoError / ValueError naming an unreadable image.
Tensor load_images(const std::vector<CaptionedImage>& images, int64_t size);

/// The non-blank lines of a text file (class names, texts), trimmed of surrounding blanks.
/// \throws IoError naming the file when it cannot be read; ValueError when it has no line.
std::vector<std::string> read_text_lines(const std::filesystem::path& file);

}  // namespace skiff::multimodal
