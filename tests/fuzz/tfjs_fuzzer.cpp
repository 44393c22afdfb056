// TF.js graph models (model.json + weight shards) as the detection suite imports them:
// the JSON, the weights manifest, the shards, the op translation, then the graph passes
// and the compiled plan. The input has two parts (fuzz_support.h): model.json and the
// shard group1-shard1of1.bin.
#include "framework/engine/predictor.h"
#include "framework/graph/tfjs_import.h"
#include "framework/tensor/storage.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  skiff::set_max_tensor_bytes(int64_t(256) << 20);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parts = skiff::fuzz::split_parts(skiff::fuzz::as_text(data, size), 2);
  skiff::fuzz::remove_scratch("tfjs");
  auto model = skiff::fuzz::write_scratch_file("tfjs/model.json", parts[0]);
  skiff::fuzz::write_scratch_file("tfjs/group1-shard1of1.bin", parts[1]);
  skiff::fuzz::expect_clean_errors("tfjs", [&] {
    skiff::engine::Predictor predictor(skiff::graph::import_tfjs(model.string()));
    (void)predictor.num_steps();
  });
  // The caching allocator keeps what a run freed, by design; across a million different
  // models that is the high-water mark of every shape seen, which libFuzzer's RSS limit
  // takes for a leak. Hand it back past 512 MiB (each time would cost 2/3 of the speed).
  if (skiff::cpu_allocator_stats().reserved_bytes > (int64_t(512) << 20)) skiff::cpu_allocator_empty_cache();
  return 0;
}
