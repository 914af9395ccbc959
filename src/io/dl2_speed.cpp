#include "io/dl2_speed.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>
#include <variant>

#include "core/error.h"
#include "io/csv.h"

namespace trainplan::io {
namespace {

// One field of the tuple: a quoted string, a number (as text) or a list of numbers.
struct Field {
  enum Kind { kString, kNumber, kList } kind;
  std::string text;
  std::vector<std::string> items;
};

const char* kFieldNames[] = {"model", "mode", "total_batch_size", "num_ps", "num_workers",
                             "worker_speed", "ps_cpu", "worker_cpu"};

class LineParser {
 public:
  LineParser(const std::string& s, const std::string& file, long line) : s_(s), file_(file), line_(line) {}

  std::vector<Field> tuple() {
    std::vector<Field> out;
    skip();  // leading blanks, kept in the text so that columns count from the line's start
    expect('(');
    skip();
    if (peek() == ')') fail("", "empty tuple");
    for (;;) {
      out.push_back(field());
      skip();
      if (peek() == ',') {
        ++i_;
        skip();
        if (peek() == ')') break;  // a trailing comma
        continue;
      }
      break;
    }
    expect(')');
    skip();
    if (i_ != s_.size()) fail("", "unexpected text after the closing ')'");
    return out;
  }

  [[noreturn]] void fail(const std::string& field, const std::string& msg) const {
    throw InputError(file_, line_, field, msg);
  }

 private:
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void expect(char c) {
    skip();
    if (peek() != c) fail("", std::string("expected '") + c + "' at column " + std::to_string(i_ + 1));
    ++i_;
  }
  std::string atom() {
    size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != ')' && s_[i_] != ']' && !std::isspace(static_cast<unsigned char>(s_[i_])))
      ++i_;
    if (i_ == start) fail("", "expected a value at column " + std::to_string(i_ + 1));
    return s_.substr(start, i_ - start);
  }
  Field field() {
    skip();
    char c = peek();
    if (c == '\'' || c == '"') {
      size_t end = s_.find(c, i_ + 1);
      if (end == std::string::npos) fail("", "unterminated string");
      Field f{Field::kString, s_.substr(i_ + 1, end - i_ - 1), {}};
      i_ = end + 1;
      return f;
    }
    if (c == '[') {
      ++i_;
      Field f{Field::kList, "", {}};
      skip();
      if (peek() == ']') {
        ++i_;
        return f;
      }
      for (;;) {
        skip();
        f.items.push_back(atom());
        skip();
        if (peek() == ',') {
          ++i_;
          continue;
        }
        if (peek() == ']') {
          ++i_;
          return f;
        }
        fail("", "expected ',' or ']' in a list at column " + std::to_string(i_ + 1));
      }
    }
    return Field{Field::kNumber, atom(), {}};
  }

  const std::string& s_;
  const std::string& file_;
  long line_;
  size_t i_ = 0;
};

Dl2SpeedRow parse_row(const std::string& text, const std::string& file, long line) {
  LineParser p(text, file, line);
  std::vector<Field> f = p.tuple();
  if (f.size() != 8)
    p.fail("", "expected 8 fields (model, mode, total_batch_size, num_ps, num_workers, [speeds], [ps cpu], [worker cpu]), got " +
                   std::to_string(f.size()));
  auto str = [&](int k) {
    if (f[k].kind != Field::kString) p.fail(kFieldNames[k], "expected a quoted string");
    if (f[k].text.empty()) p.fail(kFieldNames[k], "is empty");
    return f[k].text;
  };
  auto count = [&](int k) {
    if (f[k].kind != Field::kNumber) p.fail(kFieldNames[k], "expected an integer");
    auto v = parse_finite(f[k].text);
    // Bounded before the conversion, which is undefined for a double an int cannot hold.
    if (!v || *v != std::floor(*v) || *v < 1 || *v > std::numeric_limits<int>::max())
      p.fail(kFieldNames[k], "expected an integer from 1 to " + std::to_string(std::numeric_limits<int>::max()) +
                                 ", got '" + f[k].text + "'");
    return static_cast<int>(*v);
  };
  auto list = [&](int k) {
    if (f[k].kind != Field::kList) p.fail(kFieldNames[k], "expected a list [..]");
    std::vector<double> out;
    for (const auto& item : f[k].items) {
      auto v = parse_finite(item);
      if (!v || *v < 0) p.fail(kFieldNames[k], "expected finite numbers >= 0, got '" + item + "'");
      out.push_back(*v);
    }
    return out;
  };
  Dl2SpeedRow r;
  r.line = line;
  r.model = str(0);
  r.mode = str(1);
  // Synchronous or not decides how the workers' speeds add up: a mode that says neither is no guess to make.
  if (r.mode.find("sync") == std::string::npos)
    p.fail("mode", "'" + r.mode + "' says neither sync nor async (DL2's modes: dist_sync, dist_async)");
  r.total_batch = count(2);
  r.num_ps = count(3);
  r.num_workers = count(4);
  r.worker_speed = list(5);
  r.ps_cpu = list(6);
  r.worker_cpu = list(7);
  if (static_cast<int>(r.worker_speed.size()) != r.num_workers)
    p.fail("worker_speed", "has " + std::to_string(r.worker_speed.size()) + " entries but num_workers is " +
                               std::to_string(r.num_workers));
  if (static_cast<int>(r.ps_cpu.size()) != r.num_ps)
    p.fail("ps_cpu", "has " + std::to_string(r.ps_cpu.size()) + " entries but num_ps is " + std::to_string(r.num_ps));
  if (static_cast<int>(r.worker_cpu.size()) != r.num_workers)
    p.fail("worker_cpu", "has " + std::to_string(r.worker_cpu.size()) + " entries but num_workers is " +
                             std::to_string(r.num_workers));
  // Finite entries can still add up past a double (1e308 twice): the job's speed must be a number.
  for (auto unit : {Dl2SpeedUnit::kSamplesPerWorker, Dl2SpeedUnit::kStepsPerWorker})
    if (!std::isfinite(r.job_speed(unit)))
      p.fail("worker_speed", "the workers' speeds add up past any number (entries near 1e308?)");
  return r;
}

}  // namespace

bool Dl2SpeedRow::stalled() const {
  for (double v : worker_speed)
    if (v <= 0) return true;
  return worker_speed.empty();
}

const char* to_string(Dl2SpeedUnit u) { return u == Dl2SpeedUnit::kSamplesPerWorker ? "samples" : "steps"; }

Dl2SpeedUnit parse_dl2_speed_unit(const std::string& s) {
  if (s == "samples") return Dl2SpeedUnit::kSamplesPerWorker;
  if (s == "steps") return Dl2SpeedUnit::kStepsPerWorker;
  throw InputError("", 0, "unit", "expected 'samples' or 'steps', got '" + s + "'");
}

double Dl2SpeedRow::job_speed(Dl2SpeedUnit unit) const {
  if (worker_speed.empty()) return 0;
  double sum = std::accumulate(worker_speed.begin(), worker_speed.end(), 0.0);
  double w = double(worker_speed.size());
  if (unit == Dl2SpeedUnit::kSamplesPerWorker) return sync() ? sum / total_batch : w * sum / total_batch;
  return sync() ? sum / w : sum;
}

Dl2SpeedTable parse_dl2_speed(const std::string& text, const std::string& name) {
  Dl2SpeedTable t;
  t.path = name;
  std::istringstream in(text);
  std::string line;
  long n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (n == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a byte-order mark, as an editor saves one
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    t.rows.push_back(parse_row(line, name, n));
  }
  if (t.rows.empty()) throw InputError(name, 0, "", "no speed rows (expected lines like ('resnet-50', 'dist_sync', 32, 1, 1, [15.8], [1.9], [0.5]))");
  return t;
}

Dl2SpeedTable read_dl2_speed(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, 0, "", "is a folder, not a speed file");
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "", "cannot read the file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_dl2_speed(ss.str(), path);
}

}  // namespace trainplan::io
