#include "framework/core/device.h"

#include "framework/core/error.h"

namespace skiff {

std::string Device::str() const {
  switch (type) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "cuda:" + std::to_string(index);
    case DeviceType::Plugin: return "plugin:" + std::to_string(index);
  }
  return "?";
}

Device Device::parse(const std::string& s) {
  if (s == "cpu") return kCPU;
  if (s.rfind("cuda", 0) == 0) {
    int idx = 0;
    if (s.size() > 4) {
      SKIFF_CHECK(s[4] == ':' && s.size() > 5, "device: cannot parse '{}' (expected cpu, cuda or cuda:N)", s);
      idx = std::stoi(s.substr(5));
    }
    return {DeviceType::CUDA, idx};
  }
  SKIFF_THROW(ValueError, "device: cannot parse '{}' (expected cpu, cuda or cuda:N)", s);
}

}  // namespace skiff
