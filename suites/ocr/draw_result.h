#pragma once
/// \file draw_result.h
/// Visualisation of OCR results in the style of PaddleOCR's draw_ocr_box_txt.

#include <array>
#include <opencv2/core.hpp>
#include <string>
#include <vector>

namespace skiff::ocr {

/// Draws detected boxes and their recognised texts side by side.
///
/// Returns a CV_8UC3 image of size [image.rows, 2 * image.cols]:
///   - left half: `image` with every box filled half-transparently and
///     outlined in its own colour;
///   - right half: a white canvas with the same outlines, and each text drawn
///     in black with the CJK font (font.h), sized to fill its box and warped
///     into the box, so rotated boxes get rotated text. Boxes much taller than
///     wide (height > 1.5 x width) get their characters stacked vertically.
/// Box colours are pseudo-random but depend only on the box index, so the
/// same input always gives the same picture.
///
/// \param image  CV_8UC3 (BGR), CV_8UC1 or CV_8UC4 (converted to BGR).
/// \param quads  boxes in image pixels, clockwise from the top-left corner.
/// \param texts  one text per box (UTF-8); an empty text draws only the box.
/// \param scores empty, or one recognition score per box.
/// \param drop_score boxes whose score is below it are not drawn (PaddleOCR's
///   default is 0.5); ignored when `scores` is empty.
/// \throws ValueError if image is empty or of another type, or if texts
///   (and scores, when not empty) do not have one entry per box.
/// \throws IoError if the font cannot be found or loaded.
cv::Mat draw_ocr_result(const cv::Mat& image, const std::vector<std::array<cv::Point2f, 4>>& quads,
                        const std::vector<std::string>& texts, const std::vector<float>& scores,
                        float drop_score = 0.5f);

/// Draws detected boxes as PaddleOCR's draw_det_res does: each quad outlined in
/// one colour (BGR 0, 255, 255), 2 px wide, on a copy of `image`.
/// \param image  CV_8UC3 (BGR), CV_8UC1 or CV_8UC4 (converted to BGR).
/// \throws ValueError if image is empty or of another type.
cv::Mat draw_det_result(const cv::Mat& image, const std::vector<std::array<cv::Point2f, 4>>& quads);

}  // namespace skiff::ocr
