// Constants that LibTorch spells the same for two enums: torch::kLinear is both an init
// nonlinearity (nn::init::calculate_gain(kLinear)) and an interpolation mode
// (interpolate(x, size, std::nullopt, kLinear)). LibTorch makes each such name a type of its own
// that both options accept; here it is a tag that converts to any enum with an enumerator of its
// name, so each enum stays a plain enum class and neither header includes the other.
//   nn::init::Nonlinearity g = kLinear;   // Nonlinearity::Linear
//   InterpolateMode m = kLinear;          // InterpolateMode::Linear
#pragma once

namespace leangrad {

// Converts implicitly, as LibTorch's constants do: a spelling, not a value of its own.
struct LinearTag {
  template <typename Enum>
  requires requires { Enum::Linear; }
  constexpr operator Enum() const {  // NOLINT(google-explicit-constructor)
    return Enum::Linear;
  }
};
inline constexpr LinearTag kLinear{};

}  // namespace leangrad
