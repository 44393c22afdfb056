// `skiff nlp classify`: label texts or mail files with a trained encoder classifier
// (suites/nlp/encoder/): a model directory, or the run directory of a recipe.
//   skiff nlp classify --model DIR --text "..."     one line per input: label, probability, input
//   skiff nlp classify -c configs/nlp/spam_classifier.yml --json mail1.eml mail2.eml
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "framework/cli/command_registry.h"
#include "framework/core/error.h"
#include "framework/core/threading.h"
#include "framework/io/file.h"
#include "framework/train/recipe_runner.h"
#include "suites/nlp/encoder/classifier_recipe.h"
#include "suites/nlp/encoder/mail_corpus.h"
#include "suites/nlp/encoder/text_classifier.h"

namespace skiff::nlp {
namespace {
namespace fs = std::filesystem;

struct Options {
  std::string model, recipe;
  std::vector<std::string> overrides, texts, files;
  size_t max_bytes = 4000;
  int threads = 0;
  bool json = false;
};

fs::path model_dir(const Options& o) {
  SKIFF_CHECK(o.model.empty() != o.recipe.empty(), "nlp classify: give either --model DIR or -c RECIPE");
  if (!o.model.empty()) return o.model;
  train::LoadedRecipe loaded = train::load_recipe(o.recipe, o.overrides);
  SKIFF_CHECK(train::recipe_task(loaded.recipe) == "text_classification",
              "nlp classify: {} is a '{}' recipe; classify needs a text_classification recipe", o.recipe,
              train::recipe_task(loaded.recipe));
  return classifier_model_dir(loaded.recipe);
}

void run_classify(const Options& o) {
  if (o.threads > 0) set_num_threads(o.threads);
  SKIFF_CHECK(!o.texts.empty() || !o.files.empty(), "nlp classify: nothing to classify (give --text or files)");
  std::vector<std::string> inputs, names;
  for (const std::string& t : o.texts) {
    inputs.push_back(t);
    names.push_back(t);
  }
  for (const std::string& f : o.files) {
    SKIFF_CHECK_T(IoError, fs::is_regular_file(f), "nlp classify: {}: no such file", f);
    std::string raw = io::read_file(f);
    // A mail is read as training read it: Subject and body, other headers dropped.
    inputs.push_back(looks_like_mail(raw) ? mail_text(raw, o.max_bytes) : raw);
    names.push_back(f);
  }
  TextClassifier classifier(model_dir(o));
  auto results = classifier.classify(inputs);
  for (size_t i = 0; i < results.size(); ++i) {
    const Classification& c = results[i];
    if (o.json) {
      nlohmann::json probs;
      for (size_t k = 0; k < c.probabilities.size(); ++k)
        probs[classifier.config().labels[k]] = std::round(c.probabilities[k] * 1e4) / 1e4;
      nlohmann::json j{{"input", names[i]}, {"label", c.label}, {"probability", std::round(c.probability * 1e4) / 1e4},
                       {"probabilities", probs}};
      fmt::print("{}\n", j.dump());
    } else {
      std::string shown = names[i].size() > 60 ? names[i].substr(0, 57) + "..." : names[i];
      for (char& ch : shown)
        if (ch == '\n' || ch == '\t') ch = ' ';
      fmt::print("{}\t{:.4f}\t{}\n", c.label, c.probability, shown);
    }
  }
}

void add_classify_command(CLI::App& nlp) {
  auto o = std::make_shared<Options>();
  auto* cmd = nlp.add_subcommand("classify", "Label texts or mail files with a trained encoder classifier");
  cmd->footer(
      "Output: one line per input: label, its probability and the input (or --json: one object per line).\n"
      "A file that starts like a mail (a 'From ' line or 'Name: value' headers) is read as training read the\n"
      "mails: the Subject and the body; other files are classified as they are.\n"
      "Examples:\n"
      "  skiff nlp classify --model output/nlp/spam_classifier --text 'Subject: lunch?'\n"
      "  skiff nlp classify -c configs/nlp/spam_classifier.yml --json message.eml");
  cmd->add_option("--model,-m", o->model, "A model directory (a classifier run's save_dir, or skiff export's)");
  cmd->add_option("-c,--config", o->recipe, "A text_classification recipe: its save_dir is the model");
  cmd->add_option("-o,--override", o->overrides, "Recipe overrides key=value (with -c)");
  cmd->add_option("--text", o->texts, "A text to classify (repeatable)");
  cmd->add_option("files", o->files, "Text or mail files to classify");
  cmd->add_option("--max-bytes", o->max_bytes, "Bytes of each mail read (default 4000, as the recipe)");
  cmd->add_option("--threads", o->threads, "Threads (default: all cores)");
  cmd->add_flag("--json", o->json, "One JSON object per input: {input, label, probability, probabilities}");
  cmd->callback([o] { run_classify(*o); });
}

}  // namespace
}  // namespace skiff::nlp

SKIFF_REGISTER_COMMAND("nlp classify", skiff::nlp::add_classify_command);
