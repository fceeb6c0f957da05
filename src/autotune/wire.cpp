#include "autotune/wire.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "autotune/json_io.h"
#include "te/error.h"

namespace te::autotune::detail {

std::string encode_result(const MeasureResult& r) {
  Json times = Json::array();
  for (double t : r.times)
    if (std::isfinite(t)) times.push_back(json_number(t));
  Json obj = Json::object();
  obj["ok"] = r.ok;
  obj["error"] = r.error;
  obj["times"] = std::move(times);
  obj["build_s"] = json_number(std::isfinite(r.build_s) ? r.build_s : 0.0);
  return write_json(obj);
}

MeasureResult decode_result(const std::string& line) {
  MeasureResult r;
  try {
    Json v = parse_json(line, 4);
    if (!v.is_object()) throw Error("not a JSON object");
    auto ok = v.find("ok"), error = v.find("error"), times = v.find("times"), build_s = v.find("build_s");
    if (ok == v.end() || !ok->is_boolean() || error == v.end() || !error->is_string() || times == v.end() ||
        !times->is_array() || build_s == v.end() || !build_s->is_number())
      throw Error("fields missing");
    for (const Json& t : *times) {
      if (!t.is_number() || !(t.get<double>() > 0)) throw Error("bad time");
      r.times.push_back(t.get<double>());
    }
    r.ok = ok->get<bool>() && !r.times.empty();
    const std::string& message = error->get_ref<const std::string&>();
    r.error = r.ok ? "" : (message.empty() ? "no times measured" : message);
    if (!r.ok) r.times.clear();
    r.build_s = build_s->get<double>();
  } catch (const Error& e) {
    r = MeasureResult();
    r.error = std::string("the worker sent an unreadable result: ") + e.what();
  }
  return r;
}

}  // namespace te::autotune::detail

namespace te::autotune {
std::string format_result(const MeasureResult& r) { return detail::encode_result(r); }
MeasureResult parse_result(const std::string& line) { return detail::decode_result(line); }
}  // namespace te::autotune

namespace te::autotune::detail {

void poison_outputs(std::vector<Argument>& args, const std::vector<size_t>& outputs) {
  for (size_t p : outputs) {
    NDArray& a = args[p].array();
    if (a.nbytes()) std::memset(a.data(), 0xFF, a.nbytes());
  }
}

bool send_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= size_t(n);
  }
  return true;
}

std::chrono::steady_clock::time_point deadline_after(double seconds) {
  double s = std::clamp(std::isfinite(seconds) ? seconds : 86400.0, 0.0, 86400.0);
  return std::chrono::steady_clock::now() + std::chrono::microseconds(int64_t(s * 1e6));
}

namespace {
// Waits for input until the deadline and appends what arrives to *pending.
ReadStatus fill(int fd, std::chrono::steady_clock::time_point deadline, std::string* pending) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return ReadStatus::Timeout;
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, int(std::min<int64_t>(left.count(), 1000)));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return ReadStatus::Eof;
    if (rc == 0) continue;
    char buf[65536];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return ReadStatus::Eof;
    pending->append(buf, size_t(n));
    return ReadStatus::Ok;
  }
}
}  // namespace

ReadStatus read_line(int fd, std::chrono::steady_clock::time_point deadline, size_t max_bytes, std::string* pending,
                     std::string* line) {
  for (;;) {
    size_t nl = pending->find('\n');
    if (nl != std::string::npos) {
      if (nl > max_bytes) return ReadStatus::TooLong;
      *line = pending->substr(0, nl);
      pending->erase(0, nl + 1);
      return ReadStatus::Ok;
    }
    if (pending->size() > max_bytes) return ReadStatus::TooLong;
    ReadStatus s = fill(fd, deadline, pending);
    if (s != ReadStatus::Ok) return s;
  }
}

ReadStatus read_exact(int fd, std::chrono::steady_clock::time_point deadline, std::string* pending, void* out,
                      size_t size) {
  char* dst = static_cast<char*>(out);
  size_t done = 0;
  while (done < size) {
    if (pending->empty()) {
      ReadStatus s = fill(fd, deadline, pending);
      if (s != ReadStatus::Ok) return s;
    }
    size_t take = std::min(size - done, pending->size());
    std::memcpy(dst + done, pending->data(), take);
    pending->erase(0, take);
    done += take;
  }
  return ReadStatus::Ok;
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  return "stopped";
}

}  // namespace te::autotune::detail
