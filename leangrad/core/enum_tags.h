// Constants that LibTorch spells the same for several enums: torch::kLinear is both an init
// nonlinearity (nn::init::calculate_gain(kLinear)) and an interpolation mode
// (interpolate(x, size, std::nullopt, kLinear)); torch::kSum is a loss reduction
// (nn::MSELossOptions().reduction(kSum)), kl_div's reduction and an embedding bag's mode
// (nn::EmbeddingBagOptions(10, 3).mode(kSum)). LibTorch makes each such name a type of its own
// that every options class accepts; here it is a tag that converts to any enum with an enumerator
// of its name, so each enum stays a plain enum class and no header includes another for it.
//   nn::init::Nonlinearity g = kLinear;   // Nonlinearity::Linear
//   InterpolateMode m = kLinear;          // InterpolateMode::Linear
//   Reduction r = kSum;                   // Reduction::Sum
//   EmbeddingBagMode b = kSum;            // EmbeddingBagMode::Sum
// A tag is a spelling, not a value: hold the enum (`EmbeddingBagMode mode = kSum;`, not
// `auto mode = kSum;`); it compares with any enum it converts to (`mode == kSum`).
#pragma once

#include <type_traits>

namespace leangrad {

// struct NameTag, converting implicitly (as LibTorch's constants do) to Enum::Name of any enum
// that has one, and comparing equal to it (`mode == kSum`, `case kSum:`), and its constant kName.
#define LG_ENUM_TAG(Name)                                                                   \
  struct Name##Tag {                                                                        \
    template <typename Enum>                                                                \
    requires std::is_enum_v<Enum> && requires { Enum::Name; }                               \
    constexpr operator Enum() const { /* NOLINT(google-explicit-constructor) */             \
      return Enum::Name;                                                                    \
    }                                                                                       \
    template <typename Enum>                                                                \
    requires std::is_enum_v<Enum> && requires { Enum::Name; }                               \
    friend constexpr bool operator==(Enum value, Name##Tag) { return value == Enum::Name; } \
  };                                                                                        \
  inline constexpr Name##Tag k##Name {}

LG_ENUM_TAG(Linear);     // nn::init::Nonlinearity, InterpolateMode
LG_ENUM_TAG(None);       // Reduction, KLDivReduction
LG_ENUM_TAG(Mean);       // Reduction, KLDivReduction, EmbeddingBagMode
LG_ENUM_TAG(Sum);        // Reduction, KLDivReduction, EmbeddingBagMode, distributed::ReduceOp
LG_ENUM_TAG(Max);        // EmbeddingBagMode, distributed::ReduceOp
LG_ENUM_TAG(BatchMean);  // KLDivReduction
LG_ENUM_TAG(Zeros);      // PadMode (its Constant), GridSamplePadding

#undef LG_ENUM_TAG

}  // namespace leangrad
