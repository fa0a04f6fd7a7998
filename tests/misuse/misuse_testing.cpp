// The one test of the misuse suite (tests/misuse/misuse_testing.h), run for every case of every
// table: the call must throw the leangrad::Error the case names, with a message that contains
// each of the case's substrings. Anything else (no exception, another exception type, a message
// that does not name the op and the values) fails, and says what happened instead.
#include "misuse/misuse_testing.h"

#include <exception>
#include <typeinfo>

#include <leangrad/core/error.h>

namespace leangrad::test {

void PrintTo(const MisuseCase& misuse, std::ostream* out) {
  *out << misuse.name;
}

std::string misuse_case_name(const ::testing::TestParamInfo<MisuseCase>& info) {
  return info.param.name;
}

namespace {

const char* class_name(Raises raises) {
  switch (raises) {
    case Raises::Error:
      return "leangrad::Error";
    case Raises::ShapeError:
      return "leangrad::ShapeError";
    case Raises::DTypeError:
      return "leangrad::DTypeError";
    case Raises::DeviceError:
      return "leangrad::DeviceError";
    case Raises::OutOfMemoryError:
      return "leangrad::OutOfMemoryError";
  }
  return "?";
}

bool is_of_class(const Error& error, Raises raises) {
  switch (raises) {
    case Raises::Error:
      return true;
    case Raises::ShapeError:
      return dynamic_cast<const ShapeError*>(&error) != nullptr;
    case Raises::DTypeError:
      return dynamic_cast<const DTypeError*>(&error) != nullptr;
    case Raises::DeviceError:
      return dynamic_cast<const DeviceError*>(&error) != nullptr;
    case Raises::OutOfMemoryError:
      return dynamic_cast<const OutOfMemoryError*>(&error) != nullptr;
  }
  return false;
}

::testing::AssertionResult raises_as_described(const MisuseCase& misuse) {
  try {
    misuse.call();
  } catch (const Error& error) {
    if (!is_of_class(error, misuse.raises)) {
      return ::testing::AssertionFailure()
             << "expected a " << class_name(misuse.raises) << ", got a " << typeid(error).name()
             << ": " << error.what();
    }
    for (const std::string& part : misuse.message) {
      if (error.message().find(part) == std::string::npos) {
        return ::testing::AssertionFailure()
               << "the message does not contain \"" << part << "\": " << error.what();
      }
    }
    return ::testing::AssertionSuccess();
  } catch (const std::exception& error) {
    return ::testing::AssertionFailure()
           << "expected a " << class_name(misuse.raises) << ", got a non-leangrad exception "
           << typeid(error).name() << ": " << error.what();
  } catch (...) {
    return ::testing::AssertionFailure()
           << "expected a " << class_name(misuse.raises) << ", got an exception of unknown type";
  }
  return ::testing::AssertionFailure()
         << "expected a " << class_name(misuse.raises) << ", but nothing was thrown";
}

}  // namespace

TEST_P(Misuse, Raises) {
  EXPECT_TRUE(raises_as_described(GetParam()));
}

// Tables are instantiated in the test_misuse_*.cpp files; a binary built without them still links.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Misuse);

}  // namespace leangrad::test
