// Reading regular files and writing files atomically (data/file_io.h).
#include <leangrad/data/file_io.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <regex>

#include <leangrad/core/error.h>

namespace leangrad {
namespace {

std::string errno_text() {
  return std::strerror(errno);
}

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

void write_all(int fd, std::string_view bytes, const std::string& path, const char* caller) {
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    LG_CHECK(n > 0, caller, ": writing '", path, "' failed: ", errno_text());
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

std::string folder_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Note [Atomic file writes]: a crash (or a full disk) in the middle of a save must never leave a
// half-written file where a good one was. The bytes go to a temporary file in the target's folder
// (same file system, so rename is atomic) named ".<name>.tmp.<pid>.<counter>", which no other
// writer (thread or process) picks; the file is fsync'ed before the rename so the rename cannot
// reach the disk before the data; then the folder is fsync'ed so the rename itself survives a
// power cut. Any failure removes the temporary file and leaves the target as it was. Only a kill
// between create and rename leaves the temporary behind: its pid then names a process that no
// longer runs, which is how remove_abandoned_temporaries recognises it.
std::string temporary_path_for(const std::string& path) {
  static std::atomic<std::uint64_t> counter{0};
  const auto slash = path.find_last_of('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string folder = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  // At most 200 bytes of the name: with the dot and ".tmp.<pid>.<n>" the temporary's name stays
  // within NAME_MAX (255) for any target name that is itself within it. The pid and the counter
  // keep it unique.
  constexpr std::size_t kMaxBase = 200;
  return folder + "." + base.substr(0, kMaxBase) + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1));
}

// The target must name a file: not a folder (an existing one, or a path ending in '/'), which
// the final rename would refuse only after all the data was written.
void check_target(const std::string& path, const char* caller) {
  LG_CHECK(!path.empty() && path.back() != '/', caller, ": cannot write '", path,
           "': it names a folder, not a file");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    LG_CHECK(!S_ISDIR(st.st_mode), caller, ": cannot write '", path, "': it is a folder");
  }
}

FileDescriptor create_temporary(const std::string& temporary, const std::string& path,
                                const char* caller) {
  FileDescriptor fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  LG_CHECK(fd.get() >= 0, caller, ": cannot create a file next to '", path, "' (", temporary,
           "): ", errno_text());
  return fd;
}

}  // namespace

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

bool FileDescriptor::close() {
  const int fd = fd_;
  fd_ = -1;
  return ::close(fd) == 0;
}

FileDescriptor open_regular_file(const std::string& path, const char* caller) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. The type is then
  // checked on the open file itself, so nothing can be swapped in between.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  LG_CHECK(fd.get() >= 0, caller, ": cannot open '", path, "': ", errno_text());
  struct stat info {};
  LG_CHECK(::fstat(fd.get(), &info) == 0, caller, ": cannot stat '", path, "': ", errno_text());
  LG_CHECK(S_ISREG(info.st_mode), caller, ": '", path, "' is ", file_kind(info.st_mode),
           ", not a regular file");
  const int flags = ::fcntl(fd.get(), F_GETFL);
  LG_CHECK(flags >= 0 && ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) == 0, caller,
           ": cannot set up '", path, "' for reading: ", errno_text());
  return fd;
}

std::uint64_t file_size(const FileDescriptor& fd, const std::string& path, const char* caller) {
  struct stat info {};
  LG_CHECK(::fstat(fd.get(), &info) == 0, caller, ": cannot stat '", path, "': ", errno_text());
  return static_cast<std::uint64_t>(info.st_size);
}

void read_exactly(const FileDescriptor& fd, void* data, std::size_t nbytes, std::uint64_t offset,
                  const std::string& path, const char* caller) {
  char* p = static_cast<char*>(data);
  while (nbytes > 0) {
    const ssize_t n = ::pread(fd.get(), p, nbytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    LG_CHECK(n > 0, caller, ": reading '", path, "' failed at byte ", offset, ": ",
             n == 0 ? std::string("unexpected end of file") : errno_text());
    p += n;
    offset += static_cast<std::uint64_t>(n);
    nbytes -= static_cast<std::size_t>(n);
  }
}

std::vector<std::uint8_t> read_whole_file(const std::string& path, const char* caller) {
  const FileDescriptor fd = open_regular_file(path, caller);
  const std::uint64_t size = file_size(fd, path, caller);
  LG_CHECK(size <= std::vector<std::uint8_t>().max_size(), caller, ": '", path, "' has ", size,
           " bytes, too many to read into memory");
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  read_exactly(fd, bytes.data(), bytes.size(), 0, path, caller);
  return bytes;
}

void write_file_atomically(const std::string& path, std::span<const std::string_view> pieces,
                           const char* caller) {
  check_target(path, caller);
  const std::string temporary = temporary_path_for(path);
  FileDescriptor fd = create_temporary(temporary, path, caller);
  try {
    for (const std::string_view piece : pieces)
      write_all(fd.get(), piece, temporary, caller);
    LG_CHECK(::fsync(fd.get()) == 0, caller, ": fsync of '", temporary, "' failed: ", errno_text());
    LG_CHECK(fd.close(), caller, ": closing '", temporary, "' failed: ", errno_text());
    LG_CHECK(::rename(temporary.c_str(), path.c_str()) == 0, caller, ": cannot rename '", temporary,
             "' to '", path, "': ", errno_text());
  } catch (...) {
    ::unlink(temporary.c_str());
    throw;
  }
  // Best effort: some file systems refuse fsync on a folder, and the data is already in place.
  FileDescriptor folder(::open(folder_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (folder.get() >= 0) ::fsync(folder.get());
}

void write_file_atomically(const std::string& path, std::string_view bytes, const char* caller) {
  write_file_atomically(path, std::span<const std::string_view>(&bytes, 1), caller);
}

void check_writable(const std::string& path, const char* caller) {
  check_target(path, caller);
  const std::string temporary = temporary_path_for(path);
  FileDescriptor fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  LG_CHECK(fd.get() >= 0, caller, ": cannot write '", path, "': ", errno_text());
  fd.close();
  ::unlink(temporary.c_str());
}

std::vector<std::string> remove_abandoned_temporaries(const std::string& folder) {
  static const std::regex pattern(R"(\..+\.tmp\.([0-9]{1,9})\.[0-9]+)");
  std::vector<std::string> removed;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    std::smatch match;
    if (!std::regex_match(name, match, pattern) || !entry.is_regular_file(error)) continue;
    const auto pid = static_cast<pid_t>(std::stol(match[1].str()));
    const bool running = pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH;
    if (!running && std::filesystem::remove(entry.path(), error)) removed.push_back(entry.path());
  }
  return removed;
}

}  // namespace leangrad
