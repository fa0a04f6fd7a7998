// The file store (make_file_store in distributed/store.h): keys are files in a shared folder,
// laid out as Gloo's FileStore lays them out (gloo/rendezvous/file_store.h: one file per key,
// named by a hash of the key, found by Gloo's existence check), so Gloo's tools read it. Gloo's
// store writes each key once, through one temporary file per key; leangrad also replaces values
// (the progress board), lets several ranks write one key (init/error) and adds to counters:
// - set() writes a temporary file of its own process (".<hash>.<pid>") and renames it over the
//   key's file, so a reader sees a whole old or new value, never a mix;
// - add() holds an flock(2) on "<folder>/leangrad.lock" while it reads, adds and replaces.
#include <fcntl.h>
#include <gloo/rendezvous/file_store.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include <leangrad/core/error.h>
#include <leangrad/distributed/store.h>

namespace leangrad::distributed {
namespace {

// Gloo's FileStore with its file names (protected there) made available.
class GlooFileStore : public gloo::rendezvous::FileStore {
 public:
  using gloo::rendezvous::FileStore::FileStore;
  std::string path_of(const std::string& key) { return objectPath(key); }
  std::string temporary_path_of(const std::string& key) { return tmpPath(key); }
  bool exists(const std::string& key) { return check({key}); }
};

class FileStore final : public Store {
 public:
  FileStore(const std::string& directory, std::chrono::milliseconds timeout)
      : Store(timeout), directory_(directory) {
    struct stat info {};
    LG_CHECK(::stat(directory.c_str(), &info) == 0 && S_ISDIR(info.st_mode),
             "file store: LEANGRAD_STORE=file://", directory,
             " does not name a folder (it must exist, and every rank must see it)");
    store_ = std::make_unique<GlooFileStore>(directory);
  }

  void set(const std::string& key, const std::string& value) override {
    const std::string temporary = store_->temporary_path_of(key) + "." + std::to_string(getpid());
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      out.write(value.data(), static_cast<std::streamsize>(value.size()));
      LG_CHECK(out.good(), "file store: cannot write ", temporary, ": ", std::strerror(errno));
    }
    LG_CHECK(std::rename(temporary.c_str(), store_->path_of(key).c_str()) == 0,
             "file store: cannot rename ", temporary, ": ", std::strerror(errno));
  }

  std::optional<std::string> try_get(const std::string& key) override {
    bool present = false;
    try {
      present = store_->exists(key);
    } catch (const std::exception& e) {
      LG_THROW(Error, "file store: cannot look for key '", printable(key), "' in ", directory_,
               ": ", e.what());
    }
    if (!present) return std::nullopt;
    std::ifstream in(store_->path_of(key), std::ios::binary);
    LG_CHECK(in.good(), "file store: cannot read key '", printable(key), "' in ", directory_);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  std::int64_t add(const std::string& key, std::int64_t delta) override {
    const std::string lock_path = directory_ + "/leangrad.lock";
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    LG_CHECK(fd >= 0, "file store: cannot open ", lock_path, ": ", std::strerror(errno));
    ::flock(fd, LOCK_EX);
    std::int64_t value = 0;
    try {
      if (std::optional<std::string> current = try_get(key)) {
        const auto [end, error] =
            std::from_chars(current->data(), current->data() + current->size(), value);
        LG_CHECK(error == std::errc() && end == current->data() + current->size(),
                 "file store: add: the value of key '", printable(key), "' is not an integer");
      }
      value += delta;
      set(key, std::to_string(value));
    } catch (...) {
      ::close(fd);  // releases the lock
      throw;
    }
    ::close(fd);
    return value;
  }

  std::string describe() const override { return "the file store in " + directory_; }

 private:
  std::string directory_;
  std::unique_ptr<GlooFileStore> store_;
};

}  // namespace

std::shared_ptr<Store> make_file_store(const std::string& directory,
                                       std::chrono::milliseconds timeout) {
  return std::make_shared<FileStore>(directory, timeout);
}

}  // namespace leangrad::distributed
