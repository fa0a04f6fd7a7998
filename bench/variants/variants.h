// What every numbered-variant program in bench/variants/ shares (llm.c's dev/cuda pattern: one
// .cu per op, variants numbered 1..n and named by technique, each checked against a plain CPU
// loop before the GPU bench harness times it): the command line and the CPU side of the check.
//   variant_<op> [VARIANT] [N] [--warmup W] [--runs R] [--markdown PATH]
// No VARIANT runs every variant, one after another, into one table.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

#include "bench/gpu_harness.h"
#include <leangrad/kernels/creation.h>
#include <leangrad/core/error.h>

namespace leangrad::bench {

struct VariantArguments {
  std::vector<int> variants;  // 1-based
  std::int64_t n = 0;         // elements per operand
};

// A whole positive decimal number, or an error naming what it was for.
inline std::int64_t parse_positive(const std::string& text, const char* what) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  LG_CHECK(error == std::errc() && end == text.data() + text.size() && value > 0, what,
           ": expected a positive whole number, got \"", text, "\"");
  return value;
}

// Parses [VARIANT] [N] from the harness's leftover arguments; throws on anything else.
inline VariantArguments parse_variant_arguments(const std::vector<std::string>& arguments,
                                                int num_variants, std::int64_t default_n) {
  LG_CHECK(arguments.size() <= 2, "expected [VARIANT] [N], got ", arguments.size(), " arguments");
  VariantArguments out;
  out.n = arguments.size() == 2 ? parse_positive(arguments[1], "N") : default_n;
  if (arguments.empty()) {
    for (int v = 1; v <= num_variants; ++v)
      out.variants.push_back(v);
  } else {
    const std::int64_t v = parse_positive(arguments[0], "VARIANT");
    LG_CHECK(v <= num_variants, "VARIANT must be 1..", num_variants, ", got ", v);
    out.variants.push_back(static_cast<int>(v));
  }
  return out;
}

// t's values on the CPU in double, for the plain reference loops; a contiguous copy.
inline Tensor cpu_float64(const Tensor& t) {
  return t.cpu().to(kFloat64).contiguous();
}

// An empty CPU float64 tensor of t's shape, for a reference loop to fill.
inline Tensor empty_float64_like(const Tensor& t) {
  return empty(t.shape(), TensorOptions(kFloat64));
}

}  // namespace leangrad::bench
