// Tests of framework/io/safetensors.h: format compatibility, round trips and
// hostile inputs.
#include "framework/io/safetensors.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "framework/io/file.h"
#include "framework/ops/ops.h"

namespace skiff::io {
namespace {
namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("skiff_io_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  static inline int counter_ = 0;
};

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = char((v >> (8 * i)) & 0xff);
  return s;
}

// A file laid out by hand, following the spec, from a JSON header and a buffer.
std::string make_file(std::string header, const std::string& buffer, bool pad = true) {
  if (pad) header.resize((header.size() + 7) / 8 * 8, ' ');
  return le64(header.size()) + header + buffer;
}

void expect_io_error(const std::string& bytes, const std::string& needle, const std::string& name = "bad.st") {
  try {
    parse_safetensors(bytes, name);
    ADD_FAILURE() << "expected IoError containing '" << needle << "'";
  } catch (const IoError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(name), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  }
}

TEST(SafetensorsTest, MatchesHandBuiltReferenceBytes) {
  // Three dtypes: the reference orders the buffer by decreasing alignment (I64,
  // F32, U8), then name; metadata first; compact JSON; spaces to an 8-byte boundary.
  TensorMap t;
  t["b"] = from_vector<float>({1.0f, -2.0f});
  t["a"] = from_vector<int64_t>({7});
  t["c"] = from_vector<uint8_t>({1, 2, 3});
  t["d"] = from_vector<float>({0.5f}, Shape{1, 1});
  std::string json =
      R"({"__metadata__":{"format":"pt"},)"
      R"("a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},)"
      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
      R"("d":{"dtype":"F32","shape":[1,1],"data_offsets":[16,20]},)"
      R"("c":{"dtype":"U8","shape":[3],"data_offsets":[20,23]}})";
  std::string buffer;
  buffer += std::string("\x07\0\0\0\0\0\0\0", 8);          // int64 7
  buffer += std::string("\x00\x00\x80\x3f", 4);             // 1.0f
  buffer += std::string("\x00\x00\x00\xc0", 4);             // -2.0f
  buffer += std::string("\x00\x00\x00\x3f", 4);             // 0.5f
  buffer += std::string("\x01\x02\x03", 3);
  std::string expected = make_file(json, buffer);
  ASSERT_EQ((expected.size() - buffer.size()) % 8, 0u);
  std::string got = serialize_safetensors(t, {{"format", "pt"}});
  EXPECT_EQ(got, expected);

  TempDir dir;
  save_safetensors(dir.path() / "ref.safetensors", t, {{"format", "pt"}});
  EXPECT_EQ(read_file(dir.path() / "ref.safetensors"), expected);
}

TEST(SafetensorsTest, EmptyFileMatchesSpec) {
  EXPECT_EQ(serialize_safetensors({}), le64(8) + "{}      ");
  auto f = parse_safetensors(le64(8) + "{}      ");
  EXPECT_TRUE(f.tensors.empty());
  EXPECT_TRUE(f.metadata.empty());
}

TEST(SafetensorsTest, RoundTripsEveryDtypeThroughMmapAndRead) {
  TensorMap t;
  t["bool"] = from_vector<bool>({true, false, true}, Shape{3});
  t["u8"] = from_vector<uint8_t>({0, 255, 7, 9}, Shape{2, 2});
  t["i8"] = from_vector<int8_t>({-128, 127, 0});
  t["i32"] = from_vector<int32_t>({-5, 1 << 30});
  t["i64"] = from_vector<int64_t>({int64_t(1) << 40, -3});
  t["f16"] = from_vector<Half>({Half(1.5f), Half(-0.25f)});
  t["bf16"] = from_vector<BFloat16>({BFloat16(3.0f), BFloat16(-8.0f)});
  t["f32"] = from_vector<float>({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, Shape{1, 2, 3});
  t["f64"] = from_vector<double>({3.141592653589793});
  t["c64"] = from_vector<complex64>({{1.f, -1.f}, {0.5f, 2.f}});
  t["scalar"] = scalar_tensor(4.0, DType::Float64);
  t["empty"] = zeros(Shape{0, 3}, DType::Float32);
  // A non-contiguous view is written as its logical (row-major) contents.
  t["transposed"] = transpose(from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3}), 0, 1);

  TempDir dir;
  fs::path p = dir.path() / "all.safetensors";
  save_safetensors(p, t, {{"k", "v"}, {"unicode", "\xc3\xa9t\xc3\xa9"}});
  for (bool use_mmap : {true, false}) {
    SafetensorsFile f = load_safetensors(p, {.mmap = use_mmap});
    ASSERT_EQ(f.tensors.size(), t.size());
    EXPECT_EQ(f.metadata.at("k"), "v");
    EXPECT_EQ(f.metadata.at("unicode"), "\xc3\xa9t\xc3\xa9");
    for (const auto& [name, want] : t) {
      const Tensor& got = f.tensors.at(name);
      EXPECT_EQ(got.dtype(), want.dtype()) << name;
      EXPECT_EQ(got.shape(), want.shape()) << name;
      EXPECT_TRUE(got.is_contiguous());
      EXPECT_EQ(reinterpret_cast<uintptr_t>(got.data_ptr()) % got.itemsize(), 0u) << name;
      // Named copies: clang before 16 cannot capture structured bindings.
      const std::string& tensor_name = name;
      const Tensor& expected = want;
      visit_dtype(want.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        EXPECT_EQ(got.to_vector<T>(), expected.to_vector<T>()) << tensor_name;
      });
    }
  }
}

TEST(SafetensorsTest, MmapViewsOutliveTheFileAndWritesStayPrivate) {
  TempDir dir;
  fs::path p = dir.path() / "w.safetensors";
  save_safetensors(p, {{"w", from_vector<float>({1, 2, 3})}});
  Tensor w;
  {
    auto f = load_safetensors(p);
    w = f.tensors.at("w");
  }
  fs::remove(p);  // the mapping stays valid after unlink
  w.data<float>()[0] = 42.f;  // copy-on-write: no SIGSEGV
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{42, 2, 3}));
  save_safetensors(p, {{"w", from_vector<float>({1, 2, 3})}});
  auto f = load_safetensors(p);
  f.tensors.at("w").data<float>()[1] = -1.f;
  EXPECT_EQ(load_safetensors(p).tensors.at("w").to_vector<float>(), (std::vector<float>{1, 2, 3}));
}

TEST(SafetensorsTest, ReadsFilesInNameOrderWithMisalignedTensors) {
  // Older writers laid tensors out by name: a U8 first leaves the F32 misaligned.
  std::string json =
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"F32","shape":[1],"data_offsets":[1,5]}})";
  std::string buffer = std::string("\x09", 1) + std::string("\x00\x00\x80\x3f", 4);
  auto f = parse_safetensors(make_file(json, buffer));
  EXPECT_EQ(f.tensors.at("a").item<uint8_t>(), 9);
  EXPECT_EQ(f.tensors.at("b").item<float>(), 1.0f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(f.tensors.at("b").data_ptr()) % 4, 0u);
  // Unpadded headers and extra whitespace are accepted too.
  EXPECT_EQ(parse_safetensors(make_file(json, buffer, false)).tensors.size(), 2u);
  EXPECT_EQ(parse_safetensors(make_file(json + "\n   \t", buffer, false)).tensors.size(), 2u);
}

TEST(SafetensorsTest, RejectsMalformedFilesWithNamedProblems) {
  const std::string f4 = std::string("\x00\x00\x80\x3f", 4);
  const std::string one = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  EXPECT_NO_THROW(parse_safetensors(make_file(one, f4)));
  expect_io_error("", "shorter than the 8-byte header length");
  expect_io_error(le64(~uint64_t(0)) + "{}", "exceeds the 100000000-byte limit");
  expect_io_error(le64(64) + "{}", "exceeds the 2 bytes");
  expect_io_error(make_file("{\"a\":", ""), "header is not valid UTF-8 JSON");
  expect_io_error(make_file("[1,2]", ""), "does not start with '{'");
  expect_io_error(make_file("{\"a\":\"\xff\xfe\"}", ""), "not valid UTF-8 JSON");
  expect_io_error(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", f4 + "xx"),
                  "cover 4 bytes but the buffer holds 6");
  expect_io_error(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,8]}})", f4), "past the end");
  expect_io_error(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", f4), "need 8");
  expect_io_error(make_file(R"({"a":{"dtype":"I16","shape":[2],"data_offsets":[0,4]}})", f4),
                  "unsupported dtype 'I16'");
  expect_io_error(make_file(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", f4),
                  "non-negative integers");
  expect_io_error(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", f4), "end before begin");
  expect_io_error(make_file(R"({"a":{"dtype":"F32","shape":[1]}})", f4), "data_offsets");
  expect_io_error(make_file(R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,4]}})", f4),
                  "overflows");
  expect_io_error(make_file(R"({"a":{"dtype":"U8","shape":[3],"data_offsets":[0,3]},)"
                            R"("b":{"dtype":"U8","shape":[3],"data_offsets":[1,4]}})",
                            f4),
                  "overlap");
  expect_io_error(make_file(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                            R"("b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})",
                            f4),
                  "gap");
  expect_io_error(make_file(R"({"a":{"dtype":"BOOL","shape":[4],"data_offsets":[0,4]}})", f4), "BOOL byte");
  expect_io_error(make_file(R"({"__metadata__":{"x":1}})", ""), "not a string");
}

TEST(SafetensorsTest, LoadErrorsNameTheFile) {
  TempDir dir;
  fs::path p = dir.path() / "trunc.safetensors";
  std::string good = serialize_safetensors({{"w", ones(Shape{16})}});
  write_file_atomic(p, good.substr(0, good.size() - 3));
  for (bool m : {true, false}) {
    try {
      load_safetensors(p, {.mmap = m});
      ADD_FAILURE() << "truncated file loaded";
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(read_safetensors_header(p), IoError);
  EXPECT_THROW(load_safetensors(dir.path() / "missing.safetensors"), IoError);
  write_file_atomic(p, "");
  EXPECT_THROW(load_safetensors(p), IoError);
  EXPECT_THROW(load_safetensors(dir.path()), IoError);  // a directory
}

TEST(SafetensorsTest, TruncationAtEveryOffsetThrows) {
  std::string good = serialize_safetensors(
      {{"w", from_vector<float>({1, 2, 3, 4}, Shape{2, 2})}, {"b", from_vector<int64_t>({5})},
       {"m", from_vector<bool>({true, false})}},
      {{"epoch", "3"}});
  ASSERT_NO_THROW(parse_safetensors(good));
  for (size_t len = 0; len < good.size(); ++len)
    EXPECT_THROW(parse_safetensors(good.substr(0, len), "trunc"), IoError) << "length " << len;
  // Every single-byte corruption either parses or raises a skiff error: no crash.
  for (size_t i = 0; i < good.size(); ++i) {
    for (int v : {0x00, 0x22, 0x7b, 0x7d, 0x30, 0x39, 0xff}) {
      std::string bad = good;
      bad[i] = char(v);
      try {
        parse_safetensors(bad, "flip");
      } catch (const Error&) {
      }
    }
  }
}

TEST(SafetensorsTest, WriteRejectsBadInput) {
  EXPECT_THROW(serialize_safetensors({{"z", from_vector<complex128>({{1, 2}})}}), TypeError);
  EXPECT_THROW(serialize_safetensors({{"__metadata__", ones(Shape{1})}}), ValueError);
  EXPECT_THROW(serialize_safetensors({{"u", Tensor()}}), ValueError);
  EXPECT_THROW(serialize_safetensors({{"\xff", ones(Shape{1})}}), ValueError);
  TempDir dir;
  EXPECT_THROW(save_safetensors(dir.path() / "no_such_dir" / "x.safetensors", {}), IoError);
  // A failed write leaves no temporary file behind.
  EXPECT_THROW(save_safetensors(dir.path() / "x.safetensors", {{"z", from_vector<complex128>({{1, 2}})}}), TypeError);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(SafetensorsTest, AtomicWriterLeavesOldFileUntilCommit) {
  TempDir dir;
  fs::path p = dir.path() / "f.bin";
  write_file_atomic(p, "old");
  {
    AtomicFileWriter w(p);
    w.write("new contents");
    EXPECT_TRUE(fs::exists(w.temp_path()));
    EXPECT_TRUE(is_atomic_temp_name(w.temp_path().filename().string()));
    EXPECT_EQ(read_file(p), "old");
  }  // destroyed without commit
  EXPECT_EQ(read_file(p), "old");
  size_t n = 0;
  for (auto& e : fs::directory_iterator(dir.path())) (void)e, ++n;
  EXPECT_EQ(n, 1u);
  write_file_atomic(p, "new");
  EXPECT_EQ(read_file(p), "new");
}

}  // namespace
}  // namespace skiff::io
