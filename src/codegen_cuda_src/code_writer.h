// Indented lines of C code.
#pragma once
#include <string>

namespace te::cuda {

// s as the text of a `//` comment: newlines become spaces, and backslashes, which
// would continue the comment onto the next line, become '/'.
inline std::string comment_text(const std::string& s) {
  std::string out;
  for (char c : s) out += (c == '\n' || c == '\r') ? ' ' : c == '\\' ? '/' : c;
  return out;
}

class CodeWriter {
 public:
  explicit CodeWriter(int indent = 0) : indent_(indent) {}
  void line(const std::string& s) {
    text_.append(static_cast<size_t>(2 * indent_), ' ');
    text_ += s;
    text_ += '\n';
  }
  // `head {` and one level deeper; close() writes the matching `}`.
  void open(const std::string& head) {
    line(head + " {");
    ++indent_;
  }
  // A bare `{` block.
  void open_block() {
    line("{");
    ++indent_;
  }
  // One level deeper without writing a line (after a `} else {` written by close()).
  void indent() { ++indent_; }
  void close(const std::string& tail = "}") {
    --indent_;
    line(tail);
  }
  const std::string& text() const { return text_; }

 private:
  int indent_;
  std::string text_;
};

}  // namespace te::cuda
