// te::Target's text form: parsed once here, printed back canonically.
#include "te/target.h"

#include <fmt/format.h>

#include <sstream>
#include <vector>

#include "target/target_check.h"
#include "te/error.h"

namespace te {
namespace {

[[noreturn]] void bad(const std::string& text, const std::string& what) {
  throw Error(fmt::format("target '{}': {}", text, what));
}

// "-mcpu=x86-64-v3" -> {"mcpu", "x86-64-v3"}.
std::pair<std::string, std::string> split_option(const std::string& text, const std::string& word) {
  size_t eq = word.find('=');
  if (word.size() < 2 || word[0] != '-' || eq == std::string::npos || eq == 1)
    bad(text, fmt::format("'{}' is not an option of the form -name=value", word));
  std::string value = word.substr(eq + 1);
  if (value.empty()) bad(text, fmt::format("{} has no value", word.substr(0, eq)));
  return {word.substr(1, eq - 1), value};
}

bool valid_vector_bits(int bits) { return bits == 0 || (bits >= 64 && bits <= 2048 && (bits & (bits - 1)) == 0); }

// "" when every comma-separated item of features is +name or -name; else the first that is not.
std::string bad_feature(const std::string& features) {
  for (const std::string& f : split_features(features))
    if (f.size() < 2 || (f[0] != '+' && f[0] != '-')) return f.empty() ? "(empty)" : f;
  return "";
}

int parse_vector_bits(const std::string& text, const std::string& value) {
  int bits = 0;
  size_t used = 0;
  try {
    bits = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || bits == 0 || !valid_vector_bits(bits))
    bad(text, fmt::format("-vector-bits={} is not a power of two from 64 to 2048", value));
  return bits;
}

}  // namespace

std::vector<std::string> split_features(const std::string& features) {
  std::vector<std::string> out;
  std::istringstream in(features);
  for (std::string f; std::getline(in, f, ',');) out.push_back(f);
  return out;
}

void check_target_fields(const Target& target, const char* api) {
  auto fail = [&](const std::string& what) {
    throw Error(fmt::format("{}: target '{}': {}", api, target.str(), what));
  };
  if (!valid_vector_bits(target.vector_bits))
    fail(fmt::format("vector_bits is {}; use 0 (the CPU's widest) or a power of two from 64 to 2048",
                     target.vector_bits));
  if (!target.features.empty() && !bad_feature(target.features).empty())
    fail(fmt::format("feature '{}' must be +name or -name (e.g. +avx2)", bad_feature(target.features)));
  if (target.is_cuda() &&
      (!target.triple.empty() || !target.cpu.empty() || !target.features.empty() || target.vector_bits != 0))
    fail("a cuda target has no triple, cpu, features or vector_bits (they describe LLVM targets)");
  if (target.is_llvm() && !target.arch.empty())
    fail(fmt::format("arch '{}' names a GPU; an llvm target has a cpu instead", target.arch));
  if (!target.arch.empty() && !parse_cuda_arch(target.arch))
    fail(fmt::format("arch '{}' is not a CUDA architecture (sm_80, sm_90, sm_90a, ...)", target.arch));
}

Target::Target(const char* text) : Target(parse(text == nullptr ? std::string() : std::string(text))) {}
Target::Target(const std::string& text) : Target(parse(text)) {}

Target Target::parse(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.empty()) bad(text, "empty (expected llvm, cuda or an LLVM triple such as aarch64-linux-gnu)");

  Target t;
  const std::string& kind = words[0];
  if (kind == "cuda") {
    t.kind = Kind::Cuda;
  } else if (kind == "llvm") {
    t.kind = Kind::Llvm;
  } else if (kind.find('-') != std::string::npos && kind[0] != '-') {
    t.triple = kind;  // a bare triple
  } else {
    bad(text, fmt::format("unknown kind '{}' (expected llvm, cuda or an LLVM triple such as "
                          "aarch64-linux-gnu)",
                          kind));
  }
  std::vector<std::string> seen;
  for (size_t i = 1; i < words.size(); ++i) {
    auto [name, value] = split_option(text, words[i]);
    for (const std::string& s : seen)
      if (s == name) bad(text, fmt::format("-{} is given twice", name));
    seen.push_back(name);
    if (name != "mtriple" && name != "mcpu" && name != "mattr" && name != "vector-bits" && name != "arch")
      bad(text, fmt::format("unknown option -{} (the options are -mtriple, -mcpu, -mattr and -vector-bits; -arch "
                            "for cuda)",
                            name));
    if (name == "arch") {
      if (!t.is_cuda()) bad(text, "-arch applies to cuda targets only (an llvm target's CPU is -mcpu)");
      if (!parse_cuda_arch(value))
        bad(text, fmt::format("-arch={} is not a CUDA architecture (sm_80, sm_90, sm_90a, ...)", value));
      t.arch = value;
      continue;
    }
    if (t.is_cuda()) bad(text, fmt::format("-{} applies to llvm targets only", name));
    if (name == "mtriple") {
      if (!t.triple.empty()) bad(text, "the triple is given twice");
      t.triple = value;
    } else if (name == "mcpu") {
      t.cpu = value;
    } else if (name == "mattr") {
      if (!bad_feature(value).empty())
        bad(text, fmt::format("feature '{}' must be +name or -name (e.g. +avx2)", bad_feature(value)));
      t.features = value;
    } else {
      t.vector_bits = parse_vector_bits(text, value);
    }
  }
  return t;
}

std::string Target::str() const {
  if (is_cuda()) return arch.empty() ? "cuda" : "cuda -arch=" + arch;
  std::string s = "llvm";
  if (!triple.empty()) s += " -mtriple=" + triple;
  if (!cpu.empty()) s += " -mcpu=" + cpu;
  if (!features.empty()) s += " -mattr=" + features;
  if (vector_bits != 0) s += fmt::format(" -vector-bits={}", vector_bits);
  return s;
}

std::optional<CudaArch> parse_cuda_arch(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0) return std::nullopt;
  std::string digits = arch.substr(3);
  CudaArch a;
  if (!digits.empty() && digits.back() == 'a') {
    a.specific = true;
    digits.pop_back();
  }
  if (digits.size() < 2 || digits.size() > 3) return std::nullopt;
  for (char c : digits)
    if (c < '0' || c > '9') return std::nullopt;
  a.number = std::stoi(digits);
  if (a.number < 50) return std::nullopt;
  return a;
}

}  // namespace te
