// Training checkpoints as `skiff train --resume` reads them: safetensors with skiff's
// metadata (step, optimizer and scheduler JSON, RNG and data-loader states, metrics).
#include "framework/io/checkpoint.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto path = skiff::fuzz::write_scratch_file("ckpt.safetensors", skiff::fuzz::as_text(data, size));
  skiff::fuzz::expect_clean_errors("checkpoint", [&] {
    skiff::io::Checkpoint ckpt = skiff::io::load_checkpoint(path);
    volatile int64_t sink = ckpt.step;
    for (const auto* group : {&ckpt.model, &ckpt.optimizer, &ckpt.extra})
      for (const auto& [name, tensor] : *group)
        if (tensor.nbytes() > 0) sink = sink + static_cast<const uint8_t*>(tensor.data_ptr())[tensor.nbytes() - 1];
  });
  return 0;
}
