#pragma once
/// \file rec_data.h
/// Text-line recognition data in PaddleOCR's format, for training and
/// evaluating CTC recognizers.
///
/// Label files hold one sample per line, `image_path<TAB>transcription`, the
/// path relative to the dataset's data_dir (PaddleOCR SimpleDataSet). Samples
/// are prepared as PaddleOCR's rec pipeline does: decode (BGR), optional
/// augmentation (RecAug), CTC label encoding (characters missing from the
/// dictionary are dropped; a line left empty, or longer than max_text_length,
/// is skipped), and RecResizeImg: resize to the model height keeping the
/// aspect ratio (at most the set width), normalize to [-1, 1], pad right.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "framework/data/dataset.h"
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

struct RecDataOptions {
  int height = 48;            ///< RecResizeImg image_shape[1]
  int width = 320;            ///< RecResizeImg image_shape[2]
  int max_text_length = 25;   ///< Global.max_text_length
  bool augment = false;       ///< RecAug: blur, contrast/brightness, noise, small crops
  double augment_prob = 0.4;  ///< chance of each distortion
};

/// A recognition dataset: get() gives {"image": float32 [3, H, W], "label":
/// int64 [max_text_length] (0-padded), "length": int64 []}.
class RecDataset : public data::Dataset {
 public:
  /// Encodes every label up front and drops unusable lines (counted in
  /// skipped()). \throws ValueError if no sample is left, IoError naming the
  /// first image that does not exist.
  RecDataset(std::vector<RecSample> samples, const Charset& charset, RecDataOptions options);

  int64_t size() const override { return int64_t(samples_.size()); }
  data::Example get(int64_t index) const override;
  data::Example get(int64_t index, Generator& gen) const override;

  const std::vector<RecSample>& samples() const { return samples_; }
  int64_t skipped() const { return skipped_; }
  const RecDataOptions& options() const { return options_; }

 private:
  std::vector<RecSample> samples_;
  std::vector<std::vector<int64_t>> labels_;
  RecDataOptions options_;
  int64_t skipped_ = 0;
};

}  // namespace skiff::ocr
