#pragma once
/// \file ctc_decode.h
/// Character set and greedy CTC decoding of the PP-OCR recognizer output, as
/// PaddleOCR's CTCLabelDecode (ppocr/postprocess/rec_postprocess.py), and the
/// restoration of the word spaces the recognizer drops in Latin text.

#include <cstddef>
#include <filesystem>
#include <optional>
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
  /// Index of the space class: the last " " entry (the one use_space_char appends,
  /// or a " " dictionary line); -1 when the charset has none.
  int space() const { return space_; }

 private:
  std::vector<std::string> chars_;
  int space_ = -1;
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

/// One character kept by greedy CTC decoding, with the run of timesteps whose
/// argmax is that character.
struct CtcChar {
  int cls = 0;       ///< class index (never the blank)
  int first = 0;     ///< first timestep of the run (the step greedy decoding keeps)
  int last = 0;      ///< last timestep of the run
  float prob = 0;    ///< max probability at `first`
};

/// The greedy CTC path of one sequence: what ctc_greedy_decode() keeps, and where.
struct CtcAlignment {
  int timesteps = 0;
  std::vector<CtcChar> chars;       ///< kept characters, in order
  std::vector<float> space_probs;   ///< [timesteps] probability of the space class; empty without one
};

/// Greedy CTC alignment of `probs` [timesteps, classes], with the same argmax
/// rule (first on ties), checks and exceptions as ctc_greedy_decode().
CtcAlignment ctc_greedy_align(const float* probs, int timesteps, int classes, const Charset& charset);

/// When ctc_text() restores a word space between two characters.
///
/// PP-OCRv4's Chinese recognizer, trained mostly on Chinese, often puts the CTC
/// blank, not its space class, on the gap between two Latin words: greedy decoding
/// then reads "Please queuehere". The gap is still visible in the path. The space
/// class keeps some probability on the blank steps there (typically 0.01 to 0.5,
/// against below 0.001 between two letters of a word), and the gap is wider than
/// the line's character pitch. A space goes between two ASCII characters (letters,
/// digits, punctuation) when
///   - the space class's largest probability on the blank steps strictly between
///     them reaches min_space_prob, or
///   - it reaches weak_space_prob and the distance between the two characters'
///     first steps is at least min_pitch_ratio times the line's pitch (the median
///     of those distances between neighbouring ASCII characters) and at least
///     min_gap_steps: weak evidence at a visibly wide gap, as between the columns
///     of a receipt ("2 15.00 30.00").
/// Never next to a CJK or other non-ASCII character: Chinese is set without
/// spaces. The width alone is not used: on rendered English lines it put as many
/// spaces inside words as between them. Defaults tuned on rendered lines
/// (bench/ocr_word_spaces.sh; docs/ocr.md#word-spaces).
struct WordSpaceParams {
  float min_space_prob = 0.01f;
  float weak_space_prob = 0.001f;
  float min_pitch_ratio = 1.7f;
  int min_gap_steps = 3;
};

/// The text of `alignment` and ctc_greedy_decode()'s score. With `word_spaces`,
/// word spaces are restored in the text (see WordSpaceParams): spaces the path
/// already has are kept and never doubled; a charset without a space class gives
/// no evidence, so nothing is restored. Restored spaces do not count in the score.
DecodedText ctc_text(const CtcAlignment& alignment, const Charset& charset,
                     const std::optional<WordSpaceParams>& word_spaces = std::nullopt);

}  // namespace skiff::ocr
