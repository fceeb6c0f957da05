/// \file
/// Tuning records: one measured config per line of a JSON-lines file, e.g.
///
///   {"te_tune":1,"key":"sgemm/1024","target":"x86_64-pc-linux-gnu -mcpu=generic features=5f3c2a10",
///    "cpu":"AMD EPYC 9R45","llvm":"14.0.6","config":{"mr":8,"nr":32,"order":"ikj","vec":"on"},
///    "status":"ok","error":"","times":[0.00893,0.00901],"build_s":0.094,"timestamp":1763769600}
///
/// "times" are seconds per call, one per repeat of time_evaluator; a record's cost is their
/// median (the lower one for an even count). Not the fastest: the same kernel's calls vary
/// in both directions (where its temporary buffers land, the clock of a shared VM), and the
/// fastest of many configs' calls would pick a lucky outlier (measured: a config whose calls
/// took 14-17 ms recorded 9.9 ms as its fastest of 10). A failed config has status
/// "error", its reason in "error" and no times.
///
/// Records files come from users and are not trusted. parse_record() throws te::Error for
/// any line that is not a well-formed record: bad JSON, a line longer than
/// kMaxRecordLineBytes, missing or mistyped fields, a version other than 1, times that are
/// not numbers between 1 ns and a day, an ok record without times or a failed one with
/// some (or without its error), more than kMaxRecordTimes times or kMaxRecordKnobs knobs,
/// strings over kMaxRecordStringBytes, duplicate keys, nesting deeper than 4. Unknown
/// fields are ignored. (The JSON is read and written by nlohmann-json, privately; the
/// format is the one earlier te versions wrote, byte for byte, and they read it.) read_records() skips
/// such lines, each with a warning naming the file, the line and the reason, and keeps
/// the rest: one damaged line (a run killed mid-write leaves a truncated last line) does
/// not lose a tuning run. It never holds more than one line of kMaxRecordLineBytes in
/// memory besides the records it keeps. A record whose config is not a config of the
/// task's space (a knob renamed, an option gone) is passed over by best_config and resume.
#pragma once
#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "te/autotune/space.h"
#include "te/export.h"
#include "te/target.h"

namespace te::autotune {

/// \name Limits of a record line (longer lines and fields are rejected when read)
//@{
constexpr size_t kMaxRecordLineBytes = 64 * 1024;  ///< bytes of one line
constexpr size_t kMaxRecordTimes = 1024;           ///< entries of `times`
constexpr size_t kMaxRecordKnobs = 64;             ///< entries of `config`
constexpr size_t kMaxRecordStringBytes = 4096;     ///< bytes of one string field
//@}

/// One measured config, as one JSON line of a records file.
struct TE_API Record {
  std::string key;                                          ///< the kernel ("sgemm/1024")
  std::string target;                                       ///< what the code was compiled for (target_string)
  std::string cpu;                                          ///< the CPU's model name
  std::string llvm;                                         ///< LLVM's version
  std::vector<std::pair<std::string, std::string>> config;  ///< knob name -> label
  bool ok = false;                                          ///< the config built, was correct and was timed
  std::string error;                                        ///< why the config failed ("" when ok)
  std::vector<double> times;                                ///< seconds per call, one per repeat (ok records only)
  double build_s = 0;                                       ///< seconds to schedule, lower and compile
  double timestamp = 0;                                     ///< seconds since the Unix epoch
  /// The median time (ok records, see median_time); infinity for a failed one.
  double cost() const;
};

/// The median of times (the lower middle one for an even count); te::Error when empty.
TE_API double median_time(std::vector<double> times);

/// A target as records name it: "<triple> -mcpu=<cpu> features=<hash>" of the triple,
/// CPU and features LLVM resolves it to (resolved_target), and " -vector-bits=N" when the
/// target sets a width. Two hosts with one CPU name but other features differ; a target
/// naming the host's own CPU and features is the host. A cuda target is "cuda".
TE_API std::string target_string(const Target& target);
/// target_string of the host ("llvm").
TE_API std::string host_target_string();
/// The CPU's model name ("Intel(R) Xeon(R) ...").
TE_API std::string host_cpu_model();
/// LLVM's version ("14.0.6").
TE_API std::string llvm_version();

/// A record of config, compiled for target (a target_string), measured on this host now.
TE_API Record make_record(const std::string& key, const Config& config, bool ok, std::string error,
                          std::vector<double> times, double build_s, const std::string& target = host_target_string());

/// One line of JSON (no newline).
TE_API std::string format_record(const Record& r);
/// te::Error naming what is wrong (see above).
TE_API Record parse_record(const std::string& line);

/// What read_records found.
struct TE_API RecordFile {
  std::vector<Record> records;        ///< the valid lines, in order
  std::vector<std::string> warnings;  ///< "file:line: skipped: reason"
};
/// Reads every line of a stream; bad lines are skipped with a warning each.
TE_API RecordFile read_records(std::istream& in, const std::string& name = "records");
/// read_records of a file, as tune() resumes from it: an empty or absent file gives no
/// records. te::Error naming the file when it is a directory, cannot be read, or has lines
/// but not one record (the wrong file: appending to it or building from it is a mistake).
TE_API RecordFile read_records_file(const std::string& path);
/// The records a kernel is built from (apply_best, auto_schedule with trials = 0, te
/// lower/build/run --records): read_records_file, and also te::Error when the file does
/// not exist or holds no record. Skipped lines are one warning (skipped_lines_summary).
TE_API RecordFile load_records(const std::string& path);
/// One line for read_records' skipped lines: their count and the first one's line number
/// and reason; "" when none was skipped.
TE_API std::string skipped_lines_summary(const RecordFile& file, const std::string& path);
/// Why best_config finds nothing for key on target in records (no record of key and what
/// they are of; only other targets'; only failed ones; else none a config of the space),
/// for errors.
TE_API std::string no_record_reason(const std::vector<Record>& records, const std::string& key,
                                    const std::string& target = host_target_string());
/// Appends lines to a file (created when absent); te::Error when it cannot be written.
TE_API void append_records_file(const std::string& path, const std::vector<Record>& records);

/// The cheapest ok record of key on target (the host by default) whose config is a config
/// of space; nullopt when there is none.
TE_API std::optional<Config> best_config(const std::vector<Record>& records, const std::string& key,
                                         const ConfigSpace& space, const std::string& target = host_target_string());
/// The record best_config chooses.
TE_API std::optional<Record> best_record(const std::vector<Record>& records, const std::string& key,
                                         const ConfigSpace& space, const std::string& target = host_target_string());

}  // namespace te::autotune
