// C identifiers for the emitted CUDA source: sanitised, never a keyword or a name the
// generated code itself uses, and unique within their table.
#pragma once
#include <set>
#include <string>

namespace te::cuda {

// name with every character outside [A-Za-z0-9_] replaced by '_', runs of '_' collapsed,
// "v" put before a leading digit or '_' and "u" before "te_" (the prefix of the
// generated helpers and internal names), and "v" for an empty name.
std::string sanitize_identifier(const std::string& name);

class NameTable {
 public:
  // A table that already holds C/C++ keywords, CUDA built-ins and the math functions
  // the generated code calls.
  NameTable();
  // A fresh identifier for hint: sanitize_identifier(hint), or that with "_1", "_2", ...
  std::string unique(const std::string& hint);
  // Marks name as taken (by a generated global such as a kernel).
  void reserve(const std::string& name) { used_.insert(name); }
  bool is_used(const std::string& name) const;

 private:
  std::set<std::string> used_;
};

}  // namespace te::cuda
