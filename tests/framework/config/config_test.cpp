// framework/config: _BASE_ inheritance with deep merge, overrides, anchors,
// and the errors a user sees for a broken config tree.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "framework/config/config.h"
#include "framework/core/error.h"

namespace skiff::config {
namespace {

namespace fs = std::filesystem;

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("skiff_config_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "base");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::string error_of(const std::string& path, const std::vector<std::string>& overrides = {}) {
    try {
      load_config(path, overrides);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
  fs::path dir_;
};

TEST_F(ConfigTest, BasesMergeDeeplyAndTheFileWins) {
  write("base/optimizer.yml", R"(
Optimizer:
  name: Adam
  lr: {name: Cosine, learning_rate: 0.001, warmup_epoch: 2}
  regularizer: {name: L2, factor: 3.0e-5}
)");
  write("base/global.yml", R"(
Global: {epoch_num: 100, save_dir: out, character_dict: [a, b]}
Optimizer: {name: AdamW}
)");
  const std::string top = write("rec.yml", R"(
_BASE_: [base/optimizer.yml, base/global.yml]
Global: {epoch_num: 10, character_dict: [x]}
Optimizer:
  lr: {learning_rate: 0.0005}
)");
  YAML::Node c = load_config(top);
  EXPECT_EQ(c["Global"]["epoch_num"].as<int>(), 10);       // the file wins
  EXPECT_EQ(c["Global"]["save_dir"].as<std::string>(), "out");  // kept from a base
  ASSERT_EQ(c["Global"]["character_dict"].size(), 1u);     // lists replace, not append
  EXPECT_EQ(c["Optimizer"]["name"].as<std::string>(), "AdamW");  // the later base wins
  EXPECT_EQ(c["Optimizer"]["lr"]["name"].as<std::string>(), "Cosine");  // maps merge recursively
  EXPECT_DOUBLE_EQ(c["Optimizer"]["lr"]["learning_rate"].as<double>(), 0.0005);
  EXPECT_EQ(c["Optimizer"]["lr"]["warmup_epoch"].as<int>(), 2);
  EXPECT_FALSE(c["_BASE_"].IsDefined());
}

TEST_F(ConfigTest, BasesOfBasesResolveRelativeToTheirOwnFile) {
  write("base/root.yml", "Train: {loader: {batch_size: 64, shuffle: true}}\n");
  write("base/reader.yml", "_BASE_: root.yml\nTrain: {loader: {num_workers: 4}}\n");
  const std::string top = write("det.yml", "_BASE_: base/reader.yml\n");
  YAML::Node c = load_config(top);
  EXPECT_EQ(c["Train"]["loader"]["batch_size"].as<int>(), 64);
  EXPECT_EQ(c["Train"]["loader"]["num_workers"].as<int>(), 4);
  EXPECT_TRUE(c["Train"]["loader"]["shuffle"].as<bool>());
}

TEST_F(ConfigTest, OverridesParseValuesAsYamlAndCreateKeys) {
  const std::string top = write("r.yml", "Global: {epoch_num: 100}\nOptimizer: {lr: {learning_rate: 0.1}}\n");
  YAML::Node c = load_config(top, {"Global.epoch_num=5", "Optimizer.lr.learning_rate=0.001",
                                   "Train.loader.batch_size=[8, 16]", "Global.use_gpu=false"});
  EXPECT_EQ(c["Global"]["epoch_num"].as<int>(), 5);
  EXPECT_DOUBLE_EQ(c["Optimizer"]["lr"]["learning_rate"].as<double>(), 0.001);
  ASSERT_TRUE(c["Train"]["loader"]["batch_size"].IsSequence());
  EXPECT_EQ(c["Train"]["loader"]["batch_size"][1].as<int>(), 16);
  EXPECT_FALSE(c["Global"]["use_gpu"].as<bool>());
  EXPECT_NE(error_of(top, {"Global.epoch_num"}).find("expected key.path=value"), std::string::npos);
  EXPECT_NE(error_of(top, {"Global.epoch_num.x=1"}).find("'epoch_num' is not a map"), std::string::npos);
  EXPECT_NE(error_of(top, {"Global..x=1"}).find("empty key"), std::string::npos);
}

TEST_F(ConfigTest, OverridesIndexListsByNumber) {
  const std::string top = write("t.yml", R"(
Train:
  transforms:
    - DecodeImage: {img_mode: BGR}
    - RecResizeImg: {image_shape: [3, 48, 320]}
)");
  YAML::Node c = load_config(top, {"Train.transforms.1.RecResizeImg.image_shape=[3, 32, 160]", "Train.transforms.0=KeepKeys"});
  EXPECT_EQ(c["Train"]["transforms"][1]["RecResizeImg"]["image_shape"][1].as<int>(), 32);
  EXPECT_EQ(c["Train"]["transforms"][0].as<std::string>(), "KeepKeys");
  EXPECT_NE(error_of(top, {"Train.transforms.2.X=1"}).find("index 2 is past the end of a list of 2"), std::string::npos);
  EXPECT_NE(error_of(top, {"Train.transforms.first.X=1"}).find("'first' is a list; index it by number"),
            std::string::npos);
}

// Inputs tests/fuzz/config found or that the fuzzing brief names: each is a clean error.
TEST_F(ConfigTest, HostileTreesAreCleanErrors) {
  // A list used as a key (valid YAML) where a key must be a name.
  std::string bases = write("keyed_base.yml", "? [a, b]\n: 1\n");
  EXPECT_NE(error_of(write("keyed.yml", "_BASE_: keyed_base.yml\nx: 1\n")).find("a key must be a plain value"),
            std::string::npos);
  // A base file name longer than the file system allows.
  EXPECT_NE(error_of(write("long.yml", "_BASE_: " + std::string(5000, 'w') + "\n")).find("File name too long"),
            std::string::npos);
  // One file listing itself twice per level is no cycle, but doubles at each level.
  write("fan.yml", "_BASE_: [fan2.yml, fan2.yml]\n");
  for (int i = 2; i < 12; ++i)
    write("fan" + std::to_string(i) + ".yml",
          "_BASE_: [fan" + std::to_string(i + 1) + ".yml, fan" + std::to_string(i + 1) + ".yml]\n");
  write("fan12.yml", "leaf: 1\n");
  EXPECT_NE(error_of((dir_ / "fan.yml").string()).find("more than 64 files through _BASE_"), std::string::npos);
  // A list index too long for any list.
  std::string list = write("list.yml", "a: [1, 2]\n");
  EXPECT_NE(error_of(list, {"a.99999999999999999999999=3"}).find("past the end"), std::string::npos);
}

TEST_F(ConfigTest, AnchorsAndAliasesWork) {
  const std::string top = write("a.yml", R"(
common: &norm {mean: [0.5, 0.5, 0.5], std: [0.5, 0.5, 0.5]}
Train: {transforms: {normalize: *norm}}
Eval: {transforms: {normalize: *norm}}
)");
  YAML::Node c = load_config(top);
  EXPECT_DOUBLE_EQ(c["Eval"]["transforms"]["normalize"]["std"][2].as<double>(), 0.5);
  // An alias is its anchor's node (as in PyYAML, which PaddleOCR reads configs with):
  // an override through one use changes every use.
  apply_override(c, "Train.transforms.normalize.mean=[0, 0, 0]");
  EXPECT_DOUBLE_EQ(c["Eval"]["transforms"]["normalize"]["mean"][0].as<double>(), 0.0);
  EXPECT_DOUBLE_EQ(c["common"]["mean"][0].as<double>(), 0.0);
}

TEST_F(ConfigTest, ErrorsNameTheFiles) {
  const std::string missing_base = write("m.yml", "_BASE_: [base/nope.yml]\n");
  const std::string e1 = error_of(missing_base);
  EXPECT_NE(e1.find("nope.yml"), std::string::npos) << e1;
  EXPECT_NE(e1.find("a _BASE_ of"), std::string::npos) << e1;
  EXPECT_NE(e1.find("m.yml"), std::string::npos) << e1;
  EXPECT_THROW(load_config((dir_ / "absent.yml").string()), IoError);

  write("base/x.yml", "_BASE_: y.yml\n");
  write("base/y.yml", "_BASE_: x.yml\n");
  const std::string e2 = error_of((dir_ / "base/x.yml").string());
  EXPECT_NE(e2.find("_BASE_ cycle"), std::string::npos) << e2;

  const std::string bad_base = write("b.yml", "A: 1\n_BASE_: {a: 1}\n");
  EXPECT_NE(error_of(bad_base).find("b.yml:2: _BASE_: expected a file path"), std::string::npos)
      << error_of(bad_base);
  const std::string syntax = write("s.yml", "A: [1, 2\nB: 3\n");
  EXPECT_NE(error_of(syntax).find("YAML syntax error"), std::string::npos) << error_of(syntax);
  const std::string list = write("l.yml", "- 1\n- 2\n");
  EXPECT_NE(error_of(list).find("a YAML map"), std::string::npos) << error_of(list);
}

TEST_F(ConfigTest, ToYamlRoundTrips) {
  const std::string top = write("t.yml", "Global: {epoch_num: 3, name: crnn}\nList: [1, 2]\n");
  YAML::Node c = load_config(top);
  YAML::Node again = YAML::Load(to_yaml(c));
  EXPECT_EQ(again["Global"]["epoch_num"].as<int>(), 3);
  EXPECT_EQ(again["List"][1].as<int>(), 2);
}

}  // namespace
}  // namespace skiff::config
