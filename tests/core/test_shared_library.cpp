// The loader behind the lazily opened CUDA libraries (core/shared_library.h, Note [Lazily loaded
// CUDA libraries] in kernels/cuda/cublas_lazy.cpp), and what it finds of cuBLAS, cuDNN and NCCL.
// None of this needs a GPU: a CUDA build checks on a machine without one that every function
// leangrad forwards to exists in the library the loader finds.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include <leangrad/core/cuda.h>
#include <leangrad/core/error.h>
#include <leangrad/core/shared_library.h>

namespace leangrad {
namespace {

using detail::SharedLibrary;

TEST(SharedLibrary, ResolvesAFunctionThatThenComputes) {
  SharedLibrary libc("the C library", {"libc.so.6"});
  const auto strlen_fn = reinterpret_cast<std::size_t (*)(const char*)>(libc.symbol("strlen"));
  EXPECT_EQ(strlen_fn("leangrad"), 8u);
  EXPECT_EQ(libc.opened_file(), "libc.so.6");
}

TEST(SharedLibrary, TriesEachNameInTurn) {
  SharedLibrary libc("the C library", {"libleangrad-no-such-library.so.1", "libc.so.6"});
  EXPECT_NE(libc.symbol("strlen"), nullptr);
  EXPECT_EQ(libc.opened_file(), "libc.so.6");
}

TEST(SharedLibrary, AMissingLibraryNamesThePurposeAndEveryFileTried) {
  SharedLibrary missing("cuBLAS (CUDA matmul)",
                        {"libleangrad-no-such-library.so.1", "libleangrad-no-such-library.so"});
  try {
    missing.symbol("anything");
    FAIL() << "expected leangrad::Error";
  } catch (const Error& e) {
    const std::string message = e.message();
    EXPECT_NE(message.find("cuBLAS (CUDA matmul)"), std::string::npos) << message;
    EXPECT_NE(message.find("libleangrad-no-such-library.so.1"), std::string::npos) << message;
    EXPECT_NE(message.find("libleangrad-no-such-library.so:"), std::string::npos) << message;
    EXPECT_NE(message.find("LD_LIBRARY_PATH"), std::string::npos) << message;
  }
  EXPECT_EQ(missing.opened_file(), "");
  // Asking again fails again, the same way (nothing half-initialised).
  EXPECT_THROW(missing.symbol("anything"), Error);
}

TEST(SharedLibrary, AMissingFunctionIsNamed) {
  SharedLibrary libc("the C library", {"libc.so.6"});
  try {
    libc.symbol("leangrad_no_such_function");
    FAIL() << "expected leangrad::Error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("'leangrad_no_such_function'"), std::string::npos) << e.message();
  }
}

// The library's major version is the one its file name carries: the file found is the one meant
// (libcublas.so.13 holds cuBLAS 13), it answered, and it holds every function leangrad calls.
TEST(CudaLibraries, EachIsFoundWithEveryFunctionLeangradCalls) {
  const std::vector<cuda::LibraryStatus> statuses = cuda::library_statuses();
  if (!LEANGRAD_WITH_CUDA) {
    EXPECT_TRUE(statuses.empty()) << "a build without CUDA opens no CUDA library";
    return;
  }
  ASSERT_EQ(statuses.size(), 3u);
  EXPECT_EQ(statuses[0].name, "cuBLAS");
  EXPECT_EQ(statuses[1].name, "cuDNN");
  EXPECT_EQ(statuses[2].name, "NCCL");
  for (const cuda::LibraryStatus& s : statuses) {
    if (s.name == "NCCL" && s.error.find("built without NCCL") != std::string::npos) continue;
    ASSERT_TRUE(s.ok()) << s.name << ": " << s.error;
    const std::size_t so = s.file.find(".so.");
    ASSERT_NE(so, std::string::npos) << s.file;
    EXPECT_EQ(std::to_string(s.major), s.file.substr(so + 4)) << s.name << " " << s.version;
    EXPECT_EQ(s.version.rfind(std::to_string(s.major) + ".", 0), 0u) << s.version;
  }
}

}  // namespace
}  // namespace leangrad
