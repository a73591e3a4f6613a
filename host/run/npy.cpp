#include "run/npy.hpp"

#include "io/atomic_file.hpp"
#include "io/safe_read.hpp"

#include <fstream>
#include <sstream>

namespace htp {

namespace {

struct DtypeInfo {
  const char *name;
  const char *numpy;
  uint8_t code;
  uint8_t bits;
};

// bool travels in DLPack as an 8-bit unsigned integer (DLPack 0.6 has no boolean code).
constexpr DtypeInfo kDtypes[] = {
    {"f16", "<f2", kDLFloat, 16},  {"bf16", "<u2", kDLBfloat, 16}, {"f32", "<f4", kDLFloat, 32},
    {"f64", "<f8", kDLFloat, 64},  {"i8", "|i1", kDLInt, 8},       {"i16", "<i2", kDLInt, 16},
    {"i32", "<i4", kDLInt, 32},    {"i64", "<i8", kDLInt, 64},     {"u8", "|u1", kDLUInt, 8},
    {"u16", "<u2", kDLUInt, 16},   {"u32", "<u4", kDLUInt, 32},    {"u64", "<u8", kDLUInt, 64},
    {"bool", "|b1", kDLUInt, 8},
};

const DtypeInfo *find_dtype(const std::string &name) {
  for (const auto &d : kDtypes)
    if (name == d.name) return &d;
  return nullptr;
}

Diagnostic npy_error(const std::string &file, const std::string &what) {
  return Diagnostic::error("run.npy", "'" + file + "' is not a usable .npy file: " + what);
}

// The value of `'key': value` in the header dict, as raw text up to the next top-level ',' or '}'.
std::optional<std::string> header_value(const std::string &h, const std::string &key) {
  size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) return std::nullopt;
  size_t colon = h.find(':', k);
  if (colon == std::string::npos) return std::nullopt;
  size_t i = colon + 1, depth = 0;
  while (i < h.size() && h[i] == ' ') ++i;
  size_t start = i;
  for (; i < h.size(); ++i) {
    char c = h[i];
    if (c == '(' || c == '[') ++depth;
    else if (c == ')' || c == ']') { if (depth == 0) break; --depth; }
    else if ((c == ',' || c == '}') && depth == 0) break;
  }
  std::string v = h.substr(start, i - start + ((i < h.size() && h[i] == ')') ? 1 : 0));
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

}  // namespace

int64_t HostArray::elements() const {
  int64_t n = 1;
  for (auto d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  return n;
}

std::string HostArray::describe() const {
  std::string s = dtype + "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

size_t dtype_size(const std::string &dtype) {
  const DtypeInfo *d = find_dtype(dtype);
  return d ? d->bits / 8 : 0;
}

bool dtype_to_dlpack(const std::string &dtype, DLDataType &out) {
  const DtypeInfo *d = find_dtype(dtype);
  if (!d) return false;
  out = DLDataType{d->code, d->bits, 1};
  return true;
}

std::optional<std::string> dtype_from_dlpack(DLDataType type) {
  if (type.lanes != 1) return std::nullopt;
  if (type.code == 6 /* kDLBool, DLPack >= 0.8 */ && type.bits == 8) return std::string("bool");
  for (const auto &x : kDtypes)
    if (x.code == type.code && x.bits == type.bits && std::string_view(x.name) != "bool") return std::string(x.name);
  return std::nullopt;
}

std::optional<std::string> dtype_to_numpy(const std::string &dtype) {
  const DtypeInfo *d = find_dtype(dtype);
  if (!d) return std::nullopt;
  return std::string(d->numpy);
}

std::optional<std::string> dtype_from_numpy(const std::string &descr) {
  std::string d = descr;
  if (d.size() == 3 && d[0] == '=') d[0] = '<';  // native order on a little-endian host
  if (d.size() == 3 && d[0] == '<' && d[2] == '1') d[0] = '|';
  if (d == "<u2") return std::string("u16");       // bf16 is chosen by the parameter, not the file
  for (const auto &x : kDtypes)
    if (d == x.numpy) return std::string(x.name);
  return std::nullopt;
}

Expected<HostArray> parse_npy(const std::string &bytes, const std::string &file) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return npy_error(file, "missing the \\x93NUMPY magic");
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return npy_error(file, "truncated header");
    for (int i = 0; i < 4; ++i) header_len |= size_t(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    offset = 12;
  } else {
    return npy_error(file, "format version " + std::to_string(major) + " is not supported");
  }
  if (offset + header_len > bytes.size()) return npy_error(file, "truncated header");
  std::string h = bytes.substr(offset, header_len);
  auto descr = header_value(h, "descr");
  auto order = header_value(h, "fortran_order");
  auto shape = header_value(h, "shape");
  if (!descr || !order || !shape) return npy_error(file, "header lacks descr, fortran_order or shape");
  if (*order != "False") return npy_error(file, "Fortran-ordered arrays are not supported (save a C-ordered copy)");
  std::string d = *descr;
  if (d.size() >= 2 && (d.front() == '\'' || d.front() == '"')) d = d.substr(1, d.size() - 2);
  auto dtype = dtype_from_numpy(d);
  if (!dtype) return npy_error(file, "dtype '" + d + "' is not supported");
  HostArray a;
  a.dtype = *dtype;
  std::string s = *shape;
  for (char &c : s)
    if (c == '(' || c == ')' || c == ',') c = ' ';
  std::istringstream in(s);
  std::string tok;
  while (in >> tok) {
    try {
      size_t used = 0;
      long long v = std::stoll(tok, &used);
      if (used != tok.size() || v < 0) throw std::invalid_argument(tok);
      a.shape.push_back(v);
    } catch (const std::exception &) {
      return npy_error(file, "malformed shape " + *shape);
    }
  }
  size_t data_offset = offset + header_len;
  // Counted in 64 bits with overflow checks: a header may claim any shape.
  const int64_t elements = a.elements();
  uint64_t need = 0;
  if (elements < 0 || __builtin_mul_overflow(static_cast<uint64_t>(elements), dtype_size(a.dtype), &need))
    return npy_error(file, "shape " + *shape + " has more elements than 64 bits count");
  if (bytes.size() - data_offset != need)
    return npy_error(file, "holds " + std::to_string(bytes.size() - data_offset) + " data bytes, " + a.describe() +
                               " needs " + std::to_string(need));
  a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_offset), bytes.end());
  return a;
}

Expected<HostArray> read_npy(const std::filesystem::path &path) {
  auto bytes = read_regular_file(path, kMaxArrayBytes);
  if (!bytes) return Diagnostic::error("run.npy", bytes.error().message);
  return parse_npy(*bytes, path.string());
}

std::string encode_npy(const HostArray &a) {
  std::string shape = "(";
  for (size_t i = 0; i < a.shape.size(); ++i) shape += std::to_string(a.shape[i]) + ", ";
  if (a.shape.size() > 1) shape.resize(shape.size() - 2);
  else if (a.shape.size() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = "{'descr': '" + dtype_to_numpy(a.dtype).value_or("|u1") +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char *>(a.bytes()), a.external ? size_t(a.elements()) * dtype_size(a.dtype) : a.data.size());
  return out;
}

std::optional<Diagnostic> write_npy(const std::filesystem::path &path, const HostArray &a) {
  return atomic_write_file(path, encode_npy(a));
}

}  // namespace htp
