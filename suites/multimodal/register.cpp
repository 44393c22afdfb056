// What the multimodal suite adds to skiff's recipe commands: the runners of `task: clip` and `task: caption` recipes
// (skiff train / eval / predict / export). The CLI (skiff mm) is in cli/.
#include "framework/train/recipe_runner.h"
#include "suites/multimodal/train/caption_recipe.h"
#include "suites/multimodal/train/clip_recipe.h"

SKIFF_REGISTER_RECIPE_RUNNER("clip", skiff::multimodal::ClipRecipeRunner);
SKIFF_REGISTER_RECIPE_RUNNER("caption", skiff::multimodal::CaptionRecipeRunner);
