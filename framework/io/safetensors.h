#pragma once
/// \file safetensors.h
/// Reading and writing the safetensors format (huggingface/safetensors), the
/// ecosystem's format for weights and our format for checkpoints.
///
/// Layout of a file:
///   - 8 bytes: N, the header length, unsigned little-endian.
///   - N bytes: a UTF-8 JSON object. Each tensor is
///     `"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}`;
///     an optional `"__metadata__"` maps strings to strings. Padded with spaces so
///     that 8 + N is a multiple of 8.
///   - the byte buffer: tensor data, row-major, little-endian; offsets are
///     relative to the start of the buffer.
///
/// Writing follows the reference implementation byte for byte: compact JSON,
/// `__metadata__` first (omitted when empty; its keys sorted), then the tensors
/// in buffer order with keys dtype, shape, data_offsets. Buffer order is the
/// reference's: decreasing dtype alignment, then name. That way every tensor is
/// naturally aligned in the file and a memory-mapped load needs no copy. A file
/// whose tensors all share one dtype therefore lists them sorted by name.
///
/// Reading validates everything before touching tensor data: the header length
/// against the file size and a 100 MB cap, the JSON, each entry's dtype, shape and
/// offsets, that `end - begin == numel * itemsize` (overflow-checked), and that the
/// ranges sorted by begin are contiguous, non-overlapping and cover the buffer
/// exactly. A malformed file raises IoError naming the file and the problem; it
/// never reads out of range.
///
/// dtypes: BOOL, U8, I8, I32, I64, F16, BF16, F32, F64, C64. Complex128 has no
/// safetensors name and is rejected on write (TypeError); other spec dtypes
/// (I16, U16, U32, U64, F8_*) are rejected on read (IoError) because skiff has
/// no matching element type.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "framework/tensor/tensor.h"

namespace skiff::io {

/// Tensors by name (sorted, as safetensors names are unique).
using TensorMap = std::map<std::string, Tensor>;
/// The string -> string `__metadata__` section.
using Metadata = std::map<std::string, std::string>;

/// Contents of a safetensors file.
struct SafetensorsFile {
  TensorMap tensors;
  Metadata metadata;
};

/// One header entry, as read from a file (see read_safetensors_header()).
struct TensorInfo {
  DType dtype;
  Shape shape;
  uint64_t begin = 0;  ///< byte offset in the buffer
  uint64_t end = 0;    ///< one past the last byte
};

/// A parsed and validated header.
struct SafetensorsHeader {
  std::map<std::string, TensorInfo> tensors;
  Metadata metadata;
  uint64_t header_size = 0;  ///< N
  uint64_t buffer_size = 0;  ///< bytes after the header
};

/// Largest accepted header (the reference's limit), bytes.
inline constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

/// The safetensors dtype string ("F32", "BF16", ...). \throws TypeError for Complex128.
std::string_view safetensors_dtype(DType dtype);
/// Parses a safetensors dtype string. \throws ValueError for a name skiff cannot hold.
DType dtype_from_safetensors(std::string_view name);

/// Serializes tensors (any strides: non-contiguous ones are copied) and metadata.
/// \throws TypeError for Complex128, ValueError for a non-CPU tensor, an undefined
///   tensor, a name equal to "__metadata__", or names/values that are not valid UTF-8.
std::string serialize_safetensors(const TensorMap& tensors, const Metadata& metadata = {});

/// Writes a safetensors file atomically (temp file + fsync + rename + fsync of the
/// directory), streaming tensor data without building the whole file in memory.
/// \throws as serialize_safetensors, plus IoError for OS failures.
void save_safetensors(const std::filesystem::path& path, const TensorMap& tensors,
                      const Metadata& metadata = {});

/// How load_safetensors() brings data into memory.
struct LoadOptions {
  /// true: tensors are views onto a private copy-on-write mmap of the file (no
  /// read up front; the mapping lives as long as any tensor). false: the file is
  /// read into one heap buffer.
  bool mmap = true;
};

/// Loads every tensor and the metadata. Tensors are contiguous CPU tensors; in
/// mmap mode they view the mapping, except that a tensor whose offset is not a
/// multiple of its itemsize (possible in files from other writers) is copied so
/// kernels always see aligned data. Bool tensors are checked to hold only 0/1.
/// \throws IoError naming `path` for unreadable or malformed files.
SafetensorsFile load_safetensors(const std::filesystem::path& path, const LoadOptions& options = {});

/// Parses a whole in-memory safetensors file (copies the data). `name` is used in
/// error messages. \throws IoError for malformed input.
SafetensorsFile parse_safetensors(std::string_view bytes, std::string_view name = "<memory>");

/// Reads and validates only the header (cheap: used to list checkpoints).
/// \throws IoError for an unreadable or malformed file.
SafetensorsHeader read_safetensors_header(const std::filesystem::path& path);

}  // namespace skiff::io
