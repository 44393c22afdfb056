// safetensors from memory (weights, exported models), then every tensor read to its
// last byte, so a header that lies about offsets shows up as an out-of-bounds read.
#include "framework/io/safetensors.h"
#include "tests/fuzz/fuzz_support.h"

namespace {
uint8_t touch_bytes(const skiff::Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.data_ptr());
  uint8_t sum = 0;
  for (int64_t i = 0; i < t.nbytes(); ++i) sum = uint8_t(sum + p[i]);
  return sum;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  skiff::fuzz::expect_clean_errors("safetensors", [&] {
    auto file = skiff::io::parse_safetensors(skiff::fuzz::as_text(data, size), "fuzz.safetensors");
    volatile uint8_t sink = 0;
    for (const auto& [name, tensor] : file.tensors) sink = uint8_t(sink + touch_bytes(tensor));
  });
  return 0;
}
