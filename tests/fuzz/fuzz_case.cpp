#include "fuzz_case.h"

#include <fmt/format.h>

#include <exception>
#include <sstream>

namespace te::fuzz {

std::vector<Argument> copy_arguments(const std::vector<Argument>& args) {
  std::vector<Argument> out;
  out.reserve(args.size());
  for (const Argument& a : args) out.push_back(a.is_array() ? Argument(a.array().copy()) : a);
  return out;
}

std::vector<Argument> interpret_copy(const Variant& v) {
  std::vector<Argument> args = copy_arguments(v.args);
  interpret(v.func, args);
  return args;
}

std::string describe(const FuzzCase& c) {
  std::ostringstream os;
  os << "fuzz case: kind " << c.kind << ", seed " << c.seed << " (re-run: te_fuzz --" << c.kind << " --seed " << c.seed
     << " --count 1 --verbose)\n";
  os << c.program;
  if (!c.main.func.body.defined()) return os.str();
  os << "lowered (" << c.main.label << "):\n" << c.main.func;
  return os.str();
}

namespace {

// Runs fn; an exception becomes its message (with "internal error" where te says so).
template <typename F>
std::string capture(F&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::string compare_variants(const FuzzCase& c, const Variant& want_v, const std::vector<Argument>& want,
                             const Variant& got_v, const std::vector<Argument>& got) {
  std::string diff;
  for (size_t j = 0; j < got_v.func.params.size(); ++j) {
    const Param& p = got_v.func.params[j];
    if (!p.is_buffer()) continue;
    for (size_t k = 0; k < want_v.func.params.size(); ++k) {
      const Param& q = want_v.func.params[k];
      if (!q.is_buffer() || q.name() != p.name()) continue;
      std::string d = compare_arrays(want[k].array(), got[j].array(), c.compare, c.rel_tol, c.abs_tol);
      if (!d.empty()) diff += fmt::format("  array {}:\n{}", p.name(), d);
    }
  }
  return diff;
}

}  // namespace

CaseResult check_case(const FuzzCase& c) {
  CaseResult r;
  if (!c.failure.empty()) {
    r.status = CaseResult::Status::Fail;
    r.report = describe(c) + "FAILED while generating or lowering:\n  " + c.failure + "\n";
    return r;
  }
  if (!c.rejected.empty()) {
    r.status = CaseResult::Status::Rejected;
    r.report = describe(c) + "te rejected the schedule:\n  " + c.rejected + "\n";
    return r;
  }
  std::string failures;
  std::vector<Argument> want = copy_arguments(c.main.args);
  std::string err = capture([&] { interpret(c.main.func, want); });
  if (!err.empty()) failures += fmt::format("interpret({}) threw: {}\n", c.main.label, err);

  for (const Variant& ref : c.references) {
    std::vector<Argument> got = copy_arguments(ref.args);
    std::string e = capture([&] { interpret(ref.func, got); });
    if (!e.empty()) {
      failures += fmt::format("interpret({}) threw: {}\n", ref.label, e);
    } else if (err.empty()) {
      std::string d = compare_variants(c, ref, got, c.main, want);
      if (!d.empty())
        failures += fmt::format("interpret({}) differs from interpret({}) (want: {}):\n{}", c.main.label, ref.label,
                                ref.label, d);
    }
  }

  if (c.run_jit) {
    std::vector<Argument> got = copy_arguments(c.main.args);
    std::string e = capture([&] {
      Module m = build(c.main.func, c.build_options);
      m(c.main.func.name).call(got);
    });
    if (!e.empty()) {
      failures += fmt::format("JIT({}) threw: {}\n", c.main.label, e);
    } else if (err.empty()) {
      std::string d = compare_variants(c, c.main, want, c.main, got);
      if (!d.empty()) failures += fmt::format("JIT differs from interpret (want: interpret):\n{}", d);
    }
  }
  if (!failures.empty()) {
    r.status = CaseResult::Status::Fail;
    r.report = describe(c) + "FAILED:\n" + failures;
    if (!c.references.empty()) {
      for (const Variant& ref : c.references)
        r.report += fmt::format("reference ({}):\n{}", ref.label, to_string(ref.func));
    }
  }
  return r;
}

}  // namespace te::fuzz
