/// \file
/// te::Target: where te's code runs, as one plain value that build(), auto_schedule(),
/// the tuner, the generator and the `te` command line all take. Text ("llvm",
/// "cuda", "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1", TVM's spelling) is
/// parsed once, here, with a te::Error naming what is wrong.
#pragma once
#include <cstdint>
#include <string>

#include "te/export.h"

namespace te {

/// A backend and, for the LLVM one, the machine it compiles for.
///
///     te::Target host;                                   // "llvm": this machine's CPU
///     te::Target gpu = "cuda";                           // the CUDA C backend
///     te::Target hopper = "cuda -arch=sm_90a";           // ... for H100/H200 (wgmma)
///     te::Target arm = "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1 -mattr=+sve";
///     te::Target avx2 = "llvm -mcpu=x86-64-v3 -vector-bits=256";
///
/// Text: a kind, `llvm` or `cuda`, then options `-name=value`, each once:
/// `-mtriple=` (an LLVM triple), `-mcpu=` (an LLVM CPU name), `-mattr=` (features, each
/// `+name` or `-name`, comma-separated) and `-vector-bits=` (64 to 2048, a power of two),
/// all for `llvm` only; `-arch=` (sm_<number>, an "a" suffix for arch-specific
/// instructions) for `cuda` only. A bare triple ("aarch64-linux-gnu") means `llvm
/// -mtriple=` it.
/// Whether LLVM knows the triple, CPU and features is checked where code is compiled
/// (build(), export_object(), resolve_target()).
struct TE_API Target {
  /// The backend.
  enum class Kind : uint8_t {
    Llvm,  ///< native code through LLVM: build(), export_object(), export_library()
    Cuda   ///< CUDA C through build_cuda()
  };
  Kind kind = Kind::Llvm;  ///< See Kind.
  /// LLVM target triple ("aarch64-linux-gnu", "x86_64-linux-gnu"); empty: the host's.
  std::string triple;
  /// LLVM CPU name ("x86-64-v3", "skylake-avx512", "neoverse-n1"). Empty: the host's
  /// CPU and features when the triple is the host's (or empty), a foreign triple's generic
  /// CPU otherwise (the host's features never leak into another target). Naming a CPU
  /// drops the host's features.
  std::string cpu;
  /// Features added to (or removed from) the CPU's own, LLVM's spelling: "+sve,-avx512f".
  std::string features;
  /// The widest vector, in bits, that schedules make (auto_schedule's rules) and that
  /// LLVM's own vectorizers prefer (its "prefer-vector-width"); 0: the CPU's widest.
  int vector_bits = 0;
  /// A cuda target's GPU architecture ("sm_80", "sm_90", "sm_90a": CUDA's spelling, an
  /// "a" for the arch-specific instructions such as wgmma); empty: any GPU. build_cuda
  /// (CudaOptions::arch) checks each kernel's instructions against it and makes the file
  /// stop nvcc compiling it for another architecture.
  std::string arch;

  /// The host CPU through LLVM ("llvm").
  Target() = default;
  /// Target::parse(text): implicit, so that "cuda" or "llvm -mcpu=x86-64-v3" can be
  /// written wherever a Target is expected.
  Target(const char* text);  // NOLINT(google-explicit-constructor)
  /// Target::parse(text), as above.
  Target(const std::string& text);  // NOLINT(google-explicit-constructor)

  /// Reads a target from text (see above). te::Error naming the text and what is wrong:
  /// an unknown kind or option, an option given twice or without a value, an LLVM option
  /// on a cuda target or -arch on an llvm one, a vector width that is not a power of two
  /// in 64..2048, an architecture not of the form sm_<number>[a].
  static Target parse(const std::string& text);

  bool is_llvm() const { return kind == Kind::Llvm; }  ///< the LLVM backend
  bool is_cuda() const { return kind == Kind::Cuda; }  ///< the CUDA backend
  /// An LLVM target that names no triple, CPU or features: this machine's.
  bool is_host() const { return is_llvm() && triple.empty() && cpu.empty() && features.empty(); }

  /// The canonical text: "llvm", "cuda", "cuda -arch=sm_90a", "llvm -mtriple=... -mcpu=...
  /// -mattr=... -vector-bits=N" (options in that order, those set only); parse(str()) == *this.
  std::string str() const;

  /// Every field equal.
  friend bool operator==(const Target& a, const Target& b) {
    return a.kind == b.kind && a.triple == b.triple && a.cpu == b.cpu && a.features == b.features &&
           a.vector_bits == b.vector_bits && a.arch == b.arch;
  }
  /// Some field differs.
  friend bool operator!=(const Target& a, const Target& b) { return !(a == b); }
};

}  // namespace te
