// Settings from the environment (env_choice.h, Note [Settings from the environment]).
#include <leangrad/core/env_choice.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace leangrad::detail {

EnvChoice parse_env_choice(const char* name, const char* value,
                           std::initializer_list<const char*> words, std::size_t fallback,
                           const std::string& note) {
  if (value == nullptr || *value == '\0') return {fallback, {}};
  std::size_t index = 0;
  for (const char* word : words) {
    if (std::strcmp(value, word) == 0) return {index, {}};
    ++index;
  }
  std::string list;
  index = 0;
  for (const char* word : words) {
    list += (index == 0 ? "" : index + 1 == words.size() ? " or " : ", ");
    list += word;
    ++index;
  }
  const char* kept = fallback < words.size() ? words.begin()[fallback] : "the default";
  std::string warning = std::string("leangrad: warning: ") + name + "=" + value + " is not " +
                        (words.size() == 1 ? "" : "one of ") + list +
                        (note.empty() ? "" : " (" + note + ")") + "; using " + kept;
  return {fallback, std::move(warning)};
}

std::size_t env_choice(const char* name, std::initializer_list<const char*> words,
                       std::size_t fallback, const std::string& note) {
  try {
    const EnvChoice choice = parse_env_choice(name, std::getenv(name), words, fallback, note);
    if (!choice.warning.empty()) std::fprintf(stderr, "%s\n", choice.warning.c_str());
    return choice.index;
  } catch (...) {  // std::bad_alloc building the warning: keep the default, say nothing
    return fallback;
  }
}

}  // namespace leangrad::detail
