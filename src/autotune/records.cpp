#include "te/autotune/records.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <limits>

#include "autotune/json_io.h"
#include "te/error.h"
#include "te/log.h"

namespace te::autotune {

namespace {

constexpr double kMaxSeconds = 86400;  // a time above a day is not a measurement
constexpr double kMinSeconds = 1e-9;

[[noreturn]] void bad(const std::string& what) { throw Error("tuning record: " + what); }

bool has(const Json& obj, const char* key) { return obj.find(key) != obj.end(); }

// The member `key` of a record object, of the kind named ("number", "string", ...).
const Json& member(const Json& obj, const char* key, std::string_view kind) {
  auto it = obj.find(key);
  if (it == obj.end()) bad(fmt::format("missing \"{}\"", key));
  if (kind_name(*it) != kind) bad(fmt::format("\"{}\" is a {}, not a {}", key, kind_name(*it), kind));
  return *it;
}

std::string string_member(const Json& obj, const char* key, bool required, bool non_empty) {
  if (!required && !has(obj, key)) return "";
  const std::string& s = member(obj, key, "string").get_ref<const std::string&>();
  if (s.size() > kMaxRecordStringBytes) bad(fmt::format("\"{}\" is longer than {} bytes", key, kMaxRecordStringBytes));
  if (non_empty && s.empty()) bad(fmt::format("\"{}\" is empty", key));
  return s;
}

double seconds_member(const Json& obj, const char* key) {
  if (!has(obj, key)) return 0;
  double d = member(obj, key, "number").get<double>();
  if (!(d >= 0 && d <= kMaxSeconds))
    bad(fmt::format("\"{}\" is {}, not between 0 and {} seconds", key, d, kMaxSeconds));
  return d;
}

std::string config_label(const std::string& knob, const Json& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s.empty() || s.size() > 256) bad(fmt::format("config knob \"{}\": an option name must have 1-256 bytes", knob));
    return s;
  }
  if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
  if (v.is_number()) {
    double d = v.get<double>();
    if (d != std::floor(d) || std::fabs(d) >= kMaxExactInt)
      bad(fmt::format("config knob \"{}\": {} is not an integer of at most 2^53", knob, d));
    return std::to_string(static_cast<int64_t>(d));
  }
  bad(fmt::format("config knob \"{}\" is a {}", knob, kind_name(v)));
}

// "32" or "-4" (as std::to_string writes it, below 2^53 in magnitude): written as a number.
bool canonical_integer(const std::string& s, int64_t* v) {
  if (s.empty() || s.size() > 17) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && end == s.data() + s.size() && std::to_string(*v) == s &&
         std::fabs(static_cast<double>(*v)) < kMaxExactInt;
}

// "line 3: reason" of the first skipped line, its reason cut short and made printable (a
// binary file's bytes are not echoed).
std::string first_skipped(const RecordFile& file) {
  const std::string& w = file.warnings.front();  // "name:line: skipped: reason"
  const size_t at = w.find(": skipped: ");
  const size_t colon = w.rfind(':', at - 1);
  const std::string line = w.substr(colon + 1, at - colon - 1), reason = w.substr(at + 11);
  std::string clean;
  for (char c : reason.substr(0, 100)) clean += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  if (reason.size() > 100) clean += "...";
  return fmt::format("first at line {}: {}", line, clean);
}

}  // namespace

double median_time(std::vector<double> times) {
  if (times.empty()) throw Error("median_time: no times");
  auto mid = times.begin() + std::ptrdiff_t((times.size() - 1) / 2);
  std::nth_element(times.begin(), mid, times.end());
  return *mid;
}

double Record::cost() const {
  if (!ok || times.empty()) return std::numeric_limits<double>::infinity();
  return median_time(times);
}

Record make_record(const std::string& key, const Config& config, bool ok, std::string error, std::vector<double> times,
                   double build_s, const std::string& target) {
  Record r;
  r.key = key;
  r.target = target;
  r.cpu = host_cpu_model();
  r.llvm = llvm_version();
  for (size_t i = 0; i < config.knobs().size(); ++i)
    r.config.emplace_back(config.knobs()[i].name, config.knobs()[i].label(config.indices()[i]));
  r.ok = ok;
  r.error = ok ? "" : std::move(error);
  if (r.error.size() > kMaxRecordStringBytes) r.error.resize(kMaxRecordStringBytes);
  if (ok) r.times = std::move(times);
  r.build_s = build_s;
  r.timestamp = std::floor(std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
  return r;
}

std::string format_record(const Record& r) {
  Json config = Json::object();
  for (const auto& [name, label] : r.config) {
    // Integers as numbers, everything else (choices, on/off) as strings.
    int64_t v = 0;
    if (canonical_integer(label, &v))
      config[name] = v;
    else
      config[name] = label;
  }
  Json times = Json::array();
  for (double t : r.times) times.push_back(json_number(t));
  Json obj = Json::object();
  obj["te_tune"] = 1;
  obj["key"] = r.key;
  obj["target"] = r.target;
  obj["cpu"] = r.cpu;
  obj["llvm"] = r.llvm;
  obj["config"] = std::move(config);
  obj["status"] = r.ok ? "ok" : "error";
  obj["error"] = r.error;
  obj["times"] = std::move(times);
  obj["build_s"] = json_number(r.build_s);
  obj["timestamp"] = json_number(r.timestamp);
  return write_json(obj);
}

Record parse_record(const std::string& line) {
  if (line.size() > kMaxRecordLineBytes)
    bad(fmt::format("line of {} bytes (at most {})", line.size(), kMaxRecordLineBytes));
  Json root;
  try {
    root = parse_json(line, 4);  // record -> config / times -> values, and room
  } catch (const Error& e) {
    bad(e.what());
  }
  if (!root.is_object()) bad("not a JSON object");
  const double version = member(root, "te_tune", "number").get<double>();
  if (version != 1) bad(fmt::format("version {} (this te reads version 1)", version));

  Record r;
  r.key = string_member(root, "key", true, true);
  r.target = string_member(root, "target", true, true);
  r.cpu = string_member(root, "cpu", false, false);
  r.llvm = string_member(root, "llvm", false, false);

  const Json& config = member(root, "config", "object");
  if (config.size() > kMaxRecordKnobs)
    bad(fmt::format("config has {} knobs (at most {})", config.size(), kMaxRecordKnobs));
  for (const auto& [name, v] : config.items()) {
    if (name.empty() || name.size() > 64) bad("config: a knob name must have 1-64 bytes");
    r.config.emplace_back(name, config_label(name, v));
  }

  const std::string& status = member(root, "status", "string").get_ref<const std::string&>();
  if (status != "ok" && status != "error") bad("\"status\" must be \"ok\" or \"error\"");
  r.ok = status == "ok";
  r.error = string_member(root, "error", false, false);

  const Json& times = member(root, "times", "array");
  if (times.size() > kMaxRecordTimes) bad(fmt::format("{} times (at most {})", times.size(), kMaxRecordTimes));
  for (const Json& t : times) {
    if (!t.is_number()) bad(fmt::format("a time is a {}", kind_name(t)));
    double d = t.get<double>();
    // No call through te takes under a nanosecond: a smaller time is a lie that would win.
    if (!(d >= kMinSeconds && d <= kMaxSeconds))
      bad(fmt::format("time {} is not between {} and {} seconds", d, kMinSeconds, kMaxSeconds));
    r.times.push_back(d);
  }
  if (r.ok && r.times.empty()) bad("status \"ok\" without times");
  if (!r.ok && !r.times.empty()) bad("status \"error\" with times");
  if (!r.ok && r.error.empty()) bad("status \"error\" without an error");
  r.build_s = seconds_member(root, "build_s");
  if (has(root, "timestamp")) {
    double ts = member(root, "timestamp", "number").get<double>();
    if (!(ts >= 0 && ts < 1e11)) bad(fmt::format("timestamp {} is not a time", ts));
    r.timestamp = ts;
  }
  return r;
}

RecordFile read_records(std::istream& in, const std::string& name) {
  RecordFile out;
  std::streambuf* sb = in.rdbuf();
  if (!sb) return out;
  std::string line;
  bool too_long = false;
  size_t line_no = 0;
  auto finish_line = [&] {
    ++line_no;
    bool blank = line.find_first_not_of(" \t\r") == std::string::npos;
    if (too_long) {
      out.warnings.push_back(
          fmt::format("{}:{}: skipped: line longer than {} bytes", name, line_no, kMaxRecordLineBytes));
    } else if (!blank) {
      try {
        out.records.push_back(parse_record(line));
      } catch (const Error& e) {
        out.warnings.push_back(fmt::format("{}:{}: skipped: {}", name, line_no, e.what()));
      }
    }
    line.clear();
    too_long = false;
  };
  for (;;) {
    int c = sb->sbumpc();
    if (c == std::char_traits<char>::eof()) break;
    if (c == '\n') {
      finish_line();
      continue;
    }
    if (line.size() < kMaxRecordLineBytes)
      line.push_back(static_cast<char>(c));
    else
      too_long = true;
  }
  if (!line.empty() || too_long) finish_line();
  return out;
}

RecordFile read_records_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  // An ifstream opens a directory and then throws libstdc++'s "basic_filebuf::underflow".
  if (std::filesystem::is_directory(path, ec))
    throw Error(fmt::format("tuning records: '{}' is a directory, not a records file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("tuning records: cannot read '{}': {}", path, std::strerror(errno)));
  RecordFile file = read_records(in, path);
  // Not one record: the wrong file (tune would append to it, a build would ignore it).
  if (file.records.empty() && !file.warnings.empty())
    throw Error(fmt::format("tuning records: no line of '{}' is a tuning record ({}); is it the right file?", path,
                            first_skipped(file)));
  return file;
}

std::string skipped_lines_summary(const RecordFile& file, const std::string& path) {
  const size_t n = file.warnings.size();
  if (!n) return "";
  return fmt::format("tuning records: '{}': {} skipped ({})", path,
                     n == 1 ? std::string("1 line that is not a tuning record was")
                            : fmt::format("{} lines that are not tuning records were", n),
                     first_skipped(file));
}

RecordFile load_records(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw Error(
        fmt::format("tuning records: '{}' does not exist (te tune or te auto-schedule --trials N write it)", path));
  RecordFile file = read_records_file(path);
  if (file.records.empty())
    throw Error(fmt::format("tuning records: '{}' is empty (te tune or te auto-schedule --trials N fill it)", path));
  if (!file.warnings.empty()) TE_LOG(Warn, skipped_lines_summary(file, path));
  return file;
}

std::string no_record_reason(const std::vector<Record>& records, const std::string& key, const std::string& target) {
  std::vector<std::string> keys;
  std::string elsewhere;  // a target the key's records were measured for
  size_t of_key = 0, here = 0, ok = 0;
  for (const Record& r : records) {
    if (r.key != key) {
      if (std::find(keys.begin(), keys.end(), r.key) == keys.end()) keys.push_back(r.key);
      continue;
    }
    ++of_key;
    if (r.target != target) {
      elsewhere = r.target;
      continue;
    }
    ++here;
    if (r.ok) ++ok;
  }
  if (!of_key) {
    std::string list;
    for (size_t i = 0; i < keys.size() && i < 3; ++i) list += (i ? ", " : "") + keys[i];
    if (keys.size() > 3) list += ", ...";
    return fmt::format("no record of '{}' (its records are of {})", key, list);
  }
  auto records_of = [&](size_t n) { return fmt::format("{} record{} of '{}'", n, n == 1 ? "" : "s", key); };
  if (!here)
    return fmt::format("{}, measured for another target ({}), none for this one ({}): tune again here",
                       records_of(of_key), elsewhere, target);
  if (!ok) return fmt::format("{}, {}", records_of(here), here == 1 ? "a failed config" : "every one a failed config");
  return fmt::format("{} (successful), none a config of its space (the task's knobs changed?)", records_of(ok));
}

void append_records_file(const std::string& path, const std::vector<Record>& records) {
  // A run killed mid-write leaves a last line without its newline: end it, or the next
  // record would be glued to it and lost too.
  bool unterminated = false;
  {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (in && in.tellg() > 0) {
      in.seekg(-1, std::ios::end);
      unterminated = in.get() != '\n';
    }
  }
  std::ofstream out(path, std::ios::app | std::ios::binary);
  if (!out) throw Error(fmt::format("tuning records: cannot open '{}' for writing", path));
  if (unterminated) out << '\n';
  for (const Record& r : records) out << format_record(r) << '\n';
  out.flush();
  if (!out) throw Error(fmt::format("tuning records: writing '{}' failed", path));
}

std::optional<Record> best_record(const std::vector<Record>& records, const std::string& key, const ConfigSpace& space,
                                  const std::string& target) {
  std::optional<Record> best;
  for (const Record& r : records) {
    if (!r.ok || r.key != key || r.target != target) continue;
    if (best && !(r.cost() < best->cost())) continue;
    if (!space.from_labels(r.config)) continue;
    best = r;
  }
  return best;
}

std::optional<Config> best_config(const std::vector<Record>& records, const std::string& key, const ConfigSpace& space,
                                  const std::string& target) {
  std::optional<Record> r = best_record(records, key, space, target);
  if (!r) return std::nullopt;
  return space.from_labels(r->config);
}

}  // namespace te::autotune
