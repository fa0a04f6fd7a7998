// Exceptions thrown by leangrad and the LG_CHECK family of macros that build them.
// Every user-facing failure is a leangrad::Error (or subclass) carrying file:line and a message
// naming the op, shapes, dtypes and devices involved. Nothing aborts on bad input.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

namespace leangrad {

class Error : public std::runtime_error {
 public:
  // `file` is a string literal (__FILE__): it is kept as a pointer.
  Error(std::string message, const char* file, int line);
  // The message without the " (at file:line)" suffix.
  const std::string& message() const { return message_; }
  // Where it was thrown.
  const char* file() const { return file_; }
  int line() const { return line_; }

 private:
  std::string message_;
  const char* file_;
  int line_;
};

// Incompatible or invalid shapes (broadcasting, views, matmul dimensions...).
class ShapeError : public Error {
  using Error::Error;
};
// Unsupported or mismatched dtypes.
class DTypeError : public Error {
  using Error::Error;
};
// Tensors on different devices, or a device that is not available / not built in.
class DeviceError : public Error {
  using Error::Error;
};
// An allocation failed even after the caching allocator released its cache and retried.
class OutOfMemoryError : public Error {
  using Error::Error;
};

namespace detail {

template <typename T>
void stream_arg(std::ostream& out, const T& value) {
  out << value;
}
// Vectors (shapes, strides, dim lists) print as "[2, 3, 4]".
template <typename T>
void stream_arg(std::ostream& out, const std::vector<T>& values) {
  out << "[";
  for (std::size_t i = 0; i < values.size(); ++i)
    out << (i > 0 ? ", " : "") << values[i];
  out << "]";
}

template <typename... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream out;
  (stream_arg(out, args), ...);
  return out.str();
}

template <typename E, typename... Args>
[[noreturn]] void throw_error(const char* file, int line, const Args&... args) {
  throw E(str_cat(args...), file, line);
}

}  // namespace detail
}  // namespace leangrad

// LG_CHECK(cond, "op: expected ..., got ", shape): throws leangrad::Error when cond is false.
// The typed variants throw the matching subclass. Message parts are streamed with operator<<.
#define LG_CHECK_TYPED(ErrorType, cond, ...)                                       \
  do {                                                                             \
    if (!(cond)) [[unlikely]]                                                      \
      ::leangrad::detail::throw_error<ErrorType>(__FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

#define LG_CHECK(cond, ...) LG_CHECK_TYPED(::leangrad::Error, cond, __VA_ARGS__)
#define LG_CHECK_SHAPE(cond, ...) LG_CHECK_TYPED(::leangrad::ShapeError, cond, __VA_ARGS__)
#define LG_CHECK_DTYPE(cond, ...) LG_CHECK_TYPED(::leangrad::DTypeError, cond, __VA_ARGS__)
#define LG_CHECK_DEVICE(cond, ...) LG_CHECK_TYPED(::leangrad::DeviceError, cond, __VA_ARGS__)

// Unconditional throw.
#define LG_THROW(ErrorType, ...) \
  ::leangrad::detail::throw_error<ErrorType>(__FILE__, __LINE__, __VA_ARGS__)

// Internal invariant: a failure here is a bug in leangrad, not in the caller's input.
#define LG_INTERNAL_ASSERT(cond, ...) \
  LG_CHECK(cond, "leangrad internal error (please report): " #cond __VA_OPT__(" ", ) __VA_ARGS__)

namespace leangrad {
// `text` as an error message shows it: bytes outside printable ASCII as \xNN, cut after
// `max_chars` characters with "..." (names and fields read from files may hold anything).
std::string printable(std::string_view text, std::size_t max_chars = 64);
}  // namespace leangrad

namespace leangrad::detail {
// The C++ name of a type, demangled ("leangrad::nn::LinearImpl"): what messages call a class.
std::string demangle(const std::type_info& type);
// Thrown by every CUDA entry point of a build without CUDA (the stubs in */no_cuda/).
[[noreturn]] void throw_cuda_not_built(const char* what);
}  // namespace leangrad::detail
