// The TCP store's wire format, shared by the client (tcp_store.cpp) and the server
// (tcp_store_server.cpp). Every message is a frame: a 4-byte big-endian length, then that many
// bytes of payload. A request's payload is a command byte and its fields; the answer's is a
// status byte and its fields. Strings are a 4-byte big-endian length and the bytes; integers
// 8 bytes big-endian. Every request but Post gets exactly one answer, at once (the server never
// waits; see Note [Waiting by polling] in store.cpp):
//
//   Hello rank world_size generation
//                          ->  Ok | Refused message | Busy message
//                              (first request of every connection; Busy: the server serves an
//                              earlier group of the job, Note [A store of an earlier group])
//   Set key value          ->  Ok
//   Post key value         ->  (no answer: Store::post, the progress board's per-collective set)
//   Get key                ->  Ok value | NotFound
//   Add key delta          ->  Ok new_value
#pragma once

#include <cstdint>
#include <string>

#include <leangrad/core/error.h>

namespace leangrad::distributed::tcp_store_protocol {

enum class Command : std::uint8_t { Hello = 1, Set = 2, Get = 3, Add = 4, Post = 5 };
enum class Status : std::uint8_t { Ok = 0, NotFound = 1, Refused = 2, Busy = 3 };

// Larger frames are refused: a peer that sends one is not a leangrad store client.
constexpr std::uint32_t kMaxFrameBytes = 64u << 20;

inline void put_u32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>(v >> shift));
}

// Builds a payload field by field.
class FrameWriter {
 public:
  FrameWriter& u8(std::uint8_t v) {
    bytes_.push_back(static_cast<char>(v));
    return *this;
  }
  FrameWriter& i64(std::int64_t v) {
    const auto u = static_cast<std::uint64_t>(v);
    for (int shift = 56; shift >= 0; shift -= 8)
      bytes_.push_back(static_cast<char>(u >> shift));
    return *this;
  }
  FrameWriter& str(const std::string& s) {
    put_u32(bytes_, static_cast<std::uint32_t>(s.size()));
    bytes_ += s;
    return *this;
  }
  // The frame: length prefix and payload.
  std::string frame() const {
    std::string out;
    put_u32(out, static_cast<std::uint32_t>(bytes_.size()));
    return out + bytes_;
  }

 private:
  std::string bytes_;
};

// Reads a payload field by field; a payload shorter than its fields claim is an Error.
class FrameReader {
 public:
  explicit FrameReader(const std::string& payload) : bytes_(payload) {}
  std::uint8_t u8() {
    need(1);
    return static_cast<std::uint8_t>(bytes_[pos_++]);
  }
  std::int64_t i64() {
    need(8);
    std::uint64_t u = 0;
    for (int i = 0; i < 8; ++i)
      u = (u << 8) | static_cast<std::uint8_t>(bytes_[pos_++]);
    return static_cast<std::int64_t>(u);
  }
  std::string str() {
    need(4);
    std::uint32_t n = 0;
    for (int i = 0; i < 4; ++i)
      n = (n << 8) | static_cast<std::uint8_t>(bytes_[pos_++]);
    need(n);
    std::string s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }

 private:
  void need(std::size_t n) const {
    LG_CHECK(bytes_.size() - pos_ >= n, "TCP store: malformed message (", bytes_.size(),
             " bytes, field at ", pos_, " needs ", n, ")");
  }
  const std::string& bytes_;
  std::size_t pos_ = 0;
};

// The payload length announced by a frame's 4-byte prefix.
inline std::uint32_t frame_length(const char prefix[4]) {
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i)
    n = (n << 8) | static_cast<std::uint8_t>(prefix[i]);
  return n;
}

}  // namespace leangrad::distributed::tcp_store_protocol
