#include "io/gnuplot.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/error.h"
#include "io/output_path.h"

namespace trainplan::io {
namespace {

// gnuplot single-quoted strings escape a quote by doubling it.
// A gnuplot string literal. Single-quoted (no escapes) unless `s` holds a
// line break, which only a double-quoted string can carry (as \n).
std::string quoted(const std::string& s) {
  if (s.find('\n') == std::string::npos) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
  }
  std::string out = "\"";
  for (char c : s) out += c == '\n' ? std::string("\\n") : c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
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

// Ticks at 1, 2 and 5 times powers of ten inside [lo, hi], for a log axis
// whose range spans less than about three decades, where gnuplot's decade
// ticks would leave one label or none. Empty: keep gnuplot's.
std::string log_tics(const char* axis, std::pair<double, double> range) {
  auto [lo, hi] = range;
  if (!(lo > 0) || !(hi > lo) || hi / lo > 2000) return "";
  std::string list;
  for (int d = static_cast<int>(std::floor(std::log10(lo))); d <= static_cast<int>(std::ceil(std::log10(hi))); ++d)
    for (double m : {1.0, 2.0, 5.0}) {
      double v = m * std::pow(10.0, d);
      if (v >= lo && v <= hi) list += fmt::format("{}\"{:g}\" {:g}", list.empty() ? "" : ", ", v, v);
    }
  return list.empty() ? "" : fmt::format("set {}tics ({})\n", axis, list);
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

  static std::atomic<int> seq{0};
  TempDir dir{std::filesystem::temp_directory_path() / fmt::format("trainplan_plot_{}_{}", ::getpid(), seq++)};
  std::filesystem::create_directories(dir.path);
  // gnuplot draws into the temporary folder and the chart is copied into
  // place afterwards: a destination it cannot open would otherwise send the
  // image to its standard output, and the failure would read as gnuplot's.
  const auto drawn = dir.path / std::filesystem::path(path).filename();
  std::string script = fmt::format("set terminal {}\nset output {}\n", term, quoted(drawn.string()));
  if (panels.size() > 1) script += fmt::format("set multiplot layout {},{} rowsfirst\n", rows, cols);
  int file = 0;
  for (const auto& p : panels) {
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
    if (xrange) script += fmt::format("set xrange [{}:{}]\n", xrange->first, xrange->second);
    if (yrange) script += fmt::format("set yrange [{}:{}]\n", yrange->first, yrange->second);
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
  FILE* gp = popen(("gnuplot >" + quoted(log.string()) + " 2>&1").c_str(), "w");
  if (!gp) throw ExternalError("cannot start gnuplot (install gnuplot-nox)");
  fputs(script.c_str(), gp);
  int rc = pclose(gp);
  if (rc != 0) {
    std::ifstream in(log);
    std::string msg((std::istreambuf_iterator<char>(in)), {});
    const bool missing = WIFEXITED(rc) && WEXITSTATUS(rc) == 127;  // the shell found no gnuplot
    throw ExternalError("gnuplot failed while drawing " + path +
                             (missing ? " (install gnuplot-nox)" : "") + (msg.empty() ? "" : ": " + msg));
  }
  // Copied beside the destination and renamed over it, so that a viewer
  // reopening the chart (watch --plot redraws it after every epoch) never
  // reads half an image. A destination that is a symbolic link has the file
  // it points to replaced, as writing through it would (a hard link is
  // parted from its other names). The partial copy is created afresh
  // (copy_options::none): it never writes through a link found at its name.
  std::error_code ec;
  std::filesystem::path dest(path);
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(dest, ec))) {
    dest = std::filesystem::weakly_canonical(dest, ec);
    if (ec) throw InputError("", 0, "--plot", "cannot write '" + path + "': " + ec.message());
  }
  ec.clear();  // a destination not there yet is no error
  const auto partial = dest.parent_path() / fmt::format(".{}.partial-{}-{}", dest.filename().string(), ::getpid(), seq++);
  std::filesystem::copy_file(drawn, partial, std::filesystem::copy_options::none, ec);
  if (!ec) std::filesystem::rename(partial, dest, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    throw InputError("", 0, "--plot", "cannot write '" + path + "': " + ec.message());
  }
}

}  // namespace trainplan::io
