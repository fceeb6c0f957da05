// LocalMeasurer: forked worker processes. The tuning process only forks, writes a config's
// index and reads a result line with a deadline; the workers compile and run.
#include <fmt/format.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>

#include "autotune/float64_reference.h"
#include "autotune/wire.h"
#include "te/autotune/measure.h"
#include "te/build.h"
#include "te/error.h"
#include "te/module.h"

namespace te::autotune {

namespace {

constexpr size_t kMaxResultBytes = 1 << 20;

// A forked child: runs body, then leaves without running the parent's exit handlers
// (its copy of the parent's state is not its own to clean up).
[[noreturn]] void run_child(int fd, const std::function<void(int)>& body) {
  try {
    body(fd);
  } catch (...) {
  }
  ::close(fd);
  std::fflush(stderr);
  ::_exit(0);
}

// Forks a child that runs body on its end of a socket pair; returns the parent's end.
pid_t fork_child(int* parent_fd, const std::function<void(int)>& body) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw Error(fmt::format("tune: socketpair failed: {}", std::strerror(errno)));
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    throw Error(fmt::format("tune: fork failed: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(sv[0]);
    run_child(sv[1], body);
  }
  ::close(sv[1]);
  *parent_fd = sv[0];
  return pid;
}

// Waits up to grace_s for the child to exit, then kills it; returns its wait status.
int reap(pid_t pid, double grace_s) {
  int status = 0;
  auto deadline = detail::deadline_after(grace_s);
  for (;;) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return 0;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

LocalMeasurer::LocalMeasurer(Task task, MeasureOptions options) : task_(std::move(task)), options_(options) {
  if (!task_.build) throw Error(fmt::format("tune '{}': the task has no build callback", task_.key));
  if (!task_.make_args) throw Error(fmt::format("tune '{}': the task has no make_args callback", task_.key));
  // Every config would fail alike: say it once, before any trial.
  if (!task_.target.is_host()) check_runs_on_host(task_.target, fmt::format("tune '{}'", task_.key));
  if (options_.number < 1 || options_.repeat < 1 || options_.min_repeat_ms < 0 || !(options_.timeout_s > 0))
    throw Error("MeasureOptions: need number >= 1, repeat >= 1, min_repeat_ms >= 0 and timeout_s > 0");
}

LocalMeasurer::~LocalMeasurer() { stop_worker(false); }

void LocalMeasurer::prepare() {
  if (prepared_) return;
  args_ = task_.make_args();
  std::vector<size_t> outs = output_positions(task_, args_);
  if (task_.reference) {
    // Widened here (no kernel runs in this process), run in the child below.
    std::optional<LoweredFunc> wide;
    if (options_.reference_float64) {
      try {
        wide = widen_floats(task_.reference());
      } catch (const std::exception&) {
        // the child reports the reference's error
      }
    }
    reference_ = run_reference(wide, wide ? widened_arguments(args_) : args_, outs);
    // The definition as written too: its own float32 rounding (grid_sample's source
    // coordinates, 200 pixels across, are 1e-5 pixel off in float32, and so is every
    // config's output) is no config's fault, so matching it also counts as right.
    if (wide) reference_as_written_ = run_reference(std::nullopt, args_, outs);
  }
  prepared_ = true;
}

std::vector<NDArray> LocalMeasurer::run_reference(const std::optional<LoweredFunc>& wide,
                                                  std::vector<Argument> ref_args, const std::vector<size_t>& outs) {
  std::vector<NDArray> reference;
  for (size_t p : outs) reference.push_back(NDArray::empty(ref_args[p].array().shape(), ref_args[p].array().dtype()));
  // The reference runs in a child too: the default schedule may be as fragile as any.
  int fd = -1;
  pid_t pid = fork_child(&fd, [&](int out) {
    std::string head = "ok";
    try {
      LoweredFunc f = wide ? *wide : task_.reference();
      Function fn = build(f)(f.name);
      detail::poison_outputs(ref_args, outs);
      fn.call(ref_args);
    } catch (const std::exception& e) {
      head = std::string("error: ") + e.what();
    }
    for (char& c : head)
      if (c == '\n') c = ' ';
    head += '\n';
    if (!detail::send_all(out, head.data(), head.size())) return;
    if (head != "ok\n") return;
    for (size_t p : outs) detail::send_all(out, ref_args[p].array().data(), ref_args[p].array().nbytes());
  });
  auto deadline = detail::deadline_after(options_.reference_timeout_s);
  std::string pending, head;
  detail::ReadStatus s = detail::read_line(fd, deadline, kMaxResultBytes, &pending, &head);
  for (size_t k = 0; s == detail::ReadStatus::Ok && head == "ok" && k < outs.size(); ++k)
    s = detail::read_exact(fd, deadline, &pending, reference[k].data(), reference[k].nbytes());
  ::close(fd);
  int status = reap(pid, s == detail::ReadStatus::Ok ? 5.0 : 0.0);
  std::string why;
  if (s == detail::ReadStatus::Timeout)
    why = fmt::format("no result within {} s", options_.reference_timeout_s);
  else if (s != detail::ReadStatus::Ok)
    why = "its process " + detail::describe_exit(status);
  else if (head != "ok")
    why = head;
  if (!why.empty()) throw Error(fmt::format("tune '{}': the reference (default) schedule failed: {}", task_.key, why));
  return reference;
}

void LocalMeasurer::start_worker() {
  ++workers_started_;
  worker_ = fork_child(&fd_, [this](int fd) {
    std::string pending, line;
    for (;;) {
      // Requests are a config's index; a closed socket ends the worker.
      if (detail::read_line(fd, detail::deadline_after(86400), 64, &pending, &line) != detail::ReadStatus::Ok) return;
      uint64_t index = std::stoull(line);
      Config c = task_.space.at(index);
      MeasureResult r = run_trial(task_, c, args_, reference_, options_, reference_as_written_);
      std::string reply = detail::encode_result(r) + "\n";
      if (!detail::send_all(fd, reply.data(), reply.size())) return;
    }
  });
}

void LocalMeasurer::stop_worker(bool kill_now) {
  if (worker_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  if (kill_now) ::kill(worker_, SIGKILL);
  reap(worker_, kill_now ? 0.0 : 2.0);
  worker_ = -1;
}

MeasureResult LocalMeasurer::measure_one(const Config& c) {
  if (worker_ < 0) start_worker();
  std::string request = std::to_string(c.index()) + "\n";
  if (!detail::send_all(fd_, request.data(), request.size())) {
    // The worker died between trials (it should not): a fresh one takes the trial.
    stop_worker(true);
    start_worker();
    if (!detail::send_all(fd_, request.data(), request.size())) {
      stop_worker(true);
      MeasureResult r;
      r.error = "worker crashed: could not send it the config";
      return r;
    }
  }
  std::string pending, line;
  detail::ReadStatus s =
      detail::read_line(fd_, detail::deadline_after(options_.timeout_s), kMaxResultBytes, &pending, &line);
  if (s == detail::ReadStatus::Ok) return detail::decode_result(line);
  MeasureResult r;
  if (s == detail::ReadStatus::Timeout) {
    stop_worker(true);
    r.error = fmt::format("timeout: no result within {} s (worker killed)", options_.timeout_s);
    return r;
  }
  if (s == detail::ReadStatus::TooLong) {
    stop_worker(true);
    r.error = "the worker sent a result longer than 1 MiB";
    return r;
  }
  // The worker died during the trial.
  ::close(fd_);
  fd_ = -1;
  int status = reap(worker_, 5.0);
  worker_ = -1;
  r.error = "worker crashed: " + detail::describe_exit(status);
  return r;
}

std::vector<MeasureResult> LocalMeasurer::measure(const std::vector<Config>& configs) {
  prepare();
  std::vector<MeasureResult> out;
  for (const Config& c : configs) out.push_back(measure_one(c));
  return out;
}

}  // namespace te::autotune
