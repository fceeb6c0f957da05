// Internal to the tuner: how a worker's results travel (one JSON line each) and the
// socket I/O of the tuning process, which must survive a worker that dies or stalls.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "te/autotune/measure.h"

namespace te::autotune::detail {

// {"ok":true,"error":"","times":[...],"build_s":0.1}
std::string encode_result(const MeasureResult& r);
// A result from a line a worker sent; a line that is not one gives a failed result saying so.
MeasureResult decode_result(const std::string& line);

// Sets every byte of the outputs (NaN for floats): what a kernel leaves unwritten cannot
// match the reference.
void poison_outputs(std::vector<Argument>& args, const std::vector<size_t>& outputs);

// Writes all of data to a socket; false when the peer is gone (no SIGPIPE).
bool send_all(int fd, const void* data, size_t size);

enum class ReadStatus { Ok, Eof, Timeout, TooLong };
// Reads up to and excluding '\n' (bytes after it stay in *pending for the next call).
ReadStatus read_line(int fd, std::chrono::steady_clock::time_point deadline, size_t max_bytes, std::string* pending,
                     std::string* line);
// Reads exactly size bytes (after the bytes in *pending).
ReadStatus read_exact(int fd, std::chrono::steady_clock::time_point deadline, std::string* pending, void* out,
                      size_t size);

// "killed by signal 11 (Segmentation fault)", "exited with code 3".
std::string describe_exit(int wait_status);

// A deadline `seconds` from now (clamped to a day).
std::chrono::steady_clock::time_point deadline_after(double seconds);

}  // namespace te::autotune::detail
