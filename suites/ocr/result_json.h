#pragma once
/// \file result_json.h
/// An OCR result in PaddleOCR 3.x's JSON keys (dt_polys, rec_texts, rec_scores, ...),
/// so code that reads PaddleOCR's output reads skiff's: `skiff ocr --json`, the
/// *_res.json files of --save_path, and `skiff serve`'s prunedResult.

#include <nlohmann/json.hpp>

#include "suites/ocr/pipeline.h"

namespace skiff::ocr {

/// Every key but input_path (the caller's to add).
nlohmann::json result_json(const OcrResult& r);

}  // namespace skiff::ocr
