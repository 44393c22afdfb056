// PaddleOCR label files (`image<TAB>label` lines) as the OCR recipes read them: a
// recognition label is text, a detection label the JSON list of regions after the tab.
#include "suites/ocr/train/det_data.h"
#include "suites/ocr/train/label_file.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = skiff::fuzz::write_scratch_file("labels/train.txt", skiff::fuzz::as_text(data, size)).string();
  skiff::fuzz::expect_clean_errors("ocr_labels", [&] {
    skiff::ocr::read_label_lines({file}, "images", "image<TAB>label", [](const skiff::ocr::LabelLine& line) {
      skiff::fuzz::expect_clean_errors("ocr_labels", [&] {
        (void)skiff::ocr::parse_det_label(line.label, line.file + ":" + std::to_string(line.line));
      });
    });
  });
  return 0;
}
