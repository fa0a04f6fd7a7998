// save_safetensors / load_safetensors: the safetensors checkpoint format, written atomically and
// read with every field validated. The reader treats the file as hostile: each number in the
// header is range-checked before it is used, so a malformed file raises Error and never makes
// us read or allocate out of bounds. See Note [Atomic checkpoint writes] and
// Note [Validating a safetensors header].
#include "data/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "autograd/grad_mode.h"
#include "core/creation.h"
#include "core/error.h"

namespace leangrad {

static_assert(std::endian::native == std::endian::little,
              "safetensors stores little-endian bytes; leangrad writes host memory as is");

namespace {

constexpr std::uint64_t kHeaderLengthBytes = 8;
// The largest header we accept (the same limit as the reference Rust implementation).
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;
// A safetensors header nests three levels deep; anything much deeper is hostile.
constexpr int kMaxJsonDepth = 16;
constexpr const char* kMetadataKey = "__metadata__";

struct DTypeName {
  const char* name;
  DType dtype;
};
constexpr DTypeName kDTypeNames[] = {
    {"F32", kFloat32}, {"F64", kFloat64}, {"F16", kFloat16}, {"BF16", kBFloat16},
    {"I64", kInt64},   {"I32", kInt32},   {"U8", kUInt8},    {"BOOL", kBool},
};
// Valid safetensors dtypes that leangrad has no tensor type for.
constexpr const char* kUnsupportedDTypes[] = {"I8",  "I16",     "U16",     "U32",
                                              "U64", "F8_E4M3", "F8_E5M2", "F8_E8M0",
                                              "F4",  "F6_E2M3", "F6_E3M2", "C64"};

const char* safetensors_dtype_name(DType dtype) {
  for (const auto& entry : kDTypeNames)
    if (entry.dtype == dtype) return entry.name;
  LG_THROW(DTypeError, "save_safetensors: no safetensors name for dtype ", dtype);
}

std::string errno_text() {
  return std::strerror(errno);
}

// A file descriptor closed on scope exit.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  // Closes now, reporting the error (close can report a failed delayed write).
  bool close() {
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0;
  }

 private:
  int fd_;
};

// ---- Writing ---------------------------------------------------------------------------------

void write_all(int fd, const void* data, std::size_t nbytes, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (nbytes > 0) {
    const ssize_t n = ::write(fd, p, nbytes);
    if (n < 0 && errno == EINTR) continue;
    LG_CHECK(n > 0, "save_safetensors: writing '", path, "' failed: ", errno_text());
    p += n;
    nbytes -= static_cast<std::size_t>(n);
  }
}

std::string folder_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A name no other writer (thread or process) picks: the folder of `path`, the pid and a counter.
std::string temporary_path_for(const std::string& path) {
  static std::atomic<std::uint64_t> counter{0};
  const auto slash = path.find_last_of('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string folder = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  return folder + "." + base + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1));
}

// Note [Atomic checkpoint writes]: a crash (or a full disk) in the middle of a save must never
// leave a half-written checkpoint where a good one was. The bytes go to a temporary file in the
// target's folder (same file system, so rename is atomic); the file is fsync'ed before the
// rename so the rename cannot reach the disk before the data; then the folder is fsync'ed so
// the rename itself survives a power cut. Any failure removes the temporary file and leaves the
// target as it was.
void write_file_atomically(const std::string& path, const std::string& header,
                           const std::vector<Tensor>& host_tensors) {
  const std::string temporary = temporary_path_for(path);
  FileDescriptor fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  LG_CHECK(fd.get() >= 0, "save_safetensors: cannot create a temporary file next to '", path, "' (",
           temporary, "): ", errno_text());
  try {
    const std::uint64_t header_bytes = header.size();
    write_all(fd.get(), &header_bytes, sizeof(header_bytes), temporary);
    write_all(fd.get(), header.data(), header.size(), temporary);
    for (const Tensor& t : host_tensors)
      if (t.nbytes() > 0) write_all(fd.get(), t.data_ptr(), t.nbytes(), temporary);
    LG_CHECK(::fsync(fd.get()) == 0, "save_safetensors: fsync of '", temporary,
             "' failed: ", errno_text());
    LG_CHECK(fd.close(), "save_safetensors: closing '", temporary, "' failed: ", errno_text());
    LG_CHECK(::rename(temporary.c_str(), path.c_str()) == 0, "save_safetensors: cannot rename '",
             temporary, "' to '", path, "': ", errno_text());
  } catch (...) {
    ::unlink(temporary.c_str());
    throw;
  }
  // Best effort: some file systems refuse fsync on a folder, and the data is already in place.
  FileDescriptor folder(::open(folder_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (folder.get() >= 0) ::fsync(folder.get());
}

// ---- Reading ---------------------------------------------------------------------------------

void read_exactly(int fd, void* data, std::size_t nbytes, std::uint64_t offset,
                  const std::string& path) {
  char* p = static_cast<char*>(data);
  while (nbytes > 0) {
    const ssize_t n = ::pread(fd, p, nbytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    LG_CHECK(n > 0, "load_safetensors: reading '", path, "' failed at byte ", offset, ": ",
             n == 0 ? std::string("unexpected end of file") : errno_text());
    p += n;
    offset += static_cast<std::uint64_t>(n);
    nbytes -= static_cast<std::size_t>(n);
  }
}

struct Entry {
  std::string name;
  DType dtype = kFloat32;
  Shape shape;
  std::uint64_t begin = 0;  // byte offsets within the data section
  std::uint64_t end = 0;
};

struct Header {
  std::vector<Entry> entries;  // sorted by their bytes' position
  SafetensorsMetadata metadata;
  std::uint64_t data_start = 0;  // file offset of the data section
};

// The deepest nesting of [] and {} outside strings: checked before parsing so the parser never
// sees pathological input.
int json_depth(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

DType parse_dtype(const nlohmann::json& value, const std::string& where) {
  LG_CHECK(value.is_string(), where, ": \"dtype\" must be a string, got ", value.dump());
  const std::string name = value.get<std::string>();
  for (const auto& entry : kDTypeNames)
    if (name == entry.name) return entry.dtype;
  for (const char* unsupported : kUnsupportedDTypes)
    LG_CHECK_TYPED(DTypeError, name != unsupported, where, ": dtype ", name,
                   " is a safetensors dtype leangrad has no tensor type for");
  LG_THROW(DTypeError, where, ": unknown dtype \"", name,
           "\" (expected F32, F64, F16, BF16, I64, I32, U8 or BOOL)");
}

// A non-negative integer that fits int64 (sizes and offsets; JSON floats and negatives refused).
std::uint64_t parse_count(const nlohmann::json& value, const std::string& where, const char* what) {
  LG_CHECK(value.is_number_integer(), where, ": ", what, " must be an integer, got ", value.dump());
  LG_CHECK(value.is_number_unsigned(), where, ": ", what, " must not be negative, got ",
           value.dump());
  const std::uint64_t n = value.get<std::uint64_t>();
  LG_CHECK(n <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()), where, ": ",
           what, " ", n, " is too large");
  return n;
}

Entry parse_entry(const std::string& name, const nlohmann::json& value, const std::string& file) {
  const std::string where = "load_safetensors: '" + file + "', tensor '" + name + "'";
  LG_CHECK(value.is_object(), where, ": expected an object, got ", value.dump());
  for (const char* key : {"dtype", "shape", "data_offsets"})
    LG_CHECK(value.contains(key), where, ": missing \"", key, "\"");
  Entry entry;
  entry.name = name;
  entry.dtype = parse_dtype(value["dtype"], where);

  const nlohmann::json& shape = value["shape"];
  LG_CHECK(shape.is_array(), where, ": \"shape\" must be an array, got ", shape.dump());
  std::uint64_t numel = 1;
  for (const auto& size : shape) {
    const std::uint64_t n = parse_count(size, where, "a size in \"shape\"");
    entry.shape.push_back(static_cast<std::int64_t>(n));
    LG_CHECK(!__builtin_mul_overflow(numel, n, &numel) &&
                 numel <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()),
             where, ": shape ", shape.dump(), " has more elements than fit in int64");
  }
  std::uint64_t nbytes = 0;
  LG_CHECK(!__builtin_mul_overflow(numel, element_size(entry.dtype), &nbytes), where, ": shape ",
           shape.dump(), " is too large");

  const nlohmann::json& offsets = value["data_offsets"];
  LG_CHECK(offsets.is_array() && offsets.size() == 2, where,
           ": \"data_offsets\" must be [begin, end], got ", offsets.dump());
  entry.begin = parse_count(offsets[0], where, "\"data_offsets\" begin");
  entry.end = parse_count(offsets[1], where, "\"data_offsets\" end");
  LG_CHECK(entry.begin <= entry.end, where, ": data_offsets ", offsets.dump(),
           " end before they begin");
  LG_CHECK(entry.end - entry.begin == nbytes, where, ": data_offsets ", offsets.dump(), " hold ",
           entry.end - entry.begin, " bytes but shape ", shape.dump(), " of ",
           value["dtype"].get<std::string>(), " needs ", nbytes);
  return entry;
}

// Note [Validating a safetensors header]: in order, the header length must leave room in the
// file and stay under kMaxHeaderBytes; the JSON must be shallow, well formed and an object;
// each tensor needs a known dtype, a shape of non-negative sizes whose product (times the
// element size) does not overflow and equals its byte range; and the byte ranges, sorted, must
// tile the data section exactly (start at 0, no gap, no overlap, end at the end of the file).
// After these checks every read is inside the file and every allocation has the size the file
// really holds.
Header read_header(int fd, const std::string& path) {
  struct stat info {};
  LG_CHECK(::fstat(fd, &info) == 0, "load_safetensors: cannot stat '", path, "': ", errno_text());
  LG_CHECK(S_ISREG(info.st_mode), "load_safetensors: '", path, "' is not a regular file");
  const auto file_bytes = static_cast<std::uint64_t>(info.st_size);
  LG_CHECK(file_bytes >= kHeaderLengthBytes, "load_safetensors: '", path, "' has ", file_bytes,
           " bytes, too short for the 8-byte header length");
  std::uint64_t header_bytes = 0;
  read_exactly(fd, &header_bytes, sizeof(header_bytes), 0, path);
  LG_CHECK(header_bytes <= file_bytes - kHeaderLengthBytes, "load_safetensors: '", path,
           "' declares a ", header_bytes, "-byte header but the file has only ",
           file_bytes - kHeaderLengthBytes, " bytes after the length");
  LG_CHECK(header_bytes <= kMaxHeaderBytes, "load_safetensors: '", path, "' declares a ",
           header_bytes, "-byte header (at most ", kMaxHeaderBytes, " accepted)");

  std::string text(header_bytes, '\0');
  read_exactly(fd, text.data(), text.size(), kHeaderLengthBytes, path);
  LG_CHECK(json_depth(text) <= kMaxJsonDepth, "load_safetensors: '", path,
           "': the header nests deeper than ", kMaxJsonDepth, " levels");
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  LG_CHECK(!json.is_discarded(), "load_safetensors: '", path, "': the header is not valid JSON");
  LG_CHECK(json.is_object(), "load_safetensors: '", path, "': the header must be a JSON object");

  Header header;
  header.data_start = kHeaderLengthBytes + header_bytes;
  for (const auto& [key, value] : json.items()) {
    if (key == kMetadataKey) {
      LG_CHECK(value.is_object(), "load_safetensors: '", path,
               "': __metadata__ must be an object of strings");
      for (const auto& [meta_key, meta_value] : value.items()) {
        LG_CHECK(meta_value.is_string(), "load_safetensors: '", path, "': __metadata__ value of '",
                 meta_key, "' must be a string, got ", meta_value.dump());
        header.metadata[meta_key] = meta_value.get<std::string>();
      }
      continue;
    }
    header.entries.push_back(parse_entry(key, value, path));
  }

  std::sort(header.entries.begin(), header.entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  const std::uint64_t data_bytes = file_bytes - header.data_start;
  std::uint64_t cursor = 0;
  for (const Entry& e : header.entries) {
    LG_CHECK(e.begin >= cursor, "load_safetensors: '", path, "': tensor '", e.name, "' bytes [",
             e.begin, ", ", e.end, ") overlap the previous tensor's (which end at ", cursor, ")");
    LG_CHECK(e.begin == cursor, "load_safetensors: '", path, "': a gap of ", e.begin - cursor,
             " bytes before tensor '", e.name, "' (data_offsets must be contiguous)");
    LG_CHECK(e.end <= data_bytes, "load_safetensors: '", path, "': tensor '", e.name, "' bytes [",
             e.begin, ", ", e.end, ") run past the end of the data (", data_bytes, " bytes)");
    cursor = e.end;
  }
  LG_CHECK(cursor == data_bytes, "load_safetensors: '", path, "': ", data_bytes - cursor,
           " bytes at the end of the file belong to no tensor");
  return header;
}

FileDescriptor open_for_reading(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  LG_CHECK(fd >= 0, "load_safetensors: cannot open '", path, "': ", errno_text());
  return FileDescriptor(fd);
}

}  // namespace

void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const SafetensorsMetadata& metadata) {
  NoGradGuard no_grad;
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header[kMetadataKey] = metadata;
  std::set<std::string> names;
  std::vector<Tensor> host_tensors;
  std::uint64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    LG_CHECK(!name.empty() && name != kMetadataKey, "save_safetensors: invalid tensor name '", name,
             "'");
    LG_CHECK(names.insert(name).second, "save_safetensors: duplicate tensor name '", name, "'");
    LG_CHECK(tensor.defined(), "save_safetensors: tensor '", name, "' is undefined");
    // Contiguous host bytes (a CUDA tensor is copied to the host first).
    Tensor host = tensor.detach();
    if (host.is_cuda()) host = host.cpu();
    host = host.contiguous();
    const std::uint64_t nbytes = host.nbytes();
    header[name] = {{"dtype", safetensors_dtype_name(host.dtype())},
                    {"shape", host.shape()},
                    {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
    host_tensors.push_back(std::move(host));
  }
  std::string text = header.dump();
  // Pad with spaces so the data section starts 8-byte aligned (as the reference writer does).
  text.append((kHeaderLengthBytes - text.size() % kHeaderLengthBytes) % kHeaderLengthBytes, ' ');
  write_file_atomically(path, text, host_tensors);
}

NamedTensors load_safetensors(const std::string& path, Device device) {
  FileDescriptor fd = open_for_reading(path);
  const Header header = read_header(fd.get(), path);
  NamedTensors out;
  out.reserve(header.entries.size());
  for (const Entry& e : header.entries) {
    // Read into pinned memory when the tensor goes on to a GPU.
    Tensor host = empty(e.shape, TensorOptions(e.dtype).pinned_memory(device.is_cuda()));
    if (e.end > e.begin)
      read_exactly(fd.get(), host.data_ptr(), e.end - e.begin, header.data_start + e.begin, path);
    if (e.dtype == kBool) {
      // Any byte other than 0 or 1 would be an invalid bool: normalise as numpy does (x != 0).
      auto* bytes = static_cast<std::uint8_t*>(host.data_ptr());
      for (std::int64_t i = 0; i < host.numel(); ++i)
        bytes[i] = bytes[i] != 0;
    }
    out.emplace_back(e.name, device.is_cuda() ? host.to(device) : host);
  }
  return out;
}

SafetensorsMetadata load_safetensors_metadata(const std::string& path) {
  FileDescriptor fd = open_for_reading(path);
  return read_header(fd.get(), path).metadata;
}

}  // namespace leangrad
