#pragma once
/// \file device.h
/// Where a tensor's memory lives.

#include <cstdint>
#include <string>

namespace skiff {

enum class DeviceType : uint8_t { CPU, CUDA, Plugin };
inline constexpr int kNumDeviceTypes = 3;

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;
  bool operator==(const Device&) const = default;
  std::string str() const;
  /// Parses "cpu", "cuda", "cuda:1". \throws ValueError.
  static Device parse(const std::string& s);
};

inline const Device kCPU{DeviceType::CPU, 0};

}  // namespace skiff
