// Random views and the test's own readers of them (tests/kernels/random_layouts.h).
#include "kernels/random_layouts.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <sstream>

#include <leangrad/core/half.h>
#include "testing/tensor_testing.h"

namespace leangrad::test {
namespace {

// An element of `candidates`, uniformly.
template <typename T>
T pick(LayoutRng& rng, const std::vector<T>& candidates) {
  return candidates[std::uniform_int_distribution<std::size_t>(0, candidates.size() - 1)(rng)];
}

bool chance(LayoutRng& rng, double p) {
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng) < p;
}

std::string describe(const Tensor& view, std::int64_t storage_numel) {
  std::ostringstream out;
  out << "view of shape [";
  for (std::size_t d = 0; d < view.shape().size(); ++d)
    out << (d ? ", " : "") << view.shape()[d];
  out << "], strides [";
  for (std::size_t d = 0; d < view.strides().size(); ++d)
    out << (d ? ", " : "") << view.strides()[d];
  out << "], offset " << view.storage_offset() << " into " << storage_numel << " elements of "
      << view.dtype();
  return out.str();
}

// A value of a floating type as double: mostly uniform in [-3, 3), now and then an edge.
double random_floating(LayoutRng& rng, bool finite_only, double huge) {
  const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  if (u < 0.85) return std::uniform_real_distribution<double>(-3.0, 3.0)(rng);
  if (u < 0.93) return static_cast<double>(std::uniform_int_distribution<int>(-2, 2)(rng));
  const double sign = chance(rng, 0.5) ? 1.0 : -1.0;
  const int edge = std::uniform_int_distribution<int>(0, finite_only ? 2 : 4)(rng);
  switch (edge) {
    case 0:
      return sign * 0.0;
    case 1:
      return sign * huge;
    case 2:
      return sign * 1e-41;  // a float32 subnormal (flushed to 0 in the 16-bit types)
    case 3:
      return sign * std::numeric_limits<double>::infinity();
    default:
      return std::numeric_limits<double>::quiet_NaN();
  }
}

template <typename T>
T random_integer(LayoutRng& rng) {
  if (chance(rng, 0.03))
    return chance(rng, 0.5) ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
  const long lo = std::is_signed_v<T> ? -100 : 0;
  return static_cast<T>(std::uniform_int_distribution<long>(lo, 100)(rng));
}

std::string bits_text(DType dtype, std::uint64_t bits) {
  std::ostringstream out;
  out << "0x" << std::hex << bits << std::dec;
  switch (dtype) {
    case kFloat32:
      out << " (" << std::bit_cast<float>(static_cast<std::uint32_t>(bits)) << ")";
      break;
    case kFloat64:
      out << " (" << std::bit_cast<double>(bits) << ")";
      break;
    case kFloat16:
      out << " (" << static_cast<float>(Half::from_bits(static_cast<std::uint16_t>(bits))) << ")";
      break;
    case kBFloat16:
      out << " (" << static_cast<float>(BFloat16::from_bits(static_cast<std::uint16_t>(bits)))
          << ")";
      break;
    case kInt64:
      out << " (" << static_cast<std::int64_t>(bits) << ")";
      break;
    case kInt32:
      out << " (" << static_cast<std::int32_t>(static_cast<std::uint32_t>(bits)) << ")";
      break;
    default:
      out << " (" << bits << ")";
  }
  return out.str();
}

// Whether bits, an element of dtype, are a NaN.
bool element_is_nan(DType dtype, std::uint64_t bits) {
  switch (dtype) {
    case kFloat32:
      return (bits & 0x7fffffffu) > 0x7f800000u;
    case kFloat64:
      return (bits & 0x7fffffffffffffffu) > 0x7ff0000000000000u;
    case kFloat16:
      return (bits & 0x7fffu) > 0x7c00u;
    case kBFloat16:
      return (bits & 0x7fffu) > 0x7f80u;
    default:
      return false;
  }
}

}  // namespace

std::vector<std::int64_t> offsets_in_order(const Tensor& t) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(t.numel()));
  const std::size_t ndim = t.shape().size();
  std::vector<std::int64_t> index(ndim, 0);
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = offset;
    for (std::size_t d = ndim; d-- > 0;) {
      offset += t.strides()[d];
      if (++index[d] < t.shape()[d]) break;
      offset -= index[d] * t.strides()[d];
      index[d] = 0;
    }
  }
  return out;
}

Shape random_shape(LayoutRng& rng, std::int64_t max_numel) {
  static const std::vector<std::int64_t> kSizes = {1,  1,  2,  3,  4,  5,  7,  8,  9,   15,  16,
                                                   17, 31, 32, 33, 40, 63, 64, 65, 100, 130, 257};
  const int ndim = pick<int>(rng, {0, 1, 1, 2, 2, 2, 3, 3, 3, 4});
  for (;;) {
    Shape shape;
    for (int d = 0; d < ndim; ++d)
      shape.push_back(pick(rng, kSizes));
    if (ndim > 0 && chance(rng, 0.03))
      shape[std::uniform_int_distribution<std::size_t>(0, shape.size() - 1)(rng)] = 0;
    if (shape_numel(shape) <= max_numel) return shape;
  }
}

Shape broadcast_operand_shape(LayoutRng& rng, const Shape& shape) {
  Shape out = shape;
  for (std::int64_t& s : out) {
    if (s > 1 && chance(rng, 0.3)) s = 1;
  }
  while (!out.empty() && chance(rng, 0.15))
    out.erase(out.begin());
  return out;
}

void random_values(LayoutRng& rng, const Tensor& t, bool finite_only) {
  const std::int64_t n = t.numel();
  void* data = t.data_ptr();
  switch (t.dtype()) {
    case kFloat32:
      for (std::int64_t i = 0; i < n; ++i)
        static_cast<float*>(data)[i] = static_cast<float>(random_floating(rng, finite_only, 3e38));
      break;
    case kFloat64:
      for (std::int64_t i = 0; i < n; ++i)
        static_cast<double*>(data)[i] = random_floating(rng, finite_only, 1e307);
      break;
    case kFloat16:
      for (std::int64_t i = 0; i < n; ++i) {
        static_cast<Half*>(data)[i] =
            Half(static_cast<float>(random_floating(rng, finite_only, 6e4)));
      }
      break;
    case kBFloat16:
      for (std::int64_t i = 0; i < n; ++i) {
        static_cast<BFloat16*>(data)[i] =
            BFloat16(static_cast<float>(random_floating(rng, finite_only, 3e38)));
      }
      break;
    case kInt64:
      for (std::int64_t i = 0; i < n; ++i)
        static_cast<std::int64_t*>(data)[i] = random_integer<std::int64_t>(rng);
      break;
    case kInt32:
      for (std::int64_t i = 0; i < n; ++i)
        static_cast<std::int32_t*>(data)[i] = random_integer<std::int32_t>(rng);
      break;
    case kUInt8:
      for (std::int64_t i = 0; i < n; ++i)
        static_cast<std::uint8_t*>(data)[i] = random_integer<std::uint8_t>(rng);
      break;
    case kBool:
      for (std::int64_t i = 0; i < n; ++i)
        static_cast<bool*>(data)[i] = chance(rng, 0.5);
      break;
  }
}

RandomView random_view(LayoutRng& rng, const Shape& shape, DType dtype, ViewKinds kinds) {
  return random_view_over(rng, shape, kinds, [&](std::int64_t numel) {
    Tensor storage = empty({numel}, dtype);
    random_values(rng, storage);
    return storage;
  });
}

RandomView random_view_over(LayoutRng& rng, const Shape& shape, ViewKinds kinds,
                            const std::function<Tensor(std::int64_t numel)>& make_storage) {
  const auto ndim = static_cast<std::int64_t>(shape.size());
  RandomView out;
  if (kinds.overlap && ndim > 0 && chance(rng, 0.1)) {
    // Overlapping windows: small strides, some of them 0 or shared, as unfold and as_strided make.
    Strides strides(shape.size());
    std::int64_t span = 1;
    for (std::int64_t d = 0; d < ndim; ++d) {
      strides[d] = pick<std::int64_t>(rng, {0, 1, 1, 2, 3, 5});
      span += (std::max<std::int64_t>(shape[d], 1) - 1) * strides[d];
    }
    const std::int64_t offset = pick<std::int64_t>(rng, {0, 1, 3});
    out.storage = make_storage(span + offset);
    out.view = out.storage.as_strided(shape, strides, offset);
    out.description = describe(out.view, out.storage.numel());
    return out;
  }
  // The storage order of the dims (a permute), and per dim a start, a step and padding, or a
  // broadcast from size 1.
  std::vector<std::int64_t> order(shape.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  if (chance(rng, 0.5)) std::shuffle(order.begin(), order.end(), rng);
  Shape base(shape.size());
  std::vector<std::int64_t> start(shape.size()), step(shape.size());
  std::vector<bool> broadcast(shape.size());
  for (std::int64_t d = 0; d < ndim; ++d) {
    broadcast[d] = kinds.broadcast && shape[d] > 1 && chance(rng, 0.15);
    if (broadcast[d]) {
      base[d] = 1;
      start[d] = 0;
      step[d] = 1;
      continue;
    }
    start[d] = chance(rng, 0.7) ? 0 : pick<std::int64_t>(rng, {1, 2});
    step[d] = chance(rng, 0.7) ? 1 : pick<std::int64_t>(rng, {2, 3});
    const std::int64_t pad = chance(rng, 0.7) ? 0 : pick<std::int64_t>(rng, {1, 3, 16});
    base[d] = start[d] + std::max<std::int64_t>(shape[d] - 1, 0) * step[d] + 1 + pad;
  }
  Shape stored(shape.size());
  for (std::int64_t k = 0; k < ndim; ++k)
    stored[k] = base[order[k]];
  const std::int64_t offset = chance(rng, 0.7) ? 0 : pick<std::int64_t>(rng, {1, 2, 5});
  const std::int64_t stored_numel = shape_numel(stored);
  out.storage = make_storage(stored_numel + offset);
  Tensor v = out.storage.slice(0, offset, offset + stored_numel).view(stored);
  std::vector<std::int64_t> inverse(shape.size());
  for (std::int64_t k = 0; k < ndim; ++k)
    inverse[order[k]] = k;
  v = v.permute(inverse);
  for (std::int64_t d = 0; d < ndim; ++d) {
    if (!broadcast[d] && shape[d] > 0)
      v = v.slice(d, start[d], start[d] + (shape[d] - 1) * step[d] + 1, step[d]);
    else if (!broadcast[d])
      v = v.slice(d, 0, 0);
  }
  out.view = v.expand(shape);
  out.description = describe(out.view, out.storage.numel());
  return out;
}

Tensor materialize(const Tensor& t) {
  Tensor out = empty(t.shape(), t.dtype());
  const std::size_t size = t.element_size();
  const auto* in = static_cast<const unsigned char*>(t.data_ptr());
  auto* o = static_cast<unsigned char*>(out.data_ptr());
  const std::vector<std::int64_t> offsets = offsets_in_order(t);
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    std::memcpy(o + i * size,
                in + static_cast<std::ptrdiff_t>(offsets[i]) * static_cast<std::ptrdiff_t>(size),
                size);
  }
  return out;
}

::testing::AssertionResult same_elements(const Tensor& got, const Tensor& want) {
  if (got.shape() != want.shape() || got.dtype() != want.dtype()) {
    return ::testing::AssertionFailure() << "got shape " << got.shape() << " " << got.dtype()
                                         << ", expected " << want.shape() << " " << want.dtype();
  }
  const std::vector<std::int64_t> got_at = offsets_in_order(got), want_at = offsets_in_order(want);
  const auto size = static_cast<std::int64_t>(got.element_size());
  // The bits of t's element i (zero-padded to 8 bytes), of offset at[i].
  const auto bits = [size](const Tensor& t, const std::vector<std::int64_t>& at, std::int64_t i) {
    std::uint64_t b = 0;
    std::memcpy(
        &b,
        static_cast<const unsigned char*>(t.data_ptr()) + at[static_cast<std::size_t>(i)] * size,
        static_cast<std::size_t>(size));
    return b;
  };
  std::int64_t differing = 0, first = -1;
  for (std::int64_t i = 0; i < got.numel(); ++i) {
    const std::uint64_t g = bits(got, got_at, i), w = bits(want, want_at, i);
    if (g == w || (element_is_nan(got.dtype(), g) && element_is_nan(got.dtype(), w))) continue;
    if (differing++ == 0) first = i;
  }
  if (differing == 0) return ::testing::AssertionSuccess();
  const std::vector<std::int64_t> index = unravel(first, got.shape());
  ::testing::AssertionResult failure = ::testing::AssertionFailure();
  failure << differing << " of " << got.numel() << " elements differ; the first, [";
  for (std::size_t d = 0; d < index.size(); ++d)
    failure << (d ? ", " : "") << index[d];
  failure << "]: " << bits_text(got.dtype(), bits(got, got_at, first)) << ", expected "
          << bits_text(want.dtype(), bits(want, want_at, first));
  return failure;
}

}  // namespace leangrad::test
