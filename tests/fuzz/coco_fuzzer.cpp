// COCO JSON as the detection recipes and `skiff det eval` read it: a ground-truth file
// and a results file (two parts, fuzz_support.h), then the COCO evaluation over both.
#include "suites/detection/coco_dataset.h"
#include "suites/detection/coco_eval.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parts = skiff::fuzz::split_parts(skiff::fuzz::as_text(data, size), 2);
  skiff::fuzz::expect_clean_errors("coco", [&] {
    auto gt = skiff::detection::parse_coco_dataset(parts[0], "gt.json");
    auto results = skiff::detection::parse_coco_results(parts[1], "results.json", gt);
    auto eval = skiff::detection::evaluate_coco(gt, results);
    (void)skiff::detection::coco_summary_text(eval);
  });
  return 0;
}
