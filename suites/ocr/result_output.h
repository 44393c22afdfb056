#pragma once
/// \file result_output.h
/// The ways an OCR result leaves the pipeline: PaddleOCR 3.x's JSON keys (dt_polys,
/// rec_texts, rec_scores, ...), so code that reads PaddleOCR's output reads skiff's
/// (`skiff ocr --json`, the *_res.json files of --save_path, `skiff serve`'s
/// prunedResult), and the picture of the kept lines drawn on the image.

#include <opencv2/core.hpp>

#include <nlohmann/json.hpp>

#include "suites/ocr/pipeline.h"

namespace skiff::ocr {

/// Every key but input_path (the caller's to add).
nlohmann::json result_json(const OcrResult& r);

/// The image with the kept lines drawn: boxes, and the text beside (draw_ocr_result).
cv::Mat draw_result_lines(const cv::Mat& image, const OcrResult& r);

}  // namespace skiff::ocr
