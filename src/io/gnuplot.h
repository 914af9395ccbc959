// Charts rendered by gnuplot (gnuplot-nox): every series goes to a temporary
// data file, and one script draws the panels side by side into a .png or .svg.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trainplan::io {

struct PlotSeries {
  std::string title;                              // legend entry; empty: none
  std::vector<std::pair<double, double>> points;  // (x, y) in drawing order; a NaN y leaves a gap
  std::string style = "lines";                    // gnuplot `with`: lines, points, steps, linespoints
  std::string color;                              // "#rrggbb"; empty: gnuplot's next colour
};

struct PlotPanel {
  std::string title, xlabel, ylabel;
  bool logx = false, logy = false;
  std::string key = "bottom right";  // gnuplot `set key` position
  std::optional<std::pair<double, double>> xrange, yrange;
  double xtics = 0;  // > 0: a tick every xtics (integers on a workers axis)
  std::vector<PlotSeries> series;
  bool blank = false;  // an empty place in the rows of panels: nothing drawn there
};

// Renders `panels` into `path`, `width` x `height` pixels per panel, in rows
// of `columns` panels (0: all in one row), filled left to right.
// Throws InputError (field "--plot") unless `path` ends in .png or .svg, when
// no series has a point, or when `path` cannot be written; ExternalError
// when gnuplot cannot run or fails.
void render_plot(const std::string& path, const std::vector<PlotPanel>& panels, int width = 900, int height = 600,
                 int columns = 0);

// Throws InputError (field "--plot") unless `path` ends in .png or .svg and
// its folder exists and is writable; call before long work so that a bad
// name fails at once.
void check_plot_path(const std::string& path);
// The same, and refuses `path` when it is one of the verb's `inputs` (as
// check_output_path does).
void check_plot_path(const std::string& path, const std::vector<std::pair<std::string, std::string>>& inputs);

// Whether `gnuplot` can be started (for tests and friendly errors).
bool gnuplot_available();
// Throws InputError (field "--plot") unless gnuplot can be started: for a
// verb whose chart is the point of its work, before that work.
void require_gnuplot();

// Eight distinguishable colours, for series that belong together.
const std::vector<std::string>& plot_palette();

}  // namespace trainplan::io
