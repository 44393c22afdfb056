// What the OCR suite adds to skiff: the runners of its training recipes
// (Architecture.model_type rec and det) and, through them, its recipe
// components (architectures and their parts, losses, metrics, post-processing,
// datasets, transforms). Linking skiff_suite_ocr is all it takes; nothing
// outside suites/ocr names them. The CLI (skiff ocr, skiff bench ocr) is in cli/.
#include "framework/train/recipe_runner.h"
#include "suites/ocr/train/det_recipe.h"
#include "suites/ocr/train/rec_recipe.h"

SKIFF_REGISTER_RECIPE_RUNNER("rec", skiff::ocr::RecRecipeRunner);
SKIFF_REGISTER_RECIPE_RUNNER("det", skiff::ocr::DetRecipeRunner);

namespace {
// The schemas register every component with its constructor, so listings
// (skiff config, the registry test) see them all from the start.
const bool kComponentsRegistered = [] {
  skiff::ocr::rec_recipe_schema();
  skiff::ocr::det_recipe_schema();
  return true;
}();
}  // namespace
