// Reading requests: fields, files, tensors and endpoint settings, each mistake an
// error that names what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "framework/core/error.h"
#include "framework/io/base64.h"
#include "framework/serve/request_fields.h"
#include "framework/serve/settings.h"
#include "framework/serve/tensor_json.h"
#include "tests/temp_dir.h"

namespace skiff::serve {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

template <typename F>
std::string error_of(F fn) {
  try {
    fn();
  } catch (const ValueError& e) {
    return e.what();
  }
  return "(no error)";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(RequestFields, NameTheFieldThatIsWrong) {
  const json body = {{"file", 3}, {"textDetThresh", 2.5}, {"visualize", "yes"}, {"n", 1.5}};
  EXPECT_TRUE(contains(error_of([&] { required_string(body, "file"); }), "file: expected a string, got number"));
  EXPECT_TRUE(contains(error_of([&] { required_string(body, "missing"); }), "missing: this field is required"));
  EXPECT_TRUE(contains(error_of([&] { optional_number(body, "textDetThresh", 0, 1); }),
                       "textDetThresh: expected a number in [0, 1], got 2.5"));
  EXPECT_TRUE(contains(error_of([&] { optional_bool(body, "visualize"); }), "visualize: expected true or false"));
  EXPECT_TRUE(contains(error_of([&] { optional_integer(body, "n", 0, 9); }), "n: expected an integer, got 1.5"));
  EXPECT_FALSE(optional_number(json{{"x", nullptr}}, "x", 0, 1).has_value());  // null is absent
  EXPECT_EQ(optional_integer(json{{"x", 7}}, "x", 0, 9).value(), 7);
  EXPECT_TRUE(contains(error_of([&] { check_fields(json{{"fiel", 1}}, {"file", "fileType"}); }),
                       "unknown field 'fiel' (did you mean 'file'?)"));
  EXPECT_TRUE(contains(error_of([&] { check_fields(json::array(), {"file"}); }), "must be a JSON object"));
}

TEST(RequestFields, FileFieldTakesBase64AndRefusesUrls) {
  RequestLimits limits;
  EXPECT_EQ(read_file_field(json{{"file", io::base64_encode("\x89PNG bytes")}}, "file", limits), "\x89PNG bytes");
  EXPECT_TRUE(contains(error_of([&] { read_file_field(json{{"file", "https://example.com/a.png"}}, "file", limits); }),
                       "does not fetch URLs"));
  EXPECT_TRUE(contains(error_of([&] { read_file_field(json{{"file", "a.png"}}, "file", limits); }),
                       "file: not base64"));  // no files root: a path is just bad base64
  limits.max_file_bytes = 10;
  EXPECT_TRUE(contains(error_of([&] { read_file_field(json{{"file", io::base64_encode(std::string(64, 'x'))}}, "file", limits); }),
                       "larger than the 10-byte limit"));
}

TEST(RequestFields, FilePathsOnlyUnderTheFilesRoot) {
  testing::TempDir dir;
  fs::create_directories(dir.path / "root" / "sub");
  std::ofstream(dir.path / "root" / "sub" / "in.png") << "inside";
  std::ofstream(dir.path / "secret.txt") << "outside";
  fs::create_symlink(dir.path / "secret.txt", dir.path / "root" / "link.txt");
  RequestLimits limits;
  limits.files_root = (dir.path / "root").string();
  EXPECT_EQ(read_file_field(json{{"file", "sub/in.png"}}, "file", limits), "inside");
  EXPECT_EQ(read_file_field(json{{"file", (dir.path / "root" / "sub" / "in.png").string()}}, "file", limits), "inside");
  // Escapes by "..", by an absolute path and by a link all fall through to base64, which they are not.
  for (std::string escape : {std::string("../secret.txt"), (dir.path / "secret.txt").string(), std::string("link.txt")})
    EXPECT_TRUE(contains(error_of([&] { read_file_field(json{{"file", escape}}, "file", limits); }),
                         "is neither a file under the server's files root nor base64"))
        << escape;
}

TEST(TensorJson, NumbersAndBytesRoundTrip) {
  const json x = {{"shape", {2, 2}}, {"data", {1.5, -2, 3, 4}}};
  Tensor t = tensor_from_json(x, "inputs.x");
  EXPECT_EQ(t.dtype(), DType::Float32);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1.5f, -2, 3, 4}));
  EXPECT_EQ(tensor_to_json(t, false), (json{{"shape", {2, 2}}, {"dtype", "float32"}, {"data", {1.5, -2.0, 3.0, 4.0}}}));
  const json bytes = tensor_to_json(t, true);
  EXPECT_TRUE(bytes.contains("b64"));
  EXPECT_EQ(tensor_from_json(bytes, "y").to_vector<float>(), t.to_vector<float>());
  const json ids = {{"shape", {3}}, {"dtype", "int64"}, {"data", {1, -9007199254740993LL, 3}}};
  EXPECT_EQ(tensor_from_json(ids, "ids").to_vector<int64_t>(), (std::vector<int64_t>{1, -9007199254740993LL, 3}));
  // JSON has no NaN: it travels as null.
  EXPECT_TRUE(tensor_to_json(from_vector<float>({NAN}), false)["data"][0].is_null());
}

TEST(TensorJson, MalformedTensorsNameTheirField) {
  auto err = [](const json& v) { return error_of([&] { tensor_from_json(v, "inputs.x"); }); };
  EXPECT_TRUE(contains(err(json{{"shape", {2}}, {"data", {1}}}), "inputs.x.data: 1 values, but shape [2] has 2"));
  EXPECT_TRUE(contains(err(json{{"shape", {2}}, {"dtype", "int8"}, {"data", {1, 300}}}),
                       "inputs.x.data[1]: 300 does not fit"));
  EXPECT_TRUE(contains(err(json{{"shape", {1}}, {"dtype", "int32"}, {"data", {0.5}}}), "inputs.x.data[0]: expected an integer"));
  EXPECT_TRUE(contains(err(json{{"shape", {-1}}, {"data", json::array()}}), "inputs.x.shape[0]"));
  EXPECT_TRUE(contains(err(json{{"shape", {1}}, {"dtype", "float13"}, {"data", {1}}}), "inputs.x.dtype"));
  EXPECT_TRUE(contains(err(json{{"shape", {1}}}), "exactly one of data and b64"));
  EXPECT_TRUE(contains(err(json{{"shape", {2}}, {"b64", io::base64_encode("abc")}}), "inputs.x.b64: 3 bytes"));
  EXPECT_TRUE(contains(err(json{{"shape", {1}}, {"data", {1}}, {"scale", 2}}), "unknown field 'scale'"));
  EXPECT_TRUE(contains(err(json{{"shape", {1 << 30, 1 << 30, 1 << 30}}, {"data", json::array()}}), "inputs.x.shape"));
}

TEST(Settings, ReadOnceAndRefuseTypos) {
  EndpointSettings given = {{"det_model", "d.onnx"}, {"text_det_thresh", "0.4"}, {"use_cls", "maybe"}};
  SettingsReader s("ocr", given);
  EXPECT_EQ(s.text("det_model", "x"), "d.onnx");
  EXPECT_FLOAT_EQ(float(s.number("text_det_thresh", 0.3, 0, 1)), 0.4f);
  EXPECT_TRUE(contains(error_of([&] { s.flag("use_cls", true); }), "--set ocr.use_cls: expected true or false"));
  EndpointSettings typo = {{"det_modl", "d.onnx"}};
  SettingsReader t("ocr", typo);
  t.text("det_model", "x");
  EXPECT_TRUE(contains(error_of([&] { t.finish(); }), "did you mean 'det_model'?"));
  SettingsReader range("ocr", EndpointSettings{{"text_det_thresh", "1.5"}});
  EXPECT_TRUE(contains(error_of([&] { range.number("text_det_thresh", 0.3, 0, 1); }), "expected a number in [0, 1]"));
}

}  // namespace
}  // namespace skiff::serve
