// What the NLP suite adds to skiff's recipe commands: the runners of `task: causal_lm`
// (decoder pre-training and LoRA), `task: masked_lm`
// (encoder pre-training) and `task: text_classification` recipes (skiff train / eval /
// predict / export). The CLI (skiff nlp) is in cli/.
#include "framework/train/recipe_runner.h"
#include "suites/nlp/decoder/causal_lm_recipe.h"
#include "suites/nlp/encoder/classifier_recipe.h"
#include "suites/nlp/encoder/mlm_recipe.h"

SKIFF_REGISTER_RECIPE_RUNNER("causal_lm", skiff::nlp::CausalLmRecipeRunner);
SKIFF_REGISTER_RECIPE_RUNNER("masked_lm", skiff::nlp::MaskedLmRecipeRunner);
SKIFF_REGISTER_RECIPE_RUNNER("text_classification", skiff::nlp::TextClassificationRecipeRunner);
