// Helpers for the data-layer tests: a temporary folder removed at scope exit, whole-file reads
// and writes, and a tensor's raw bytes (for bitwise comparisons).
#pragma once

#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <leangrad/core/tensor.h>

namespace leangrad::test {

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "leangrad_data_test.XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// (Removes the old file first: on ext4, truncating and rewriting a file forces a flush to disk
// on close, which makes the fuzz loops 50x slower.)
inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The bytes of a CPU tensor in row-major order.
inline std::string tensor_bytes(const Tensor& t) {
  const Tensor c = t.contiguous();
  return c.nbytes() == 0 ? std::string()
                         : std::string(static_cast<const char*>(c.data_ptr()), c.nbytes());
}

}  // namespace leangrad::test
