// Caption files as the multimodal recipes read them: COCO captions JSON (first byte even)
// or the `image<TAB>caption` list (odd).
#include "suites/multimodal/caption_dataset.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* name = data[0] % 2 == 0 ? "captions/captions.json" : "captions/captions.tsv";
  auto file = skiff::fuzz::write_scratch_file(name, skiff::fuzz::as_text(data + 1, size - 1));
  skiff::fuzz::expect_clean_errors("captions", [&] {
    (void)skiff::multimodal::read_caption_file(file, skiff::fuzz::scratch_dir() / "captions");
  });
  return 0;
}
