// safetensors checkpoints (data/safetensors.h, nn/module.cpp): round trips of every dtype,
// files exchanged with the Python `safetensors` package (tests/data/make_safetensors_fixture.py),
// atomic writes, and malformed files, which must raise Error and never crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include <nlohmann/json.hpp>

#include <leangrad/core/cuda.h>
#include <leangrad/core/generator.h>
#include <leangrad/data/safetensors.h>
#include <leangrad/kernels/creation.h>
#include <leangrad/nn/linear.h>
#include "data_loading/data_testing.h"
#include "testing/file_size_limit.h"
#include "testing/sha256.h"
#include "testing/tensor_testing.h"
#include "testing/unprivileged_file_access.h"

namespace leangrad {
namespace {

using test::make_tensor;
using test::read_bytes;
using test::TempDir;
using test::tensor_bytes;
using test::write_bytes;

// The tensors whose file leangrad_written.safetensors holds (the Python script checks the same
// values: leangrad_expected() there).
NamedTensors leangrad_fixture_tensors() {
  const Tensor f32 = make_tensor({-1.5, -0.5, 0.0, 0.25, 1.0, 3.5}, {2, 3}, kFloat32);
  return {
      {"f32", f32},
      {"f64", make_tensor({0.1, -2.5, 1e300}, {3}, kFloat64)},
      {"f16", make_tensor({0.5, -1.0, 65504.0, 6.103515625e-05}, {2, 2}, kFloat16)},
      {"bf16", make_tensor({1.0, -2.0, 0.5, 3.0}, {4}, kBFloat16)},
      {"i64", tensor<std::int64_t>({INT64_MIN, -1, 0, INT64_MAX})},
      {"i32", tensor<std::int32_t>({INT32_MIN, -1, 7, INT32_MAX}, {2, 2})},
      {"u8", tensor<std::uint8_t>({0, 1, 127, 128, 255})},
      {"bool", make_tensor({1, 0, 1}, {3}, kBool)},
      {"scalar", full({}, 42.0)},
      {"empty", zeros({0, 3})},
      {"f32_transposed", f32.transpose(0, 1)},  // non-contiguous: written contiguous
  };
}

// A file with an 8-byte length (`header.size()` unless `declared` is given), the header text
// and `data_bytes` zero bytes.
std::string make_file(const std::string& header, std::size_t data_bytes,
                      std::uint64_t declared = UINT64_MAX) {
  const std::uint64_t length = declared == UINT64_MAX ? header.size() : declared;
  std::string bytes(8, '\0');
  std::memcpy(bytes.data(), &length, 8);
  return bytes + header + std::string(data_bytes, '\0');
}

const SafetensorsMetadata kFixtureMetadata = {{"format", "pt"}, {"writer", "leangrad"}};

void expect_same(const NamedTensors& got, const NamedTensors& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].first);
    EXPECT_EQ(got[i].first, want[i].first);
    EXPECT_EQ(got[i].second.dtype(), want[i].second.dtype());
    EXPECT_EQ(got[i].second.shape(), want[i].second.shape());
    EXPECT_TRUE(got[i].second.is_contiguous());
    EXPECT_EQ(tensor_bytes(got[i].second), tensor_bytes(want[i].second));
  }
}

TEST(Safetensors, RoundTripEveryDTypeScalarEmptyAndStridedInputs) {
  TempDir dir;
  const NamedTensors tensors = leangrad_fixture_tensors();
  save_safetensors(dir.file("all.safetensors"), tensors, kFixtureMetadata);
  expect_same(load_safetensors(dir.file("all.safetensors")), tensors);
  EXPECT_EQ(load_safetensors_metadata(dir.file("all.safetensors")), kFixtureMetadata);

  // A sliced view with a step and an offset, and a file with no tensors at all.
  const Tensor base = arange(24, kInt32).reshape({4, 6});
  const Tensor view = base.slice(1, 1, 6, 2).slice(0, 1, 4);  // (3, 3), strides (6, 2)
  ASSERT_FALSE(view.is_contiguous());
  save_safetensors(dir.file("view.safetensors"), {{"v", view}});
  const NamedTensors loaded = load_safetensors(dir.file("view.safetensors"));
  EXPECT_TRUE(test::all_close(loaded.at(0).second, {7, 9, 11, 13, 15, 17, 19, 21, 23}));
  EXPECT_TRUE(load_safetensors_metadata(dir.file("view.safetensors")).empty());

  save_safetensors(dir.file("none.safetensors"), {});
  EXPECT_TRUE(load_safetensors(dir.file("none.safetensors")).empty());
}

TEST(Safetensors, HeaderIsPaddedAndDataIsAligned) {
  TempDir dir;
  save_safetensors(dir.file("a.safetensors"), {{"x", ones({3}, kUInt8)}});
  const std::string bytes = read_bytes(dir.file("a.safetensors"));
  std::uint64_t header_bytes = 0;
  std::memcpy(&header_bytes, bytes.data(), 8);
  EXPECT_EQ((8 + header_bytes) % 8, 0u);
  EXPECT_EQ(bytes.size(), 8 + header_bytes + 3);
  EXPECT_EQ(bytes[8], '{');
}

// The reference writer sorts tensors by dtype, largest element first, so each starts at a
// multiple of its element size: zero-copy readers (safetensors.torch views the mapped bytes as
// the dtype) rely on it. Ours wrote the bytes in the given order, so the float32 after a 3-byte
// uint8 tensor started at an odd address. The header keeps the given order, and so does loading.
TEST(Safetensors, EveryTensorStartsAtAMultipleOfItsElementSize) {
  TempDir dir;
  const NamedTensors tensors = {
      {"mask", tensor<std::uint8_t>({1, 2, 3})},
      {"w", make_tensor({1.5, -2.0}, {2}, kFloat32)},
      {"flag", make_tensor({1}, {1}, kBool)},
      {"step", full({}, 7.0, TensorOptions(kInt64))},
      {"h", make_tensor({0.5, 1.0, 2.0}, {3}, kFloat16)},
      {"nothing", zeros({0}, kFloat64)},
      {"d", make_tensor({0.25}, {1}, kFloat64)},
      {"i", tensor<std::int32_t>({-3})},
  };
  const std::string path = dir.file("mixed.safetensors");
  save_safetensors(path, tensors);
  const std::string bytes = read_bytes(path);
  std::uint64_t header_bytes = 0;
  std::memcpy(&header_bytes, bytes.data(), 8);
  const auto header = nlohmann::ordered_json::parse(bytes.substr(8, header_bytes));
  std::vector<std::string> listed;
  for (const auto& [name, entry] : header.items()) {
    listed.push_back(name);
    const std::uint64_t begin = entry["data_offsets"][0].get<std::uint64_t>();
    const std::string dtype = entry["dtype"].get<std::string>();
    const std::uint64_t element = dtype == "F64" || dtype == "I64"   ? 8
                                  : dtype == "F32" || dtype == "I32" ? 4
                                  : dtype == "F16"                   ? 2
                                                                     : 1;
    EXPECT_EQ((8 + header_bytes + begin) % element, 0u)
        << name << " (" << dtype << ") at " << begin;
  }
  EXPECT_EQ(listed,
            (std::vector<std::string>{"mask", "w", "flag", "step", "h", "nothing", "d", "i"}));
  expect_same(load_safetensors(path), tensors);
}

// Several empty tensors share one offset; they came back sorted by name (the order the JSON
// parser kept) instead of in the writer's order.
TEST(Safetensors, LoadsInTheOrderOfTheHeader) {
  TempDir dir;
  const NamedTensors tensors = {{"z", zeros({0})}, {"a", zeros({0, 3})}, {"m", ones({2})}};
  save_safetensors(dir.file("e.safetensors"), tensors);
  expect_same(load_safetensors(dir.file("e.safetensors")), tensors);
  // A file another writer laid out differently: header order, not byte order.
  write_bytes(dir.file("other.safetensors"),
              make_file(R"({"b": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]},
                            "a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}})",
                        2));
  const NamedTensors other = load_safetensors(dir.file("other.safetensors"));
  ASSERT_EQ(other.size(), 2u);
  EXPECT_EQ(other[0].first, "b");
  EXPECT_EQ(other[1].first, "a");
}

// The reference reader takes "__metadata__": null as no metadata (an Option); we refused it.
TEST(Safetensors, NullMetadataIsNoMetadata) {
  TempDir dir;
  write_bytes(dir.file("null.safetensors"), make_file(R"({"__metadata__": null,
                            "a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}})",
                                                      1));
  EXPECT_TRUE(load_safetensors_metadata(dir.file("null.safetensors")).empty());
  EXPECT_EQ(load_safetensors(dir.file("null.safetensors")).size(), 1u);
}

TEST(Safetensors, RejectsBadNamesAndUndefinedTensors) {
  TempDir dir;
  const std::string path = dir.file("bad.safetensors");
  EXPECT_THROW(save_safetensors(path, {{"a", ones({1})}, {"a", ones({1})}}), Error);
  EXPECT_THROW(save_safetensors(path, {{"", ones({1})}}), Error);
  EXPECT_THROW(save_safetensors(path, {{"__metadata__", ones({1})}}), Error);
  EXPECT_THROW(save_safetensors(path, {{"a", Tensor()}}), Error);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Safetensors, LoadsOntoCuda) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  TempDir dir;
  const NamedTensors tensors = leangrad_fixture_tensors();
  save_safetensors(dir.file("a.safetensors"), tensors);
  NamedTensors loaded = load_safetensors(dir.file("a.safetensors"), Device::cuda());
  for (auto& [name, t] : loaded) {
    EXPECT_TRUE(t.is_cuda()) << name;
    t = t.cpu();
  }
  expect_same(loaded, tensors);
  // And CUDA tensors are saved through the host.
  NamedTensors on_gpu;
  for (const auto& [name, t] : tensors)
    on_gpu.emplace_back(name, t.cuda());
  save_safetensors(dir.file("b.safetensors"), on_gpu);
  expect_same(load_safetensors(dir.file("b.safetensors")), tensors);
}

// ---- Files shared with the Python implementation --------------------------------------------

TEST(SafetensorsInterop, ReadsFileWrittenByPythonSafetensors) {
  const std::string path = std::string(LEANGRAD_TEST_DATA_DIR) + "/python_written.safetensors";
  NamedTensors loaded = load_safetensors(path);
  std::map<std::string, Tensor> by_name(loaded.begin(), loaded.end());
  ASSERT_EQ(by_name.size(), 9u);
  EXPECT_TRUE(test::all_close(by_name.at("f32"), {-1.5, -0.5, 0.0, 0.25, 1.0, 3.5}));
  EXPECT_EQ(by_name.at("f32").shape(), (Shape{2, 3}));
  EXPECT_TRUE(test::all_close(by_name.at("f64"), {0.1, -2.5, 1e300}, 0, 0));
  EXPECT_TRUE(test::all_close(by_name.at("f16"), {0.5, -1.0, 65504.0, 6.103515625e-05}, 0, 0));
  EXPECT_EQ(by_name.at("f16").dtype(), kFloat16);
  const Tensor i64 = by_name.at("i64");
  ASSERT_EQ(i64.dtype(), kInt64);
  EXPECT_EQ(i64.data_ptr<std::int64_t>()[0], INT64_MIN);
  EXPECT_EQ(i64.data_ptr<std::int64_t>()[3], INT64_MAX);
  EXPECT_TRUE(test::all_close(by_name.at("i32"), {-2147483648.0, -1, 7, 2147483647.0}, 0, 0));
  EXPECT_TRUE(test::all_close(by_name.at("u8"), {0, 1, 127, 128, 255}));
  EXPECT_EQ(by_name.at("bool").dtype(), kBool);
  EXPECT_TRUE(test::all_close(by_name.at("bool"), {1, 0, 1}));
  EXPECT_EQ(by_name.at("scalar").dim(), 0);
  EXPECT_EQ(by_name.at("scalar").item<float>(), 42.0f);
  EXPECT_EQ(by_name.at("empty").shape(), (Shape{0, 3}));
  const SafetensorsMetadata metadata = load_safetensors_metadata(path);
  EXPECT_EQ(metadata.at("creator"), "tests/data/make_safetensors_fixture.py");
  EXPECT_EQ(metadata.at("framework"), "numpy");
}

// Our writer is deterministic, and the committed file it produced was read back by the Python
// package (tests/data/leangrad_written.check.json records that run).
TEST(SafetensorsInterop, OurWriterMatchesCommittedFixture) {
  const std::string fixture = std::string(LEANGRAD_TEST_DATA_DIR) + "/leangrad_written.safetensors";
  const char* regenerate = std::getenv("LEANGRAD_WRITE_FIXTURES");
  if (regenerate != nullptr && std::string(regenerate) == "1") {
    save_safetensors(fixture, leangrad_fixture_tensors(), kFixtureMetadata);
  }
  TempDir dir;
  save_safetensors(dir.file("ours.safetensors"), leangrad_fixture_tensors(), kFixtureMetadata);
  ASSERT_TRUE(std::filesystem::exists(fixture))
      << "run this test once with LEANGRAD_WRITE_FIXTURES=1, then "
         "tests/data/make_safetensors_fixture.py";
  EXPECT_EQ(read_bytes(dir.file("ours.safetensors")), read_bytes(fixture));
  const std::string check = read_bytes(fixture.substr(0, fixture.size() - 12) + ".check.json");
  EXPECT_NE(check.find("\"result\": \"ok\""), std::string::npos)
      << "tests/data/leangrad_written.check.json is missing or does not record a successful check";
  // ... of this very file: a fixture written again without the Python check run is stale.
  EXPECT_NE(check.find("\"sha256\": \"" + test::sha256_hex(read_bytes(fixture)) + "\""),
            std::string::npos)
      << "tests/data/leangrad_written.check.json records another file's SHA-256: run "
         "tests/data/make_safetensors_fixture.py";
}

TEST(Sha256, KnownVectors) {  // FIPS 180-4's examples, and the empty message
  EXPECT_EQ(test::sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(test::sha256_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(test::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

// ---- Module::save / Module::load --------------------------------------------------------------

TEST(SafetensorsModule, SaveAndLoadRestoreParameters) {
  TempDir dir;
  manual_seed(1);
  nn::Linear source(4, 3);
  source->save(dir.file("linear.safetensors"));
  EXPECT_EQ(load_safetensors_metadata(dir.file("linear.safetensors")).at("format"), "pt");
  manual_seed(2);
  nn::Linear target(4, 3);
  ASSERT_NE(tensor_bytes(target->state_dict()[0].second),
            tensor_bytes(source->state_dict()[0].second));
  target->load(dir.file("linear.safetensors"));
  expect_same(target->state_dict(), source->state_dict());

  nn::Linear wrong_shape(4, 2);
  EXPECT_THROW(wrong_shape->load(dir.file("linear.safetensors")), ShapeError);
  nn::Linear no_bias(nn::LinearOptions(4, 3).bias(false));
  EXPECT_THROW(no_bias->load(dir.file("linear.safetensors")), Error);  // unexpected 'bias'
  no_bias->load(dir.file("linear.safetensors"), /*strict=*/false);
  expect_same({no_bias->state_dict()[0]}, {source->state_dict()[0]});
}

// ---- Atomic writes -----------------------------------------------------------------------------

// Only the named files are in `dir` (no temporary file left behind).
void expect_only(const TempDir& dir, const std::vector<std::string>& names) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    found.push_back(entry.path().filename().string());
  std::sort(found.begin(), found.end());
  EXPECT_EQ(found, names);
}

TEST(SafetensorsAtomic, OverwriteReplacesTheWholeFile) {
  TempDir dir;
  const std::string path = dir.file("ckpt.safetensors");
  save_safetensors(path, {{"a", ones({1000})}});
  save_safetensors(path, {{"b", zeros({2})}});
  const NamedTensors loaded = load_safetensors(path);
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded[0].first, "b");
  expect_only(dir, {"ckpt.safetensors"});
}

TEST(SafetensorsAtomic, FailedWriteLeavesTheOldFileIntact) {
  TempDir dir;
  const std::string path = dir.file("ckpt.safetensors");
  save_safetensors(path, {{"old", ones({4})}});
  const std::string old_bytes = read_bytes(path);

  // Make write() fail part-way (EFBIG past a 4 KiB file-size limit; works even as root).
  bool threw = false;
  {
    test::FileSizeLimit limit(4096);
    ASSERT_TRUE(limit.active());
    try {
      save_safetensors(path, {{"new", ones({1 << 20})}});
    } catch (const Error& e) {
      threw = true;
      EXPECT_NE(std::string(e.what()).find("failed"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(threw);
  EXPECT_EQ(read_bytes(path), old_bytes);
  expect_only(dir, {"ckpt.safetensors"});
}

TEST(SafetensorsAtomic, MissingFolderIsAnError) {
  TempDir dir;
  EXPECT_THROW(save_safetensors(dir.file("no/such/folder/x.safetensors"), {{"a", ones({1})}}),
               Error);
  save_safetensors(dir.file("file"), {{"a", ones({1})}});  // a file used as a folder
  EXPECT_THROW(save_safetensors(dir.file("file/x.safetensors"), {{"a", ones({1})}}), Error);
}

TEST(SafetensorsAtomic, UnwritableFolderIsAnErrorAndKeepsTheOldFile) {
  TempDir dir;
  const std::string path = dir.file("ckpt.safetensors");
  save_safetensors(path, {{"old", ones({4})}});
  const std::string old_bytes = read_bytes(path);
  using std::filesystem::perms;
  std::filesystem::permissions(dir.path(), perms::owner_read | perms::owner_exec |
                                               perms::group_read | perms::group_exec |
                                               perms::others_read | perms::others_exec);
  {
    test::UnprivilegedFileAccess nobody;  // as root too
    ASSERT_TRUE(nobody.active());
    EXPECT_THROW(save_safetensors(path, {{"new", zeros({4})}}), Error);
  }
  std::filesystem::permissions(dir.path(), perms::owner_all);
  EXPECT_EQ(read_bytes(path), old_bytes);
  expect_only(dir, {"ckpt.safetensors"});
}

// ---- Malformed files ---------------------------------------------------------------------------

void expect_rejected(const std::string& bytes, const std::string& expected_words) {
  TempDir dir;
  write_bytes(dir.file("bad.safetensors"), bytes);
  try {
    load_safetensors(dir.file("bad.safetensors"));
    ADD_FAILURE() << "accepted a malformed file; expected an error mentioning '" << expected_words
                  << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(expected_words), std::string::npos) << e.what();
  }
}

TEST(SafetensorsMalformed, HeaderLength) {
  expect_rejected("", "too short");
  expect_rejected(std::string(5, '\0'), "too short");
  expect_rejected(make_file("{}", 0, 1000), "declares a 1000-byte header");
  expect_rejected(make_file("{}", 0, UINT64_MAX - 1), "declares a");
}

TEST(SafetensorsMalformed, HeaderLengthAboveTheLimit) {
  // A sparse 150 MB file whose header would be all of it: refused before anything is read.
  TempDir dir;
  const std::string path = dir.file("huge.safetensors");
  write_bytes(path, make_file("", 0, 150'000'000));
  std::filesystem::resize_file(path, 8 + 150'000'000);
  try {
    load_safetensors(path);
    ADD_FAILURE() << "accepted a 150 MB header";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("at most"), std::string::npos) << e.what();
  }
}

TEST(SafetensorsMalformed, HeaderJson) {
  expect_rejected(make_file("{\"a\": ", 0), "not valid JSON");
  expect_rejected(make_file("[1, 2]", 0), "must be a JSON object");
  expect_rejected(make_file(std::string(100000, '[') + std::string(100000, ']'), 0), "nests");
  expect_rejected(make_file(R"({"a": 3})", 0), "expected an object");
  expect_rejected(make_file(R"({"": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}})", 1),
                  "the tensor name is empty");
  expect_rejected(make_file(R"({"a": {"dtype": "F32", "shape": [1]}})", 4), "missing");
  expect_rejected(make_file(R"({"__metadata__": {"k": 1}})", 0), "must be a string");
  expect_rejected(make_file(R"({"__metadata__": [1]})", 0), "__metadata__ must be an object");
}

TEST(SafetensorsMalformed, DTypes) {
  expect_rejected(
      make_file(R"({"a": {"dtype": "F128", "shape": [1], "data_offsets": [0, 16]}})", 16),
      "unknown dtype");
  expect_rejected(make_file(R"({"a": {"dtype": "I16", "shape": [1], "data_offsets": [0, 2]}})", 2),
                  "no tensor type");
  expect_rejected(make_file(R"({"a": {"dtype": 5, "shape": [1], "data_offsets": [0, 4]}})", 4),
                  "must be a string");
}

TEST(SafetensorsMalformed, Shapes) {
  expect_rejected(make_file(R"({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", 4),
                  "must not be negative");
  expect_rejected(
      make_file(R"({"a": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}})", 4),
      "must be an integer");
  expect_rejected(make_file(R"({"a": {"dtype": "F32", "shape": 4, "data_offsets": [0, 16]}})", 16),
                  "must be an array");
  // Sizes whose product overflows int64, and one past int64 itself.
  expect_rejected(
      make_file(
          R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296, 16], "data_offsets": [0, 4]}})",
          4),
      "more elements than fit");
  expect_rejected(
      make_file(
          R"({"a": {"dtype": "F32", "shape": [18446744073709551615], "data_offsets": [0, 4]}})", 4),
      "too large");
  // Fits int64 as elements, overflows as bytes.
  expect_rejected(
      make_file(
          R"({"a": {"dtype": "F64", "shape": [4611686018427387904], "data_offsets": [0, 8]}})", 8),
      "too large");
  expect_rejected(
      make_file(R"({"a": {"dtype": "F32", "shape": [1e30], "data_offsets": [0, 4]}})", 4),
      "must be an integer");
}

// No elements, but no strides either: [0, 2^32, 2^32] used to overflow contiguous_strides (the
// fuzzer's most frequent report).
TEST(SafetensorsMalformed, EmptyShapesWithHugeDims) {
  expect_rejected(
      make_file(
          R"({"a": {"dtype": "F32", "shape": [0, 4294967296, 4294967296], "data_offsets": [0, 0]}})",
          0),
      "tensor 'a': shape [0,4294967296,4294967296] has strides beyond int64");
  expect_rejected(
      make_file(
          R"({"b": {"dtype": "F32", "shape": [0, 4611686018427387904, 4], "data_offsets": [0, 0]}})",
          0),
      "tensor 'b': shape [0,4611686018427387904,4] has strides beyond int64");
}

// A key twice in one object: the parser would keep the last one silently.
TEST(SafetensorsMalformed, DuplicateKeys) {
  // The same tensor twice, once as F32[2] and once as I32[1] over part of the same bytes.
  expect_rejected(make_file(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                            R"( "a": {"dtype": "I32", "shape": [1], "data_offsets": [0, 4]}})",
                            4),
                  "names 'a' twice in one object");
  expect_rejected(make_file(R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]},)"
                            R"( "a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}})",
                            1),
                  "names 'a' twice");
  expect_rejected(make_file(R"({"a": {"dtype": "U8", "dtype": "F32", "shape": [1],)"
                            R"( "data_offsets": [0, 1]}})",
                            1),
                  "names 'dtype' twice");
  expect_rejected(make_file(R"({"__metadata__": {"k": "1", "k": "2"}})", 0), "names 'k' twice");
  // The same key in different objects is no duplicate.
  TempDir dir;
  write_bytes(dir.file("ok.safetensors"),
              make_file(R"({"__metadata__": {"a": "x"}, "a": {"dtype": "U8", "shape": [1],)"
                        R"( "data_offsets": [0, 1]}})",
                        1));
  EXPECT_EQ(load_safetensors(dir.file("ok.safetensors")).size(), 1u);
  EXPECT_EQ(load_safetensors_metadata(dir.file("ok.safetensors")).at("a"), "x");
}

TEST(SafetensorsMalformed, Offsets) {
  // Byte count that does not match the shape.
  expect_rejected(make_file(R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8),
                  "needs 12");
  // Past the end of the file.
  expect_rejected(
      make_file(R"({"a": {"dtype": "U8", "shape": [400], "data_offsets": [0, 400]}})", 16),
      "run past the end");
  expect_rejected(
      make_file(
          R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [18446744073709551612, 18446744073709551616]}})",
          16),
      "data_offsets");
  // Overlapping, with a gap, with trailing bytes, reversed, negative, not a pair.
  expect_rejected(make_file(R"({"a": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]},
                                "b": {"dtype": "F64", "shape": [1], "data_offsets": [4, 12]}})",
                            12),
                  "overlap");
  expect_rejected(make_file(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                                "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}})",
                            12),
                  "gap");
  expect_rejected(make_file(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})", 8),
                  "gap");
  expect_rejected(make_file(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})", 8),
                  "belong to no tensor");
  expect_rejected(make_file(R"({"a": {"dtype": "F32", "shape": [0], "data_offsets": [4, 0]}})", 4),
                  "end before they begin");
  expect_rejected(make_file(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}})", 4),
                  "must not be negative");
  expect_rejected(make_file(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0]}})", 4),
                  "[begin, end]");
  // Duplicate keys, each tiling its own bytes: refused as such (DuplicateKeys), not as a gap.
  expect_rejected(make_file(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                                "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                            8),
                  "names 'a' twice");
}

TEST(SafetensorsMalformed, NonRegularFilesAndMissingFiles) {
  TempDir dir;
  EXPECT_THROW(load_safetensors(dir.path()), Error);
  EXPECT_THROW(load_safetensors(dir.file("missing.safetensors")), Error);
}

// Every truncation and many random corruptions of a valid file load or raise Error; none
// crashes or reads out of bounds (run under -DLEANGRAD_SANITIZE=address to see the latter).
TEST(SafetensorsMalformed, TruncationsAndCorruptionsNeverCrash) {
  TempDir dir;
  save_safetensors(dir.file("good.safetensors"), leangrad_fixture_tensors(), kFixtureMetadata);
  const std::string good = read_bytes(dir.file("good.safetensors"));
  const std::string path = dir.file("bad.safetensors");
  int rejected = 0;
  for (std::size_t n = 0; n < good.size(); ++n) {
    write_bytes(path, good.substr(0, n));
    try {
      load_safetensors(path);
    } catch (const Error&) {
      ++rejected;
    }
  }
  EXPECT_EQ(rejected, static_cast<int>(good.size()));  // every truncation loses bytes
  std::mt19937 rng(0);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bad = good;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) {
      // Mostly in the length and header, where the structure is.
      const std::size_t limit =
          rng() % 4 == 0 ? bad.size() : std::min<std::size_t>(bad.size(), 400);
      bad[rng() % limit] = static_cast<char>(rng() % 256);
    }
    write_bytes(path, bad);
    try {
      load_safetensors(path);
    } catch (const Error&) {
    }
  }
}

}  // namespace
}  // namespace leangrad
