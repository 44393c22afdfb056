// Image decoding as `skiff ocr photo.jpg` and every data loader reach it: PNG, JPEG
// (with its EXIF orientation) and BMP bytes through data::decode_image.
#include <opencv2/core.hpp>

#include "framework/data/image_io.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  skiff::fuzz::expect_clean_errors("image", [&] {
    cv::Mat image = skiff::data::decode_image({data, size}, "fuzz input");
    // What the decoder promises its callers.
    if (image.type() != CV_8UC3 || image.empty() || int64_t(image.rows) * image.cols > skiff::data::kMaxImagePixels)
      skiff::fuzz::report_foreign_exception("image", "broken promise", "decode_image returned an unexpected Mat");
  });
  return 0;
}
