// The misuse suite (tests/misuse/): the public API called the way a user should not call it, one
// table of cases per area. A case names the leangrad::Error the call must raise (its class and
// substrings of its message: the op, then the offending shapes, dtypes, dims, devices or values)
// and ends with the call, so that a long one reads as a block:
//   MisuseTable t;
//   t.add("view_numel_mismatch", Raises::ShapeError, {"view", "[4]", "size 6"}, [] {
//     ones({2, 3}).view({4});
//   });
//   ...
//   LG_MISUSE_SUITE(Views, t.cases());
// Each table becomes a parameterised GoogleTest suite, one test per case, so a case that crashes
// takes down only itself. docs/testing.md says what the suite covers and how to add a case.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace leangrad::test {

// The class of leangrad::Error a case must raise. Raises::Error accepts any leangrad::Error
// (subclasses included); the others require that subclass.
enum class Raises { Error, ShapeError, DTypeError, DeviceError, OutOfMemoryError };

struct MisuseCase {
  std::string name;  // the test's name: letters, digits and '_'
  Raises raises;
  // Substrings the message (Error::message(), without the throw site) must contain.
  std::vector<std::string> message;
  std::function<void()> call;
};

class MisuseTable {
 public:
  void add(std::string name, Raises raises, std::vector<std::string> message,
           std::function<void()> call) {
    cases_.push_back({std::move(name), raises, std::move(message), std::move(call)});
  }
  const std::vector<MisuseCase>& cases() const { return cases_; }

 private:
  std::vector<MisuseCase> cases_;
};

void PrintTo(const MisuseCase& misuse, std::ostream* out);
std::string misuse_case_name(const ::testing::TestParamInfo<MisuseCase>& info);

// The fixture every table instantiates (its one test is in misuse_testing.cpp).
class Misuse : public ::testing::TestWithParam<MisuseCase> {};

}  // namespace leangrad::test

// One suite of cases, used inside namespace leangrad::test: LG_MISUSE_SUITE(Views, view_cases())
// makes the tests "Views/Misuse.Raises/<name>".
#define LG_MISUSE_SUITE(Area, cases) \
  INSTANTIATE_TEST_SUITE_P(Area, Misuse, ::testing::ValuesIn(cases), misuse_case_name)
