// Error construction: appends the throw site so every message says where it came from.
#include <leangrad/core/error.h>

#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace leangrad {

Error::Error(std::string message, const char* file, int line)
    : std::runtime_error(detail::str_cat(message, " (at ", file, ":", line, ")")),
      message_(std::move(message)),
      file_(file),
      line_(line) {}

std::string printable(std::string_view text, std::size_t max_chars) {
  std::string out;
  for (const char c : text.substr(0, max_chars)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7F) {
      out += c;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02X", byte);
      out += hex;
    }
  }
  return text.size() > max_chars ? out + "..." : out;
}

}  // namespace leangrad

namespace leangrad::detail {

std::string demangle(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && demangled ? demangled.get() : type.name();
}

void throw_cuda_not_built(const char* what) {
  throw DeviceError(str_cat(what, ": leangrad was built without CUDA (LEANGRAD_WITH_CUDA=OFF);",
                            " rebuild with the CUDA toolkit to use CUDA tensors"),
                    __FILE__, __LINE__);
}

}  // namespace leangrad::detail
