#pragma once
// The terminal side of day0-cli chat: non-canonical input with bracketed paste while a prompt is
// open, restored on every way out (return, exit(), SIGTERM, SIGHUP, SIGQUIT, a crash), and
// SIGINT counted instead of killing the process so that Ctrl+C can stop a reply.
#include <string>

namespace day0::cli::terminal {

// Puts the terminal on `fd` in non-canonical mode without echo and without signal keys (Ctrl+C
// arrives as a byte), and turns bracketed paste on. False when fd is not a terminal.
bool enter_raw(int fd);
// While a reply is shown: Ctrl+C is a signal again and output is as usual, but what is typed or
// pasted meanwhile is neither echoed into the reply nor cut into lines: bracketed paste stays
// on, and the next prompt's line editor reads it as typed ahead (a paste still one message).
void enter_reply_mode();
// Restores the terminal as enter_raw() found it; does nothing when it is not in raw mode.
void leave_raw();

// From now on SIGINT increments interrupt_count() and wakes read_some() and wait_interrupt().
// The third SIGINT while a reply runs (set_in_reply(true)) ends the process at once (exit 130)
// with the terminal restored, in case a reply does not stop.
void install_signal_handlers();
int interrupt_count();
void set_in_reply(bool in_reply);

// resized: the terminal's size changed (SIGWINCH) while waiting; columns() tells the new width.
enum class ReadResult { data, eof, interrupted, timeout, error, resized };
// Waits up to timeout_ms (-1: no limit) for input on fd, a SIGINT or a SIGWINCH; appends what
// can be read at once to *out.
ReadResult read_some(int fd, std::string* out, int timeout_ms = -1);
// Waits up to timeout_ms for a SIGINT; true when one came.
bool wait_interrupt(int timeout_ms);
// Forgets SIGINTs not yet seen by read_some() or wait_interrupt() (one that stopped a reply
// must not also count at the next prompt).
void clear_interrupts();
// Writes all of `text` to fd (retrying short writes).
void write_all(int fd, const std::string& text);
// The width of the terminal on fd in columns (TIOCGWINSZ); 0 when it is not a terminal or does
// not say.
int columns(int fd);

}  // namespace day0::cli::terminal
