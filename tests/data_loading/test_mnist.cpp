// The IDX reader and the MNIST / Fashion-MNIST datasets (data/mnist.h): synthetic IDX files
// (plain and gzipped) made here, every kind of malformed file, and the real Fashion-MNIST files
// of Debian's dataset-fashion-mnist package when they are installed.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <leangrad/data/mnist.h>
#include "data_loading/data_testing.h"
#include "testing/tensor_testing.h"

namespace leangrad::data {
namespace {

using test::read_bytes;
using test::TempDir;
using test::write_bytes;

const char* const kFashionMnistRoot = "/usr/share/datasets/fashion-mnist";

std::string big_endian_u32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

// An IDX file: magic (0, 0, type, dims), the sizes, then `payload` as given.
std::string make_idx(std::uint8_t type, const std::vector<std::uint32_t>& dims,
                     const std::string& payload) {
  std::string bytes = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (const std::uint32_t d : dims)
    bytes += big_endian_u32(d);
  return bytes + payload;
}

std::string gzip(const std::string& bytes) {
  z_stream stream{};
  EXPECT_EQ(
      deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
      Z_OK);
  std::string out(deflateBound(&stream, bytes.size()) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

// Writes a file into `dir` and reads it back with read_idx.
Tensor read_idx_bytes(const TempDir& dir, const std::string& bytes) {
  write_bytes(dir.file("file.idx"), bytes);
  return read_idx(dir.file("file.idx"));
}

void expect_idx_error(const std::string& bytes, const std::string& expected_words) {
  TempDir dir;
  try {
    read_idx_bytes(dir, bytes);
    ADD_FAILURE() << "accepted a malformed IDX file; expected '" << expected_words << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(expected_words), std::string::npos) << e.what();
  }
}

TEST(IdxReader, ReadsEveryElementTypePlainAndGzipped) {
  TempDir dir;
  std::string pixels;
  for (int i = 0; i < 24; ++i)
    pixels += static_cast<char>(i * 10);
  const std::string ubyte = make_idx(0x08, {2, 3, 4}, pixels);
  for (const std::string& file : {ubyte, gzip(ubyte)}) {
    const Tensor t = read_idx_bytes(dir, file);
    EXPECT_EQ(t.dtype(), kUInt8);
    EXPECT_EQ(t.shape(), (Shape{2, 3, 4}));
    EXPECT_EQ(t.data_ptr<std::uint8_t>()[23], 230);
  }
  // Big-endian multi-byte elements.
  const std::string ints = big_endian_u32(0x80000000u) + big_endian_u32(7);
  EXPECT_TRUE(
      test::all_close(read_idx_bytes(dir, make_idx(0x0C, {2}, ints)), {-2147483648.0, 7}, 0, 0));
  EXPECT_TRUE(test::all_close(read_idx_bytes(dir, make_idx(0x0D, {1}, big_endian_u32(0x3fc00000))),
                              {1.5}, 0, 0));
  const std::string one_double = big_endian_u32(0xc0040000) + big_endian_u32(0);
  const Tensor d = read_idx_bytes(dir, gzip(make_idx(0x0E, {1, 1}, one_double)));
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_TRUE(test::all_close(d, {-2.5}, 0, 0));
  // Empty dims and concatenated gzip members (as `cat a.gz b.gz` makes).
  EXPECT_EQ(read_idx_bytes(dir, make_idx(0x08, {0, 28, 28}, "")).shape(), (Shape{0, 28, 28}));
  const std::string whole = make_idx(0x08, {6}, "abcdef");
  const Tensor joined = read_idx_bytes(dir, gzip(whole.substr(0, 7)) + gzip(whole.substr(7)));
  EXPECT_EQ(joined.data_ptr<std::uint8_t>()[5], 'f');
}

TEST(IdxReader, RejectsBadHeaders) {
  expect_idx_error("", "too short");
  expect_idx_error(std::string("\0\0\x08", 3), "too short");
  expect_idx_error(make_idx(0x08, {2}, "ab").replace(0, 1, "\x01"), "bad magic");
  expect_idx_error(make_idx(0x07, {2}, "ab"), "unknown element type");
  expect_idx_error(make_idx(0x0B, {1}, "ab"), "int16");
  expect_idx_error(make_idx(0x08, {}, ""), "0 dims");
  expect_idx_error(make_idx(0x08, {2, 3}, "ab").substr(0, 9), "too short");
  expect_idx_error(make_idx(0x0E, {0xffffffffu, 0xffffffffu, 0xffffffffu}, ""), "overflow");
}

// A 16-byte IDX file declaring (0, 2^32 - 1, 2^32 - 1) uint8: no elements, strides that overflow,
// refused by the header's checks, naming the file (not by the tensor's strides later).
TEST(IdxReader, RejectsEmptyShapesWithHugeDims) {
  expect_idx_error(make_idx(0x08, {0, 0xffffffffu, 0xffffffffu}, ""),
                   ".idx': dims [0, 4294967295, 4294967295] overflow (their strides)");
  expect_idx_error(make_idx(0x08, {0, 0xffffffffu, 0xffffffffu, 0xffffffffu}, ""),
                   "overflow (their strides)");
}

TEST(IdxReader, RejectsWrongSizes) {
  expect_idx_error(make_idx(0x08, {2, 3}, "abcde"), "truncated");
  expect_idx_error(make_idx(0x0C, {2}, "abcd"), "truncated");
  expect_idx_error(make_idx(0x08, {2, 3}, "abcdefg"), "bytes after");
  expect_idx_error(make_idx(0x08, {60000, 28, 28}, "abc"), "truncated");
}

TEST(IdxReader, RejectsCorruptGzip) {
  std::string pixels(5000, '\0');
  for (std::size_t i = 0; i < pixels.size(); ++i)
    pixels[i] = static_cast<char>((i * 7919) % 251);
  const std::string good = gzip(make_idx(0x08, {5, 1000}, pixels));
  // Flipped bits in the deflate stream, or in the CRC at the end.
  std::string corrupt = good;
  corrupt[good.size() / 2] = static_cast<char>(corrupt[good.size() / 2] ^ 0x55);
  expect_idx_error(corrupt, "corrupt gzip");
  std::string bad_crc = good;
  bad_crc[good.size() - 6] = static_cast<char>(bad_crc[good.size() - 6] ^ 1);
  expect_idx_error(bad_crc, "corrupt gzip");
  expect_idx_error(good.substr(0, good.size() - 10), "truncated gzip");
  expect_idx_error(good.substr(0, 12), "truncated gzip");
  expect_idx_error(good + "junk", "garbage after");
  // Decompressed data longer than the dims, and dims larger than the file could hold.
  expect_idx_error(gzip(make_idx(0x08, {5, 999}, pixels)), "longer than its dims");
  expect_idx_error(gzip(make_idx(0x08, {1u << 30, 1u << 10}, "x")), "more than the compressed");
}

// A gzip "bomb": 16 MiB of zeros behind a header promising 4 bytes stops at the header's size.
TEST(IdxReader, GzipBombIsStoppedEarly) {
  expect_idx_error(gzip(make_idx(0x08, {4}, std::string(16u << 20, '\0'))), "longer than its dims");
}

TEST(IdxReader, TruncationsAndCorruptionsNeverCrash) {
  const std::string pixels(2000, '\x7f');
  const std::string good = gzip(make_idx(0x08, {2, 1000}, pixels));
  TempDir dir;
  for (std::size_t n = 0; n < good.size(); ++n)
    EXPECT_THROW(read_idx_bytes(dir, good.substr(0, n)), Error) << "truncated at " << n;
  std::mt19937 rng(1);
  for (int trial = 0; trial < 1000; ++trial) {
    std::string bad = good;
    bad[rng() % bad.size()] = static_cast<char>(rng() % 256);
    try {
      read_idx_bytes(dir, bad);
    } catch (const Error&) {
    }
  }
}

// ---- MNIST on synthetic files ----------------------------------------------------------------

// Writes MNIST-layout files for one split: image i has every pixel = (i * 50) % 256, label
// i % 10; gzipped or not.
void write_split(const TempDir& dir, const std::string& prefix, std::uint32_t n, bool gzipped,
                 std::uint32_t side = 28) {
  std::string pixels, labels;
  for (std::uint32_t i = 0; i < n; ++i) {
    pixels += std::string(side * side, static_cast<char>((i * 50) % 256));
    labels += static_cast<char>(i % 10);
  }
  const std::string images = make_idx(0x08, {n, side, side}, pixels);
  const std::string targets = make_idx(0x08, {n}, labels);
  const std::string suffix = gzipped ? ".gz" : "";
  write_bytes(dir.file(prefix + "-images-idx3-ubyte" + suffix), gzipped ? gzip(images) : images);
  write_bytes(dir.file(prefix + "-labels-idx1-ubyte" + suffix), gzipped ? gzip(targets) : targets);
}

TEST(Mnist, ReadsSyntheticSplitsGzippedAndPlain) {
  TempDir dir;
  write_split(dir, "train", 7, /*gzipped=*/true);
  write_split(dir, "t10k", 3, /*gzipped=*/false);
  const MNIST train(dir.path(), Split::Train);
  const FashionMNIST test_split(dir.path(), Split::Test);
  EXPECT_EQ(train.size(), 7);
  EXPECT_EQ(test_split.size(), 3);
  EXPECT_EQ(train.images().shape(), (Shape{7, 1, 28, 28}));
  const Example e = train.get(5);  // pixels 250 / 255, label 5
  EXPECT_EQ(e.data.shape(), (Shape{1, 28, 28}));
  EXPECT_EQ(e.data.dtype(), kFloat32);
  EXPECT_FLOAT_EQ(e.data.max().item<float>(), 250.0f / 255.0f);
  EXPECT_EQ(e.target.dtype(), kInt64);
  EXPECT_EQ(e.target.dim(), 0);
  EXPECT_EQ(e.target.item<std::int64_t>(), 5);
  EXPECT_THROW(train.get(7), Error);
  EXPECT_THROW(train.get(-1), Error);
  // A batch is the examples' images and labels stacked, bit for bit (Dataset::get_batch).
  const std::vector<std::int64_t> picks = {5, 0, 5, 6};
  const std::optional<Batch> batch = train.get_batch(picks, /*pinned=*/false);
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->data.shape(), (Shape{4, 1, 28, 28}));
  EXPECT_EQ(batch->target.shape(), (Shape{4}));
  for (std::size_t i = 0; i < picks.size(); ++i) {
    const Example one = train.get(picks[i]);
    const auto at = static_cast<std::int64_t>(i);
    EXPECT_EQ(test::tensor_bytes(batch->data.select(0, at)), test::tensor_bytes(one.data));
    EXPECT_EQ(batch->target.select(0, at).item<std::int64_t>(), one.target.item<std::int64_t>());
  }
  const std::vector<std::int64_t> outside = {1, 7};
  EXPECT_THROW(train.get_batch(outside, false), Error);
}

TEST(Mnist, RejectsInconsistentFiles) {
  {
    TempDir dir;  // missing files
    EXPECT_THROW(MNIST(dir.path(), Split::Train), Error);
  }
  {
    TempDir dir;  // 27 x 27 images
    write_split(dir, "train", 2, false, 27);
    EXPECT_THROW(MNIST(dir.path(), Split::Train), Error);
  }
  {
    TempDir dir;  // more labels than images
    write_split(dir, "train", 2, false);
    write_bytes(dir.file("train-labels-idx1-ubyte"), make_idx(0x08, {3}, std::string(3, '\1')));
    EXPECT_THROW(MNIST(dir.path(), Split::Train), Error);
  }
  {
    TempDir dir;  // label 10
    write_split(dir, "train", 2, false);
    write_bytes(dir.file("train-labels-idx1-ubyte"), make_idx(0x08, {2}, "\x01\x0a"));
    EXPECT_THROW(MNIST(dir.path(), Split::Train), Error);
  }
  {
    TempDir dir;  // labels stored as int32
    write_split(dir, "train", 1, false);
    write_bytes(dir.file("train-labels-idx1-ubyte"), make_idx(0x0C, {1}, big_endian_u32(1)));
    EXPECT_THROW(MNIST(dir.path(), Split::Train), Error);
  }
}

// ---- The real Fashion-MNIST files (Debian: dataset-fashion-mnist) ------------------------------

TEST(FashionMnist, ReadsTheRealTrainAndTestSets) {
  if (!std::filesystem::exists(std::string(kFashionMnistRoot) + "/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  for (const auto& [split, expected_size] :
       {std::pair<Split, std::int64_t>{Split::Train, 60000}, {Split::Test, 10000}}) {
    const FashionMNIST ds(kFashionMnistRoot, split);
    ASSERT_EQ(ds.size(), expected_size);
    EXPECT_EQ(ds.images().shape(), (Shape{expected_size, 1, 28, 28}));
    const float* pixels = ds.images().data_ptr<float>();
    float lowest = 1.0f, highest = 0.0f;
    for (std::int64_t i = 0; i < ds.images().numel(); ++i) {
      lowest = std::min(lowest, pixels[i]);
      highest = std::max(highest, pixels[i]);
    }
    EXPECT_EQ(lowest, 0.0f);
    EXPECT_EQ(highest, 1.0f);
    // Labels 0-9, and the classes are balanced (6000 / 1000 examples each).
    std::vector<std::int64_t> per_class(10, 0);
    const std::int64_t* labels = ds.targets().data_ptr<std::int64_t>();
    for (std::int64_t i = 0; i < ds.size(); ++i) {
      ASSERT_GE(labels[i], 0);
      ASSERT_LT(labels[i], 10);
      ++per_class[static_cast<std::size_t>(labels[i])];
    }
    EXPECT_EQ(per_class, std::vector<std::int64_t>(10, expected_size / 10));
    EXPECT_EQ(ds.get(0).data.shape(), (Shape{1, 28, 28}));
  }
}

}  // namespace
}  // namespace leangrad::data
