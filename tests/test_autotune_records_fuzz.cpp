// A bounded, deterministic fuzz run of the tuning-records reader (the libFuzzer target
// tests/fuzz/records_libfuzzer.cpp runs the same property without bounds): a few thousand
// lines made by mutating valid records (bit flips, truncation, insertions of JSON tokens,
// deletions, duplicated spans, extreme numbers, deep nesting) and random bytes. Every
// line must give a valid record or a te::Error, and a file of them a record or a warning
// per line (tests/fuzz/records_check.h).
#include <gtest/gtest.h>
#include <te/autotune.h>

#include <random>

#include "fuzz/records_check.h"

using namespace te::autotune;

namespace {

std::vector<std::string> seeds() {
  ConfigSpace s;
  s.define_split("tile", 64);
  s.define_choice("order", {"ijk", "ikj"});
  s.define_bool("vec");
  s.define_range("neg", -3, 3);
  std::vector<std::string> out;
  out.push_back(format_record(make_record("sgemm/64", s.at(17), true, "", {1e-3, 2e-3, 1.5e-3}, 0.05)));
  out.push_back(
      format_record(make_record("k\"ey\\\n\xc3\xa9", s.at(3), false, "worker crashed: killed by signal 11", {}, 0)));
  out.push_back(format_record(make_record("x", s.at(s.size() - 1), true, "", {86400}, 0)));
  return out;
}

const char* kTokens[] = {"{",
                         "}",
                         "[",
                         "]",
                         ",",
                         ":",
                         "\"",
                         "\\",
                         "\\u",
                         "\\ud800",
                         "\\udc00",
                         "null",
                         "true",
                         "false",
                         "-",
                         "0",
                         "1e308",
                         "1e309",
                         "-1e-400",
                         "9007199254740993",
                         "NaN",
                         "Infinity",
                         "\"times\":[]",
                         "\"status\":\"error\"",
                         "\"te_tune\":1",
                         "\"config\":{}",
                         "\n",
                         "\x00",
                         "\xff",
                         "\xc3",
                         "[[[[[[[[[[",
                         "]]]]]]]]]]",
                         "\"key\":\"\"",
                         "0.0",
                         "-0",
                         "1E5",
                         "\t"};

std::string mutate(std::string s, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n ? std::uniform_int_distribution<size_t>(0, n - 1)(rng) : 0; };
  int steps = 1 + int(pick(4));
  for (int k = 0; k < steps; ++k) {
    switch (pick(7)) {
      case 0:  // flip a bit
        if (!s.empty()) s[pick(s.size())] ^= char(1 << pick(8));
        break;
      case 1:  // truncate
        s.resize(pick(s.size() + 1));
        break;
      case 2: {  // insert a token
        std::string t = kTokens[pick(sizeof kTokens / sizeof kTokens[0])];
        if (t.empty()) t = std::string(1, '\0');
        s.insert(pick(s.size() + 1), t);
        break;
      }
      case 3: {  // delete a span
        size_t a = pick(s.size() + 1), n = pick(16);
        s.erase(a, n);
        break;
      }
      case 4: {  // duplicate a span
        size_t a = pick(s.size() + 1), n = pick(64);
        std::string span = s.substr(a, n);
        s.insert(pick(s.size() + 1), span);
        break;
      }
      case 5: {  // replace a number with an extreme one
        size_t p = s.find_first_of("0123456789", pick(s.size() + 1));
        if (p != std::string::npos) s.replace(p, 1, pick(2) ? "1e400" : "-5");
        break;
      }
      default: {  // replace a byte with a random one
        if (!s.empty()) s[pick(s.size())] = char(pick(256));
      }
    }
  }
  // A mutated line stays one line (the file test below joins them).
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

}  // namespace

TEST(AutotuneRecordsFuzz, MutatedAndRandomLines) {
  std::mt19937_64 rng(20261121);
  std::vector<std::string> base = seeds();
  for (const std::string& b : base) ASSERT_EQ(te::fuzz::check_record_line(b), "") << b;
  std::string file;
  size_t parsed = 0, rejected = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string line;
    if (i % 10 == 9) {  // random bytes
      size_t n = std::uniform_int_distribution<size_t>(0, 300)(rng);
      for (size_t k = 0; k < n; ++k) line += char(std::uniform_int_distribution<int>(1, 255)(rng));
      for (char& c : line)
        if (c == '\n') c = ' ';
    } else {
      line = mutate(base[size_t(i) % base.size()], rng);
    }
    std::string why = te::fuzz::check_record_line(line);
    ASSERT_EQ(why, "") << "line " << i << ": " << line;
    try {
      parse_record(line);
      ++parsed;
    } catch (const te::Error&) {
      ++rejected;
    }
    if (file.size() < 200000) file += line + "\n";
  }
  // Both outcomes happen (the mutations are neither all harmless nor all fatal).
  EXPECT_GT(parsed, 100u);
  EXPECT_GT(rejected, 1000u);
  std::string why = te::fuzz::check_records_bytes(reinterpret_cast<const uint8_t*>(file.data()), file.size());
  EXPECT_EQ(why, "");
}

TEST(AutotuneRecordsFuzz, HostileShapes) {
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  std::string wide = "{\"te_tune\":1,\"times\":[";
  for (int i = 0; i < 20000; ++i) wide += "1,";
  wide += "1]}";
  std::string many_keys = "{";
  for (int i = 0; i < 5000; ++i) many_keys += "\"k" + std::to_string(i) + "\":0,";
  many_keys += "\"z\":0}";
  std::string deep_short = std::string(30000, '[') + std::string(30000, ']');
  for (const std::string& s :
       {deep, deep_short, wide, many_keys, std::string(70000, '"'), std::string("\"\\u"), std::string("{\"a\":")}) {
    EXPECT_EQ(te::fuzz::check_record_line(s), "");
    EXPECT_EQ(te::fuzz::check_records_bytes(reinterpret_cast<const uint8_t*>(s.data()), s.size()), "");
  }
}
