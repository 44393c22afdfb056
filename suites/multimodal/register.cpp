// What the multimodal suite adds to skiff's recipe commands: the runner of `task: clip` recipes
// (skiff train / eval / predict / export). The CLI (skiff mm) is in cli/.
#include "framework/train/recipe_runner.h"
#include "suites/multimodal/train/clip_recipe.h"

SKIFF_REGISTER_RECIPE_RUNNER("clip", skiff::multimodal::ClipRecipeRunner);
