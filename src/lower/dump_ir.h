// TE_DUMP_IR / LowerOptions::dump_ir: prints the IR after a named pass of lower().
// With TE_TIME_PASSES=1 it also times each pass: the time between consecutive after()
// calls (lower() calls each pass, then after()), leaving out the printing.
#pragma once
#include <string>
#include <vector>

#include "lower/passes.h"
#include "te/log.h"

namespace te::lowering {

class IrDump {
 public:
  IrDump(const LowerOptions& options, const std::string& func_name);
  // An IrDump that prints nothing and only records the names of the passes run: how
  // lower_pass_names() learns the pass list from lower() itself.
  static IrDump recorder();
  const std::vector<std::string>& passes_run() const { return passes_run_; }

  // Prints value's text after `pass` when asked to, and hands value on.
  template <typename T>
  T after(const char* pass, T value) {
    passes_run_.push_back(pass);
    if (recording_) return value;
    timer_.lap(pass);
    if (wants(pass)) {
      print(pass, text(value));
      timer_.restart();
    }
    return value;
  }
  // The end of lower(): prints the pass timings (TE_TIME_PASSES) and logs the result.
  void finish(const LoweredFunc& f);

 private:
  bool wants(const char* pass) const;
  void print(const char* pass, const std::string& text) const;
  static std::string text(const Schedule& s);
  static std::string text(const LowerContext& ctx);
  static std::string text(const std::vector<StageNest>& nests);
  static std::string text(const Stmt& s);

  IrDump() : timer_("lower_pass_names"), recording_(true) {}

  std::string selected_;
  StageTimer timer_;
  bool recording_ = false;
  std::vector<std::string> passes_run_;
};

}  // namespace te::lowering
