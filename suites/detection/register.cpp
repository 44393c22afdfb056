// What the detection suite adds to skiff's recipe commands: the runner of
// `task: detection` recipes (skiff train / eval / predict / export). Linking
// skiff_suite_detection is all it takes. The CLI (skiff det) is in cli/.
#include "framework/train/recipe_runner.h"
#include "suites/detection/train/det_recipe.h"

SKIFF_REGISTER_RECIPE_RUNNER("detection", skiff::detection::DetectionRecipeRunner);
