// Reading regular files and writing files atomically (data/file_io.h).
#include <leangrad/data/file_io.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
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
// (same file system, so rename is atomic) named ".<name>.tmp.<host>.<pid>.<counter>", which no
// other writer (thread, process or machine sharing the folder) picks; the file is fsync'ed before
// the rename so the rename cannot reach the disk before the data; then the folder is fsync'ed so
// the rename itself survives a power cut. Any failure removes the temporary file and leaves the
// target as it was. Only a kill between create and rename leaves the temporary behind: its host
// is then this machine and its pid names a process that no longer runs here, which is how
// remove_abandoned_temporaries recognises it. A temporary of another host (an NFS folder shared
// by several machines) is never removed: its pid says nothing about the processes here.
// - The target is the file at the end of the path's symbolic links (Note [Writing through
//   symbolic links]).
// - The new file gets the permission bits of the regular file it replaces (a private 0600
//   checkpoint stays private), or 0666 less the umask for a new file, as open() gives; and the
//   replaced file's owner and group where this process may set them (Note [Owner and mode]).
// - A successful write also removes what killed writes of the same file on this host left (a
//   temporary of the target whose writer no longer runs), so that a file rewritten run after run
//   does not gather them.

// This machine's name as it goes into temporary names: each byte other than a letter, a digit or
// '-' written %XX, so that the name holds no '.' and ".tmp.<host>.<pid>.<n>" reads back
// unambiguously from the right ("node1.cluster" is "node1%2Ecluster"). Where gethostname fails
// the name is empty, which temporary_of_this_host never matches: such a temporary is left for
// the user, since without a name it cannot be told from another host's.
const std::string& host_in_names() {
  static const std::string spelled = [] {
    char name[HOST_NAME_MAX + 1] = {};
    if (::gethostname(name, sizeof(name) - 1) != 0) name[0] = '\0';
    std::string text;
    for (const char c : std::string(name)) {
      const bool plain =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
      char escaped[4];
      std::snprintf(escaped, sizeof(escaped), "%%%02X", static_cast<unsigned char>(c));
      text += plain ? std::string(1, c) : std::string(escaped);
    }
    return text;
  }();
  return spelled;
}

std::string temporary_path_for(const std::string& path) {
  static std::atomic<std::uint64_t> counter{0};
  const auto slash = path.find_last_of('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string folder = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string suffix = ".tmp." + host_in_names() + "." + std::to_string(::getpid()) + "." +
                             std::to_string(counter.fetch_add(1));
  // The dot, as much of the target's name as fits and the suffix stay within NAME_MAX (255
  // bytes), for any target name within it: the host, pid and counter keep the name unique.
  const std::size_t fits = NAME_MAX - 1 - std::min<std::size_t>(suffix.size(), NAME_MAX - 2);
  return folder + "." + base.substr(0, fits) + suffix;
}

// A temporary's name read back (".<stem>.tmp.<host>.<pid>.<n>"): <stem> is the target's name,
// or as much of it as fits when the whole would pass NAME_MAX (temporary_path_for).
struct TemporaryName {
  std::string stem;
  pid_t pid = 0;
};

// The parts of `name` when it is a temporary of this host, else nothing.
std::optional<TemporaryName> temporary_of_this_host(const std::string& name) {
  static const std::regex pattern(R"(\.(.+)\.tmp\.([^.]+)\.([0-9]{1,9})\.[0-9]+)");
  std::smatch match;
  if (!std::regex_match(name, match, pattern) || match[2].str() != host_in_names())
    return std::nullopt;
  return TemporaryName{match[1].str(), static_cast<pid_t>(std::stol(match[3].str()))};
}

bool process_runs(pid_t pid) {
  return pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH;
}

// Removes from `folder` the temporaries of this host whose writer no longer runs: every one, or
// with `target` (a file name in `folder`) only those of that file. Best effort: what cannot be
// listed or removed stays.
std::vector<std::string> remove_abandoned(const std::string& folder,
                                          const std::optional<std::string>& target) {
  std::vector<std::string> removed;
  std::error_code error;
  for (auto it = std::filesystem::directory_iterator(folder, error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    const std::optional<TemporaryName> temporary = temporary_of_this_host(name);
    if (!temporary || temporary->pid <= 0) continue;
    const bool of_target = !target || temporary->stem == *target ||
                           (name.size() == NAME_MAX && target->starts_with(temporary->stem));
    std::error_code ignored;
    if (!of_target || !it->is_regular_file(ignored) || process_runs(temporary->pid)) continue;
    if (std::filesystem::remove(it->path(), ignored)) removed.push_back(it->path());
  }
  return removed;
}

// Note [Writing through symbolic links]: a path whose last component is a symbolic link (say
// model.safetensors -> /data/big/model.safetensors) is written where the link points, as open()
// and torch.save do: the temporary goes beside that file and is renamed over it, and the link
// stays a link. A chain of links is followed to its end, relative targets from the folder of the
// link that holds them; a dangling link has its target created; links that do not end (a loop,
// or more than 40 as Linux follows) are an Error. A link into a folder this process cannot write
// is an Error too (it names the link, the file and the reason), and the link and the file are
// left as they were: an atomic write needs a new file beside the target, and writing the target
// in place would lose the old file to a failure part-way, replacing the link would put the data
// where the link does not point. (Links among the folders of the path need nothing: the folder
// the temporary goes to is the target's all the same.)
struct Target {
  std::string path;       // as the caller gave it
  std::string resolved;   // the file written: `path` at the end of its symbolic links
  bool replaces = false;  // a regular file is there (nothing else is replaced), whose owner
                          // and mode the new one keeps
  mode_t mode = 0666;     // its permission bits (Note [Owner and mode])
  uid_t owner = 0;
  gid_t group = 0;

  // "'<path>'", and "(a symbolic link to '<resolved>')" when it is one.
  std::string describe() const {
    return resolved == path ? "'" + path + "'"
                            : "'" + path + "' (a symbolic link to '" + resolved + "')";
  }
};

// Throws unless `path` names a file: not a folder (an existing one, or a path ending in '/'),
// which the final rename would refuse only after all the data was written.
void check_names_a_file(const std::string& path, const char* caller) {
  LG_CHECK(!path.empty() && path.back() != '/', caller, ": cannot write '", path,
           "': it names a folder, not a file");
}

Target resolve_target(const std::string& path, const char* caller) {
  constexpr int kMaxLinks = 40;  // Linux's MAXSYMLINKS
  check_names_a_file(path, caller);
  Target target;
  target.path = path;
  target.resolved = path;
  for (int links = 0;; ++links) {
    struct stat st {};
    if (::lstat(target.resolved.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    LG_CHECK(links < kMaxLinks, caller, ": cannot write '", path,
             "': its symbolic links do not end (a loop, or a chain of more than ", kMaxLinks,
             " links)");
    std::error_code error;
    const std::string link = std::filesystem::read_symlink(target.resolved, error).string();
    LG_CHECK(!error, caller, ": cannot read the symbolic link '", target.resolved,
             "': ", error.message());
    const auto slash = target.resolved.find_last_of('/');
    const std::string folder =
        slash == std::string::npos ? "" : target.resolved.substr(0, slash + 1);
    target.resolved = !link.empty() && link.front() == '/' ? link : folder + link;
  }
  if (target.resolved != path) check_names_a_file(target.resolved, caller);
  struct stat st {};
  if (::stat(target.resolved.c_str(), &st) == 0) {
    LG_CHECK(!S_ISDIR(st.st_mode), caller, ": cannot write ", target.describe(),
             ": it is a folder");
    // A device, FIFO or socket would be replaced by a regular file (as root, --save-model
    // /dev/null would put a file where the system's null device was): refused, as the readers
    // refuse such files.
    LG_CHECK(S_ISREG(st.st_mode), caller, ": cannot write ", target.describe(), ": it is ",
             file_kind(st.st_mode),
             ", and an atomic write would replace it with a regular file (write to a regular "
             "file's path instead)");
    target.replaces = true;
    target.mode = st.st_mode & 0777;
    target.owner = st.st_uid;
    target.group = st.st_gid;
  }
  return target;
}

// Note [Owner and mode]: the new file takes the place of the old one and keeps what GNU sed -i
// and cp -p keep: the old file's owner and group where this process may set them, and its
// permission bits (not its ACLs or extended attributes).
// - Owner and group: root may set both; any other writer only a group it is a member of (its
//   new file is its own: a user cannot give a file away). So the temporary is given both, else
//   the group alone; what is refused (EPERM, a file system without Unix owners, an id a user
//   namespace does not map) is ignored and leaves the writer's, as for any new file.
// - Permission bits: the temporary is created readable and writable by its creator only (the
//   umask may take more away), and gets the old file's bits once it has the old file's owner and
//   group: at no moment may it be readable by someone the old file did not let read it. Setting
//   them is best effort: where it fails (file systems without Unix permissions) the file has at
//   most the bits the target had.
// - setuid, setgid and sticky bits are never carried over: the writer chose the new content, and
//   a setuid or setgid file of another owner (root saving over a user's, or a group member's file
//   replaced through a shared folder) would run that content with an identity the writer does
//   not have. A checkpoint or a log is no program.
FileDescriptor create_temporary(const std::string& temporary, const Target& target,
                                const char* caller) {
  const mode_t mode = target.replaces ? (target.mode & 0600) : 0666;
  FileDescriptor fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  LG_CHECK(fd.get() >= 0, caller, ": cannot create a file next to ", target.describe(), " (",
           temporary, "): ", errno_text());
  if (target.replaces) {
    if (::fchown(fd.get(), target.owner, target.group) != 0)
      (void)::fchown(fd.get(), static_cast<uid_t>(-1), target.group);
    (void)::fchmod(fd.get(), target.mode);
  }
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
  const Target target = resolve_target(path, caller);
  const std::string temporary = temporary_path_for(target.resolved);
  FileDescriptor fd = create_temporary(temporary, target, caller);
  try {
    for (const std::string_view piece : pieces)
      write_all(fd.get(), piece, temporary, caller);
    LG_CHECK(::fsync(fd.get()) == 0, caller, ": fsync of '", temporary, "' failed: ", errno_text());
    LG_CHECK(fd.close(), caller, ": closing '", temporary, "' failed: ", errno_text());
    LG_CHECK(::rename(temporary.c_str(), target.resolved.c_str()) == 0, caller, ": cannot rename '",
             temporary, "' to ", target.describe(), ": ", errno_text());
  } catch (...) {
    ::unlink(temporary.c_str());
    throw;
  }
  // Best effort: some file systems refuse fsync on a folder, and the data is already in place.
  const std::string folder_path = folder_of(target.resolved);
  FileDescriptor folder(::open(folder_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (folder.get() >= 0) ::fsync(folder.get());
  // Then what killed writes of this file left. The write has succeeded, and nothing here may say
  // otherwise: remove_abandoned ignores what the file system refuses, and whatever else throws
  // (an allocation) leaves the temporaries where they are.
  try {
    const auto slash = target.resolved.find_last_of('/');
    const std::string name =
        slash == std::string::npos ? target.resolved : target.resolved.substr(slash + 1);
    remove_abandoned(folder_path, name);
  } catch (const std::exception&) {
  }
}

void write_file_atomically(const std::string& path, std::string_view bytes, const char* caller) {
  write_file_atomically(path, std::span<const std::string_view>(&bytes, 1), caller);
}

void check_writable(const std::string& path, const char* caller) {
  const Target target = resolve_target(path, caller);
  const std::string temporary = temporary_path_for(target.resolved);
  FileDescriptor fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  LG_CHECK(fd.get() >= 0, caller, ": cannot write ", target.describe(), ": ", errno_text());
  fd.close();
  ::unlink(temporary.c_str());
}

std::vector<std::string> remove_abandoned_temporaries(const std::string& folder) {
  return remove_abandoned(folder, std::nullopt);
}

}  // namespace leangrad
