#include "codegen_cuda_src/names.h"

#include <cctype>

namespace te::cuda {

namespace {

// Identifiers a generated name must never shadow or collide with.
const char* const kReserved[] = {
    // C++ keywords and alternative tokens
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
    "char16_t", "char32_t", "class", "compl", "const", "constexpr", "const_cast", "continue", "decltype", "default",
    "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
    "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "return",
    "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
    "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
    "void", "volatile", "wchar_t", "while", "main", "restrict",
    // fixed-width types and CUDA names the source uses
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "half", "nv_bfloat16",
    "nv_bfloat162", "dim3", "uint3", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "stream",
    "cudaStream_t", "cudaError_t", "cudaSuccess", "assert", "printf", "malloc", "free",
    // math functions the source calls
    "floor", "floorf", "ceil", "ceilf", "round", "roundf", "rint", "rintf", "trunc", "truncf", "fabs", "fabsf", "exp",
    "expf", "log", "logf", "sqrt", "sqrtf", "pow", "powf", "tanh", "tanhf", "fma", "fmaf", "fmod", "fmodf", "min",
    "max", "abs"};

}  // namespace

std::string sanitize_identifier(const std::string& name) {
  std::string s;
  s.reserve(name.size() + 2);
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    s += (std::isalnum(u) || c == '_') && u < 128 ? c : '_';
  }
  // "__" anywhere and "_X" at the start are reserved in C++: keep single underscores.
  std::string out;
  for (char c : s)
    if (c != '_' || out.empty() || out.back() != '_') out += c;
  if (out.empty() || out == "_") return "v";
  if (std::isdigit(static_cast<unsigned char>(out[0])) || out[0] == '_') out = "v" + out;
  // "te_" is the prefix of the generated helpers and internal names.
  if (out.rfind("te_", 0) == 0) out = "u" + out;
  return out;
}

NameTable::NameTable() {
  for (const char* r : kReserved) used_.insert(r);
}

bool NameTable::is_used(const std::string& name) const { return used_.count(name) != 0; }

std::string NameTable::unique(const std::string& hint) {
  std::string base = sanitize_identifier(hint);
  std::string name = base;
  for (int k = 1; is_used(name); ++k) name = base + "_" + std::to_string(k);
  used_.insert(name);
  return name;
}

}  // namespace te::cuda
