// Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/): small valid inputs
// of every kind the readers accept, so that fuzzing starts from the interesting paths rather than
// from rejections of the first bytes. Run by `tools/fuzz.sh --make-seeds`; the output is committed.
//   fuzz_make_seeds <corpus folder>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <leangrad/distributed/tcp_store_protocol.h>

#include "fuzz_support.h"

namespace {

using namespace leangrad;
namespace fs = std::filesystem;

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string big_endian_u32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

// An IDX file: magic (0, 0, type, ndims), big-endian dims, then the big-endian elements.
std::string idx(std::uint8_t type, const std::vector<std::uint32_t>& dims, std::size_t width) {
  std::string bytes{'\0', '\0', static_cast<char>(type), static_cast<char>(dims.size())};
  std::size_t numel = 1;
  for (const std::uint32_t d : dims) {
    bytes += big_endian_u32(d);
    numel *= d;
  }
  for (std::size_t i = 0; i < numel * width; ++i)
    bytes += static_cast<char>((i * 37 + 11) % 251);
  return bytes;
}

std::string gzip(const std::string& data) {
  z_stream s{};
  if (deflateInit2(&s, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  std::string out(deflateBound(&s, data.size()) + 32, '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  s.avail_in = static_cast<uInt>(data.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(out.size());
  if (deflate(&s, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

void safetensors_seeds(const fs::path& dir) {
  NamedTensors all;
  for (const DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kBool})
    all.emplace_back(std::string("t_") + dtype_name(dtype), arange(0, 6).reshape({2, 3}).to(dtype));
  all.emplace_back("scalar", full({}, 2.5));
  all.emplace_back("empty", zeros({0, 4}));
  save_safetensors((dir / "all_dtypes.safetensors").string(), all, {{"format", "pt"}});
  save_safetensors((dir / "no_tensors.safetensors").string(), {});
  const fuzz::Training t = fuzz::make_training(1);
  t.model->save((dir / "linear.safetensors").string());
}

void idx_seeds(const fs::path& dir) {
  write_file(dir / "uint8-images", idx(0x08, {3, 4, 4}, 1));
  write_file(dir / "uint8-labels", idx(0x08, {10}, 1));
  write_file(dir / "int32", idx(0x0C, {2, 3}, 4));
  write_file(dir / "float32", idx(0x0D, {5}, 4));
  write_file(dir / "float64", idx(0x0E, {2, 2}, 8));
  write_file(dir / "labels.gz", gzip(idx(0x08, {100}, 1)));
  write_file(dir / "images.gz", gzip(idx(0x08, {2, 28, 28}, 1)));
}

// Requests a rank's store client sends (tcp_store_protocol.h), one connection's worth per seed.
void store_seeds(const fs::path& dir) {
  namespace wire = distributed::tcp_store_protocol;
  const auto command = [](wire::Command c) {
    return wire::FrameWriter().u8(static_cast<std::uint8_t>(c));
  };
  const std::string hello =
      command(wire::Command::Hello).i64(2).i64(4).frame();  // fuzz_store.cpp's world
  write_file(dir / "session", hello + command(wire::Command::Set).str("k").str("v").frame() +
                                  command(wire::Command::Get).str("k").frame() +
                                  command(wire::Command::Add).str("n").i64(5).frame() +
                                  command(wire::Command::Post).str("p").str("1").frame());
  write_file(dir / "refused-hello", command(wire::Command::Hello).i64(1).i64(3).frame());
  write_file(dir / "before-hello", command(wire::Command::Get).str("k").frame());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_make_seeds <corpus folder>\n";
    return 2;
  }
  const fs::path corpus = argv[1];
  for (const char* target :
       {"fuzz_safetensors", "fuzz_idx", "fuzz_checkpoint", "fuzz_checkpoint_fields", "fuzz_store"})
    fs::create_directories(corpus / target);
  safetensors_seeds(corpus / "fuzz_safetensors");
  idx_seeds(corpus / "fuzz_idx");
  const fuzz::ScratchDir scratch;
  fs::copy_file(fuzz::write_valid_checkpoint(scratch.path()),
                corpus / "fuzz_checkpoint" / "step-00000008.safetensors",
                fs::copy_options::overwrite_existing);
  // FuzzedDataProvider reads choices from the end of the input and strings from the front: any
  // bytes are a valid edit script; these make a few edits each.
  write_file(corpus / "fuzz_checkpoint_fields" / "edits-1", std::string(24, '\x03'));
  write_file(corpus / "fuzz_checkpoint_fields" / "edits-2",
             "7\x01-5\x02[{\"epoch\":1}]\x05\x09\x02");
  store_seeds(corpus / "fuzz_store");
  std::cout << "seeds written to " << corpus.string() << "\n";
  return 0;
}
