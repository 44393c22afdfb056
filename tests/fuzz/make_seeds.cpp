// fuzz_make_seeds DIR: writes the binary seed inputs of the fuzzers into DIR/<harness>/,
// made with skiff's own writers (and libarchive's) so they are valid files of every kind
// a harness reads: the fuzzer then mutates from inputs that reach deep into each reader.
// The text seeds are files in tests/fuzz/corpus/.
#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>

#include "framework/core/rng.h"
#include "framework/data/image_io.h"
#include "framework/graph/onnx_export.h"
#include "framework/io/checkpoint.h"
#include "framework/io/safetensors.h"
#include "tests/fuzz/fuzz_support.h"

namespace fs = std::filesystem;
using namespace skiff;
using json = nlohmann::json;

namespace {

fs::path out_dir;

void write(const std::string& harness, const std::string& name, std::string_view bytes) {
  fs::create_directories(out_dir / harness);
  std::ofstream(out_dir / harness / name, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

std::string as_string(const std::vector<uint8_t>& v) { return {v.begin(), v.end()}; }

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void image_seeds() {
  cv::Mat color(6, 8, CV_8UC3), gray(5, 7, CV_8UC1);
  cv::randu(color, 0, 255);
  cv::randu(gray, 0, 255);
  write("image", "color.png", as_string(data::encode_image(color, ".png")));
  write("image", "gray.png", as_string(data::encode_image(gray, ".png")));
  write("image", "color.bmp", as_string(data::encode_image(color, ".bmp")));
  write("image", "gray.bmp", as_string(data::encode_image(gray, ".bmp")));
  std::string jpeg = as_string(data::encode_image(color, ".jpg", 80));
  write("image", "color.jpg", jpeg);
  write("image", "gray.jpg", as_string(data::encode_image(gray, ".jpg", 80)));
  // The same JPEG with an EXIF APP1 segment right after SOI saying "rotate 90" (orientation 6).
  const std::string tiff = std::string("II*\0\x08\0\0\0", 8) + std::string("\x01\0", 2) +
                           std::string("\x12\x01\x03\0\x01\0\0\0\x06\0\0\0", 12) + std::string(4, '\0');
  const std::string payload = std::string("Exif\0\0", 6) + tiff;
  const size_t len = payload.size() + 2;
  std::string app1 = std::string("\xFF\xE1", 2) + char(len >> 8) + char(len & 0xFF) + payload;
  write("image", "exif_rotated.jpg", jpeg.substr(0, 2) + app1 + jpeg.substr(2));
}

io::TensorMap some_tensors() {
  io::TensorMap t;
  t["conv.weight"] = randn({2, 3, 3, 3});
  t["conv.bias"] = zeros({2});
  t["ids"] = arange(0, 5);
  t["half"] = detail::cast(ones({4}), DType::BFloat16);
  t["flag"] = scalar_tensor(1, DType::UInt8);
  t["empty"] = zeros({0, 3});
  return t;
}

void safetensors_seeds() {
  write("safetensors", "tensors.safetensors", io::serialize_safetensors(some_tensors(), {{"format", "pt"}}));
  write("safetensors", "empty.safetensors", io::serialize_safetensors({}));
  io::Checkpoint ckpt;
  ckpt.step = 42;
  ckpt.model = some_tensors();
  ckpt.optimizer["conv.weight.exp_avg"] = zeros({2, 3, 3, 3});
  ckpt.optimizer_state = R"({"lr": 0.001, "step": 42})";
  ckpt.scheduler_state = R"({"last_epoch": 3})";
  ckpt.rng["default"] = Generator(7).state();
  ckpt.data["train"] = "epoch=1 batch=3";
  ckpt.metrics["val_acc"] = 0.5;
  ckpt.metadata["config_hash"] = "abc";
  fs::create_directories(out_dir / "checkpoint");
  io::save_checkpoint(out_dir / "checkpoint" / "ckpt.safetensors", ckpt);
}

graph::ValueInfo input(const std::string& name, std::vector<graph::Dim> shape, DType dtype = DType::Float32) {
  return graph::ValueInfo{name, dtype, true, std::move(shape)};
}

graph::Node node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                 std::map<std::string, graph::AttrValue> attrs = {}) {
  return graph::Node{out[0], op, "", std::move(in), std::move(out), std::move(attrs)};
}

void onnx_seed(const std::string& name, graph::Graph g) {
  g.name = name;
  g.opset_version = 14;
  write("onnx", name + ".onnx", graph::export_onnx_bytes(g));
}

void onnx_seeds() {
  using graph::Dim;
  {  // A small CNN classifier: conv, batch norm, activations, pooling, gemm, softmax.
    graph::Graph g;
    g.inputs = {input("x", {Dim::dynamic("N"), Dim::fixed(3), Dim::fixed(8), Dim::fixed(8)})};
    g.initializers = {{"w", randn({4, 3, 3, 3})},   {"b", zeros({4})},      {"scale", ones({4})},
                      {"shift", zeros({4})},        {"mean", zeros({4})},   {"var", ones({4})},
                      {"fc_w", randn({4, 5})},      {"fc_b", zeros({5})}};
    g.nodes = {node("Conv", {"x", "w", "b"}, {"c"}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}),
               node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"bn"}),
               node("Relu", {"bn"}, {"r"}),
               node("MaxPool", {"r"}, {"p"}, {{"kernel_shape", std::vector<int64_t>{2, 2}},
                                              {"strides", std::vector<int64_t>{2, 2}}}),
               node("HardSwish", {"p"}, {"h"}),
               node("GlobalAveragePool", {"h"}, {"g"}),
               node("Flatten", {"g"}, {"f"}),
               node("Gemm", {"f", "fc_w", "fc_b"}, {"logits"}),
               node("Softmax", {"logits"}, {"y"}, {{"axis", int64_t(-1)}})};
    g.outputs = {input("y", {Dim::dynamic("N"), Dim::fixed(5)})};
    onnx_seed("cnn", std::move(g));
  }
  {  // Shape arithmetic and tensor plumbing: what exporters emit around the layers.
    graph::Graph g;
    g.inputs = {input("x", {Dim::fixed(2), Dim::dynamic("T"), Dim::fixed(4)})};
    g.initializers = {{"shape", from_vector<int64_t>({0, -1})}, {"axes", from_vector<int64_t>({1})},
                      {"starts", from_vector<int64_t>({0})},    {"ends", from_vector<int64_t>({1})},
                      {"idx", from_vector<int64_t>({0, 1})},    {"w", randn({4, 4})}};
    g.nodes = {node("MatMul", {"x", "w"}, {"m"}),
               node("Add", {"m", "x"}, {"a"}),
               node("Transpose", {"a"}, {"t"}, {{"perm", std::vector<int64_t>{0, 2, 1}}}),
               node("Reshape", {"t", "shape"}, {"r"}),
               node("ReduceMean", {"x"}, {"mean"}, {{"axes", std::vector<int64_t>{2}}, {"keepdims", int64_t(1)}}),
               node("Sub", {"x", "mean"}, {"centered"}),
               node("Sigmoid", {"centered"}, {"s"}),
               node("Concat", {"s", "x"}, {"cat"}, {{"axis", int64_t(2)}}),
               node("Slice", {"cat", "starts", "ends", "axes"}, {"sl"}),
               node("Gather", {"cat", "idx"}, {"gth"}, {{"axis", int64_t(2)}}),
               node("Shape", {"x"}, {"shp"})};
    g.outputs = {input("r", {}), input("sl", {}), input("gth", {}), input("shp", {}, DType::Int64)};
    for (auto& o : g.outputs) o.has_shape = false;
    onnx_seed("plumbing", std::move(g));
  }
  {  // Resize and padding as detectors use them, on an int64 size computation.
    graph::Graph g;
    g.inputs = {input("x", {Dim::fixed(1), Dim::fixed(2), Dim::dynamic("H"), Dim::dynamic("W")})};
    g.initializers = {{"roi", zeros({0})}, {"scales", from_vector<float>({1, 1, 2, 2})},
                      {"pads", from_vector<int64_t>({0, 0, 1, 1, 0, 0, 1, 1})}};
    g.nodes = {node("Resize", {"x", "roi", "scales"}, {"up"}, {{"mode", std::string("linear")}}),
               node("Pad", {"up", "pads"}, {"padded"}),
               node("Clip", {"padded"}, {"y"})};
    g.outputs = {input("y", {})};
    g.outputs[0].has_shape = false;
    onnx_seed("resize", std::move(g));
  }
}

void tfjs_seeds() {
  std::vector<float> w(2 * 2 * 3 * 4, 0.5f), b(4, 0.1f), fc(4 * 3, -0.25f);
  std::string bin(reinterpret_cast<const char*>(w.data()), w.size() * 4);
  bin.append(reinterpret_cast<const char*>(b.data()), b.size() * 4);
  bin.append(reinterpret_cast<const char*>(fc.data()), fc.size() * 4);
  auto s = [](const char* b64) { return json{{"s", b64}}; };
  json ints = {{"list", {{"i", {"1", "1", "1", "1"}}}}};
  json nodes = json::array({
      {{"name", "x"}, {"op", "Placeholder"},
       {"attr", {{"dtype", {{"type", "DT_FLOAT"}}},
                 {"shape", {{"shape", {{"dim", {{{"size", "1"}}, {{"size", "4"}}, {{"size", "4"}}, {{"size", "3"}}}}}}}}}}},
      {{"name", "w"}, {"op", "Const"}, {"attr", {{"dtype", {{"type", "DT_FLOAT"}}}}}},
      {{"name", "b"}, {"op", "Const"}, {"attr", {{"dtype", {{"type", "DT_FLOAT"}}}}}},
      {{"name", "fc"}, {"op", "Const"}, {"attr", {{"dtype", {{"type", "DT_FLOAT"}}}}}},
      {{"name", "conv"}, {"op", "_FusedConv2D"}, {"input", {"x", "w", "b"}},
       {"attr", {{"padding", s("U0FNRQ==")}, {"strides", ints}, {"data_format", s("TkhXQw==")},
                 {"fused_ops", {{"list", {{"s", {"Qmlhc0FkZA==", "UmVsdQ=="}}}}}}, {"num_args", {{"i", "1"}}}}}},
      {{"name", "pool"}, {"op", "Mean"}, {"input", {"conv", "axes"}}, {"attr", {{"keep_dims", {{"b", false}}}}}},
      {{"name", "axes"}, {"op", "Const"}, {"attr", {{"dtype", {{"type", "DT_INT32"}}}}}},
      {{"name", "y"}, {"op", "MatMul"}, {"input", {"pool", "fc"}}, {"attr", json::object()}},
      {{"name", "out"}, {"op", "Sigmoid"}, {"input", {"y"}}, {"attr", json::object()}}});
  std::vector<int32_t> axes = {1, 2};
  bin.append(reinterpret_cast<const char*>(axes.data()), axes.size() * 4);
  json weights = json::array({{{"name", "w"}, {"shape", {2, 2, 3, 4}}, {"dtype", "float32"}},
                              {{"name", "b"}, {"shape", {4}}, {"dtype", "float32"}},
                              {{"name", "fc"}, {"shape", {4, 3}}, {"dtype", "float32"}},
                              {{"name", "axes"}, {"shape", {2}}, {"dtype", "int32"}}});
  json model = {{"format", "graph-model"},
                {"modelTopology", {{"node", nodes}}},
                {"signature", {{"outputs", {{"out:0", {{"name", "out:0"}, {"dtype", "DT_FLOAT"}}}}}}},
                {"weightsManifest", json::array({{{"paths", {"group1-shard1of1.bin"}}, {"weights", weights}}})}};
  write("tfjs", "conv_classifier", model.dump(1) + std::string(fuzz::kPartSeparator) + bin);
}

// An archive in `format` ("tar", "zip", "tar.gz") holding `files` (name -> content; a
// content starting with "->" makes a symbolic link to the rest).
void archive_seed(const std::string& name, const std::string& format,
                  const std::vector<std::pair<std::string, std::string>>& files) {
  archive* a = archive_write_new();
  if (format == "zip") archive_write_set_format_zip(a);
  else archive_write_set_format_pax_restricted(a);
  if (format == "tar.gz") archive_write_add_filter_gzip(a);
  std::vector<char> buffer(1 << 16);
  size_t used = 0;
  archive_write_open_memory(a, buffer.data(), buffer.size(), &used);
  for (const auto& [path, content] : files) {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, path.c_str());
    archive_entry_set_perm(e, 0644);
    if (content.rfind("->", 0) == 0) {
      archive_entry_set_filetype(e, AE_IFLNK);
      archive_entry_set_symlink(e, content.substr(2).c_str());
    } else if (!path.empty() && path.back() == '/') {
      archive_entry_set_filetype(e, AE_IFDIR);
    } else {
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_size(e, la_int64_t(content.size()));
    }
    archive_write_header(a, e);
    if (archive_entry_filetype(e) == AE_IFREG) archive_write_data(a, content.data(), content.size());
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  write("archive", name, std::string(buffer.data(), used));
}

void archive_seeds() {
  const std::vector<std::pair<std::string, std::string>> model = {
      {"model/", ""}, {"model/model.onnx", "not really onnx"}, {"model/inference.yml", "mode: paddle\n"},
      {"model/latest", "->model.onnx"}};
  archive_seed("model.tar", "tar", model);
  archive_seed("model.tar.gz", "tar.gz", model);
  archive_seed("model.zip", "zip", model);
  archive_seed("flat.tar", "tar", {{"model.onnx", std::string(300, 'x')}, {"README", "weights"}});
}

void tokenizer_seeds() {
  fs::path dir = fs::temp_directory_path() / ("skiff-fuzz-spm-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "text.txt") << "the quick brown fox jumps over the lazy dog\n"
                                     "a stitch in time saves nine\nhello world 你好 世界\n"
                                     "café naïve façade 123 456\n";
  // SentencePiece's own trainer (Debian's spm_train), not text::train_sentencepiece: this
  // program links the system protobuf for ONNX, and under the sanitizers skiff loads
  // libsentencepiece without RTLD_DEEPBIND, so the two protobufs must not meet in one process.
  for (const char* type : {"unigram", "bpe"}) {
    const fs::path prefix = dir / type;
    const std::string command = fmt::format(
        "spm_train --input='{}' --model_prefix='{}' --vocab_size={} --hard_vocab_limit=false --model_type={} "
        "--byte_fallback={} --minloglevel=2 >/dev/null 2>&1", (dir / "text.txt").string(), prefix.string(),
        std::string(type) == "bpe" ? 300 : 60, type,
        std::string(type) == "bpe" ? "true" : "false");
    if (std::system(command.c_str()) != 0) {
      std::fprintf(stderr, "fuzz_make_seeds: spm_train failed or is missing: no SentencePiece seeds\n");
      continue;
    }
    write("tokenizer", std::string("spm_") + type, "\x03" + read_all(prefix.string() + ".model"));
  }
  fs::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\nWrites the fuzzers' binary seed inputs into DIR/<harness>/.\n", argv[0]);
    return 2;
  }
  out_dir = argv[1];
  try {
    image_seeds();
    safetensors_seeds();
    onnx_seeds();
    tfjs_seeds();
    archive_seeds();
    tokenizer_seeds();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_make_seeds: %s\n", e.what());
    return 1;
  }
  std::printf("seeds written to %s\n", out_dir.c_str());
  return 0;
}
