// The model-zoo index (model_zoo/index.yaml, or SKIFF_ZOO_INDEX): the YAML, its schema,
// names, sizes, sha256 sums and source URIs.
#include "framework/zoo/index.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  skiff::fuzz::expect_clean_errors("zoo_index", [&] {
    auto index = skiff::zoo::parse_index(std::string(skiff::fuzz::as_text(data, size)), "fuzz/index.yaml");
    for (const auto& model : index.models) {
      (void)model.total_size();
      (void)index.get(model.name);
    }
  });
  return 0;
}
