// What the OCR suite adds to skiff: the runners of its training recipes
// (Architecture.model_type rec and det). Linking skiff_suite_ocr is all it takes;
// nothing outside suites/ocr names them.
#include "framework/train/recipe_runner.h"
#include "suites/ocr/train/det_recipe.h"
#include "suites/ocr/train/rec_recipe.h"

SKIFF_REGISTER_RECIPE_RUNNER("rec", skiff::ocr::RecRecipeRunner);
SKIFF_REGISTER_RECIPE_RUNNER("det", skiff::ocr::DetRecipeRunner);
