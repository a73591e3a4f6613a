#include "island/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace htp {

namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  bool open() { return ::pipe2(fd, O_CLOEXEC) == 0; }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
  ~Pipe() {
    close_end(0);
    close_end(1);
  }
};

/// Blocks SIGPIPE on this thread while alive (a child that closes its stdin early must not kill the host),
/// and discards one that became pending.
class NoSigpipe {
public:
  NoSigpipe() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    blocked_ = pthread_sigmask(SIG_BLOCK, &set_, &old_) == 0;
  }
  ~NoSigpipe() {
    if (!blocked_) return;
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      timespec zero{0, 0};
      sigtimedwait(&set_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

private:
  sigset_t set_{}, old_{};
  bool was_pending_ = false, blocked_ = false;
};

}  // namespace

ProcessResult run_process(const std::vector<std::string> &argv, const std::string &input,
                          std::chrono::milliseconds limit) {
  ProcessResult r;
  const auto start = std::chrono::steady_clock::now();
  if (argv.empty()) {
    r.error = "empty command";
    return r;
  }
  Pipe in, out, err, exec_error;
  if (!in.open() || !out.open() || !err.open() || !exec_error.open()) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  std::vector<char *> args;
  for (const auto &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) {
    r.error = std::string("fork: ") + std::strerror(errno);
    return r;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(in.fd[0], 0);
    ::dup2(out.fd[1], 1);
    ::dup2(err.fd[1], 2);
    ::execvp(args[0], args.data());
    const int e = errno;  // tell the parent why exec failed, through the close-on-exec pipe
    (void)!::write(exec_error.fd[1], &e, sizeof e);
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  in.close_end(0);
  out.close_end(1);
  err.close_end(1);
  exec_error.close_end(1);
  int exec_errno = 0;
  if (::read(exec_error.fd[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
    ::waitpid(pid, nullptr, 0);
    r.error = std::strerror(exec_errno);
    return r;
  }
  r.started = true;
  NoSigpipe no_sigpipe;
  ::fcntl(in.fd[1], F_SETFL, O_NONBLOCK);
  size_t written = 0;
  if (input.empty()) in.close_end(1);
  const auto deadline = start + limit;
  char buf[65536];
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    pollfd fds[3];
    int n = 0;
    int io = -1, oo = -1, eo = -1;
    if (in.fd[1] >= 0) io = n, fds[n++] = {in.fd[1], POLLOUT, 0};
    if (out.fd[0] >= 0) oo = n, fds[n++] = {out.fd[0], POLLIN, 0};
    if (err.fd[0] >= 0) eo = n, fds[n++] = {err.fd[0], POLLIN, 0};
    if (::poll(fds, nfds_t(n), int(std::min<int64_t>(left.count(), 1000))) < 0 && errno != EINTR) break;
    if (io >= 0 && (fds[io].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t k = ::write(in.fd[1], input.data() + written, input.size() - written);
      if (k > 0) written += size_t(k);
      if (k < 0 && errno != EAGAIN && errno != EINTR) written = input.size();  // the child closed its stdin
      if (written == input.size()) in.close_end(1);
    }
    auto drain = [&](int idx, Pipe &p, std::string &to) {
      if (idx < 0 || !(fds[idx].revents & (POLLIN | POLLHUP | POLLERR))) return;
      ssize_t k = ::read(p.fd[0], buf, sizeof buf);
      if (k > 0) to.append(buf, size_t(k));
      else if (k == 0 || (errno != EAGAIN && errno != EINTR)) p.close_end(0);
    };
    drain(oo, out, r.out);
    drain(eo, err, r.err);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.seconds = std::chrono::steady_clock::now() - start;
  return r;
}

std::string tail_lines(const std::string &text, size_t lines) {
  size_t end = text.size();
  while (end > 0 && text[end - 1] == '\n') --end;
  size_t pos = end;
  for (size_t seen = 0; pos > 0; --pos)
    if (text[pos - 1] == '\n' && ++seen == lines) break;
  return text.substr(pos, end - pos);
}

}  // namespace htp
