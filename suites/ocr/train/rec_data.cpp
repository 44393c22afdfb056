#include "suites/ocr/train/rec_data.h"

#include <filesystem>
#include <fstream>

#include <opencv2/imgproc.hpp>

#include "framework/core/error.h"
#include "suites/ocr/pipeline.h"
#include "suites/ocr/preprocess.h"
#include "suites/ocr/train/label_file.h"

namespace skiff::ocr {

namespace fs = std::filesystem;

std::vector<RecSample> read_rec_labels(const std::vector<std::string>& label_files, const std::string& data_dir) {
  std::vector<RecSample> out;
  read_label_lines(label_files, data_dir, "image_path<TAB>text",
                   [&](const LabelLine& l) { out.push_back({l.image, l.label}); });
  return out;
}

std::vector<std::string> utf8_chars(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    auto c = uint8_t(text[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    n = std::min(n, text.size() - i);
    out.push_back(text.substr(i, n));
    i += n;
  }
  return out;
}

CharEncoder::CharEncoder(const Charset& charset) {
  for (size_t i = 1; i < charset.size(); ++i) index_.emplace(charset.at(i), int64_t(i));  // first entry wins
}

std::vector<int64_t> CharEncoder::encode(const std::string& text, int* dropped) const {
  std::vector<int64_t> out;
  for (const auto& ch : utf8_chars(text)) {
    auto it = index_.find(ch);
    if (it != index_.end())
      out.push_back(it->second);
    else if (dropped)
      ++*dropped;
  }
  return out;
}

}  // namespace skiff::ocr
