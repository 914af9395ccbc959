// Lines of a growing log file, or of a running command's stdout, as they
// come: the follower of `trainplan watch`. A file is read from its start and
// polled for more after its end (its end is not the job's end: only a `done`
// line or the caller says so); a command's stdout ends when the command
// closes it. Either one that yields no new byte for `stall_s` seconds is
// reported as stalled, once per quiet spell; a file's last line without its
// newline is taken as whole then, before the stall. A file truncated and
// rewritten (shorter, or past the old end between two reads: the last bytes
// read have changed) or replaced under its name is read again from its start. A command ends with its
// follower (SIGTERM to its process group), as its stdout has nowhere to go;
// if the follower's process is killed outright, only the shell gets SIGTERM
// (its other processes end at their next write to the closed pipe).
#pragma once
#include <atomic>
#include <functional>
#include <string>

namespace trainplan::profile {

struct LogFollowerOptions {
  // Seconds between reads of a file that has no new bytes. Default: 0.2.
  double poll_s = 0.2;
  // Seconds without a new byte after which next() returns kStalled. Default:
  // 300. <= 0: never stalled.
  double stall_s = 300;
  // When set and true, next() returns kInterrupted within a second (a Ctrl-C
  // flag, profile/interrupt.h). Default: none.
  const std::atomic<bool>* interrupted = nullptr;
  // When set, called each time next() has no whole line to give and is about
  // to wait for more bytes (a file: before each poll_s sleep; a command:
  // before each wait, at least once a second, also between the pieces of a
  // burst), so that work put off while lines came is done once they stop.
  // Default: none.
  std::function<void()> on_wait;
  // A file only: when set, asked each time next() has read the file to its
  // end (or found it missing) and is about to wait; true makes next() return
  // kCalledOff (after a last line without its newline, as a whole line), as
  // when whatever writes the file is known to have ended. Default: none.
  std::function<bool()> call_off;
};

class LogFollower {
 public:
  enum class Status {
    kLine,     // a complete line was read (without its newline)
    kStalled,  // no new byte for stall_s seconds; call next() again to wait on
    kEnded,    // the command's stdout closed (its last unterminated line came before as kLine)
    kRestarted,  // the file was rewritten or replaced: it is read again from its start
    kInterrupted,  // options.interrupted was set
    kCalledOff,    // options.call_off said the file will not grow
  };

  // Follows the file at `path`; one that does not exist yet is waited for (a
  // stall, as for a quiet file, after stall_s). Throws InputError(path, 0,
  // "--log", ...) when it exists and cannot be opened.
  static LogFollower file(const std::string& path, LogFollowerOptions o = {});
  // Runs `command` with /bin/sh -c in a process group of its own, stdin from
  // /dev/null, and follows its stdout (its stderr passes through). Throws
  // std::runtime_error when it cannot be started.
  static LogFollower command(const std::string& command, LogFollowerOptions o = {});

  LogFollower(LogFollower&& o) noexcept;
  LogFollower& operator=(LogFollower&&) = delete;
  ~LogFollower();  // terminate()

  // A command still running: SIGTERM to its whole process group (every
  // process of a pipeline or a list, not only the shell), SIGKILL to it after
  // 2 s if the shell has not ended by then, and the shell reaped.
  void terminate();

  // Waits for the next line, a stall, or the end.
  Status next(std::string& line);
  // A command: reads and drops its output until it exits (not until its
  // stdout closes, which a process it left behind may hold) and returns its
  // exit status; when interrupted, terminate()s it first (its status is then
  // 128 + the signal that ended it); a file: -1 at once.
  int wait_for_exit();
  long line_number() const { return line_no_; }  // of the last line returned
  bool waiting_for_file() const { return pid_ <= 0 && fd_ < 0; }  // a file not created yet
  // The command's exit status (128 + signal when killed) once kEnded; -1 before or for a file.
  int exit_code() const { return exit_code_; }
  double quiet_s() const;  // seconds since the last new byte

 private:
  LogFollower(int fd, int pid, LogFollowerOptions o);
  bool take_line(std::string& line);
  bool take_rest(std::string& line);  // what is left without a newline, as a whole line
  void reap();
  // A command: whether its shell has exited (reaped, its status kept, what it
  // wrote read, the rest of its group sent SIGTERM, eof_ set).
  bool job_ended();
  // A file: true, and the offset back at its start, when it was rewritten, or
  // (only `at_end`, once the old one is read out) replaced under its name.
  bool rewritten(bool at_end);
  Status restart();  // forgets the file's text read so far; kRestarted

  static constexpr double kKillGraceS = 2;  // SIGTERM, then SIGKILL after this

  // The last bytes read from a file, to tell a rewrite past the old end from growth.
  static constexpr size_t kTailBytes = 64;

 public:
  // The longest line kept: a longer one (a progress bar's \r updates written
  // into the log, a binary) is returned as kLongLineText and the rest of it,
  // up to its newline, dropped, so that memory and work stay bounded.
  static constexpr size_t kMostLineBytes = 1 << 20;
  static constexpr const char* kLongLineText = "(a line of more than 1 MiB without a newline: not read)";

 private:
  int fd_ = -1;
  int pid_ = -1;  // the command's, -1 for a file
  LogFollowerOptions o_;
  std::string path_;  // a file's, empty for a command
  std::string buf_;
  size_t scanned_ = 0;     // buf_'s bytes already searched for a newline
  bool skipping_ = false;  // dropping the rest of a line past kMostLineBytes
  std::string tail_;
  long line_no_ = 0;
  int exit_code_ = -1;
  bool eof_ = false;
  bool output_closed_ = false;  // a command closed its stdout and may still run
  bool stall_reported_ = false;
  bool pending_restart_ = false;  // the replaced file's last line was returned; kRestarted is next
  double last_byte_ = 0;  // steady clock, seconds
};

}  // namespace trainplan::profile
