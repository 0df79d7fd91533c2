#include "cli/terminal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace day0::cli::terminal {
namespace {

constexpr char kPasteOn[] = "\x1b[?2004h";
constexpr char kPasteOff[] = "\x1b[?2004l";

struct termios g_saved;
volatile sig_atomic_t g_raw_fd = -1;  // the terminal in raw mode, or -1
std::atomic<int> g_interrupts{0};
volatile sig_atomic_t g_in_reply = 0;
std::atomic<int> g_reply_interrupts{0};
int g_wake[2] = {-1, -1};
int g_resize[2] = {-1, -1};  // SIGWINCH writes here

// Async-signal-safe: tcsetattr and write are.
void restore_now() {
  const int fd = g_raw_fd;
  if (fd < 0) return;
  (void)!write(fd, kPasteOff, sizeof kPasteOff - 1);
  tcsetattr(fd, TCSANOW, &g_saved);
  g_raw_fd = -1;
}

void on_interrupt(int) {
  const int saved_errno = errno;
  g_interrupts.fetch_add(1);
  if (g_in_reply && g_reply_interrupts.fetch_add(1) + 1 >= 3) {
    restore_now();
    static constexpr char kMessage[] = "\nday0-cli chat: interrupted\n";
    (void)!write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    _exit(130);
  }
  if (g_wake[1] >= 0) (void)!write(g_wake[1], "i", 1);
  errno = saved_errno;
}

void on_resize(int) {
  const int saved_errno = errno;
  if (g_resize[1] >= 0) (void)!write(g_resize[1], "w", 1);
  errno = saved_errno;
}

void on_fatal(int sig) {
  restore_now();
  signal(sig, SIG_DFL);
  raise(sig);
}

void drain(int fd) {
  char buf[64];
  while (fd >= 0 && read(fd, buf, sizeof buf) > 0) {
  }
}

void drain_wake() { drain(g_wake[0]); }

}  // namespace

bool enter_raw(int fd) {
  struct termios t;
  if (g_raw_fd < 0) {
    if (!isatty(fd) || tcgetattr(fd, &t) != 0) return false;
    g_saved = t;
  }
  // From the saved modes each time: after Ctrl+Z and fg the shell may have set its own.
  t = g_saved;
  t.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO | ISIG | IEXTEN);
  t.c_iflag &= ~static_cast<tcflag_t>(IXON | ICRNL | INLCR);
  t.c_oflag &= ~static_cast<tcflag_t>(OPOST);  // the line editor writes "\r\n" itself
  t.c_cc[VMIN] = 1;
  t.c_cc[VTIME] = 0;
  if (tcsetattr(fd, TCSANOW, &t) != 0) return false;
  g_raw_fd = fd;
  write_all(isatty(STDOUT_FILENO) ? STDOUT_FILENO : fd, kPasteOn);
  return true;
}

void enter_reply_mode() {
  const int fd = g_raw_fd;
  if (fd < 0) return;
  struct termios t = g_saved;
  t.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
  t.c_iflag &= ~static_cast<tcflag_t>(ICRNL | INLCR);  // bytes as typed, for the line editor
  t.c_cc[VMIN] = 1;
  t.c_cc[VTIME] = 0;
  tcsetattr(fd, TCSANOW, &t);
}

void leave_raw() { restore_now(); }

void install_signal_handlers() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  for (int* ends : {g_wake, g_resize}) {
    if (pipe(ends) != 0) continue;
    for (int k = 0; k < 2; ++k) {
      fcntl(ends[k], F_SETFL, fcntl(ends[k], F_GETFL) | O_NONBLOCK);
      fcntl(ends[k], F_SETFD, FD_CLOEXEC);
    }
  }
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_interrupt;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sa.sa_handler = on_resize;
  sigaction(SIGWINCH, &sa, nullptr);
  sa.sa_handler = on_fatal;
  sa.sa_flags = SA_RESETHAND;
  for (const int sig : {SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL})
    sigaction(sig, &sa, nullptr);
  std::atexit(restore_now);
}

int interrupt_count() { return g_interrupts.load(); }

void set_in_reply(bool in_reply) {
  g_reply_interrupts = 0;
  g_in_reply = in_reply ? 1 : 0;
}

ReadResult read_some(int fd, std::string* out, int timeout_ms) {
  while (true) {
    struct pollfd fds[3] = {{fd, POLLIN, 0}, {g_wake[0], POLLIN, 0}, {g_resize[0], POLLIN, 0}};
    const int n = poll(fds, 3, timeout_ms);  // a negative fd (no pipe) is skipped
    if (n < 0) {
      if (errno == EINTR) continue;
      return ReadResult::error;
    }
    if (n == 0) return ReadResult::timeout;
    if (g_wake[0] >= 0 && (fds[1].revents & POLLIN)) {
      drain_wake();
      return ReadResult::interrupted;
    }
    if (g_resize[0] >= 0 && (fds[2].revents & POLLIN)) {
      drain(g_resize[0]);
      return ReadResult::resized;
    }
    char buf[65536];
    const ssize_t got = read(fd, buf, sizeof buf);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return ReadResult::error;
    }
    if (got == 0) return ReadResult::eof;
    out->append(buf, static_cast<std::size_t>(got));
    return ReadResult::data;
  }
}

bool wait_interrupt(int timeout_ms) {
  if (g_wake[0] < 0) {
    usleep(static_cast<useconds_t>(timeout_ms) * 1000);
    return false;
  }
  struct pollfd p = {g_wake[0], POLLIN, 0};
  const int n = poll(&p, 1, timeout_ms);
  if (n > 0) {
    drain_wake();
    return true;
  }
  return false;
}

void clear_interrupts() { drain_wake(); }

int columns(int fd) {
  struct winsize ws;
  if (ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0) return 0;
  return ws.ws_col;
}

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace day0::cli::terminal
