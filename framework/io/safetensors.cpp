#include "framework/io/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <tuple>
#include <nlohmann/json.hpp>
#include <vector>

#include "framework/core/error.h"
#include "framework/io/file.h"

namespace skiff::io {
namespace fs = std::filesystem;
using nlohmann::json;

static_assert(std::endian::native == std::endian::little,
              "safetensors stores little-endian data; big-endian hosts need byte swapping");

namespace {

// Position in the reference's Dtype enum (increasing alignment). Writing sorts by
// it descending, then by name, as the reference does.
int dtype_rank(DType t) {
  switch (t) {
    case DType::Bool: return 0;
    case DType::UInt8: return 1;
    case DType::Int8: return 2;
    case DType::Float16: return 3;
    case DType::BFloat16: return 4;
    case DType::Int32: return 5;
    case DType::Float32: return 6;
    case DType::Complex64: return 7;
    case DType::Float64: return 8;
    case DType::Int64: return 9;
    default: return -1;
  }
}

[[noreturn]] void bad_file(std::string_view file, std::string_view problem) {
  SKIFF_THROW(IoError, "safetensors file '{}': {}", file, problem);
}

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Validates the JSON header (bytes [8, 8+n) of a file of `file_size` bytes).
SafetensorsHeader parse_header_json(const uint8_t* text, uint64_t n, uint64_t file_size,
                                    std::string_view file) {
  SafetensorsHeader h;
  h.header_size = n;
  h.buffer_size = file_size - 8 - n;
  if (n == 0 || text[0] != '{') bad_file(file, "header does not start with '{'");
  json j = json::parse(text, text + n, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) bad_file(file, "header is not valid UTF-8 JSON");
  if (!j.is_object()) bad_file(file, "header is not a JSON object");

  std::vector<std::pair<const std::string*, TensorInfo*>> order;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& name = it.key();
    const json& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) bad_file(file, "__metadata__ is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string())
          bad_file(file, fmt::format("__metadata__ value of '{}' is not a string", m.key()));
        h.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    auto fail = [&](std::string_view what) { bad_file(file, fmt::format("tensor '{}': {}", name, what)); };
    if (!v.is_object()) fail("entry is not an object");
    auto dt = v.find("dtype");
    auto sh = v.find("shape");
    auto off = v.find("data_offsets");
    if (dt == v.end() || !dt->is_string()) fail("missing or non-string 'dtype'");
    if (sh == v.end() || !sh->is_array()) fail("missing or non-array 'shape'");
    if (off == v.end() || !off->is_array() || off->size() != 2) fail("'data_offsets' is not [begin, end]");
    TensorInfo info;
    const std::string dts = dt->get<std::string>();
    try {
      info.dtype = dtype_from_safetensors(dts);
    } catch (const ValueError&) {
      fail(fmt::format("unknown or unsupported dtype '{}'", dts));
    }
    if (int64_t(sh->size()) > kMaxDims) fail(fmt::format("{} dimensions, at most {} are supported", sh->size(), kMaxDims));
    // numel * itemsize with overflow checks: a hostile shape must not wrap around
    // and pass the size comparison.
    uint64_t nbytes = uint64_t(itemsize(info.dtype));
    for (const json& d : *sh) {
      if (!d.is_number_unsigned()) fail("shape entries must be non-negative integers");
      uint64_t dim = d.get<uint64_t>();
      if (dim > uint64_t(INT64_MAX)) fail("dimension too large");
      info.shape.push_back(int64_t(dim));
      if (dim != 0 && nbytes > UINT64_MAX / dim) fail("shape overflows the byte count");
      nbytes *= dim;
    }
    if (!(*off)[0].is_number_unsigned() || !(*off)[1].is_number_unsigned())
      fail("data_offsets must be non-negative integers");
    info.begin = (*off)[0].get<uint64_t>();
    info.end = (*off)[1].get<uint64_t>();
    if (info.end < info.begin) fail(fmt::format("data_offsets [{}, {}] end before begin", info.begin, info.end));
    if (info.end > h.buffer_size)
      fail(fmt::format("data_offsets [{}, {}] past the end of the {}-byte buffer", info.begin, info.end,
                       h.buffer_size));
    if (info.end - info.begin != nbytes)
      fail(fmt::format("data_offsets [{}, {}] hold {} bytes but dtype {} and shape {} need {}", info.begin,
                       info.end, info.end - info.begin, dts, info.shape, nbytes));
    auto [pos, inserted] = h.tensors.emplace(name, info);
    order.emplace_back(&pos->first, &pos->second);
  }

  // Sorted by begin, the ranges must tile [0, buffer_size) exactly.
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second->begin, a.second->end) < std::tie(b.second->begin, b.second->end);
  });
  uint64_t expect = 0;
  for (const auto& [name, info] : order) {
    if (info->begin < expect)
      bad_file(file, fmt::format("tensor '{}': data_offsets [{}, {}] overlap the previous tensor", *name,
                                 info->begin, info->end));
    if (info->begin > expect)
      bad_file(file, fmt::format("tensor '{}': gap in the buffer before offset {} (expected {})", *name,
                                 info->begin, expect));
    expect = info->end;
  }
  if (expect != h.buffer_size)
    bad_file(file, fmt::format("tensors cover {} bytes but the buffer holds {}", expect, h.buffer_size));
  return h;
}

// Checks the length prefix against the total size; returns N.
uint64_t check_prefix(const uint8_t* first8, uint64_t file_size, std::string_view file) {
  if (file_size < 8)
    bad_file(file, fmt::format("file is {} bytes, shorter than the 8-byte header length", file_size));
  uint64_t n = read_u64_le(first8);
  if (n > kMaxSafetensorsHeader)
    bad_file(file, fmt::format("header length {} exceeds the {}-byte limit", n, kMaxSafetensorsHeader));
  if (n > file_size - 8)
    bad_file(file, fmt::format("header length {} exceeds the {} bytes after the length prefix (truncated?)", n,
                               file_size - 8));
  return n;
}

// Builds tensors over a validated whole-file buffer. `keep` owns the buffer and is
// captured by every tensor's deleter.
SafetensorsFile build(uint8_t* base, uint64_t size, std::string_view file, std::shared_ptr<void> keep) {
  uint64_t n = check_prefix(base, size, file);
  SafetensorsHeader h = parse_header_json(base + 8, n, size, file);
  SafetensorsFile out;
  out.metadata = std::move(h.metadata);
  uint8_t* buffer = base + 8 + n;
  for (auto& [name, info] : h.tensors) {
    uint8_t* p = buffer + info.begin;
    uint64_t nbytes = info.end - info.begin;
    if (info.dtype == DType::Bool) {
      // Any byte other than 0/1 read as C++ bool is undefined behaviour.
      for (uint64_t i = 0; i < nbytes; ++i)
        if (p[i] > 1) bad_file(file, fmt::format("tensor '{}': BOOL byte {} is {}, expected 0 or 1", name, i, p[i]));
    }
    Tensor t;
    if (nbytes == 0) {
      t = empty(info.shape, info.dtype);
    } else if (reinterpret_cast<uintptr_t>(p) % uint64_t(itemsize(info.dtype)) == 0) {
      t = from_blob(p, info.shape, info.dtype, [keep](void*) {});
    } else {
      t = empty(info.shape, info.dtype);
      std::memcpy(t.data_ptr(), p, nbytes);
    }
    out.tensors.emplace(name, std::move(t));
  }
  return out;
}

std::string build_header(const std::vector<std::pair<const std::string*, const Tensor*>>& entries,
                         const Metadata& metadata, std::vector<uint64_t>& sizes) {
  std::string h = "{";
  try {
    if (!metadata.empty()) {
      json m = json::object();
      for (const auto& [k, v] : metadata) m[k] = v;
      h += "\"__metadata__\":" + m.dump();
    }
    uint64_t offset = 0;
    for (const auto& [name, t] : entries) {
      if (h.size() > 1) h += ',';
      uint64_t nb = uint64_t(t->numel()) * uint64_t(t->itemsize());
      h += json(*name).dump();
      h += fmt::format(":{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
                       safetensors_dtype(t->dtype()), fmt::join(t->shape(), ","), offset, offset + nb);
      offset += nb;
      sizes.push_back(nb);
    }
  } catch (const json::exception& e) {
    SKIFF_THROW(ValueError, "safetensors: tensor names and metadata must be valid UTF-8 ({})", e.what());
  }
  h += '}';
  h.resize((h.size() + 7) / 8 * 8, ' ');
  return h;
}

// Validates and orders the tensors; calls sink(bytes, n) for the whole file.
void write_stream(const TensorMap& tensors, const Metadata& metadata,
                  const std::function<void(const void*, size_t)>& sink) {
  std::vector<std::pair<const std::string*, const Tensor*>> entries;
  for (const auto& [name, t] : tensors) {
    SKIFF_CHECK(t.defined(), "safetensors: tensor '{}' is undefined", name);
    SKIFF_CHECK(name != "__metadata__", "safetensors: '__metadata__' is reserved and cannot name a tensor");
    SKIFF_CHECK(t.device() == kCPU, "safetensors: tensor '{}' is not on the CPU", name);
    (void)safetensors_dtype(t.dtype());  // throws TypeError for complex128
    entries.emplace_back(&name, &t);
  }
  std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    int ra = dtype_rank(a.second->dtype()), rb = dtype_rank(b.second->dtype());
    if (ra != rb) return ra > rb;
    return *a.first < *b.first;
  });
  std::vector<uint64_t> sizes;
  std::string header = build_header(entries, metadata, sizes);
  uint64_t n = header.size();
  uint8_t prefix[8];
  std::memcpy(prefix, &n, 8);
  sink(prefix, 8);
  sink(header.data(), header.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const Tensor& t = *entries[i].second;
    if (sizes[i] == 0) continue;
    if (t.is_contiguous()) {
      sink(t.data_ptr(), sizes[i]);
    } else {
      Tensor c = detail::contiguous_copy(t);
      sink(c.data_ptr(), sizes[i]);
    }
  }
}

}  // namespace

std::string_view safetensors_dtype(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "BOOL";
    case DType::UInt8: return "U8";
    case DType::Int8: return "I8";
    case DType::Int32: return "I32";
    case DType::Int64: return "I64";
    case DType::Float16: return "F16";
    case DType::BFloat16: return "BF16";
    case DType::Float32: return "F32";
    case DType::Float64: return "F64";
    case DType::Complex64: return "C64";
    case DType::Complex128: break;
  }
  SKIFF_THROW(TypeError, "safetensors: dtype {} has no safetensors name (cast to complex64 first)",
              dtype_name(dtype));
}

DType dtype_from_safetensors(std::string_view name) {
  static constexpr std::pair<std::string_view, DType> kTable[] = {
      {"BOOL", DType::Bool},     {"U8", DType::UInt8},    {"I8", DType::Int8},
      {"I32", DType::Int32},     {"I64", DType::Int64},   {"F16", DType::Float16},
      {"BF16", DType::BFloat16}, {"F32", DType::Float32}, {"F64", DType::Float64},
      {"C64", DType::Complex64}};
  for (const auto& [s, t] : kTable)
    if (s == name) return t;
  SKIFF_THROW(ValueError, "safetensors: dtype '{}' is unknown or has no skiff equivalent", name);
}

std::string serialize_safetensors(const TensorMap& tensors, const Metadata& metadata) {
  std::string out;
  write_stream(tensors, metadata, [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); });
  return out;
}

void save_safetensors(const fs::path& path, const TensorMap& tensors, const Metadata& metadata) {
  AtomicFileWriter w(path);
  // Small pieces (prefix, per-tensor headers) are batched so the file is not
  // written in thousands of tiny syscalls; large tensors go straight through.
  std::string pending;
  auto flush = [&] {
    if (!pending.empty()) w.write(pending.data(), pending.size());
    pending.clear();
  };
  write_stream(tensors, metadata, [&](const void* p, size_t n) {
    if (n >= (1u << 16)) {
      flush();
      w.write(p, n);
    } else {
      pending.append(static_cast<const char*>(p), n);
      if (pending.size() >= (1u << 20)) flush();
    }
  });
  flush();
  w.commit();
}

SafetensorsFile load_safetensors(const fs::path& path, const LoadOptions& options) {
  const std::string name = path.string();
  if (options.mmap) {
    std::shared_ptr<MappedFile> m = MappedFile::open(path);
    return build(m->data(), m->size(), name, m);
  }
  std::string bytes = read_file(path);
  auto storage = Storage::allocate(int64_t(bytes.size()), kCPU);
  if (!bytes.empty()) std::memcpy(storage->data(), bytes.data(), bytes.size());
  return build(static_cast<uint8_t*>(storage->data()), bytes.size(), name, storage);
}

SafetensorsFile parse_safetensors(std::string_view bytes, std::string_view name) {
  auto storage = Storage::allocate(int64_t(bytes.size()), kCPU);
  if (!bytes.empty()) std::memcpy(storage->data(), bytes.data(), bytes.size());
  return build(static_cast<uint8_t*>(storage->data()), bytes.size(), name, storage);
}

SafetensorsHeader read_safetensors_header(const fs::path& path) {
  // Reads just the prefix and the header; the buffer is only sized via stat.
  const std::string name = path.string();
  std::error_code ec;
  uint64_t size = fs::file_size(path, ec);
  if (ec) SKIFF_THROW(IoError, "cannot stat '{}': {}", name, ec.message());
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) SKIFF_THROW(IoError, "cannot open '{}': {}", name, std::strerror(errno));
  std::unique_ptr<FILE, int (*)(FILE*)> guard(f, &std::fclose);
  uint8_t prefix[8] = {};
  size_t got = std::fread(prefix, 1, 8, f);
  uint64_t n = check_prefix(prefix, got < 8 ? got : size, name);
  std::vector<uint8_t> text(n);
  if (n > 0 && std::fread(text.data(), 1, n, f) != n) bad_file(name, "short read of the header");
  return parse_header_json(text.data(), n, size, name);
}

}  // namespace skiff::io
