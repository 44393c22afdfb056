// Image-caption files (caption_dataset.h).
#include "suites/multimodal/caption_dataset.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <opencv2/imgproc.hpp>

#include "framework/core/error.h"
#include "framework/data/image_io.h"
#include "framework/io/file.h"
#include "framework/text/lines.h"

namespace skiff::multimodal {

namespace fs = std::filesystem;

namespace {

std::vector<CaptionedImage> read_coco(const fs::path& file, const std::string& text, fs::path image_dir) {
  if (image_dir.empty()) {
    image_dir = file.parent_path() / "images";
    if (!fs::is_directory(image_dir)) image_dir = file.parent_path();
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    SKIFF_THROW(ValueError, "{}: not JSON: {}", file.string(), e.what());
  }
  SKIFF_CHECK(doc.is_object() && doc.contains("images") && doc["images"].is_array() && doc.contains("annotations") &&
                  doc["annotations"].is_array(),
              "{}: expected COCO captions: an object with 'images' and 'annotations' lists", file.string());
  std::vector<CaptionedImage> out;
  std::map<int64_t, size_t> index;
  for (size_t i = 0; i < doc["images"].size(); ++i) {
    const auto& im = doc["images"][i];
    SKIFF_CHECK(im.is_object() && im.contains("id") && im["id"].is_number_integer() && im.contains("file_name") &&
                    im["file_name"].is_string(),
                "{}: images[{}]: expected an integer 'id' and a string 'file_name'", file.string(), i);
    const auto [it, fresh] = index.emplace(im["id"].get<int64_t>(), out.size());
    SKIFF_CHECK(fresh, "{}: images[{}]: id {} appears twice", file.string(), i, it->first);
    out.push_back({image_dir / im["file_name"].get<std::string>(), {},
                   im.contains("label") && im["label"].is_string() ? im["label"].get<std::string>() : ""});
  }
  for (size_t i = 0; i < doc["annotations"].size(); ++i) {
    const auto& a = doc["annotations"][i];
    SKIFF_CHECK(a.is_object() && a.contains("image_id") && a["image_id"].is_number_integer() &&
                    a.contains("caption") && a["caption"].is_string(),
                "{}: annotations[{}]: expected an integer 'image_id' and a string 'caption'", file.string(), i);
    auto it = index.find(a["image_id"].get<int64_t>());
    SKIFF_CHECK(it != index.end(), "{}: annotations[{}]: image_id {} is not in 'images'", file.string(), i,
                a["image_id"].get<int64_t>());
    out[it->second].captions.push_back(a["caption"].get<std::string>());
  }
  for (const auto& im : out)
    SKIFF_CHECK(!im.captions.empty(), "{}: image '{}' has no caption", file.string(), im.file.filename().string());
  return out;
}

std::vector<CaptionedImage> read_list(const fs::path& file, const std::string& text, const fs::path& image_dir) {
  const fs::path root = image_dir.empty() ? file.parent_path() : image_dir;
  std::vector<CaptionedImage> out;
  std::map<std::string, size_t> index;
  text::for_each_line(text, [&](std::string_view line, size_t line_no) {
    if (line.empty() || line[0] == '#') return;
    const size_t tab = line.find('\t');
    SKIFF_CHECK(tab != std::string_view::npos && tab > 0 && tab + 1 < line.size(),
                "{}: line {}: expected 'image<TAB>caption'", file.string(), line_no);
    const std::string image(line.substr(0, tab));
    auto [it, fresh] = index.emplace(image, out.size());
    if (fresh) out.push_back({root / image, {}, ""});
    out[it->second].captions.emplace_back(line.substr(tab + 1));
  });
  return out;
}

}  // namespace

std::vector<CaptionedImage> read_caption_file(const fs::path& file, const fs::path& image_dir) {
  const std::string text = io::read_file(file);
  std::vector<CaptionedImage> out =
      file.extension() == ".json" ? read_coco(file, text, image_dir) : read_list(file, text, image_dir);
  SKIFF_CHECK(!out.empty(), "{}: no captioned images", file.string());
  return out;
}

Tensor load_images(const std::vector<CaptionedImage>& images, int64_t size) {
  SKIFF_CHECK(size > 0, "load_images: size must be positive, got {}", size);
  Tensor out = empty({int64_t(images.size()), 3, size, size});
  float* dst = out.data<float>();
  const int64_t plane = size * size;
  for (size_t i = 0; i < images.size(); ++i) {
    cv::Mat img = data::read_image_file(images[i].file.string());
    if (img.rows != size || img.cols != size) cv::resize(img, img, cv::Size(int(size), int(size)), 0, 0, cv::INTER_AREA);
    for (int64_t y = 0; y < size; ++y)
      for (int64_t x = 0; x < size; ++x) {
        const cv::Vec3b p = img.at<cv::Vec3b>(int(y), int(x));
        for (int c = 0; c < 3; ++c)  // BGR -> RGB planes
          dst[(int64_t(i) * 3 + c) * plane + y * size + x] = (float(p[2 - c]) / 255.f - kImageMean) / kImageStd;
      }
  }
  return out;
}

std::vector<std::string> read_text_lines(const fs::path& file) {
  std::vector<std::string> out;
  text::for_each_line(io::read_file(file), [&](std::string_view line, size_t) {
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) return;
    out.emplace_back(line.substr(first, line.find_last_not_of(" \t") - first + 1));
  });
  SKIFF_CHECK(!out.empty(), "{}: no non-blank line", file.string());
  return out;
}

}  // namespace skiff::multimodal
