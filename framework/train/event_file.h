#pragma once
/// \file event_file.h
/// TensorBoard event files: scalar summaries that `tensorboard --logdir DIR`
/// (and tbparse, VisualDL's converter, ...) read.
///
/// Format: a TFRecord stream of serialized tensorflow.Event messages. Each
/// record is  uint64 length | uint32 masked CRC32C(length) | data | uint32
/// masked CRC32C(data)  (little endian; mask = rotr15(crc) + 0xa282ead8). The
/// first event carries file_version "brain.Event:2"; each scalar is an Event
/// {wall_time, step, summary {value {tag, simple_value}}}. The few protobuf
/// fields are encoded by hand: TensorFlow's .proto files are not in Debian's
/// protobuf packages, and five fields do not justify vendoring them.
///
/// Records are appended and flushed one write() each, so a run killed mid-way
/// leaves every complete record readable (TensorBoard skips a torn tail).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace skiff::train {

/// CRC-32C (Castagnoli), as TFRecord uses.
uint32_t crc32c(std::string_view bytes);

class EventFileWriter {
 public:
  /// Creates `dir` if needed and opens `events.out.tfevents.<seconds>.<host>`
  /// in it. \throws IoError naming the file when it cannot be created.
  explicit EventFileWriter(const std::filesystem::path& dir);
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  /// Appends one scalar (tag such as "train/loss"). \throws IoError on a failed write.
  void add_scalar(const std::string& tag, double value, int64_t step);
  const std::filesystem::path& path() const { return path_; }

 private:
  void write_record(const std::string& event);
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

/// One scalar read back from an event file (for tests and `skiff` tools).
struct ScalarEvent {
  std::string tag;
  double value = 0;
  int64_t step = 0;
};
/// Reads every scalar of an event file, checking both CRCs of each record.
/// \throws IoError naming the file for a corrupt record.
std::vector<ScalarEvent> read_scalar_events(const std::filesystem::path& path);

}  // namespace skiff::train
