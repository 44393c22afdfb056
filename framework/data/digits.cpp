#include "framework/data/digits.h"

#include <zlib.h>

#include <charconv>
#include <cstdlib>
#include <cstring>

#include "framework/core/error.h"
#include "framework/io/file.h"

namespace skiff::data {
namespace fs = std::filesystem;

std::string gunzip(std::string_view in, std::string_view name) {
  z_stream zs{};
  // 15 + 32: accept a gzip or zlib header (auto-detected).
  if (inflateInit2(&zs, 15 + 32) != Z_OK) SKIFF_THROW(IoError, "gunzip '{}': cannot initialise zlib", name);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = uInt(in.size());
  std::string out;
  char buf[1 << 16];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      std::string msg = zs.msg ? zs.msg : (rc == Z_BUF_ERROR ? "truncated data" : "error " + std::to_string(rc));
      inflateEnd(&zs);
      SKIFF_THROW(IoError, "gunzip '{}': {}", name, msg);
    }
    out.append(buf, sizeof buf - zs.avail_out);
  } while (rc != Z_STREAM_END);
  inflateEnd(&zs);
  return out;
}

std::optional<fs::path> find_digits_csv() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("SKIFF_DIGITS_CSV"); env && *env) candidates.emplace_back(env);
  for (const char* p : {"/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz",
                        "/usr/local/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"})
    candidates.emplace_back(p);
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return c;
  }
  return std::nullopt;
}

DigitsData load_digits(const fs::path& path_in, bool scale) {
  fs::path path = path_in;
  if (path.empty()) {
    auto found = find_digits_csv();
    if (!found)
      SKIFF_THROW(IoError,
                  "digits: digits.csv.gz not found (install python3-sklearn or set SKIFF_DIGITS_CSV)");
    path = *found;
  }
  const std::string name = path.string();
  std::string text = gunzip(io::read_file(path), name);
  constexpr int kPixels = 64;
  std::vector<float> pixels;
  std::vector<int64_t> labels;
  size_t pos = 0;
  int line = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string_view row(text.data() + pos, eol - pos);
    pos = eol + 1;
    ++line;
    if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
    if (row.empty()) continue;
    int field = 0;
    const char* p = row.data();
    const char* end = row.data() + row.size();
    while (true) {
      int v = 0;
      auto [q, ec] = std::from_chars(p, end, v);
      if (ec != std::errc())
        SKIFF_THROW(IoError, "digits '{}' line {}: field {} is not an integer", name, line, field + 1);
      if (field < kPixels) {
        if (v < 0 || v > 16) SKIFF_THROW(IoError, "digits '{}' line {}: pixel {} out of 0..16", name, line, v);
        pixels.push_back(scale ? float(v) / 16.0f : float(v));
      } else if (field == kPixels) {
        if (v < 0 || v > 9) SKIFF_THROW(IoError, "digits '{}' line {}: label {} out of 0..9", name, line, v);
        labels.push_back(v);
      }
      ++field;
      p = q;
      if (p == end) break;
      if (*p != ',') SKIFF_THROW(IoError, "digits '{}' line {}: unexpected character after field {}", name, line, field);
      ++p;
    }
    if (field != kPixels + 1)
      SKIFF_THROW(IoError, "digits '{}' line {}: {} fields, expected {}", name, line, field, kPixels + 1);
  }
  if (labels.empty()) SKIFF_THROW(IoError, "digits '{}': no rows", name);
  const int64_t n = int64_t(labels.size());
  return {from_vector(pixels, Shape{n, 1, 8, 8}), from_vector(labels, Shape{n})};
}

std::shared_ptr<TensorDataset> digits_dataset(const fs::path& path, bool scale) {
  DigitsData d = load_digits(path, scale);
  return std::make_shared<TensorDataset>(Example{{"image", d.images}, {"label", d.labels}});
}

}  // namespace skiff::data
