#include "io/gnuplot.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <vector>

#include "core/error.h"
#include "core/signals_held.h"
#include "core/whole_file.h"
#include "io/output_path.h"

namespace trainplan::io {
namespace {

// A gnuplot string literal. Single-quoted (no escapes, and gnuplot runs no
// `command` substitution in it) unless `s` holds a line break, which only a
// double-quoted string can carry (as \n). In a double-quoted string gnuplot
// runs a backquoted `command` through the shell: a backquote in a label (a
// network, GPU or file name) is written as the octal escape \140, which
// prints a backquote and runs nothing.
std::string quoted(const std::string& s) {
  if (s.find('\n') == std::string::npos) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
  }
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '`') out += "\\140";
    else if (c == '"' || c == '\\') out += std::string("\\") + c;
    else out += c;
  }
  return out + "\"";
}

// A log axis's range when the panel sets none: the data's positive extent
// widened by 15% each way. gnuplot's own autoscale widens a log axis to whole
// decades (0.1 to 100 for values 1 to 4), which hides the differences.
std::optional<std::pair<double, double>> log_extent(const PlotPanel& p, bool y) {
  double lo = INFINITY, hi = 0;
  for (const auto& s : p.series)
    for (const auto& [px, py] : s.points) {
      const double v = y ? py : px;
      if (std::isfinite(v) && v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
    }
  if (!(hi > 0)) return std::nullopt;
  return std::make_pair(lo / 1.15, hi * 1.15);
}

// Removes the temporary folder on every path out.
struct TempDir {
  std::filesystem::path path;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// Ticks for a log axis whose range spans less than about three decades,
// where gnuplot's decade ticks would leave one label or none: 1, 2 and 5
// times powers of ten inside [lo, hi]; where fewer than two of those fall in
// it, every mantissa 1-9; where still fewer than two, four ticks evenly
// spaced in log space, labelled to three digits. Empty: keep gnuplot's.
std::string log_tics(const char* axis, std::pair<double, double> range) {
  const double lo = range.first, hi = range.second;  // not a structured binding: the lambda below captures them
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo > 0) || !(hi > lo) || hi / lo > 2000) return "";
  auto ticks = [&](std::initializer_list<double> mantissas) {
    std::vector<double> out;
    for (int d = static_cast<int>(std::floor(std::log10(lo))); d <= static_cast<int>(std::ceil(std::log10(hi))); ++d)
      for (double m : mantissas) {
        const double v = m * std::pow(10.0, d);
        if (v >= lo && v <= hi) out.push_back(v);
      }
    return out;
  };
  std::vector<double> at = ticks({1.0, 2.0, 5.0});
  if (at.size() < 2) at = ticks({1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0});
  if (at.size() < 2) {
    at.clear();
    for (int i = 0; i < 4; ++i) at.push_back(std::stod(fmt::format("{:.3g}", lo * std::pow(hi / lo, (i + 0.5) / 4))));
  }
  std::string list;
  for (double v : at) list += fmt::format("{}\"{:g}\" {:.10g}", list.empty() ? "" : ", ", v, v);
  return fmt::format("set {}tics ({})\n", axis, list);
}

// A folder of its own for the chart's data files and script, under the
// system's temporary folder ($TMPDIR), made by mkdtemp: a name no one else
// can have made first, readable by this user alone; under /tmp where $TMPDIR
// does not exist or cannot be written. An ExternalError where neither serves.
std::filesystem::path temporary_folder() {
  std::error_code ec;
  auto base = std::filesystem::temp_directory_path(ec);
  std::string why = ec ? ec.message() : "";
  if (!ec) {
    std::string pattern = (base / "trainplan_plot_XXXXXX").string();
    if (::mkdtemp(pattern.data())) return pattern;
    why = std::strerror(errno);
  }
  // A TMPDIR that does not exist or cannot be written (one a job scheduler set
  // and removed) is passed over for /tmp, as other programs do.
  if (base != "/tmp") {
    std::string pattern = "/tmp/trainplan_plot_XXXXXX";
    if (::mkdtemp(pattern.data())) return pattern;
  }
  throw ExternalError(fmt::format("cannot make a temporary folder for the chart under {} (TMPDIR) or /tmp: {}",
                                  ec ? std::string("$TMPDIR") : base.string(), why));
}

// `fd` moved above the standard streams (0-2), close-on-exec: with one of
// them closed, a file opened here would take its number, and the child's
// dup2 onto that stream would overwrite it.
int above_standard_streams(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return high;
}

// Runs gnuplot on `script` with its output and messages going to `log`;
// returns its exit status (0 on success). gnuplot starts without a shell, so
// no name in the paths means anything to one. SIGPIPE is held back while the
// script is written: a gnuplot that exits early (a bad script, or none
// installed) makes the write fail, where the signal would kill this process
// before it printed anything. gnuplot runs with `child_mask` (the caller's
// mask before it held the termination signals); a termination signal held
// while it runs ends it (SIGTERM), and -1 is returned.
int run_gnuplot(const std::string& script, const std::string& log, const sigset_t& child_mask) {
  int out = above_standard_streams(::open(log.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (out < 0) throw ExternalError("cannot write gnuplot's log " + log + ": " + std::strerror(errno));
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    ::close(out);
    throw ExternalError(std::string("cannot start gnuplot: ") + std::strerror(errno));
  }
  fds[0] = above_standard_streams(fds[0]), fds[1] = above_standard_streams(fds[1]);
  if (fds[0] < 0 || fds[1] < 0) {
    for (int fd : {out, fds[0], fds[1]})
      if (fd >= 0) ::close(fd);
    throw ExternalError(std::string("cannot start gnuplot: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out, 1);
  posix_spawn_file_actions_adddup2(&actions, out, 2);
  char name[] = "gnuplot";
  char* argv[] = {name, nullptr};
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setsigmask(&attributes, &child_mask);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "gnuplot", &actions, &attributes, argv, environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[0]);
  ::close(out);
  if (spawned != 0) {
    ::close(fds[1]);
    throw ExternalError(std::string("cannot start gnuplot (install gnuplot-nox, or leave --plot out): ") +
                        std::strerror(spawned));
  }
  sigset_t pipe_only, before, pending;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &before);
  // A SIGPIPE already pending is the caller's, and stays so.
  sigpending(&pending);
  const bool pending_before = sigismember(&pending, SIGPIPE);
  bool sent = true;
  for (size_t done = 0; done < script.size();) {
    const ssize_t n = ::write(fds[1], script.data() + done, script.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      sent = false;
      break;
    }
    done += static_cast<size_t>(n);
  }
  ::close(fds[1]);
  // A SIGPIPE raised by the write above is taken here, not delivered.
  if (!sent && !pending_before) {
    const timespec now{0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &now) == SIGPIPE) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return -1;
    // A Ctrl-C (or SIGTERM) sent to this process alone, held here: gnuplot is
    // ended so that the caller can clean up and take the signal.
    if (termination_signal_held()) {
      ::kill(pid, SIGTERM);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return -1;
    }
    const timespec tick{0, 10'000'000};
    nanosleep(&tick, nullptr);
  }
  if (!sent && status == 0) return -1;
  return status;
}

}  // namespace

const std::vector<std::string>& plot_palette() {
  static const std::vector<std::string> p = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                             "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  return p;
}

bool gnuplot_available() { return std::system("gnuplot --version >/dev/null 2>&1") == 0; }

void require_gnuplot() {
  if (!gnuplot_available())
    throw InputError("", 0, "--plot", "gnuplot cannot be started: install gnuplot-nox, or leave --plot out");
}

void check_plot_path(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext != ".png" && ext != ".svg") throw InputError("", 0, "--plot", "'" + path + "' must end in .png or .svg");
  check_output_path(path, "--plot");
}

void check_plot_path(const std::string& path, const std::vector<std::pair<std::string, std::string>>& inputs) {
  check_plot_path(path);
  check_output_path(path, "--plot", inputs);
}

void render_plot(const std::string& path, const std::vector<PlotPanel>& panels, int width, int height, int columns) {
  check_plot_path(path);
  const int n = static_cast<int>(std::max<size_t>(1, panels.size()));
  const int cols = columns > 0 ? std::min(columns, n) : n;
  const int rows = (n + cols - 1) / cols;
  // noenhanced: titles hold names such as val_loss and exponents such as
  // (bytes / 64 KiB)^0.65, which gnuplot's markup would set as sub- and superscripts.
  const std::string term = std::filesystem::path(path).extension() == ".png"
                               ? fmt::format("pngcairo noenhanced size {},{}", width * cols, height * rows)
                               : fmt::format("svg noenhanced size {},{}", width * cols, height * rows);
  bool any = false;
  for (const auto& p : panels)
    for (const auto& s : p.series)
      for (const auto& [x, y] : s.points) any = any || (std::isfinite(x) && std::isfinite(y));
  if (!any) throw InputError("", 0, "--plot", "nothing to draw into '" + path + "'");

  // Held until the folder is gone (`dir` is destroyed first): a Ctrl-C while
  // gnuplot draws would leave it behind.
  const TerminationSignalsHeld held;
  TempDir dir{temporary_folder()};
  // gnuplot draws into the temporary folder and the chart is copied into
  // place afterwards: a destination it cannot open would otherwise send the
  // image to its standard output, and the failure would read as gnuplot's.
  const auto drawn = dir.path / std::filesystem::path(path).filename();
  std::string script = fmt::format("set terminal {}\nset output {}\n", term, quoted(drawn.string()));
  if (panels.size() > 1) script += fmt::format("set multiplot layout {},{} rowsfirst\n", rows, cols);
  int file = 0;
  for (const auto& p : panels) {
    if (p.blank) {
      if (panels.size() > 1) script += "set multiplot next\n";
      continue;
    }
    script += "reset\nset grid\nset offsets 0, 0, graph 0.05, graph 0.05\n";  // room above and below the data
    // Draw the visible part of a segment whose two ends both lie outside the
    // frame: a reference line from corner to corner (y = x on log axes) has
    // its ends a rounding error outside, and gnuplot drops such segments.
    script += "set clip two\n";
    script += fmt::format("set title {}\nset xlabel {}\nset ylabel {}\nset key {}\n", quoted(p.title), quoted(p.xlabel),
                          quoted(p.ylabel), p.key);
    // On log axes, %g labels (1e-05, 0.001, 10) instead of fixed decimals.
    script += p.logx ? "set logscale x\nset format x \"%g\"\n" : "unset logscale x\n";
    script += p.logy ? "set logscale y\nset format y \"%g\"\n" : "unset logscale y\n";
    if (p.xtics > 0) script += fmt::format("set xtics {}\n", p.xtics);
    const auto xrange = p.xrange ? p.xrange : p.logx ? log_extent(p, false) : std::nullopt;
    const auto yrange = p.yrange ? p.yrange : p.logy ? log_extent(p, true) : std::nullopt;
    // A range with an end that is not a finite number (a target of 1e308
    // padded past the largest double) is left to gnuplot's autoscale.
    auto finite = [](const std::optional<std::pair<double, double>>& r) {
      return r && std::isfinite(r->first) && std::isfinite(r->second) && r->first < r->second;
    };
    if (finite(xrange)) script += fmt::format("set xrange [{:.10g}:{:.10g}]\n", xrange->first, xrange->second);
    if (finite(yrange)) script += fmt::format("set yrange [{:.10g}:{:.10g}]\n", yrange->first, yrange->second);
    if (p.logx && xrange) script += log_tics("x", *xrange);
    if (p.logy && yrange) script += log_tics("y", *yrange);
    std::string plot;
    for (const auto& s : p.series) {
      if (s.points.empty()) continue;
      const std::string colour = s.color.empty() ? "" : " lc rgb " + quoted(s.color);
      const bool drawable = std::any_of(s.points.begin(), s.points.end(), [](const auto& xy) {
        return std::isfinite(xy.first) && std::isfinite(xy.second);
      });
      if (!drawable) {  // nothing to draw, but the legend still says it is there
        if (!s.title.empty())
          plot += fmt::format("{}keyentry with {}{} title {}", plot.empty() ? "plot " : ", ", s.style, colour,
                              quoted(s.title));
        continue;
      }
      auto data = dir.path / fmt::format("s{}.dat", file++);
      std::ofstream out(data);
      for (const auto& [x, y] : s.points)  // a blank line breaks the line: a gap
        out << (std::isfinite(x) && std::isfinite(y) ? fmt::format("{:.10g} {:.10g}\n", x, y) : std::string("\n"));
      plot += fmt::format("{}{} using 1:2 with {}{}{}", plot.empty() ? "plot " : ", ", quoted(data.string()), s.style,
                          colour, s.title.empty() ? " notitle" : " title " + quoted(s.title));
    }
    if (!plot.empty()) script += plot + "\n";
  }
  if (panels.size() > 1) script += "unset multiplot\n";
  // gnuplot's messages go to a log, not to our stdout (which may carry JSON);
  // they are shown only when it fails.
  const auto log = dir.path / "gnuplot.log";
  const int rc = run_gnuplot(script, log.string(), held.mask_before());
  if (rc != 0) {
    std::ifstream in(log);
    std::string msg((std::istreambuf_iterator<char>(in)), {});
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    throw ExternalError("gnuplot failed while drawing " + path + (msg.empty() ? "" : ": " + msg));
  }
  // Written whole (write_whole_file: beside the destination, then renamed
  // over it), so that a viewer reopening the chart (watch --plot redraws it
  // after every epoch) never reads half an image; a link is written through
  // to the file it names, a device or a pipe into.
  std::ifstream in(drawn, std::ios::binary);
  if (!in) throw ExternalError("gnuplot drew no file for " + path);
  const std::string image((std::istreambuf_iterator<char>(in)), {});
  try {
    write_whole_file(path, image);
  } catch (const InputError& e) {
    throw InputError("", 0, "--plot", "cannot write '" + path + "': " + e.message());
  }
}

}  // namespace trainplan::io
