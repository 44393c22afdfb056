#pragma once
/// \file rec_data.h
/// Text-line recognition labels in PaddleOCR's format and their encoding for
/// CTC (the CTCLabelEncode transform, transforms.h, uses CharEncoder).
///
/// Label files hold one sample per line, `image_path<TAB>transcription`, the
/// path relative to the dataset's data_dir (PaddleOCR SimpleDataSet).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "suites/ocr/ctc_decode.h"

namespace skiff::ocr {

/// One labelled line.
struct RecSample {
  std::string image;  ///< full path (data_dir joined)
  std::string text;
};

/// Reads label files. \throws IoError naming a missing label file, ValueError
/// with file:line for a line without a tab or with an empty path.
std::vector<RecSample> read_rec_labels(const std::vector<std::string>& label_files, const std::string& data_dir);

/// Maps text to class indices of a Charset (blank = 0 is never produced).
class CharEncoder {
 public:
  explicit CharEncoder(const Charset& charset);
  /// One index per UTF-8 character found in the dictionary; others are dropped
  /// (`dropped` counts them when given).
  std::vector<int64_t> encode(const std::string& text, int* dropped = nullptr) const;

 private:
  std::map<std::string, int64_t> index_;
};

/// Splits UTF-8 text into characters (code points). Invalid bytes count as one character each.
std::vector<std::string> utf8_chars(const std::string& text);

}  // namespace skiff::ocr
