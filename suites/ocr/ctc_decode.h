#pragma once
/// \file ctc_decode.h
/// Character set and greedy CTC decoding of the PP-OCR recognizer output, as
/// PaddleOCR's CTCLabelDecode (ppocr/postprocess/rec_postprocess.py).

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace skiff::ocr {

/// The recognizer's class list, laid out as CTCLabelDecode builds it:
/// index 0 = the CTC blank, then one entry per dictionary line (in file order),
/// then " " when use_space_char is set. size() equals the number of classes the
/// model outputs (6625 for ppocr_keys_v1.txt with the space).
class Charset {
 public:
  /// Builds a charset from dictionary entries (without the blank).
  explicit Charset(std::vector<std::string> entries, bool use_space_char = true);

  /// Loads a PaddleOCR dictionary file: one UTF-8 entry per '\n'-separated line,
  /// '\r' and '\n' stripped from both ends of each line (as Python's
  /// line.strip("\n").strip("\r\n")); empty lines are kept as empty entries, as
  /// PaddleOCR keeps them, so indices stay aligned with the model.
  /// \throws IoError naming the file if it cannot be read, is empty, or is not
  ///   valid UTF-8 (the message gives the line).
  static Charset load(const std::filesystem::path& dict_path, bool use_space_char = true);

  /// Number of classes, blank included.
  std::size_t size() const { return chars_.size(); }
  /// Class `i` as UTF-8 ("" for the blank). \throws IndexError if i >= size().
  const std::string& at(std::size_t i) const;
  /// Index of the CTC blank (always 0).
  static constexpr std::size_t blank() { return 0; }

 private:
  std::vector<std::string> chars_;
};

/// A decoded text line and its confidence.
struct DecodedText {
  std::string text;
  float score = 0.0f;
};

/// Greedy CTC decoding of one sequence `probs` [timesteps, classes] (row-major
/// float32 softmax output): per step take the argmax (first on ties), keep a
/// step when its index differs from the previous step's and is not the blank,
/// and concatenate the kept characters. score = mean of the kept steps' max
/// probabilities, summed in float32 pairwise like numpy.mean; 0 if none is kept.
/// \throws ShapeError if classes != charset.size() (both numbers in the message).
/// \throws ValueError if probs is null while timesteps > 0, or timesteps < 0.
DecodedText ctc_greedy_decode(const float* probs, int timesteps, int classes, const Charset& charset);

}  // namespace skiff::ocr
