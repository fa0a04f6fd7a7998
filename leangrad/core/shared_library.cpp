#include <leangrad/core/shared_library.h>

#include <dlfcn.h>

#include <leangrad/core/error.h>

namespace leangrad::detail {

SharedLibrary::SharedLibrary(std::string purpose, std::vector<std::string> names)
    : purpose_(std::move(purpose)), names_(std::move(names)) {}

void* SharedLibrary::handle() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (handle_ != nullptr) return handle_;
  std::string reasons;
  for (const std::string& name : names_) {
    // RTLD_LOCAL: its symbols stay out of the global scope, so they never stand in for another
    // copy of the library the program links itself.
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      opened_ = name;
      return handle_ = h;
    }
    const char* why = dlerror();
    reasons += str_cat("\n  ", name, ": ", why != nullptr ? why : "unknown loader error");
  }
  LG_THROW(Error, purpose_, " needs a shared library that could not be loaded; tried:", reasons,
           "\nInstall it (it comes with the CUDA toolkit or NVIDIA's packages) or add its folder "
           "to LD_LIBRARY_PATH before the program starts.");
}

std::string SharedLibrary::opened_file() {
  std::lock_guard<std::mutex> lock(mutex_);
  return opened_;
}

void* SharedLibrary::symbol(const char* name) {
  void* library = handle();
  dlerror();  // clear a stale error, so the one read below is this lookup's
  void* address = dlsym(library, name);
  if (address == nullptr) {
    const char* why = dlerror();
    LG_THROW(Error, purpose_, ": the loaded library has no function '", name, "' (",
             why != nullptr ? why : "null address",
             "); it is older than the headers leangrad was built with");
  }
  return address;
}

}  // namespace leangrad::detail
