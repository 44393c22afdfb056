// OCR training recipes: label files, the metric, recipe validation (every
// shipped config), a short CRNN run that must lower its loss and export an ONNX
// model matching the eager one, and a short fine-tune of the zoo PP-OCRv4 graph.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "suites/ocr/rec_inference_config.h"
#include "suites/ocr/synth.h"
#include "suites/ocr/train/rec_data.h"
#include "suites/ocr/train/rec_metric.h"
#include "framework/train/recipe_runner.h"
#include "suites/ocr/train/rec_recipe.h"

namespace skiff::ocr {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  fs::path d = fs::temp_directory_path() / fmt::format("skiff_ocr_train_{}_{}", ::getpid(), name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::vector<double> logged_losses(const fs::path& metrics) {
  std::ifstream in(metrics);
  std::vector<double> out;
  for (std::string l; std::getline(in, l);) {
    auto j = nlohmann::json::parse(l);
    if (j.contains("loss")) out.push_back(j["loss"].get<double>());
  }
  return out;
}

// Deterministic runs (same seed, same thread count: same numbers); the bars sit a
// modest margin from the measured values (see each test).
// CRNN, 12 steps: logged losses 19.05 18.71 17.56 15.63 (last / first = 0.82).
constexpr double kCrnnLossRatio = 0.9;

TEST(RecMetric, EditDistanceCountsCodePoints) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3);
  EXPECT_EQ(edit_distance("价格", "价钱"), 1);
  EXPECT_EQ(edit_distance("", "abc"), 3);
  RecMetric m;
  m.add("ab c", "abc");   // spaces ignored: a match
  m.add("abd", "abc");    // one of three wrong
  m.add("", "");          // empty line read as empty: a match with no distance
  auto r = m.result();
  EXPECT_EQ(r.count, 3);
  EXPECT_NEAR(r.acc, 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(r.norm_edit_dis, 1.0 - (1.0 / 3.0) / 3.0, 1e-12);
}

TEST(RecData, LabelFilesAndEncoding) {
  fs::path d = scratch("labels");
  std::ofstream(d / "gt.txt") << "a.jpg\tab1\n\nb.jpg\tx?z\n";
  auto s = read_rec_labels({(d / "gt.txt").string()}, d.string());
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].image, (d / "b.jpg").string());
  EXPECT_EQ(s[1].text, "x?z");
  std::ofstream(d / "bad.txt") << "a.jpg\tok\nno tab here\n";
  try {
    read_rec_labels({(d / "bad.txt").string()}, d.string());
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.txt:2: expected 'image_path<TAB>text'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_rec_labels({(d / "missing.txt").string()}, "."), IoError);
  Charset cs({"a", "b", "x", "z"}, true);
  int dropped = 0;
  EXPECT_EQ(CharEncoder(cs).encode("x?z b", &dropped), (std::vector<int64_t>{3, 4, 5, 2}));
  EXPECT_EQ(dropped, 1);
  fs::remove_all(d);
}

TEST(OcrRecipe, EveryShippedConfigValidates) {
  std::map<std::string, int> by_type;
  for (const auto& e : fs::directory_iterator(fs::path(SKIFF_SOURCE_DIR) / "configs/ocr")) {
    if (e.path().extension() != ".yml") continue;
    SCOPED_TRACE(e.path().string());
    try {
      ++by_type[train::recipe_task(train::load_recipe(e.path().string(), {}, {.check_files = false}).recipe)];
    } catch (const Error& err) {
      ADD_FAILURE() << err.what();
    }
  }
  EXPECT_GE(by_type["rec"], 2);
  EXPECT_GE(by_type["det"], 1);
}

TEST(RecRecipe, BadRecipesNameTheKey) {
  std::string crnn = (fs::path(SKIFF_SOURCE_DIR) / "configs/ocr/rec_crnn_en.yml").string();
  auto error = [&](std::vector<std::string> o) {
    try {
      train::load_recipe(crnn, o, {.check_files = false});
      return std::string();
    } catch (const Error& e) {
      return std::string(e.what());
    }
  };
  EXPECT_NE(error({"Architecture.name=CRN"}).find("Architecture.name: unknown architecture 'CRN'; did you mean 'CRNN'?"),
            std::string::npos);
  EXPECT_NE(error({"Optimizer.lr.learning_rat=0.1"}).find("Optimizer.lr.learning_rat (set with -o): unknown key; "
                                                          "did you mean 'learning_rate'?"),
            std::string::npos);
  EXPECT_NE(error({"Train.loader.batch_size_per_card=0"}).find("Train.loader.batch_size_per_card: must be >= 1"),
            std::string::npos);
  EXPECT_NE(error({"Architecture.Neck.hidden_size=big"}).find("Architecture.Neck.hidden_size: expected an integer"),
            std::string::npos);
  EXPECT_NE(error({"Optimizer.name=Adamm"}).find("did you mean 'Adam'?"), std::string::npos);
  std::string missing;
  try {
    train::load_recipe(crnn, {"Global.character_dict_path=" + (fs::path(SKIFF_SOURCE_DIR) / "configs/ocr/data/en_dict.txt").string(),
                       "Train.dataset.data_dir=/nonexistent/skiff/rec_en"});
  } catch (const ValueError& e) {
    missing = e.what();
  }
  EXPECT_NE(missing.find("Train.dataset.data_dir: file '/nonexistent/skiff/rec_en' does not exist"), std::string::npos)
      << missing;
}

// A small data set of short English lines, rendered once per test binary run.
fs::path english_lines(const fs::path& dir, int count, uint64_t seed) {
  SynthOptions o;
  o.texts = {"AB-1234", "milk 2.50", "TEA 42", "12/05/2024", "box 7", "KEY 19", "cup 3.10", "XY-9876"};
  o.width = 320, o.height = 160, o.min_lines = 2, o.max_lines = 3, o.upside_down_prob = 0;
  write_synth_dataset(dir.string(), count, seed, o);
  return dir;
}

std::vector<std::string> crnn_overrides(const fs::path& d, const fs::path& out) {
  return {"Train.dataset.data_dir=" + (d / "train").string(),
          "Train.dataset.label_file_list=[" + (d / "train/rec_gt.txt").string() + "]",
          "Eval.dataset.data_dir=" + (d / "eval").string(),
          "Eval.dataset.label_file_list=[" + (d / "eval/rec_gt.txt").string() + "]",
          "Global.character_dict_path=" + (fs::path(SKIFF_SOURCE_DIR) / "configs/ocr/data/en_dict.txt").string(),
          "Global.save_model_dir=" + out.string(),
          "Global.epoch_num=20",
          "Global.max_steps=12",
          "Global.print_batch_step=3",
          "Global.eval_batch_step=[0, 6]",
          "Train.loader.batch_size_per_card=8",
          "Architecture.Backbone.channels=[8, 16, 16, 32, 32, 32]",
          "Architecture.Neck.hidden_size=16"};
}

TEST(RecRecipe, CrnnTrainsExportsAndResumes) {
  fs::path d = scratch("crnn");
  english_lines(d / "train", 12, 1);
  english_lines(d / "eval", 3, 2);
  std::string crnn = (fs::path(SKIFF_SOURCE_DIR) / "configs/ocr/rec_crnn_en.yml").string();
  Recipe r = train::load_recipe(crnn, crnn_overrides(d, d / "out")).recipe;
  train::FitResult res = train_recognizer(r, std::nullopt, true);
  EXPECT_EQ(res.steps, 12);
  auto losses = logged_losses(d / "out/metrics.jsonl");
  ASSERT_EQ(losses.size(), 4u);
  std::printf("losses %s\n", fmt::format("{}", fmt::join(losses, " ")).c_str());
  EXPECT_LT(losses.back(), kCrnnLossRatio * losses.front()) << fmt::format("{}", fmt::join(losses, " "));
  for (const char* f : {"best_model.safetensors", "curves.png", "config.yml", "train.log"})
    EXPECT_TRUE(fs::exists(d / "out" / f)) << f;

  // Evaluation of the best model reproduces the trainer's best metric.
  auto m = evaluate_recognizer(r);
  EXPECT_NEAR(m.at("acc"), res.best.at("acc"), 1e-9);
  EXPECT_GT(m.at("samples"), 0);

  // Export: the ONNX file gives the eager probabilities; inference.yml carries the settings.
  double diff = export_recognizer(r, d / "export");
  EXPECT_LT(diff, 1e-4);
  RecInferenceConfig ic = read_rec_inference_config(d / "export/inference.yml");
  EXPECT_EQ(ic.height, 32);
  EXPECT_EQ(ic.width, 160);
  EXPECT_TRUE(ic.fixed_width);
  EXPECT_EQ(ic.batch_size, 0);  // any batch: the traced LSTM keeps the batch dynamic
  EXPECT_EQ(ic.characters.size(), 73u);

  // Resume from the step-12 checkpoint with a longer run: continues at step 12.
  Recipe longer = train::load_recipe(crnn, [&] {
    auto o = crnn_overrides(d, d / "out");
    o.push_back("Global.max_steps=15");
    return o;
  }()).recipe;
  auto ckpt = train::latest_checkpoint(d / "out");
  ASSERT_TRUE(ckpt);
  EXPECT_EQ(train_recognizer(longer, ckpt, true).steps, 15);
  fs::remove_all(d);
}

// Pulls ppocr-v4-rec from the zoo (labelled network in CMake).
// eval / predict / export never run an untrained model silently: with no
// checkpoint, no best model and no pretrained model they name the places searched.
TEST(RecRecipe, NoWeightsIsAnErrorUnlessRandomInitIsAsked) {
  fs::path d = scratch("noweights");
  english_lines(d / "train", 2, 1);
  english_lines(d / "eval", 2, 2);
  std::string crnn = (fs::path(SKIFF_SOURCE_DIR) / "configs/ocr/rec_crnn_en.yml").string();
  Recipe r = train::load_recipe(crnn, crnn_overrides(d, d / "empty_run")).recipe;
  for (auto run : {std::function<void()>([&] { evaluate_recognizer(r); }),
                   std::function<void()>([&] { export_recognizer(r, d / "export"); }),
                   std::function<void()>([&] { predict_recognizer(r, {(d / "eval/crops/img_00000_000.jpg").string()}); })}) {
    try {
      run();
      ADD_FAILURE() << "ran an untrained model without being asked to";
    } catch (const ValueError& e) {
      std::string msg = e.what();
      for (const char* place : {"Global.checkpoints", "empty_run/best_model.safetensors", "Global.pretrained_model",
                                "Global.allow_random_init=true"})
        EXPECT_NE(msg.find(place), std::string::npos) << place << " missing from: " << msg;
    }
  }
  EXPECT_FALSE(fs::exists(d / "export/inference.onnx"));

  auto overrides = crnn_overrides(d, d / "empty_run");
  overrides.push_back("Global.allow_random_init=true");
  Recipe random = train::load_recipe(crnn, overrides).recipe;
  EXPECT_GE(evaluate_recognizer(random).at("samples"), 4);  // two pages of 2-3 lines
  fs::remove_all(d);
}

TEST(RecRecipeNetwork, FineTunesTheZooRecognizer) {
  fs::path d = scratch("finetune");
  SynthOptions o;
  o.max_noise_sigma = 60, o.blur_sigma = 2.0f, o.upside_down_prob = 0;
  write_synth_dataset((d / "lines").string(), 3, 1, o);
  // Evaluated on its own training lines: a few steps must already read them better.
  std::string labels = "[" + (d / "lines/rec_gt.txt").string() + "]";
  std::string recipe = (fs::path(SKIFF_SOURCE_DIR) / "configs/ocr/rec_ppocrv4_finetune.yml").string();
  Recipe r = train::load_recipe(recipe, {"Train.dataset.data_dir=" + (d / "lines").string(), "Train.dataset.label_file_list=" + labels,
                                  "Eval.dataset.data_dir=" + (d / "lines").string(), "Eval.dataset.label_file_list=" + labels,
                                  "Global.save_model_dir=" + (d / "out").string(), "Global.max_steps=8",
                                  "Global.print_batch_step=4", "Global.eval_batch_step=[0, 8]",
                                  "Train.loader.batch_size_per_card=4", "Optimizer.lr.learning_rate=0.0005",
                                  "Optimizer.lr.warmup_epoch=0"}).recipe;
  auto before = evaluate_recognizer(r);
  train_recognizer(r, std::nullopt, true);
  auto after = evaluate_recognizer(r);  // best_model.safetensors
  std::printf("norm_edit_dis %.4f -> %.4f, acc %.4f -> %.4f\n", before.at("norm_edit_dis"), after.at("norm_edit_dis"),
              before.at("acc"), after.at("acc"));
  EXPECT_GT(after.at("norm_edit_dis"), before.at("norm_edit_dis"));
  EXPECT_LT(export_recognizer(r, d / "export"), 1e-4);
  EXPECT_FALSE(read_rec_inference_config(d / "export/inference.yml").fixed_width);
  fs::remove_all(d);
}

}  // namespace
}  // namespace skiff::ocr
