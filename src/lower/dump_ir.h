// TE_DUMP_IR / LowerOptions::dump_ir: prints the IR after a named pass of lower().
#pragma once
#include <string>
#include <vector>

#include "lower/passes.h"

namespace te::lowering {

class IrDump {
 public:
  explicit IrDump(const LowerOptions& options);

  // Prints value's text after `pass` when asked to, and hands value on.
  template <typename T>
  T after(const char* pass, T value) const {
    if (wants(pass)) print(pass, text(value));
    return value;
  }

 private:
  bool wants(const char* pass) const;
  void print(const char* pass, const std::string& text) const;
  static std::string text(const Schedule& s);
  static std::string text(const LowerContext& ctx);
  static std::string text(const std::vector<StageNest>& nests);
  static std::string text(const Stmt& s);

  std::string selected_;
};

}  // namespace te::lowering
