// SHA-256 (FIPS 180-4) of a byte string, as lowercase hex: for tests that check a committed file
// against the hash a script recorded beside it (tests/data/*.check.json). Plain and slow; test
// data only.
#pragma once

#include <string>

namespace leangrad::test {

std::string sha256_hex(const std::string& bytes);

}  // namespace leangrad::test
