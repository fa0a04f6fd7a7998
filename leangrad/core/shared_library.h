// A shared library opened at its first use (dlopen), and the functions resolved in it.
//
// libleangrad.so does not link cuBLAS, cuDNN or NCCL: each call into them goes through a
// forwarding definition that resolves the real function here on its first call (Note [Lazily
// loaded CUDA libraries] in kernels/cuda/cublas_lazy.cpp). So a program that never touches a CUDA
// tensor links and runs on a machine without those libraries, and one that does gets an Error
// naming the library that is missing instead of a loader failure at start-up.
//
// Internal: not part of the installed headers.
#pragma once

#include <bit>
#include <mutex>
#include <string>
#include <vector>

namespace leangrad::detail {

class SharedLibrary {
 public:
  // `purpose` says what needs the library ("cuBLAS (CUDA matmul)"), for error messages; `names`
  // are the file names tried in order, found the way the dynamic loader finds them (RPATH,
  // LD_LIBRARY_PATH, ld.so.cache, the default folders).
  SharedLibrary(std::string purpose, std::vector<std::string> names);
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // The address of `symbol`, opening the library on first use. Throws leangrad::Error naming the
  // purpose, the files tried and the loader's reason when the library or the symbol is missing; a
  // later call tries again (an LD_LIBRARY_PATH fixed in between is not seen: the loader reads it
  // at start-up).
  void* symbol(const char* name);

  // The file that was opened; empty before the first successful symbol().
  std::string opened_file();
  const std::vector<std::string>& names() const { return names_; }

  // The library is never closed: the CUDA libraries register exit handlers, and unloading them
  // while the process may still call them gains nothing.
  ~SharedLibrary() = default;

 private:
  void* handle();

  std::string purpose_;
  std::vector<std::string> names_;
  std::mutex mutex_;
  void* handle_ = nullptr;  // guarded by mutex_; set once, never reset
  std::string opened_;      // guarded by mutex_
};

// The files a lazily opened library is tried as: its versioned name, found as the loader finds
// any library, then the file the build found (`build_path`, may be empty).
inline std::vector<std::string> library_files(std::string soname, const char* build_path) {
  std::vector<std::string> files{std::move(soname)};
  if (build_path != nullptr && build_path[0] != '\0') files.emplace_back(build_path);
  return files;
}

// The real function `F` (the forwarding definition that calls this), resolved in `library` on its
// first use and remembered: one dlsym per function per process. Used through LG_REAL_FUNCTION.
template <auto F>
auto real_function(SharedLibrary& library, const char* name) {
  static const auto real = std::bit_cast<decltype(F)>(library.symbol(name));
  return real;
}

}  // namespace leangrad::detail

// In a forwarding definition of `name` (a function the library declares and we define):
//   cublasStatus_t cublasCreate_v2(cublasHandle_t* h) { return LG_REAL_FUNCTION(lib,
//   cublasCreate_v2)(h); }
#define LG_REAL_FUNCTION(library, name) ::leangrad::detail::real_function<&name>(library, #name)
