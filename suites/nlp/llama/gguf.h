#pragma once
/// \file gguf.h
/// GGUF (version 3), the file format of ggml / llama.cpp: a writer, a reader, and the
/// export of a LlamaForCausalLM model directory (Hugging Face layout) to a GGUF file
/// that llama.cpp loads as architecture "llama".
///
/// Layout (all integers little-endian):
///   "GGUF" | uint32 version (3) | uint64 tensor count | uint64 metadata count
///   metadata: key (uint64 length + bytes) | uint32 value type | value
///             (a string is uint64 length + bytes; an array is uint32 element type,
///              uint64 count, then the elements)
///   tensor infos: name | uint32 n_dims | uint64 dims[n_dims] | uint32 ggml type | uint64 offset
///   padding to `general.alignment` (32 by default)
///   data: each tensor at its offset (relative to the start of the data section, a
///         multiple of the alignment), zero padding between tensors.
/// Dims are in ggml order, the fastest-varying first: the reverse of the row-major shape,
/// so a [rows, cols] weight is written as dims {cols, rows}.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace skiff::nlp {

/// Metadata value types (GGUF's gguf_metadata_value_type).
enum class GgufType : uint32_t {
  Uint8 = 0, Int8 = 1, Uint16 = 2, Int16 = 3, Uint32 = 4, Int32 = 5, Float32 = 6,
  Bool = 7, String = 8, Array = 9, Uint64 = 10, Int64 = 11, Float64 = 12,
};
std::string gguf_type_name(GgufType t);

/// Tensor element types written and read here (ggml_type values).
enum class GgufTensorType : uint32_t { F32 = 0, F16 = 1 };
std::string gguf_tensor_type_name(GgufTensorType t);
/// "f32" / "f16" (case-insensitive). \throws ValueError naming `name` otherwise.
GgufTensorType parse_gguf_tensor_type(const std::string& name);

/// One metadata value. Integers (every width) live in `i`, floats in `f`; arrays hold
/// their elements (all of type `elem_type`) in `array`.
struct GgufValue {
  GgufType type = GgufType::Uint32;
  GgufType elem_type = GgufType::Uint8;  ///< arrays only
  int64_t i = 0;
  double f = 0.0;
  bool b = false;
  std::string s;
  std::vector<GgufValue> array;

  static GgufValue u32(uint32_t v);
  static GgufValue i32(int32_t v);
  static GgufValue u64(uint64_t v);
  static GgufValue f32(float v);
  static GgufValue boolean(bool v);
  static GgufValue str(std::string v);
  static GgufValue strings(const std::vector<std::string>& v);
  static GgufValue int32s(const std::vector<int32_t>& v);
  static GgufValue float32s(const std::vector<float>& v);

  bool operator==(const GgufValue& o) const;
};

/// A tensor to write: row-major float values and shape.
struct GgufTensor {
  std::string name;
  std::vector<int64_t> shape;  ///< row-major (written reversed)
  GgufTensorType type = GgufTensorType::F32;
  std::vector<float> values;
};

/// Collects metadata and tensors, then writes a GGUF file.
class GgufWriter {
 public:
  /// Adds a key. \throws ValueError for a duplicate key.
  void add(const std::string& key, GgufValue value);
  /// Adds a tensor. \throws ValueError for a duplicate name or values not matching shape.
  void add_tensor(GgufTensor tensor);
  /// Writes the file atomically (io::AtomicFileWriter). Writes `general.alignment`
  /// when the alignment is not 32 (GGUF's default).
  /// \throws IoError naming the path when it cannot be written.
  void write(const std::filesystem::path& path, uint32_t alignment = 32) const;

  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return kv_; }
  const std::vector<GgufTensor>& tensors() const { return tensors_; }

 private:
  std::vector<std::pair<std::string, GgufValue>> kv_;
  std::vector<GgufTensor> tensors_;
};

/// A tensor entry read back.
struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  ///< ggml order (fastest first), as in the file
  GgufTensorType type = GgufTensorType::F32;
  uint64_t offset = 0;  ///< relative to the data section
  /// Row-major shape (dims reversed).
  std::vector<int64_t> shape() const;
  uint64_t numel() const;
};

/// A whole GGUF file read into memory (for tests and inspection; F32/F16 tensors only).
struct GgufFile {
  uint32_t version = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata;  ///< in file order
  std::vector<GgufTensorInfo> tensors;                      ///< in file order
  uint64_t data_offset = 0;                                 ///< absolute start of the data section
  uint32_t alignment = 32;
  std::string bytes;  ///< the whole file

  /// Reads `path`. \throws IoError when unreadable; ValueError naming the file and the
  ///   offset for a bad magic, unsupported version, truncation or an unknown type.
  static GgufFile read(const std::filesystem::path& path);
  /// The value of `key`. \throws ValueError naming the key when absent.
  const GgufValue& get(const std::string& key) const;
  bool has(const std::string& key) const;
  /// The tensor named `name`. \throws ValueError when absent.
  const GgufTensorInfo& tensor(const std::string& name) const;
  /// Its values as float32, row-major. \throws ValueError when absent.
  std::vector<float> tensor_values(const std::string& name) const;
};

/// The llama.cpp name of a Hugging Face LLaMA parameter ("model.layers.3.mlp.up_proj.weight"
/// -> "blk.3.ffn_up.weight"). \throws ValueError naming `hf_name` for an unknown one.
std::string gguf_llama_tensor_name(const std::string& hf_name);

/// Reorders the rows of a q or k projection ([n_head * D, cols], row-major; a bias has
/// cols = 1) from Hugging Face's rotary layout to GGML's. HF (rotate_half) rotates row j
/// of a head with row j + D/2; GGML's normal rope (LLAMA_ROPE_TYPE_NORM) rotates rows
/// 2j and 2j+1. Row s*D/2 + j of each head moves to row 2j + s, so both rotate the same
/// pairs with the same frequency theta^(-2j/D). This is the permutation llama.cpp's
/// convert_hf_to_gguf.py applies to q_proj and k_proj for the llama architecture (with
/// n_head = num_key_value_heads for k). \throws ValueError when rows is not n_head * an even D.
std::vector<float> gguf_permute_qk(const std::vector<float>& w, int64_t rows, int64_t cols, int64_t n_head);
/// The inverse of gguf_permute_qk.
std::vector<float> gguf_unpermute_qk(const std::vector<float>& w, int64_t rows, int64_t cols, int64_t n_head);

struct GgufExportOptions {
  GgufTensorType dtype = GgufTensorType::F32;  ///< matrices; norms (1-D) stay F32 as llama.cpp's converter does
  std::string name;                            ///< general.name; default: the directory's name
};

struct GgufExportSummary {
  size_t tensors = 0, metadata = 0;
  uint64_t bytes = 0;  ///< file size
};

/// Builds the GGUF contents (metadata and tensors) of a model directory (config.json,
/// safetensors, tokenizer.json) without writing them.
/// Biases (attention_bias, mlp_bias) are written as blk.N.<name>.bias (q/k biases permuted
/// like their weights); a head_dim other than hidden_size / heads adds
/// llama.attention.key_length / value_length; a tied model has no output.weight (llama.cpp
/// reuses token_embd). tests/tools/llamacpp/gguf_parity.sh checks these with llama.cpp.
/// \throws as load_llama(); IoError naming tokenizer.json when it is missing; ValueError /
///   NotImplementedError (from the tokenizer reader) when it is not a byte-level BPE, or has
///   more tokens than vocab_size; NotImplementedError for rope scaling other than linear
///   (dynamic, llama3).
GgufWriter build_llama_gguf(const std::filesystem::path& model_dir, const GgufExportOptions& options = {});

/// build_llama_gguf() written to `out` (atomically).
GgufExportSummary export_llama_gguf(const std::filesystem::path& model_dir, const std::filesystem::path& out,
                                    const GgufExportOptions& options = {});

}  // namespace skiff::nlp
