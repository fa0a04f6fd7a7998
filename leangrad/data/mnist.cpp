// The IDX reader (plain or gzipped, with zlib) and the MNIST / Fashion-MNIST datasets.
// Files are treated as untrusted: the header's dims decide how many bytes the file must hold, a
// gzipped file is never inflated past that size, and any mismatch raises Error.
// See Note [Bounded decompression].
#include <leangrad/data/mnist.h>

#include <zlib.h>

#include <bit>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <typeinfo>
#include <vector>

#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/data/file_io.h>

namespace leangrad::data {
namespace {

using Bytes = std::vector<std::uint8_t>;

constexpr std::size_t kIdxMagicBytes = 4;
constexpr std::size_t kInflateChunkBytes = std::size_t{1} << 20;
// Deflate cannot expand data by more than 1032:1; with gzip headers 1100 is a safe bound.
constexpr std::uint64_t kMaxDeflateRatio = 1100;
constexpr std::int64_t kImageSide = 28;
constexpr std::int64_t kNumClasses = 10;

std::uint32_t read_big_endian_u32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

// The element type byte of an IDX magic.
DType idx_dtype(std::uint8_t type, const std::string& path) {
  switch (type) {
    case 0x08:
      return kUInt8;
    case 0x0C:
      return kInt32;
    case 0x0D:
      return kFloat32;
    case 0x0E:
      return kFloat64;
    case 0x09:
    case 0x0B:
      LG_THROW(DTypeError, "read_idx: '", path, "' holds ", type == 0x09 ? "int8" : "int16",
               " elements (IDX type 0x", std::hex, int{type}, "), which leangrad has no dtype for");
    default:
      LG_THROW(Error, "read_idx: '", path, "': bad magic number (unknown element type 0x", std::hex,
               int{type}, ")");
  }
}

struct IdxHeader {
  DType dtype;
  Shape dims;
  std::uint64_t header_bytes;  // magic + sizes
  std::uint64_t total_bytes;   // header + elements: what the file must hold
};

// The header of an IDX file from its first bytes; nullopt while fewer bytes than the header are
// available. Throws for a bad magic or dims whose byte count overflows.
std::optional<IdxHeader> parse_idx_header(const std::uint8_t* p, std::size_t n,
                                          const std::string& path) {
  if (n < kIdxMagicBytes) return std::nullopt;
  LG_CHECK(p[0] == 0 && p[1] == 0, "read_idx: '", path, "': bad magic number 0x", std::hex,
           read_big_endian_u32(p), " (an IDX file starts with two zero bytes)");
  IdxHeader header;
  header.dtype = idx_dtype(p[2], path);
  const std::size_t ndims = p[3];
  LG_CHECK(ndims >= 1, "read_idx: '", path, "': the magic number declares 0 dims");
  header.header_bytes = kIdxMagicBytes + 4 * ndims;
  if (n < header.header_bytes) return std::nullopt;
  std::uint64_t numel = 1;
  for (std::size_t d = 0; d < ndims; ++d) {
    const std::uint32_t size = read_big_endian_u32(p + kIdxMagicBytes + 4 * d);
    header.dims.push_back(size);
    LG_CHECK(!__builtin_mul_overflow(numel, std::uint64_t{size}, &numel), "read_idx: '", path,
             "': dims ", header.dims, " overflow");
  }
  // The strides multiply the dims after the first (a 0 counted as 1): with a first dim of 0 the
  // elements do not overflow, but [0, 2^32 - 1, 2^32 - 1, 2^32 - 1]'s strides would.
  LG_CHECK(contiguous_strides_fit(header.dims), "read_idx: '", path, "': dims ", header.dims,
           " overflow (their strides)");
  std::uint64_t element_bytes = 0;
  LG_CHECK(!__builtin_mul_overflow(numel, element_size(header.dtype), &element_bytes) &&
               !__builtin_add_overflow(element_bytes, header.header_bytes, &header.total_bytes) &&
               header.total_bytes <= static_cast<std::uint64_t>(INT64_MAX),
           "read_idx: '", path, "': dims ", header.dims, " overflow");
  return header;
}

bool is_gzip(const Bytes& bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

// Note [Bounded decompression]: a gzipped IDX file is inflated chunk by chunk, and the output
// may never exceed what is allowed so far: kMaxDeflateRatio times the compressed size until the
// IDX header has come out, then exactly the size the header's dims imply. A "zip bomb", or a
// header claiming more data than the compressed bytes could hold, is stopped after at most one
// chunk past the limit instead of exhausting memory. Concatenated gzip members are accepted (as
// gzip -d does); anything else after the last member is an error.
Bytes gunzip_idx(const Bytes& compressed, const std::string& path) {
  z_stream stream{};
  LG_CHECK(inflateInit2(&stream, 16 + MAX_WBITS) == Z_OK, "read_idx: zlib initialisation failed");
  struct InflateEnd {
    z_stream* s;
    ~InflateEnd() { inflateEnd(s); }
  } end_guard{&stream};
  stream.next_in = const_cast<Bytes::value_type*>(compressed.data());
  stream.avail_in = static_cast<uInt>(compressed.size());
  LG_CHECK(compressed.size() == stream.avail_in, "read_idx: '", path, "' is too large");

  const std::uint64_t ratio_limit = kMaxDeflateRatio * compressed.size() + kInflateChunkBytes;
  Bytes out;
  std::optional<IdxHeader> header;
  for (;;) {
    const std::size_t used = out.size();
    out.resize(used + kInflateChunkBytes);
    stream.next_out = out.data() + used;
    stream.avail_out = static_cast<uInt>(kInflateChunkBytes);
    const int status = inflate(&stream, Z_NO_FLUSH);
    out.resize(out.size() - stream.avail_out);
    LG_CHECK(status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR, "read_idx: '", path,
             "': corrupt gzip data (",
             stream.msg != nullptr ? stream.msg : "zlib error " + std::to_string(status), ")");
    if (!header) {
      header = parse_idx_header(out.data(), out.size(), path);
      LG_CHECK(!header || header->total_bytes <= ratio_limit, "read_idx: '", path, "': dims ",
               header->dims, " need ", header->total_bytes,
               " bytes, more than the compressed file can hold");
    }
    const std::uint64_t limit = header ? header->total_bytes : ratio_limit;
    LG_CHECK(out.size() <= limit, "read_idx: '", path, "': the data is longer than its dims ",
             header ? header->dims : Shape{}, " say (", limit, " bytes)");
    if (status == Z_STREAM_END) {
      if (stream.avail_in == 0) break;
      LG_CHECK(stream.avail_in >= 2 && stream.next_in[0] == 0x1f && stream.next_in[1] == 0x8b,
               "read_idx: '", path, "': ", stream.avail_in,
               " bytes of garbage after the gzip data");
      LG_CHECK(inflateReset(&stream) == Z_OK, "read_idx: zlib reset failed");
      continue;
    }
    LG_CHECK(stream.avail_in > 0 || stream.avail_out == 0, "read_idx: '", path,
             "': truncated gzip data (the compressed stream ends early)");
  }
  return out;
}

// Converts the big-endian elements after the header into a tensor of the file's dims.
Tensor decode_idx(const Bytes& bytes, const std::string& path) {
  const auto header = parse_idx_header(bytes.data(), bytes.size(), path);
  LG_CHECK(header.has_value(), "read_idx: '", path, "' has ", bytes.size(),
           " bytes, too short for an IDX header");
  LG_CHECK(bytes.size() >= header->total_bytes, "read_idx: '", path, "' is truncated: dims ",
           header->dims, " need ", header->total_bytes, " bytes, the file has ", bytes.size());
  LG_CHECK(bytes.size() == header->total_bytes, "read_idx: '", path, "' has ",
           bytes.size() - header->total_bytes, " bytes after the ", header->total_bytes,
           " its dims ", header->dims, " describe");
  Tensor out = empty(header->dims, TensorOptions(header->dtype));
  const std::uint8_t* src = bytes.data() + header->header_bytes;
  auto* dst = static_cast<std::uint8_t*>(out.data_ptr());
  const std::size_t width = element_size(header->dtype);
  const std::size_t nbytes = out.nbytes();
  if (width == 1 || std::endian::native == std::endian::big) {
    if (nbytes > 0) std::memcpy(dst, src, nbytes);
  } else {
    for (std::size_t i = 0; i < nbytes; i += width)
      for (std::size_t b = 0; b < width; ++b)
        dst[i + b] = src[i + width - 1 - b];
  }
  return out;
}

// `root/name`, or `root/name.gz` when only the gzipped file exists.
std::string find_idx_file(const std::string& root, const std::string& name,
                          const char* dataset_name) {
  for (const std::string& candidate : {root + "/" + name, root + "/" + name + ".gz"}) {
    std::error_code error;
    if (std::filesystem::exists(candidate, error)) return candidate;  // read_idx checks its type
  }
  LG_THROW(Error, dataset_name, ": neither '", root, "/", name, "' nor '", root, "/", name,
           ".gz' exists");
}

}  // namespace

Tensor read_idx(const std::string& path) {
  const Bytes bytes = read_whole_file(path, "read_idx");
  return decode_idx(is_gzip(bytes) ? gunzip_idx(bytes, path) : bytes, path);
}

MNIST::MNIST(const std::string& root, Split split) : MNIST(root, split, "MNIST") {}

MNIST::MNIST(const std::string& root, Split split, const char* dataset_name) {
  const std::string prefix = split == Split::Train ? "train" : "t10k";
  const std::string images_path = find_idx_file(root, prefix + "-images-idx3-ubyte", dataset_name);
  const std::string labels_path = find_idx_file(root, prefix + "-labels-idx1-ubyte", dataset_name);
  const Tensor pixels = read_idx(images_path);  // (N, H, W) uint8
  const Tensor labels = read_idx(labels_path);  // (N,) uint8
  LG_CHECK(pixels.dtype() == kUInt8 && pixels.dim() == 3 && pixels.size(1) == kImageSide &&
               pixels.size(2) == kImageSide,
           dataset_name, ": '", images_path,
           "' should hold uint8 images of shape (N, 28, 28), got ", pixels.dtype(), " ",
           pixels.shape());
  LG_CHECK(labels.dtype() == kUInt8 && labels.dim() == 1, dataset_name, ": '", labels_path,
           "' should hold uint8 labels of shape (N,), got ", labels.dtype(), " ", labels.shape());
  const std::int64_t n = pixels.size(0);
  LG_CHECK(labels.size(0) == n, dataset_name, ": ", n, " images in '", images_path, "' but ",
           labels.size(0), " labels in '", labels_path, "'");

  images_ = empty({n, 1, kImageSide, kImageSide});  // (N, C, H, W) float32
  const std::uint8_t* src = pixels.data_ptr<std::uint8_t>();
  float* dst = images_.data_ptr<float>();
  const std::int64_t count = pixels.numel();
  for (std::int64_t i = 0; i < count; ++i)
    dst[i] = static_cast<float>(src[i]) / 255.0f;

  targets_ = empty({n}, TensorOptions(kInt64));
  const std::uint8_t* label = labels.data_ptr<std::uint8_t>();
  std::int64_t* target = targets_.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < n; ++i) {
    LG_CHECK(label[i] < kNumClasses, dataset_name, ": label ", int{label[i]}, " of example ", i,
             " in '", labels_path, "' is not a class in [0, ", kNumClasses, ")");
    target[i] = label[i];
  }
}

std::int64_t MNIST::size() const {
  return images_.size(0);
}

Example MNIST::get(std::int64_t index) const {
  LG_CHECK(index >= 0 && index < size(), "MNIST: index ", index, " out of range for ", size(),
           " examples");
  return {images_.select(0, index), targets_.select(0, index)};
}

std::optional<Batch> MNIST::get_batch(std::span<const std::int64_t> indices, bool pinned) const {
  // A subclass other than FashionMNIST may override get(): its batches must come from it.
  if (typeid(*this) != typeid(MNIST) && typeid(*this) != typeid(FashionMNIST)) return std::nullopt;
  std::optional<Tensor> images = gather_rows("MNIST", images_, indices, pinned);
  std::optional<Tensor> targets = gather_rows("MNIST", targets_, indices, pinned);
  if (!images || !targets) return std::nullopt;
  return Batch{std::move(*images), std::move(*targets)};
}

FashionMNIST::FashionMNIST(const std::string& root, Split split)
    : MNIST(root, split, "FashionMNIST") {}

}  // namespace leangrad::data
