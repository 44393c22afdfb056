#pragma once
/// \file synth.h
/// Synthetic text images for the OCR suite: randomised scenes of text lines
/// with their boxes (detection ground truth), the bundled sample receipt, and
/// a writer for small PaddleOCR-format datasets.
///
/// Everything is deterministic: the same options and seed give the same
/// pixels on the same font file. Text comes from a built-in corpus (product
/// names, prices, dates, addresses, short sentences in Chinese and English,
/// digits and mixtures) or from SynthOptions::texts. Glyphs are drawn with
/// Font::cjk() (see font.h for how the font is found).

#include <array>
#include <cstdint>
#include <opencv2/core.hpp>
#include <string>
#include <vector>

namespace skiff::ocr {

/// One rendered line of text.
struct SynthLine {
  /// The transcription (UTF-8, no leading/trailing spaces).
  std::string text;
  /// The line's box in image pixels: four corners clockwise from the top-left
  /// *as seen in the image* (top-left, top-right, bottom-right, bottom-left),
  /// whatever the reading direction. The box is the ink box padded by a few
  /// pixels, then transformed with the image when it is rotated.
  std::array<cv::Point2f, 4> quad;
  /// True when the line was rotated 180° in place: it reads from quad[2]
  /// towards quad[3], i.e. it must be turned around before recognition.
  bool upside_down = false;
};

/// An image and the lines drawn on it.
struct SynthImage {
  /// BGR, CV_8UC3.
  cv::Mat image;
  /// Lines in the order they were laid out (top to bottom before rotation).
  std::vector<SynthLine> lines;
};

/// Knobs of render_synth_image(). Ranges are inclusive; each image draws its
/// own values from them.
struct SynthOptions {
  /// Canvas size before rotation. A rotated image grows to hold the whole
  /// rotated canvas (its size is the rotated canvas's bounding box).
  int width = 640;
  int height = 480;
  /// Number of lines attempted; fewer are drawn when the canvas is full.
  int min_lines = 3;
  int max_lines = 8;
  /// Font size range (em size in pixels).
  int min_font_px = 20;
  int max_font_px = 48;
  /// The whole image is rotated by an angle drawn from [-max, max] degrees.
  float max_rotation_deg = 5.0f;
  /// Probability that a line is rotated 180° in place.
  float upside_down_prob = 0.15f;
  /// Gaussian pixel noise with a sigma drawn from [0, max] (in 0..255 units).
  float max_noise_sigma = 6.0f;
  /// Gaussian blur (sigma in pixels) of the whole image before the noise; 0: none.
  float blur_sigma = 0.0f;
  /// Probability of a two-colour linear gradient background (else uniform).
  float gradient_prob = 0.5f;
  /// Probability of light text on a dark background (else dark on light).
  float dark_background_prob = 0.25f;
  /// When non-empty, line texts are drawn from this list instead of the
  /// built-in corpus. Entries must be non-empty UTF-8 without tabs/newlines.
  std::vector<std::string> texts;
};

/// Renders one synthetic image. Every line is separated from its neighbours
/// (boxes do not overlap), lies fully inside the image and keeps a luminance
/// contrast of at least 100 (of 255) between text and background before noise.
/// A line too long for the canvas is shrunk to the smallest font size and
/// then cut (by code point). At least one line is drawn.
/// \throws ValueError for inconsistent options (sizes < 64, empty ranges,
///   probabilities outside [0, 1], rotation above 45°, a font range outside
///   [8, 256], or a canvas too small for one line at the smallest size).
/// \throws IoError if the font cannot be found or loaded.
SynthImage render_synth_image(const SynthOptions& options, uint64_t seed);

/// Renders the repository's sample image: a clean shop receipt about 800 px
/// wide (store name, address, phone, an item table, total, date and time, an
/// English line and a thank-you line) in dark text on white, without rotation
/// or noise. The lines are in reading order, one box per line;
/// assets/samples/ocr_sample.{png,txt} hold the committed rendering and texts.
SynthImage render_sample_receipt();

/// Returns the upright image of one line: the quad is rectified with a
/// perspective warp (as PaddleOCR crops detected boxes) and an upside-down
/// line is turned by 180°. CV_8UC3, height and width from the quad's sides.
cv::Mat crop_synth_line(const cv::Mat& image, const SynthLine& line);

/// Writes `count` images rendered with seeds derived from `seed` into `dir`
/// (created if needed), in PaddleOCR's label formats:
///   - `img_00000.jpg`, `img_00001.jpg`, ...
///   - `det_gt.txt`: one line per image, `img_00000.jpg<TAB>[{"transcription":
///     "...", "points": [[x, y], [x, y], [x, y], [x, y]]}, ...]` (points are
///     integers, clockwise from the top-left as in SynthLine::quad);
///   - `crops/img_00000_000.jpg`, ...: every line cropped upright with
///     crop_synth_line();
///   - `rec_gt.txt`: `crops/img_00000_000.jpg<TAB><text>` per crop.
/// Every file is written atomically (temporary file + rename), so an
/// interrupted run leaves no partial file; label files are written last.
/// \throws ValueError if count < 0 or the options are invalid.
/// \throws IoError if a file cannot be written or an image cannot be encoded.
void write_synth_dataset(const std::string& dir, int count, uint64_t seed,
                         const SynthOptions& options = {});

/// The built-in corpus generator: a random line of text (Chinese, English,
/// digits or mixed) drawn with `seed`. Exposed for tests and tools.
std::string synth_corpus_line(uint64_t seed);

}  // namespace skiff::ocr
