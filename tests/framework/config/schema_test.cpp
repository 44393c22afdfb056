// Recipe validation: every kind of bad key or value is caught with file, line,
// key path and (for typos) the closest valid key or component name.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "framework/config/config.h"
#include "framework/config/schema.h"

namespace skiff::config {
namespace {

namespace fs = std::filesystem;

// A loss and two transforms in a kind of their own, so other tests' registrations never clash.
const Factory<std::string, int>& test_losses() {
  static Factory<std::string, int> f("test_loss");
  static std::once_flag once;
  std::call_once(once, [] {
    f.add("CTCLoss", "CTC", Schema{{Key{.name = "blank", .type = Type::Integer, .min = 0}}},
          [](const Section& s, int scale) { return fmt::format("ctc blank={} x{}", s.integer("blank", 0), scale); });
  });
  return f;
}

// Transforms built as the text of their settings (what they build is not the point here).
void register_transforms() {
  static Factory<std::string> f("test_transform");
  static std::once_flag once;
  std::call_once(once, [] {
    auto describe = [](const Section& s) { return fmt::format("{}", fmt::join(s.keys(), ",")); };
    f.add("DecodeImage", "", Schema{{Key{.name = "img_mode", .type = Type::String, .choices = {"BGR", "RGB"}}}}, describe);
    f.add("RecResizeImg", "", Schema{{Key{.name = "image_shape", .type = Type::Integers, .required = true, .min = 1}}},
          describe);
  });
}

Schema recipe_schema() {
  test_losses();
  register_transforms();
  auto dataset = std::make_shared<Schema>(Schema{{
      Key{.name = "label_file_list", .type = Type::Paths, .required = true},
      Key{.name = "transforms", .type = Type::Components, .kind = "test_transform"},
  }});
  auto loader = std::make_shared<Schema>(Schema{{
      Key{.name = "batch_size", .type = Type::Integer, .min = 1},
      Key{.name = "shuffle", .type = Type::Boolean},
  }});
  auto train = std::make_shared<Schema>(Schema{{
      Key{.name = "dataset", .type = Type::Map, .schema = dataset},
      Key{.name = "loader", .type = Type::Map, .schema = loader},
  }});
  auto global = std::make_shared<Schema>(Schema{{
      Key{.name = "epoch_num", .type = Type::Integer, .min = 1},
      Key{.name = "learning_rate", .type = Type::Number, .min = 0, .max = 10},
  }});
  return Schema{{
      Key{.name = "Global", .type = Type::Map, .schema = global},
      Key{.name = "Loss", .type = Type::Component, .kind = "test_loss"},
      Key{.name = "Train", .type = Type::Map, .schema = train},
  }};
}

class SchemaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("skiff_schema_{}", ::getpid());
    fs::create_directories(dir_);
    std::ofstream(dir_ / "train.txt") << "a.jpg\tabc\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Validates `body` (with {labels} replaced by the label file) and returns the error, "" if none.
  std::string error_of(std::string body) {
    for (size_t at; (at = body.find("{labels}")) != std::string::npos;)
      body.replace(at, 8, (dir_ / "train.txt").string());
    fs::path file = dir_ / "r.yml";
    std::ofstream(file) << body;
    try {
      validate(Section(load_config(file.string()), "", file.string()), recipe_schema());
      return "";
    } catch (const ValueError& e) {
      return e.what();
    }
  }
  fs::path dir_;
};

constexpr const char* kGood = R"(Global:
  epoch_num: 3
  learning_rate: 0.001
Loss:
  name: CTCLoss
  blank: 0
Train:
  dataset:
    label_file_list: [{labels}]
    transforms:
      - DecodeImage: {img_mode: BGR}
      - RecResizeImg:
          image_shape: [3, 48, 320]
  loader: {batch_size: 8, shuffle: true}
)";

TEST_F(SchemaTest, AcceptsAValidRecipe) { EXPECT_EQ(error_of(kGood), ""); }

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST_F(SchemaTest, UnknownKeyNamesFileLinePathAndClosestKey) {
  std::string e = error_of(replaced(kGood, "  learning_rate:", "  learning_rat:"));
  EXPECT_NE(e.find("r.yml:3: Global.learning_rat: unknown key; did you mean 'learning_rate'?"), std::string::npos) << e;
  e = error_of(replaced(kGood, "  loader: {batch_size: 8,", "  loader: {batch_sise: 8,"));
  EXPECT_NE(e.find(":14: Train.loader.batch_sise: unknown key; did you mean 'batch_size'?"), std::string::npos) << e;
  e = error_of(replaced(kGood, "Global:", "Globl:"));
  EXPECT_NE(e.find(":1: Globl: unknown key; did you mean 'Global'?"), std::string::npos) << e;
}

TEST_F(SchemaTest, WrongTypeOrRangeNamesTheKey) {
  std::string e = error_of(replaced(kGood, "epoch_num: 3", "epoch_num: three"));
  EXPECT_NE(e.find(":2: Global.epoch_num: expected an integer, got 'three'"), std::string::npos) << e;
  e = error_of(replaced(kGood, "batch_size: 8", "batch_size: 0"));
  EXPECT_NE(e.find(":14: Train.loader.batch_size: must be >= 1, got 0"), std::string::npos) << e;
  e = error_of(replaced(kGood, "learning_rate: 0.001", "learning_rate: 20"));
  EXPECT_NE(e.find("Global.learning_rate: must be <= 10, got 20"), std::string::npos) << e;
  e = error_of(replaced(kGood, "shuffle: true", "shuffle: maybe"));
  EXPECT_NE(e.find("Train.loader.shuffle: expected true or false"), std::string::npos) << e;
  e = error_of(replaced(kGood, "blank: 0", "blank: -1"));
  EXPECT_NE(e.find(":6: Loss.blank: must be >= 0, got -1"), std::string::npos) << e;
}

TEST_F(SchemaTest, ComponentsAreCheckedByName) {
  std::string e = error_of(replaced(kGood, "name: CTCLoss", "name: CTCLos"));
  EXPECT_NE(e.find(":5: Loss.name: unknown test_loss 'CTCLos'; did you mean 'CTCLoss'?"), std::string::npos) << e;
  e = error_of(replaced(kGood, "- DecodeImage:", "- DecodeImg:"));
  EXPECT_NE(e.find(":11: Train.dataset.transforms[0]: unknown test_transform 'DecodeImg'; did you mean 'DecodeImage'?"),
            std::string::npos)
      << e;
  e = error_of(replaced(kGood, "img_mode: BGR", "img_mode: BRG"));
  EXPECT_NE(e.find("Train.dataset.transforms[0].DecodeImage.img_mode: 'BRG' is not one of BGR, RGB"), std::string::npos)
      << e;
  e = error_of(replaced(kGood, "image_shape: [3, 48, 320]", "image_shap: [3, 48, 320]"));
  EXPECT_NE(e.find("Train.dataset.transforms[1].RecResizeImg.image_shap: unknown key; did you mean 'image_shape'?"),
            std::string::npos)
      << e;
  // A component's own keys are checked as well.
  e = error_of(replaced(kGood, "  blank: 0", "  blnk: 0"));
  EXPECT_NE(e.find("Loss.blnk: unknown key; did you mean 'blank'?"), std::string::npos) << e;
}

TEST_F(SchemaTest, MissingFilesAndRequiredKeys) {
  std::string e = error_of(replaced(kGood, "[{labels}]", "[/nonexistent/train.txt]"));
  EXPECT_NE(e.find("Train.dataset.label_file_list: file '/nonexistent/train.txt' does not exist"), std::string::npos)
      << e;
  e = error_of(replaced(kGood, "    label_file_list: [{labels}]\n", ""));
  EXPECT_NE(e.find("Train.dataset.label_file_list: missing"), std::string::npos) << e;
  // Files are not checked when asked not to (validating shipped recipes without their data).
  fs::path file = dir_ / "nofiles.yml";
  std::ofstream(file) << replaced(kGood, "[{labels}]", "[/nonexistent/train.txt]");
  EXPECT_NO_THROW(validate(Section(load_config(file.string()), "", file.string()), recipe_schema(),
                           {.check_files = false}));
}

TEST_F(SchemaTest, FactoryBuildsTheNamedComponent) {
  fs::path file = dir_ / "loss.yml";
  std::ofstream(file) << "Loss: {name: CTCLoss, blank: 3}\n";
  Section root(load_config(file.string()), "", file.string());
  EXPECT_EQ(test_losses().make(root.section("Loss"), 2), "ctc blank=3 x2");
  std::ofstream(file) << "Loss: {name: Focal}\n";
  Section bad(load_config(file.string()), "", file.string());
  EXPECT_THROW(test_losses().make(bad.section("Loss"), 1), ValueError);
  EXPECT_EQ(Components::global().names("test_loss"), std::vector<std::string>{"CTCLoss"});
}

}  // namespace
}  // namespace skiff::config
