#include <leangrad/core/cuda/lazy_libraries.h>

#include <leangrad/core/error.h>

namespace leangrad::detail {

cuda::LibraryStatus probe_library(const char* name, SharedLibrary& library,
                                  std::initializer_list<const char*> functions,
                                  const std::function<std::array<int, 3>()>& version) {
  cuda::LibraryStatus status;
  status.name = name;
  try {
    for (const char* function : functions)
      library.symbol(function);
    const std::array<int, 3> v = version();
    status.file = library.opened_file();
    status.version = str_cat(v[0], ".", v[1], ".", v[2]);
    status.major = v[0];
  } catch (const Error& e) {
    status.file = library.opened_file();
    if (status.file.empty()) {
      for (const std::string& file : library.names())
        status.file += (status.file.empty() ? "" : ", ") + file;
    }
    status.error = e.message();
  }
  return status;
}

}  // namespace leangrad::detail

namespace leangrad::cuda {

std::vector<LibraryStatus> library_statuses() {
  return {detail::cublas_status(), detail::cudnn_status(), detail::nccl_status()};
}

}  // namespace leangrad::cuda
