// The 32-bit tags the Gloo group gives Gloo's collectives (Note [Gloo tags]): one for the
// signature exchange and one for the payload of each collective. Private to distributed/gloo/
// (process_group_gloo.cpp); a header of its own, without Gloo, so the tests reach the layout.
#pragma once

#include <cstdint>

namespace leangrad::distributed::gloo_tags {

// Note [Gloo tags]
// Gloo pairs two ranks' messages by a 32-bit tag (Slot::build puts it in bits 24..55 of a slot,
// and a collective's steps add at most 255 below it, so two tags never share a slot), and the
// messages of one tag in the order both sides posted them. A message longer than the buffer the
// receiver posted for that tag makes Gloo throw from its event-loop thread ("op.preamble.length
// <= op.nbytes" in pair.cc), where nothing catches it: std::terminate, the process aborts. The
// signature exchange keeps ranks whose calls differ from moving payloads at all; without it
// (LEANGRAD_DIST_SIGNATURES=0) the payload's tag also carries its byte count, hashed, so
// payloads of different sizes do not pair: Gloo sends only once the receiver has posted a
// receive under the same tag (NOTIFY_RECV_READY), so both ranks wait and raise an Error at the
// timeout, as for two different collectives. The layout:
//   bit 0        0: the signature exchange, 1: the payload
//   bits 1..21   the payload's byte count, hashed: the top 21 bits of n * 2^64/phi (0 for the
//                signatures). Byte counts less than 1,346,269 apart never share them (the
//                multiples of 2^64/phi spread evenly: three-distance theorem); others do 1 in
//                2^21 (2 million) times. Until 2026-11-29 there were 12, and 1 pair in 4096 of
//                mismatched sizes still paired and aborted both processes.
//   bits 22..31  the sequence number modulo 2^10.
// Why 10 bits of sequence number are enough (there were 19):
// - Ranks that call the same collectives need none: every rank numbers its calls alike, so the
//   k-th call of each carries the same number, and Gloo matches the messages of a tag in the
//   order both ranks posted them, which is call order (one worker thread). The number keeps the
//   messages of different calls apart, which meet only when the calls went wrong.
// - With signatures, no rank completes collective s before every rank entered it (the
//   all-gather of signatures needs them all), so the ranks are at most one collective apart.
// - Without, a mismatched call can leave a message of collective s unpaired, its rank waiting
//   in s until the timeout while its peer goes on. The peer pairs it with one of its own only
//   by posting under the same tag to that rank: in a collective that moves data with it,
//   numbered s + 1024 or later (and of a size with the same hash). Each of the 1023
//   collectives in between must complete without a byte from the waiting rank: with two ranks,
//   only collectives of zero bytes; with more, also broadcasts outside its subtree. A thousand
//   of those, within the timeout, right after a mismatch, is far rarer than what the size bits
//   catch: sizes that differ (the last, shorter batch of an epoch) are the common mistake.
constexpr std::uint32_t kSizeBits = 21;
constexpr std::uint32_t kSeqShift = 1 + kSizeBits;
constexpr std::uint32_t kSeqBits = 32 - kSeqShift;  // 10

constexpr std::uint32_t signature_tag(std::uint64_t seq) {
  return static_cast<std::uint32_t>(seq << kSeqShift);  // the bits above 32 drop: seq mod 2^10
}

constexpr std::uint32_t payload_tag(std::uint64_t seq, std::uint64_t nbytes) {
  const auto size_bits =
      static_cast<std::uint32_t>((nbytes * 0x9E3779B97F4A7C15ull) >> (64 - kSizeBits));
  return signature_tag(seq) | (size_bits << 1) | 1u;
}

}  // namespace leangrad::distributed::gloo_tags
