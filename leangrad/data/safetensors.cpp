// save_safetensors / load_safetensors: the safetensors checkpoint format, written atomically and
// read with every field validated. The reader treats the file as hostile: each number in the
// header is range-checked before it is used, so a malformed file raises Error and never makes
// us read or allocate out of bounds. See Note [Atomic file writes] (data/file_io.cpp),
// Note [Validating a safetensors header] and Note [Aligned tensors].
#include <leangrad/data/safetensors.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <numeric>
#include <set>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <leangrad/autograd/grad_mode.h>
#include <leangrad/core/creation.h>
#include <leangrad/core/error.h>
#include <leangrad/data/file_io.h>

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
constexpr const char* kLoad = "load_safetensors";

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

struct Entry {
  std::string name;
  DType dtype = kFloat32;
  Shape shape;
  std::uint64_t begin = 0;  // byte offsets within the data section
  std::uint64_t end = 0;
};

struct Header {
  std::vector<Entry> entries;  // in the header's order
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

DType parse_dtype(const nlohmann::ordered_json& value, const std::string& where) {
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
std::uint64_t parse_count(const nlohmann::ordered_json& value, const std::string& where,
                          const char* what) {
  LG_CHECK(value.is_number_integer(), where, ": ", what, " must be an integer, got ", value.dump());
  LG_CHECK(value.is_number_unsigned(), where, ": ", what, " must not be negative, got ",
           value.dump());
  const std::uint64_t n = value.get<std::uint64_t>();
  LG_CHECK(n <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()), where, ": ",
           what, " ", n, " is too large");
  return n;
}

Entry parse_entry(const std::string& name, const nlohmann::ordered_json& value,
                  const std::string& file) {
  const std::string where = "load_safetensors: '" + file + "', tensor '" + name + "'";
  // The format allows any key; leangrad names every tensor (save_safetensors refuses an empty
  // name too), so what loads can be saved again.
  LG_CHECK(!name.empty(), where, ": the tensor name is empty");
  LG_CHECK(value.is_object(), where, ": expected an object, got ", value.dump());
  for (const char* key : {"dtype", "shape", "data_offsets"})
    LG_CHECK(value.contains(key), where, ": missing \"", key, "\"");
  Entry entry;
  entry.name = name;
  entry.dtype = parse_dtype(value["dtype"], where);

  const nlohmann::ordered_json& shape = value["shape"];
  LG_CHECK(shape.is_array(), where, ": \"shape\" must be an array, got ", shape.dump());
  std::uint64_t numel = 1;
  for (const auto& size : shape) {
    const std::uint64_t n = parse_count(size, where, "a size in \"shape\"");
    entry.shape.push_back(static_cast<std::int64_t>(n));
    LG_CHECK(!__builtin_mul_overflow(numel, n, &numel) &&
                 numel <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()),
             where, ": shape ", shape.dump(), " has more elements than fit in int64");
  }
  // The strides multiply the sizes after the first (a 0 counted as 1), so a tensor with no
  // elements can still have strides beyond int64 ([0, 2^62, 4]): refused here, naming the file.
  LG_CHECK(contiguous_strides_fit(entry.shape), where, ": shape ", shape.dump(),
           " has strides beyond int64");
  std::uint64_t nbytes = 0;
  LG_CHECK(!__builtin_mul_overflow(numel, element_size(entry.dtype), &nbytes), where, ": shape ",
           shape.dump(), " is too large");

  const nlohmann::ordered_json& offsets = value["data_offsets"];
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
Header read_header(const FileDescriptor& fd, const std::string& path) {
  const std::uint64_t file_bytes = file_size(fd, path, kLoad);
  LG_CHECK(file_bytes >= kHeaderLengthBytes, "load_safetensors: '", path, "' has ", file_bytes,
           " bytes, too short for the 8-byte header length");
  std::uint64_t header_bytes = 0;
  read_exactly(fd, &header_bytes, sizeof(header_bytes), 0, path, kLoad);
  LG_CHECK(header_bytes <= file_bytes - kHeaderLengthBytes, "load_safetensors: '", path,
           "' declares a ", header_bytes, "-byte header but the file has only ",
           file_bytes - kHeaderLengthBytes, " bytes after the length");
  LG_CHECK(header_bytes <= kMaxHeaderBytes, "load_safetensors: '", path, "' declares a ",
           header_bytes, "-byte header (at most ", kMaxHeaderBytes, " accepted)");

  std::string text(header_bytes, '\0');
  read_exactly(fd, text.data(), text.size(), kHeaderLengthBytes, path, kLoad);
  LG_CHECK(json_depth(text) <= kMaxJsonDepth, "load_safetensors: '", path,
           "': the header nests deeper than ", kMaxJsonDepth, " levels");
  // Ordered: the tensors come back in the order the header lists them (the writer's order). A
  // key twice in one object (a tensor name, a field, a metadata key) is refused: the parser would
  // keep the last silently, and no writer makes one (save_safetensors refuses a name twice).
  std::vector<std::set<std::string>> keys_seen;  // one set per open object
  std::string duplicate;
  const nlohmann::ordered_json json = nlohmann::ordered_json::parse(
      text,
      [&](int, nlohmann::ordered_json::parse_event_t event, nlohmann::ordered_json& parsed) {
        using Event = nlohmann::ordered_json::parse_event_t;
        if (event == Event::object_start) keys_seen.emplace_back();
        if (event == Event::object_end && !keys_seen.empty()) keys_seen.pop_back();
        if (event == Event::key && !keys_seen.empty() &&
            !keys_seen.back().insert(parsed.get<std::string>()).second && duplicate.empty())
          duplicate = parsed.get<std::string>();
        return true;
      },
      /*allow_exceptions=*/false);
  LG_CHECK(!json.is_discarded(), "load_safetensors: '", path, "': the header is not valid JSON");
  LG_CHECK(duplicate.empty(), "load_safetensors: '", path, "': the header names '",
           printable(duplicate), "' twice in one object");
  LG_CHECK(json.is_object(), "load_safetensors: '", path, "': the header must be a JSON object");

  Header header;
  header.data_start = kHeaderLengthBytes + header_bytes;
  for (const auto& [key, value] : json.items()) {
    if (key == kMetadataKey) {
      // null is no metadata, as the reference reader takes it (an Option there).
      if (value.is_null()) continue;
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

  std::vector<const Entry*> by_position;
  for (const Entry& e : header.entries)
    by_position.push_back(&e);
  std::sort(by_position.begin(), by_position.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  const std::uint64_t data_bytes = file_bytes - header.data_start;
  std::uint64_t cursor = 0;
  for (const Entry* entry : by_position) {
    const Entry& e = *entry;
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

// JSON strings are UTF-8, so every tensor name and metadata string must be (the reference
// reader rejects anything else). A well-formed sequence: no stray continuation byte, no overlong
// form, no surrogate, nothing above U+10FFFF.
bool is_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::size_t length = 0;
    std::uint32_t code = 0, min_code = 0;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if ((lead & 0xE0) == 0xC0) {
      length = 2, code = lead & 0x1F, min_code = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3, code = lead & 0x0F, min_code = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4, code = lead & 0x07, min_code = 0x10000;
    } else {
      return false;
    }
    if (text.size() - i < length) return false;
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    if (code < min_code || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += length;
  }
  return true;
}

void check_utf8(const std::string& text, const char* what) {
  LG_CHECK(is_utf8(text), "save_safetensors: ", what, " '", printable(text),
           "' is not valid UTF-8 (safetensors headers are JSON)");
}

}  // namespace

// Note [Aligned tensors]: readers that map a file and use its bytes in place (PyTorch through
// safetensors.torch, which views a uint8 slice of the mapped storage as the dtype; Rust casts of
// the byte slice; accelerators) need every tensor to start at a multiple of its element size.
// The reference writer guarantees it: the data section starts 8-byte aligned and the tensors are
// sorted by dtype, largest element first. Ours lays the bytes out in the same size order (the
// given order within a size), so an odd-length uint8 tensor never shifts a float32 one; the
// header still lists the tensors in the given order, and load_safetensors returns that order.
void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const SafetensorsMetadata& metadata) {
  NoGradGuard no_grad;
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  for (const auto& [key, value] : metadata) {
    check_utf8(key, "metadata key");
    LG_CHECK(is_utf8(value), "save_safetensors: the value of metadata key '", printable(key),
             "' is not valid UTF-8 (safetensors headers are JSON)");
  }
  if (!metadata.empty()) header[kMetadataKey] = metadata;
  std::set<std::string> names;
  std::vector<Tensor> host_tensors;
  for (const auto& [name, tensor] : tensors) {
    LG_CHECK(!name.empty() && name != kMetadataKey, "save_safetensors: invalid tensor name '", name,
             "'");
    check_utf8(name, "tensor name");
    LG_CHECK(names.insert(name).second, "save_safetensors: duplicate tensor name '", name, "'");
    LG_CHECK(tensor.defined(), "save_safetensors: tensor '", name, "' is undefined");
    // Contiguous host bytes (a CUDA tensor is copied to the host first).
    Tensor host = tensor.detach();
    if (host.is_cuda()) host = host.cpu();
    host_tensors.push_back(host.contiguous());
  }
  // See Note [Aligned tensors]: the bytes go largest element first, the header keeps the order.
  std::vector<std::size_t> layout(host_tensors.size());
  std::iota(layout.begin(), layout.end(), std::size_t{0});
  std::stable_sort(layout.begin(), layout.end(), [&](std::size_t a, std::size_t b) {
    return host_tensors[a].element_size() > host_tensors[b].element_size();
  });
  std::vector<std::uint64_t> begins(host_tensors.size());
  std::uint64_t offset = 0;
  for (const std::size_t i : layout) {
    begins[i] = offset;
    offset += host_tensors[i].nbytes();
  }
  for (std::size_t i = 0; i < host_tensors.size(); ++i) {
    const Tensor& host = host_tensors[i];
    header[tensors[i].first] = {{"dtype", safetensors_dtype_name(host.dtype())},
                                {"shape", host.shape()},
                                {"data_offsets", {begins[i], begins[i] + host.nbytes()}}};
  }
  std::string text = header.dump();
  // Pad with spaces so the data section starts 8-byte aligned (as the reference writer does).
  text.append((kHeaderLengthBytes - text.size() % kHeaderLengthBytes) % kHeaderLengthBytes, ' ');
  const std::uint64_t header_bytes = text.size();
  std::vector<std::string_view> pieces = {
      {reinterpret_cast<const char*>(&header_bytes), sizeof(header_bytes)}, text};
  for (const std::size_t i : layout)
    pieces.emplace_back(static_cast<const char*>(host_tensors[i].data_ptr()),
                        host_tensors[i].nbytes());
  write_file_atomically(path, pieces, "save_safetensors");
}

NamedTensors load_safetensors(const std::string& path, Device device) {
  const FileDescriptor fd = open_regular_file(path, kLoad);
  const Header header = read_header(fd, path);
  NamedTensors out;
  out.reserve(header.entries.size());
  for (const Entry& e : header.entries) {
    // Read into pinned memory when the tensor goes on to a GPU.
    Tensor host = empty(e.shape, TensorOptions(e.dtype).pinned_memory(device.is_cuda()));
    if (e.end > e.begin)
      read_exactly(fd, host.data_ptr(), e.end - e.begin, header.data_start + e.begin, path, kLoad);
    if (e.dtype == kBool) {
      // Any byte other than 0 or 1 would be an invalid bool: normalise as numpy does (x != 0).
      auto* bytes = static_cast<std::uint8_t*>(host.data_ptr());
      const std::int64_t count = host.numel();
      for (std::int64_t i = 0; i < count; ++i)
        bytes[i] = bytes[i] != 0;
    }
    out.emplace_back(e.name, device.is_cuda() ? host.to(device) : host);
  }
  return out;
}

SafetensorsMetadata load_safetensors_metadata(const std::string& path) {
  const FileDescriptor fd = open_regular_file(path, kLoad);
  return read_header(fd, path).metadata;
}

}  // namespace leangrad
