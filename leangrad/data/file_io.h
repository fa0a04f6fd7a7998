// Files as the data layer reads and writes them: only regular files are opened for reading (a
// directory, FIFO or device is an Error before anything blocks), whole files are written
// atomically (temporary file, fsync, rename, fsync of the folder) keeping the replaced file's
// owner and mode, and the temporaries of killed writers can be found and removed. Used by the IDX
// and safetensors readers, save_safetensors, Module::save and leangrad-train. See Note [Atomic
// file writes].
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace leangrad {

// A file descriptor, closed when it goes out of scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd = -1) : fd_(fd) {}
  ~FileDescriptor();
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  int get() const { return fd_; }
  // Closes now and reports whether close succeeded (close can report a failed delayed write).
  bool close();

 private:
  int fd_;
};

// Opens `path` for reading. Throws Error naming `caller` and the path when it does not exist or
// is not a regular file (a directory, FIFO, socket or device): a FIFO is never waited on.
FileDescriptor open_regular_file(const std::string& path, const char* caller);

// The size in bytes of the file open as `fd`.
std::uint64_t file_size(const FileDescriptor& fd, const std::string& path, const char* caller);

// Reads exactly `nbytes` at `offset`; a short file or a read error is an Error.
void read_exactly(const FileDescriptor& fd, void* data, std::size_t nbytes, std::uint64_t offset,
                  const std::string& path, const char* caller);

// The whole regular file at `path`.
std::vector<std::uint8_t> read_whole_file(const std::string& path, const char* caller);

// Writes the concatenation of `pieces` to `path` atomically (Note [Atomic file writes]): `path`
// is afterwards either the file it was or the complete new one, whatever fails (a full disk, a
// kill). Throws Error naming `caller`, the file and strerror; the temporary file is removed.
// A symbolic link is written through: the file at the end of its chain is replaced and the link
// stays (a dangling link's target is created; links that loop, or a link into a folder that
// cannot be written, are an Error that changes nothing; Note [Writing through symbolic links]).
// The new file keeps the permission bits of the regular file it replaces (never setuid, setgid
// or sticky), and its owner and group where this process may set them (Note [Owner and mode]);
// a new file gets 0666 less the umask. A successful write also removes the temporaries that
// killed writes of the same file on this host left.
void write_file_atomically(const std::string& path, std::span<const std::string_view> pieces,
                           const char* caller);
void write_file_atomically(const std::string& path, std::string_view bytes, const char* caller);

// Throws Error naming `caller` unless a file can be created next to `path` (its folder exists and
// is writable; for a symbolic link, next to the file it points to), so that a program can refuse
// at start what would fail only at the end of a run. Creates and removes a temporary file; `path`
// itself is not touched.
void check_writable(const std::string& path, const char* caller);

// Removes from `folder` the temporary files that write_file_atomically calls of processes that
// no longer run left behind (a kill between creating and renaming), of any file, and returns
// their paths.
// Only this host's temporaries are candidates (each names its host): those of live processes are
// kept, and so are those of other hosts sharing the folder (NFS), whose pids mean nothing here.
std::vector<std::string> remove_abandoned_temporaries(const std::string& folder);

}  // namespace leangrad
