// Settings from the environment (core/env_choice.h): a word on the list is taken, an unset or
// empty variable keeps the default, anything else keeps the default with a warning that names
// the variable, the value and the words.
#include <gtest/gtest.h>

#include <cstdlib>

#include <leangrad/core/env_choice.h>

namespace leangrad {
namespace {

using detail::parse_env_choice;

TEST(EnvChoice, AWordOnTheListIsTaken) {
  for (std::size_t fallback : {0u, 2u}) {
    EXPECT_EQ(parse_env_choice("LEANGRAD_X", "auto", {"auto", "gemm", "direct"}, fallback).index,
              0u);
    const auto direct =
        parse_env_choice("LEANGRAD_X", "direct", {"auto", "gemm", "direct"}, fallback);
    EXPECT_EQ(direct.index, 2u);
    EXPECT_TRUE(direct.warning.empty()) << direct.warning;
  }
}

TEST(EnvChoice, UnsetOrEmptyKeepsTheDefaultSilently) {
  for (const char* value : {static_cast<const char*>(nullptr), ""}) {
    const auto choice = parse_env_choice("LEANGRAD_X", value, {"auto", "gemm", "direct"}, 1);
    EXPECT_EQ(choice.index, 1u);
    EXPECT_TRUE(choice.warning.empty()) << choice.warning;
  }
}

TEST(EnvChoice, AnyOtherValueKeepsTheDefaultWithAWarning) {
  // Words are compared exactly: no case folding, no trimming, no prefixes.
  for (const char* value : {"Direct", "direct ", "dir", "cudnn"}) {
    const auto choice = parse_env_choice("LEANGRAD_X", value, {"auto", "gemm", "direct"}, 0);
    EXPECT_EQ(choice.index, 0u) << value;
    EXPECT_EQ(choice.warning, std::string("leangrad: warning: LEANGRAD_X=") + value +
                                  " is not one of auto, gemm or direct; using auto");
  }
  const auto one =
      parse_env_choice("LEANGRAD_CPU_GEMM", "onednn", {"eigen"}, 0, "built without oneDNN");
  EXPECT_EQ(one.index, 0u);
  EXPECT_EQ(one.warning,
            "leangrad: warning: LEANGRAD_CPU_GEMM=onednn is not eigen (built without oneDNN); "
            "using eigen");
}

TEST(EnvChoice, ReadsTheVariable) {
  ASSERT_EQ(::setenv("LEANGRAD_TEST_ENV_CHOICE", "gemm", 1), 0);
  EXPECT_EQ(detail::env_choice("LEANGRAD_TEST_ENV_CHOICE", {"auto", "gemm"}, 0), 1u);
  ASSERT_EQ(::unsetenv("LEANGRAD_TEST_ENV_CHOICE"), 0);
  EXPECT_EQ(detail::env_choice("LEANGRAD_TEST_ENV_CHOICE", {"auto", "gemm"}, 0), 0u);
}

}  // namespace
}  // namespace leangrad
