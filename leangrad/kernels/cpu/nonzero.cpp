// The positions of a bool mask's true elements (kernels/cpu/nonzero.h).
//
// Note [True positions in two passes]
//   nonzero and masked_select had been composed of whole-tensor ops, which run on either device:
//   a cumsum of the mask as int64 (each true element's rank), a where and a scatter_add of each
//   position to its rank, an arange, then for nonzero each dim's index as float64 floors and
//   products. Ten passes over int64 or float64 arrays eight times the mask's size: nonzero of a
//   (2048, 2048) mask with 16% of it true took 21.9 ms on one thread, LibTorch 1.13 10.4; this
//   takes 5.5 (bench/results/2026-12-07-cpu-transposed-operands-zen5-2core.md). Here the
//   mask is cut into chunks of kChunk bytes; the first pass counts each chunk's trues (threads
//   split the chunks), a prefix sum over the chunks gives each its first slot of the output,
//   and the second pass writes each chunk's positions from there: the same positions, in order,
//   whatever the number of threads. A chunk is read 8 bytes at a time: one word whose nonzero
//   bytes are marked by their top bit, and each marked byte taken lowest first (count trailing
//   zeros, clear the lowest bit; the lowest byte is the first, x86-64 being little-endian), so a
//   false byte costs nothing and a run of them 1/8 of a load. A bool tensor's bytes are 0 or 1,
//   but a byte of any other value counts as true. For nonzero's (count, rank) indices the
//   multi-index is carried from one position to the next (the step added to the last dim's index,
//   carried outwards while it overflows), with a division per dim only where the step is a row or
//   more: positions rise, so most steps are carried.
#include <leangrad/kernels/cpu/nonzero.h>

#include <bit>
#include <cstring>

#include <leangrad/kernels/cpu/parallel_for.h>

namespace leangrad::kernels::cpu {

namespace {

constexpr std::int64_t kChunk = std::int64_t{1} << 16;

// The top bit of each nonzero byte of w, every other bit clear.
inline std::uint64_t nonzero_bytes(std::uint64_t w) {
  constexpr std::uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
  return (((w & kLow7) + kLow7) | w) & ~kLow7;
}

std::int64_t count_in(const std::uint8_t* mask, std::int64_t begin, std::int64_t end) {
  std::int64_t count = 0;
  for (std::int64_t i = begin; i < end; ++i)
    count += mask[i] != 0;
  return count;
}

// visit(position) for each nonzero byte of mask[begin, end), in order.
template <typename Visit>
void for_each_true(const std::uint8_t* mask, std::int64_t begin, std::int64_t end,
                   const Visit& visit) {
  std::int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, mask + i, sizeof(word));
    for (std::uint64_t marks = nonzero_bytes(word); marks != 0; marks &= marks - 1)
      visit(i + (std::countr_zero(marks) >> 3));
  }
  for (; i < end; ++i)
    if (mask[i] != 0) visit(i);
}

// The multi-index of the positions written so far, carried from one to the next.
class Unraveller {
 public:
  explicit Unraveller(const std::vector<std::int64_t>& sizes)
      : sizes_(sizes), index_(sizes.size(), 0) {}

  // Writes position p's index along each dim to out; p is at least the last position given.
  void write(std::int64_t p, std::int64_t* out) {
    const auto rank = static_cast<std::int64_t>(sizes_.size());
    const std::int64_t last = rank - 1;
    const std::int64_t step = p - position_;
    if (started_ && step < sizes_[last]) {
      index_[last] += step;
      for (std::int64_t d = last; d > 0 && index_[d] >= sizes_[d]; --d) {
        index_[d] -= sizes_[d];
        ++index_[d - 1];
      }
    } else {
      std::int64_t rest = p;
      for (std::int64_t d = last; d >= 0; --d) {
        index_[d] = rest % sizes_[d];
        rest /= sizes_[d];
      }
    }
    started_ = true;
    position_ = p;
    std::copy(index_.begin(), index_.end(), out);
  }

 private:
  const std::vector<std::int64_t>& sizes_;
  std::vector<std::int64_t> index_;
  std::int64_t position_ = 0;
  bool started_ = false;
};

}  // namespace

std::int64_t count_true(const std::uint8_t* mask, std::int64_t n) {
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<std::int64_t> counts(static_cast<std::size_t>(chunks));
  parallel_for(chunks, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c)
      counts[c] = count_in(mask, c * kChunk, std::min(n, (c + 1) * kChunk));
  });
  std::int64_t total = 0;
  for (std::int64_t c : counts)
    total += c;
  return total;
}

void true_positions(const std::uint8_t* mask, std::int64_t n,
                    const std::vector<std::int64_t>& sizes, std::int64_t* out) {
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<std::int64_t> first(static_cast<std::size_t>(chunks) + 1, 0);
  parallel_for(chunks, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c)
      first[c + 1] = count_in(mask, c * kChunk, std::min(n, (c + 1) * kChunk));
  });
  for (std::int64_t c = 0; c < chunks; ++c)
    first[c + 1] += first[c];
  const auto rank = static_cast<std::int64_t>(sizes.size());
  parallel_for(chunks, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c) {
      const std::int64_t chunk_end = std::min(n, (c + 1) * kChunk);
      if (rank == 0) {
        std::int64_t* slot = out + first[c];
        for_each_true(mask, c * kChunk, chunk_end, [&](std::int64_t p) { *slot++ = p; });
      } else {
        std::int64_t* row = out + first[c] * rank;
        Unraveller unravel(sizes);
        for_each_true(mask, c * kChunk, chunk_end, [&](std::int64_t p) {
          unravel.write(p, row);
          row += rank;
        });
      }
    }
  });
}

}  // namespace leangrad::kernels::cpu
