// The docs never lie: every `<!-- output: NAME -->` block in docs/**/*.md must be exactly
// what snippet NAME (docs/gen/snippets.h) prints with the te of this build, and every
// `<!-- code: NAME -->` block must be the code between `// [doc:NAME]` and `// [/doc]` in
// snippets.h, which runs here. After an intended change to te's output, run
//   TE_UPDATE_DOCS=1 ./tests/test_docs
// to rewrite the blocks in place, and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../docs/gen/snippets.h"

namespace fs = std::filesystem;

namespace {

const fs::path kDocs = fs::path(TE_TEST_DATA_DIR) / ".." / ".." / "docs";

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Whether the line, after its indentation, starts with marker.
bool starts_marker(const std::string& line, const std::string& marker) {
  size_t at = line.find_first_not_of(' ');
  return at != std::string::npos && line.compare(at, marker.size(), marker) == 0;
}

// The `// [doc:NAME]` regions of snippets.h, without their common indentation.
std::map<std::string, std::string> code_regions() {
  std::map<std::string, std::string> out;
  std::vector<std::string> lines = lines_of(read(kDocs / "gen" / "snippets.h"));
  for (size_t k = 0; k < lines.size(); ++k) {
    if (!starts_marker(lines[k], "// [doc:")) continue;
    size_t at = lines[k].find("// [doc:");
    std::string name = lines[k].substr(at + 8, lines[k].find(']', at) - at - 8);
    std::vector<std::string> body;
    for (++k; k < lines.size() && !starts_marker(lines[k], "// [/doc]"); ++k) body.push_back(lines[k]);
    size_t indent = std::string::npos;
    for (const std::string& l : body)
      if (l.find_first_not_of(' ') != std::string::npos) indent = std::min(indent, l.find_first_not_of(' '));
    std::string text;
    for (const std::string& l : body) text += (l.size() > indent ? l.substr(indent) : "") + "\n";
    out[name] = text;
  }
  return out;
}

struct Block {
  std::string kind, name;  // "output" or "code"
  size_t first, last;      // content lines [first, last) inside the fence
};

// The marked blocks of one .md file: a marker line, then a fenced block.
std::vector<Block> blocks_of(const std::vector<std::string>& lines, const std::string& file) {
  std::vector<Block> out;
  for (size_t k = 0; k < lines.size(); ++k) {
    for (const char* kind : {"output", "code"}) {
      std::string marker = std::string("<!-- ") + kind + ": ";
      if (lines[k].rfind(marker, 0) != 0) continue;
      std::string name = lines[k].substr(marker.size(), lines[k].find(" -->") - marker.size());
      if (k + 1 >= lines.size() || lines[k + 1].rfind("```", 0) != 0) {
        ADD_FAILURE() << file << ":" << k + 1 << ": marker '" << name << "' is not followed by a ``` block";
        continue;
      }
      size_t end = k + 2;
      while (end < lines.size() && lines[end] != "```") ++end;
      out.push_back({kind, name, k + 2, end});
    }
  }
  return out;
}

TEST(Docs, MarkedBlocksMatchWhatTeProducesNow) {
  std::map<std::string, std::string> outputs;
  for (const te_docs::Snippet& s : te_docs::snippets()) outputs[s.name] = s.run();
  const std::map<std::string, std::string> code = code_regions();
  const bool update = std::getenv("TE_UPDATE_DOCS") != nullptr;
  std::set<std::string> used;
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kDocs)) {
    if (entry.path().extension() != ".md") continue;
    ++files;
    const std::string file = entry.path().lexically_relative(kDocs).string();
    std::vector<std::string> lines = lines_of(read(entry.path()));
    std::vector<Block> blocks = blocks_of(lines, file);
    // Replace from the end so that earlier line numbers stay valid.
    bool changed = false;
    for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) {
      const auto& source = b->kind == "output" ? outputs : code;
      auto it = source.find(b->name);
      if (it == source.end()) {
        ADD_FAILURE() << file << ": unknown " << b->kind << " snippet '" << b->name << "'";
        continue;
      }
      used.insert(b->kind + ":" + b->name);
      std::string shown;
      for (size_t k = b->first; k < b->last; ++k) shown += lines[k] + "\n";
      if (shown == it->second) continue;
      if (update) {
        std::vector<std::string> fresh = lines_of(it->second);
        lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(b->first),
                    lines.begin() + static_cast<std::ptrdiff_t>(b->last));
        lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(b->first), fresh.begin(), fresh.end());
        changed = true;
      } else {
        ADD_FAILURE() << file << ": the " << b->kind << " block '" << b->name
                      << "' differs from what te produces now (TE_UPDATE_DOCS=1 rewrites it).\n"
                      << "--- in the docs:\n"
                      << shown << "--- te now:\n"
                      << it->second;
      }
    }
    if (changed) {
      std::ofstream out(entry.path(), std::ios::binary);
      for (const std::string& l : lines) out << l << "\n";
    }
  }
  EXPECT_GT(files, 5) << "docs not found under " << kDocs;
  for (const auto& [name, text] : outputs)
    EXPECT_TRUE(used.count("output:" + name)) << "output snippet '" << name << "' is shown nowhere in docs/";
  for (const auto& [name, text] : code)
    EXPECT_TRUE(used.count("code:" + name)) << "code snippet '" << name << "' is shown nowhere in docs/";
}

}  // namespace
