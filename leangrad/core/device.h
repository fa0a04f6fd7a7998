// Device: where a tensor's memory lives. DeviceType::CPU or DeviceType::CUDA plus an index.
// Converts implicitly from a DeviceType and from a string ("cpu", "cuda", "cuda:1") so
// `x.to(kCUDA)` and `x.to("cuda:0")` work as in LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace leangrad {

enum class DeviceType : std::uint8_t { CPU, CUDA };

constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;

  constexpr Device() = default;
  constexpr Device(DeviceType type, int index = 0) : type(type), index(index) {}  // NOLINT
  // "cpu", "cuda" (device 0) or "cuda:N"; anything else throws Error naming the string.
  Device(const std::string& spec);  // NOLINT: implicit, as LibTorch's
  Device(const char* spec) : Device(std::string(spec == nullptr ? "" : spec)) {}  // NOLINT

  static constexpr Device cpu() { return Device(DeviceType::CPU, 0); }
  static constexpr Device cuda(int index = 0) { return Device(DeviceType::CUDA, index); }

  constexpr bool is_cpu() const { return type == DeviceType::CPU; }
  constexpr bool is_cuda() const { return type == DeviceType::CUDA; }

  // "cpu" or "cuda:0".
  std::string str() const {
    return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(index);
  }

  friend constexpr bool operator==(const Device& a, const Device& b) {
    // The CPU has one device; its index carries no meaning.
    return a.type == b.type && (a.type == DeviceType::CPU || a.index == b.index);
  }
};

inline std::ostream& operator<<(std::ostream& out, const Device& d) {
  return out << d.str();
}

}  // namespace leangrad
