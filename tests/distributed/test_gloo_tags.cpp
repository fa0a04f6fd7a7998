// The layout of the Gloo group's tags (distributed/gloo/gloo_tags.h, Note [Gloo tags]): which
// bits say what, and which payload sizes can share a tag, checked on the functions themselves.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <leangrad/distributed/gloo/gloo_tags.h>

namespace leangrad::distributed {
namespace {

using gloo_tags::payload_tag;
using gloo_tags::signature_tag;

constexpr std::uint32_t kSizeMask = ((1u << gloo_tags::kSizeBits) - 1) << 1;  // bits 1..21

TEST(GlooTags, KindSizeAndSequenceBits) {
  EXPECT_EQ(gloo_tags::kSizeBits, 21u);
  EXPECT_EQ(gloo_tags::kSeqBits, 10u);
  for (const std::uint64_t seq : {1ull, 2ull, 513ull, 1023ull, 1024ull, 1025ull, 123456789ull}) {
    const std::uint32_t sig = signature_tag(seq);
    EXPECT_EQ(sig & 1u, 0u) << seq;           // bit 0: the signature exchange
    EXPECT_EQ(sig & kSizeMask, 0u) << seq;    // no size
    EXPECT_EQ(sig >> 22, seq % 1024) << seq;  // the sequence number modulo 2^10
    for (const std::uint64_t nbytes : {0ull, 4ull, 4096ull, 64ull << 20}) {
      const std::uint32_t payload = payload_tag(seq, nbytes);
      EXPECT_EQ(payload & 1u, 1u);                 // bit 0: the payload
      EXPECT_EQ(payload & ~kSizeMask & ~1u, sig);  // the same sequence bits as its signatures
      // The size field: the top 21 bits of nbytes * 2^64/phi.
      EXPECT_EQ((payload & kSizeMask) >> 1, (nbytes * 0x9E3779B97F4A7C15ull) >> 43);
    }
  }
  // The number wraps at 2^10: 1024 collectives apart share a tag, nearer ones never.
  EXPECT_EQ(payload_tag(7, 400), payload_tag(7 + 1024, 400));
  for (std::uint64_t d = 1; d < 1024; ++d)
    ASSERT_NE(payload_tag(7, 400), payload_tag(7 + d, 400)) << d;
}

// Payload sizes less than 1 MiB apart never share a tag, wherever they lie (with 12 size bits,
// sizes 2584 bytes apart did): the circular distance of d * 2^64/phi from 0 stays above one
// bucket of the hash for every d below 1,346,269 (Note [Gloo tags]).
TEST(GlooTags, PayloadSizesLessThanAMebibyteApartNeverShareATag) {
  constexpr std::uint64_t kApart = 1ull << 20;
  const std::vector<std::uint64_t> bases = {0, 1, 4096, 1000003, 25ull << 20, (1ull << 32) + 12345};
  for (const std::uint64_t n : bases) {
    const std::uint32_t tag = payload_tag(42, n);
    for (std::uint64_t d = 1; d <= kApart; ++d)
      ASSERT_NE(tag, payload_tag(42, n + d)) << n << " and " << n + d << " bytes";
  }
}

}  // namespace
}  // namespace leangrad::distributed
