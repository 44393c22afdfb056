#include "framework/train/event_file.h"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "framework/core/error.h"

namespace skiff::train {

namespace {

constexpr std::array<uint32_t, 256> make_crc32c_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;  // reflected Castagnoli
    t[i] = c;
  }
  return t;
}
constexpr auto kCrcTable = make_crc32c_table();

uint32_t masked_crc(std::string_view bytes) {
  uint32_t c = crc32c(bytes);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

// ---- the protobuf wire format, just what Event needs -------------------------------------
void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(char(v | 0x80));
    v >>= 7;
  }
  out.push_back(char(v));
}
void put_tag(std::string& out, int field, int wire_type) { put_varint(out, uint64_t(field) << 3 | uint64_t(wire_type)); }
template <class T>
void put_fixed(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // little-endian hosts only (x86-64, aarch64)
  out.append(b, sizeof(T));
}
void put_bytes(std::string& out, int field, std::string_view bytes) {
  put_tag(out, field, 2);
  put_varint(out, bytes.size());
  out.append(bytes);
}

double wall_time() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// Event: wall_time = 1 (double), step = 2 (int64), file_version = 3 (string), summary = 5.
// Summary: value = 1 (repeated). Summary.Value: tag = 1 (string), simple_value = 2 (float).
std::string event_header(int64_t step) {
  std::string e;
  put_tag(e, 1, 1);
  put_fixed(e, wall_time());
  put_tag(e, 2, 0);
  put_varint(e, uint64_t(step));
  return e;
}

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : bytes) c = kCrcTable[(c ^ b) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

EventFileWriter::EventFileWriter(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  char host[256] = "localhost";
  ::gethostname(host, sizeof(host) - 1);
  path_ = dir / fmt::format("events.out.tfevents.{}.{}", int64_t(wall_time()), host);
  file_ = std::fopen(path_.c_str(), "ab");
  if (!file_) throw IoError(fmt::format("{}: cannot create the event file: {}", path_.string(), std::strerror(errno)));
  std::string e = event_header(0);
  put_bytes(e, 3, "brain.Event:2");
  write_record(e);
}

EventFileWriter::~EventFileWriter() {
  if (file_) std::fclose(file_);
}

void EventFileWriter::add_scalar(const std::string& tag, double value, int64_t step) {
  std::string v;
  put_bytes(v, 1, tag);
  put_tag(v, 2, 5);
  put_fixed(v, float(value));
  std::string summary;
  put_bytes(summary, 1, v);
  std::string e = event_header(step);
  put_bytes(e, 5, summary);
  write_record(e);
}

void EventFileWriter::write_record(const std::string& event) {
  std::string rec;
  std::string len;
  put_fixed(len, uint64_t(event.size()));
  rec += len;
  put_fixed(rec, masked_crc(len));
  rec += event;
  put_fixed(rec, masked_crc(event));
  if (std::fwrite(rec.data(), 1, rec.size(), file_) != rec.size() || std::fflush(file_) != 0)
    throw IoError(fmt::format("{}: write failed: {}", path_.string(), std::strerror(errno)));
}

// ---- reading back -------------------------------------------------------------------------

namespace {

struct Reader {
  std::string_view s;
  size_t pos = 0;
  bool done() const { return pos >= s.size(); }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && pos < s.size(); shift += 7) {
      auto b = uint8_t(s[pos++]);
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw IoError("truncated varint");
  }
  std::string_view take(size_t n) {
    if (pos + n > s.size()) throw IoError("truncated field");
    auto out = s.substr(pos, n);
    pos += n;
    return out;
  }
  // Skips or returns the payload of a field with this wire type.
  std::string_view field(int wire) {
    switch (wire) {
      case 0: varint(); return {};
      case 1: return take(8);
      case 2: return take(varint());
      case 5: return take(4);
      default: throw IoError(fmt::format("unsupported wire type {}", wire));
    }
  }
};

template <class T>
T fixed(std::string_view b) {
  T v;
  std::memcpy(&v, b.data(), sizeof(T));
  return v;
}

}  // namespace

std::vector<ScalarEvent> read_scalar_events(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("{}: cannot open the event file", path.string()));
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<ScalarEvent> out;
  size_t pos = 0;
  int record = 0;
  while (pos < data.size()) {
    auto bad = [&](const char* what) {
      return IoError(fmt::format("{}: record {}: {}", path.string(), record, what));
    };
    if (pos + 12 > data.size()) throw bad("truncated header");
    std::string_view len_bytes(data.data() + pos, 8);
    uint64_t len = fixed<uint64_t>(len_bytes);
    if (fixed<uint32_t>({data.data() + pos + 8, 4}) != masked_crc(len_bytes)) throw bad("length CRC mismatch");
    if (pos + 12 + len + 4 > data.size()) throw bad("truncated data");
    std::string_view event(data.data() + pos + 12, len);
    if (fixed<uint32_t>({data.data() + pos + 12 + len, 4}) != masked_crc(event)) throw bad("data CRC mismatch");
    pos += 12 + len + 4;
    ++record;

    Reader ev{event};
    int64_t step = 0;
    std::vector<std::pair<std::string, double>> values;
    while (!ev.done()) {
      uint64_t key = ev.varint();
      int field = int(key >> 3), wire = int(key & 7);
      if (wire == 0) {
        uint64_t v = ev.varint();
        if (field == 2) step = int64_t(v);
        continue;
      }
      std::string_view payload = ev.field(wire);
      if (field != 5 || wire != 2) continue;
      Reader summary{payload};
      while (!summary.done()) {
        uint64_t sk = summary.varint();
        std::string_view value = summary.field(int(sk & 7));
        if ((sk >> 3) != 1) continue;
        Reader v{value};
        std::string tag;
        double simple = 0;
        while (!v.done()) {
          uint64_t vk = v.varint();
          std::string_view p = v.field(int(vk & 7));
          if ((vk >> 3) == 1) tag = std::string(p);
          if ((vk >> 3) == 2 && (vk & 7) == 5) simple = fixed<float>(p);
        }
        values.emplace_back(tag, simple);
      }
    }
    for (auto& [tag, value] : values) out.push_back({tag, value, step});
  }
  return out;
}

}  // namespace skiff::train
