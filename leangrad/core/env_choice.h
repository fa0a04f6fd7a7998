// A setting read from the environment that is one word of a short list (LEANGRAD_CPU_GEMM=eigen,
// LEANGRAD_CPU_CONV=direct, LEANGRAD_CONV=cudnn), read once by its user at the first use.
//
// Note [Settings from the environment]
// The first read may happen inside a parallel region (the first matmul of a program can be in
// one), where an exception ends the program, so a word that is not on the list never throws:
// it is named on stderr with the words that are, and the default is kept. Set the setting
// through its function (ops::set_cpu_gemm_backend, ...) to have a mistake raise an Error.
//
// Internal: not part of the installed headers.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>

namespace leangrad::detail {

struct EnvChoice {
  std::size_t index;    // into the list of words
  std::string warning;  // empty, or the line env_choice writes to stderr
};

// The index in `words` of `value`, the value of the variable `name`; `fallback` when `value` is
// null or empty, or (with a warning naming `name`, the value, the words and the one kept) when it
// is not one of `words`. `note` (may be empty) is added after the list, in parentheses, to say
// why a word is missing ("built without oneDNN").
EnvChoice parse_env_choice(const char* name, const char* value,
                           std::initializer_list<const char*> words, std::size_t fallback,
                           const std::string& note = {});

// parse_env_choice on the variable's value now; a warning goes to stderr. Never throws.
std::size_t env_choice(const char* name, std::initializer_list<const char*> words,
                       std::size_t fallback, const std::string& note = {});

}  // namespace leangrad::detail
