// BuildOptions' te::Target to a triple, CPU and features LLVM knows, and the check
// that the JIT only runs code this host can execute.
#include <fmt/format.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#include "codegen_llvm/llvm_compat.h"
#include "codegen_llvm/target.h"
#include "target/target_check.h"
#include "te/error.h"

namespace te::codegen {
namespace {

// Every backend LLVM was built with, once: a foreign triple needs its target registered.
void initialize_all_targets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
}

const llvm::Target& lookup(const std::string& triple, const std::string& given) {
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) throw Error(fmt::format("target: LLVM does not know the triple '{}' ({})", given, error));
  return *target;
}

// te::Error unless every "+name"/"-name" of features is a feature of the target.
void check_features(const llvm::MCSubtargetInfo& sti, const TargetSpec& spec, const std::string& given) {
  std::optional<std::vector<std::string>> names = compat::target_feature_names(sti);
  if (!names && spec.host_arch) {
    names.emplace();
    for (const std::string& f : split_features(host_target().features)) names->push_back(f.substr(1));
  }
  // Their +/- form is checked with the target's other fields (check_target_fields).
  for (const std::string& f : split_features(given)) {
    if (names && std::find(names->begin(), names->end(), f.substr(1)) == names->end())
      throw Error(fmt::format("target: '{}' is not a feature of {}", f.substr(1), spec.triple));
  }
}

}  // namespace

TargetSpec resolve_target(const BuildOptions& options) {
  const Target& given = options.target;
  if (!given.is_llvm())
    throw Error(fmt::format("build: target '{}' is not an LLVM target (build_cuda() makes CUDA C)", given.str()));
  const HostTarget& host = host_target();
  TargetSpec spec;
  spec.vector_bits = given.vector_bits;
  if (given.is_host()) {
    spec.triple = host.triple;
    spec.cpu = host.cpu;
    spec.features = host.features;
    return spec;
  }
  initialize_all_targets();
  llvm::Triple host_triple(host.triple);
  llvm::Triple triple(given.triple.empty() ? host.triple : llvm::Triple::normalize(given.triple));
  spec.triple = triple.str();
  spec.host_arch = triple.getArch() == host_triple.getArch() && triple.getOS() == host_triple.getOS();
  const llvm::Target& target = lookup(spec.triple, given.triple);
  if (given.cpu.empty()) {
    // The host's CPU and features only for the host's own architecture.
    spec.cpu = spec.host_arch ? host.cpu : "generic";
    spec.features = spec.host_arch ? host.features : "";
  } else {
    spec.cpu = given.cpu;
  }
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target.createMCSubtargetInfo(spec.triple, "", ""));
  if (sti == nullptr) throw Error(fmt::format("target: LLVM cannot describe the CPUs of {}", spec.triple));
  if (!sti->isCPUStringValid(spec.cpu))
    throw Error(
        fmt::format("target: '{}' is not a CPU of {} (LLVM's names: cortex-a78, "
                    "neoverse-n1, x86-64-v3, skylake-avx512, ...)",
                    spec.cpu, spec.triple));
  check_features(*sti, spec, given.features);
  if (!given.features.empty()) spec.features += (spec.features.empty() ? "" : ",") + given.features;
  return spec;
}

int widest_vector_bits(const TargetSpec& spec) {
  if (spec.vector_bits > 0) return spec.vector_bits;
  const llvm::Triple triple(spec.triple);
  if (!triple.isX86()) return 128;  // NEON, SVE at its minimum, and the common base
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      lookup(spec.triple, spec.triple).createMCSubtargetInfo(spec.triple, spec.cpu, spec.features));
  if (sti == nullptr) return 128;
  if (sti->checkFeatures("+avx512f")) return 512;
  return sti->checkFeatures("+avx") ? 256 : 128;
}

void check_runs_on_host(const TargetSpec& spec, const std::string& api) {
  const HostTarget& host = host_target();
  if (!spec.host_arch)
    throw Error(
        fmt::format("{}: the JIT runs code on this host ({}), not on {}; export_object or "
                    "export_library compile for another target",
                    api, host.triple, spec.triple));
  if (spec.cpu == host.cpu && spec.features == host.features) return;
  const llvm::Target& target = lookup(spec.triple, spec.triple);
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target.createMCSubtargetInfo(spec.triple, spec.cpu, spec.features));
  std::vector<std::string> missing;
  // Every feature the host lacks is listed with '-' in its features.
  for (const std::string& f : split_features(host.features))
    if (f[0] == '-' && sti->checkFeatures("+" + f.substr(1))) missing.push_back(f.substr(1));
  if (!missing.empty())
    throw Error(
        fmt::format("{}: cpu '{}' (features '{}') needs {} which this host ({}) lacks: its code would "
                    "stop with an illegal instruction; export_object compiles for it without running it",
                    api, spec.cpu, spec.features, fmt::join(missing, ", "), host.cpu));
}

}  // namespace te::codegen
