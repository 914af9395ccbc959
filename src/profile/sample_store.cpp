#include "profile/sample_store.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <stdexcept>
#include <thread>

#include "core/error.h"
#include "core/nodes.h"
#include "core/signals_held.h"
#include "core/valid_utf8.h"
#include "io/csv.h"
#include "profile/launcher.h"

namespace trainplan::profile {
namespace {

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trials(
  batch INTEGER NOT NULL,
  workers INTEGER NOT NULL,
  epochs INTEGER NOT NULL,
  status TEXT NOT NULL CHECK(status IN ('ok','failed','timeout','bad-output')),
  reason TEXT NOT NULL DEFAULT '',
  stderr_tail TEXT NOT NULL DEFAULT '',
  epoch_time_s REAL,
  metric REAL,
  metric_name TEXT NOT NULL DEFAULT '',
  epochs_reported INTEGER NOT NULL DEFAULT 0,
  dataset_size INTEGER,
  wall_s REAL NOT NULL DEFAULT 0,
  started_at TEXT NOT NULL DEFAULT '',
  finished_at TEXT NOT NULL DEFAULT '',
  command TEXT NOT NULL DEFAULT '',
  epoch_metrics TEXT NOT NULL DEFAULT '',
  timing TEXT NOT NULL DEFAULT '',
  seq INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(batch, workers, epochs));
)sql";

const char* kColumns =
    "batch,workers,epochs,status,reason,stderr_tail,epoch_time_s,metric,metric_name,epochs_reported,"
    "dataset_size,wall_s,started_at,finished_at,command,epoch_metrics,timing";

// A prepared statement that finalizes itself.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr) != SQLITE_OK)
      throw std::runtime_error(fmt::format("sqlite: {}: {}", sqlite3_errmsg(db), sql));
  }
  ~Stmt() { sqlite3_finalize(s_); }
  sqlite3_stmt* get() { return s_; }
  void bind(int i, const std::string& v) { sqlite3_bind_text(s_, i, v.c_str(), int(v.size()), SQLITE_TRANSIENT); }
  void bind(int i, long v) { sqlite3_bind_int64(s_, i, v); }
  void bind(int i, double v) { sqlite3_bind_double(s_, i, v); }
  template <class T>
  void bind(int i, const std::optional<T>& v) {
    if (v) bind(i, *v);
    else sqlite3_bind_null(s_, i);
  }
  bool step() {
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw std::runtime_error(fmt::format("sqlite: {}", sqlite3_errmsg(db_)));
  }
  std::string text(int c) {
    auto p = sqlite3_column_text(s_, c);
    return p ? std::string(reinterpret_cast<const char*>(p), size_t(sqlite3_column_bytes(s_, c))) : "";
  }
  std::optional<double> real(int c) {
    return sqlite3_column_type(s_, c) == SQLITE_NULL ? std::nullopt : std::optional<double>(sqlite3_column_double(s_, c));
  }
  long integer(int c) { return long(sqlite3_column_int64(s_, c)); }
  int type(int c) { return sqlite3_column_type(s_, c); }

 private:
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
};

// The learning curve as a JSON array, null for an epoch without a metric.
std::string format_epoch_metrics(const std::vector<std::optional<double>>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& m : v) a.push_back(m ? nlohmann::json(*m) : nlohmann::json(nullptr));
  return a.dump();
}

// Empty when `text` is not the array format_epoch_metrics writes ('' in a
// store written before curves were kept reads as no curve).
std::optional<std::vector<std::optional<double>>> parse_epoch_metrics(const std::string& text) {
  std::vector<std::optional<double>> out;
  if (text.empty()) return out;
  auto a = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!a.is_array()) return std::nullopt;
  for (const auto& m : a) {
    if (!m.is_number() && !m.is_null()) return std::nullopt;
    out.push_back(m.is_number() ? std::optional<double>(m.get<double>()) : std::nullopt);
  }
  return out;
}

// The step timing, oversubscription and note of a trial as one JSON object.
std::string format_timing(const TrialRecord& r) {
  nlohmann::json j = nlohmann::json::object();
  if (r.timing) {
    const StepTiming& t = *r.timing;
    j = {{"step_time_s", t.step_time_s},   {"ci95_s", {t.ci_low_s, t.ci_high_s}}, {"steps_per_epoch", t.steps_per_epoch},
         {"epoch_overhead_s", t.epoch_overhead_s}, {"steps_timed", t.steps_timed}, {"outliers", t.outliers},
         {"repeats", t.repeats},          {"spread", t.spread},
         {"clock", t.clock},              {"wall_step_time_s", t.wall_step_time_s}};
    if (t.probe_s > 0) j["probe_s"] = t.probe_s;
  }
  if (r.oversubscribed) j["oversubscribed"] = true;
  if (!r.note.empty()) j["note"] = valid_utf8(r.note);
  if (r.metric_diverged) j["metric_diverged"] = true;
  return j.empty() ? "" : j.dump();
}

// What is wrong with `text` as a trial's timing: not empty ('' in a store
// written before step times were kept) and not a JSON object, or times and
// counts out of their range (a store edited by hand); "" when it is usable.
std::string parse_timing(const std::string& text, TrialRecord& r) {
  if (text.empty()) return "";
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return fmt::format("'{}' is not a JSON object", text.substr(0, 40));
  r.oversubscribed = j.value("oversubscribed", false);
  r.note = j.value("note", "");
  r.metric_diverged = j.value("metric_diverged", false);
  if (!j.contains("step_time_s")) return "";
  StepTiming t;
  t.step_time_s = j.value("step_time_s", 0.0);
  if (auto ci = j.find("ci95_s"); ci != j.end() && ci->is_array() && ci->size() == 2)
    t.ci_low_s = (*ci)[0].get<double>(), t.ci_high_s = (*ci)[1].get<double>();
  t.steps_per_epoch = j.value("steps_per_epoch", 0L);
  t.epoch_overhead_s = j.value("epoch_overhead_s", 0.0);
  t.steps_timed = j.value("steps_timed", 0L);
  t.outliers = j.value("outliers", 0L);
  t.repeats = j.value("repeats", std::vector<double>{});
  t.spread = j.value("spread", 0.0);
  t.clock = j.value("clock", std::string("wall"));
  t.wall_step_time_s = j.value("wall_step_time_s", t.clock == "wall" ? t.step_time_s : 0.0);
  t.probe_s = j.value("probe_s", 0.0);
  auto out_of_range = [](const char* name, double v, bool positive) {
    return !std::isfinite(v) || (positive ? v <= 0 : v < 0)
               ? fmt::format("its {} is {:g}, where it must be {}", name, v, positive ? "> 0" : ">= 0")
               : std::string();
  };
  for (const auto& problem :
       {out_of_range("step_time_s", t.step_time_s, true), out_of_range("steps_per_epoch", double(t.steps_per_epoch), false),
        out_of_range("epoch_overhead_s", t.epoch_overhead_s, false), out_of_range("spread", t.spread, false),
        out_of_range("wall_step_time_s", t.wall_step_time_s, false)})
    if (!problem.empty()) return problem;
  r.timing = t;
  return "";
}

// A trial row as the store holds it, checked as a sample file's row is: a
// store written by other software, or edited, must not pass a text for a
// number (SQLite keeps what a column's type cannot convert) or an
// impossible value on to the models.
TrialRecord read_record(Stmt& st, const std::string& path) {
  static constexpr const char* kNames[] = {"batch", "workers", "epochs", "status", "reason", "stderr_tail",
                                           "epoch_time_s", "metric", "metric_name", "epochs_reported",
                                           "dataset_size", "wall_s", "started_at", "finished_at", "command",
                                           "epoch_metrics", "timing"};
  const auto bad = [&](int c, const std::string& what) {
    return InputError(path, 0, kNames[c],
                      fmt::format("trial b={} r={} e={}: {} (the store was changed by something other than "
                                  "trainplan profile)",
                                  st.text(0), st.text(1), st.text(2), what));
  };
  const auto whole = [&](int c, long least) {
    if (st.type(c) != SQLITE_INTEGER) throw bad(c, fmt::format("'{}' is not a whole number", st.text(c)));
    const long v = st.integer(c);
    if (v < least || v > std::numeric_limits<int>::max())
      throw bad(c, fmt::format("{} is out of range (at least {})", v, least));
    return int(v);
  };
  const auto finite = [&](int c) -> std::optional<double> {
    if (st.type(c) == SQLITE_NULL) return std::nullopt;
    if (st.type(c) != SQLITE_INTEGER && st.type(c) != SQLITE_FLOAT)
      throw bad(c, fmt::format("'{}' is not a number", st.text(c)));
    if (!std::isfinite(*st.real(c))) throw bad(c, "not a finite number");
    return st.real(c);
  };
  const auto number = [&](int c, bool positive) {
    const auto v = finite(c);
    if (v && (positive ? *v <= 0 : *v < 0)) throw bad(c, fmt::format("{} must be {}", *v, positive ? "> 0" : ">= 0"));
    return v;
  };
  TrialRecord r;
  // Read as absent, with a note: what an older trainplan stored as it came
  // (a metric past +-1e12, a training-set size of 0), which it now refuses.
  std::vector<std::string> absent;
  r.key = {whole(0, 1), whole(1, 1), whole(2, 0)};
  if (r.key.batch > 1000000000) throw bad(0, fmt::format("{} is past the largest batch a sample holds (1e9)", r.key.batch));
  const auto status = parse_status(st.text(3));
  if (!status) throw bad(3, fmt::format("unknown status '{}'", st.text(3)));
  r.status = *status;
  // A store written before its text was kept valid, or edited by hand.
  r.reason = valid_utf8(st.text(4));
  r.stderr_tail = valid_utf8(st.text(5));
  r.epoch_time_s = number(6, true);
  if (r.epoch_time_s && (*r.epoch_time_s < kLeastEpochSeconds || *r.epoch_time_s > kMostEpochSeconds))
    throw bad(6, fmt::format("{:g} is outside [{:g}, {:g}] seconds, a sample file's range", *r.epoch_time_s,
                             kLeastEpochSeconds, kMostEpochSeconds));
  if (const auto m = finite(7); m && std::abs(*m) > kMostMetricMagnitude)
    absent.push_back(fmt::format("the metric {:g} (past +-{:g})", *m, kMostMetricMagnitude));
  else
    r.metric = m;
  r.metric_name = st.text(8);
  r.epochs_reported = whole(9, 0);
  // A training-set size a sample file can hold: a whole number, at most 2^53.
  if (const auto d = finite(10); d && *d <= 0)
    absent.push_back(fmt::format("the training-set size {:g}", *d));
  else if (d && (*d != std::floor(*d) || *d > 9007199254740992.0))
    throw bad(10, fmt::format("{:g} is not a whole number from 1 to 2^53", *d));
  else if (d)
    r.dataset_size = long(*d);
  r.wall_s = number(11, false).value_or(0);
  r.started_at = st.text(12);
  r.finished_at = st.text(13);
  r.command = valid_utf8(st.text(14));
  auto curve = parse_epoch_metrics(st.text(15));
  if (!curve) throw bad(15, fmt::format("'{}' is not a JSON array of numbers and nulls", st.text(15).substr(0, 40)));
  r.epoch_metrics = std::move(*curve);
  for (auto& m : r.epoch_metrics)
    if (m && std::abs(*m) > kMostMetricMagnitude) {
      absent.push_back(fmt::format("a curve's metric {:g}", *m));
      m.reset();
    }
  try {
    if (const std::string problem = parse_timing(st.text(16), r); !problem.empty()) throw bad(16, problem);
  } catch (const nlohmann::json::exception& e) {
    throw bad(16, std::string("a field of the wrong type (") + e.what() + ")");
  }
  if (!absent.empty())
    r.note += fmt::format("{}read as absent: {}", r.note.empty() ? "" : "; ", fmt::join(absent, ", "));
  return r;
}

}  // namespace

bool training_sets_differ(long a, long b) {
  return double(std::max(a, b)) >= 1.5 * double(std::min(a, b));
}

bool metric_is_lower_better(const std::string& name) {
  // The name's words: runs of letters, split also where a capital follows a
  // small letter (valLoss). A short stem must begin a word, where anywhere
  // would take answer_f1 for a word error rate; loss and perplexity, long
  // enough not to occur by chance, may sit inside one (trainloss).
  std::vector<std::string> words(1);
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    const bool starts_word = std::isupper(c) && i > 0 && std::islower(static_cast<unsigned char>(name[i - 1]));
    if (!std::isalpha(c) || starts_word) {
      if (!words.back().empty()) words.emplace_back();
      if (!std::isalpha(c)) continue;
    }
    words.back() += static_cast<char>(std::tolower(c));
  }
  // "err" also covers error and top1_err; "cer" character error rate; "ppl" perplexity; "nll" negative log-likelihood.
  for (const auto& w : words) {
    for (const char* stem : {"err", "wer", "cer", "ppl", "nll", "mse", "mae"})
      if (w.rfind(stem, 0) == 0) return true;
    for (const char* stem : {"loss", "perplexity"})
      if (w.find(stem) != std::string::npos) return true;
  }
  return false;
}

namespace {

constexpr const char* kNoTrialsTable =
    "not a trainplan sample store (no trials table; trainplan profile --store writes one)";

// Why SQLite could not read `db` as a store: not an SQLite file at all, or
// one damaged (or another program's).
std::string unreadable_store(sqlite3* db) {
  const int code = sqlite3_errcode(db) & 0xff;
  if (code == SQLITE_NOTADB)
    return "not a trainplan sample store (SQLite: file is not a database; trainplan profile --store writes one)";
  if (code == SQLITE_CORRUPT)
    return std::string("cannot read it as a sample store (SQLite: ") + sqlite3_errmsg(db) +
           "): the file is damaged; a copy from before the damage, or `sqlite3 FILE .recover | sqlite3 NEW.db`, may "
           "save its trials";
  return std::string("cannot read the sample store (SQLite: ") + sqlite3_errmsg(db) + ")";
}

// Columns added to the trials table after its first version (the learning
// curve, the step times), with how an older store gains them.
constexpr std::pair<const char*, const char*> kAddedColumns[] = {
    {"epoch_metrics", "ALTER TABLE trials ADD COLUMN epoch_metrics TEXT NOT NULL DEFAULT ''"},
    {"timing", "ALTER TABLE trials ADD COLUMN timing TEXT NOT NULL DEFAULT ''"},
};

// The added columns (name, how to add it) the store's trials table lacks.
std::vector<std::pair<const char*, const char*>> missing_columns(sqlite3* db) {
  std::set<std::string> have;
  for (Stmt info(db, "PRAGMA table_info(trials)"); info.step();) have.insert(info.text(1));
  std::vector<std::pair<const char*, const char*>> missing;
  for (const auto& column : kAddedColumns)
    if (!have.count(column.first)) missing.push_back(column);
  return missing;
}

// Why an SQLite file that already holds tables is not a store trainplan may
// write: tables of another program's, or a trials table without a store's
// key columns. Empty for a file with no tables, or a store. Asked before
// anything is written, so another program's database is never changed.
std::string foreign_tables_problem(sqlite3* db) {
  std::vector<std::string> others;
  bool trials = false, meta = false;
  for (Stmt q(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"); q.step();) {
    const std::string name = q.text(0);
    if (name == "trials") trials = true;
    else if (name == "meta") meta = true;
    else if (name.rfind("sqlite_", 0) != 0) others.push_back(name);
  }
  if (!others.empty())
    return fmt::format("not a trainplan sample store: an SQLite database with other tables ({}); give --store a new "
                       "file or a trainplan store",
                       fmt::join(others, ", "));
  auto columns = [&](const char* table) {
    std::set<std::string> have;
    for (Stmt info(db, fmt::format("PRAGMA table_info({})", table)); info.step();) have.insert(info.text(1));
    return have;
  };
  // A table named meta is a store's only with the store's two columns.
  if (meta && columns("meta") != std::set<std::string>{"key", "value"})
    return "not a trainplan sample store: its meta table is not a store's (key, value); give --store a new file or a "
           "trainplan store";
  if (!trials) return "";
  // Every column of the trials table's first version: the ones added since
  // (kAddedColumns) an older store gains when it is opened for writing.
  const auto have = columns("trials");
  for (const auto& column : io::split_csv_line(kColumns)) {
    if (have.count(column)) continue;
    if (std::any_of(std::begin(kAddedColumns), std::end(kAddedColumns),
                    [&](const auto& added) { return column == added.first; }))
      continue;
    return fmt::format("not a trainplan sample store: its trials table has no column '{}'; give --store a new file "
                       "or a trainplan store",
                       column);
  }
  return "";
}

// Whether the store has its trials table; throws where SQLite cannot read it.
bool has_trials_table(sqlite3* db) {
  Stmt q(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'trials'");
  return q.step();
}

// Why a store at `path` cannot be opened for reading and writing, in words a
// user can act on; empty when nothing on the file system stands in the way.
// A store that can only be read is then opened read-only where that is enough.
std::string why_not_openable(const std::string& path, bool create) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) return "it is a directory; give a file's path";
  fs::path dir = p.parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, ec)) return "no such directory: " + dir.string();
  const bool exists = fs::exists(p, ec);
  if (!exists && !create) return "";
  if (exists && access(path.c_str(), R_OK) != 0) {
    const int err = errno;
    return fmt::format("cannot read it ({})", std::strerror(err));
  }
  // SQLite writes its write-ahead log beside the store.
  if (access(dir.c_str(), W_OK) != 0) {
    const int err = errno;
    return fmt::format("cannot write in {} ({}), where SQLite keeps the store's log: give a path in a directory "
                       "you can write",
                       dir.string(), std::strerror(err));
  }
  if (exists && access(path.c_str(), W_OK) != 0) {
    const int err = errno;
    return fmt::format("cannot write it ({})", std::strerror(err));
  }
  return "";
}

// A store this user may read but not write: a teammate's, or one on a read-only mount.
bool readable_only(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  return access(path.c_str(), R_OK) == 0 && (access(path.c_str(), W_OK) != 0 || access(dir.c_str(), W_OK) != 0);
}

// An SQLite URI for `path` (absolute, with every character a URI treats
// specially percent-encoded) and `query`.
std::string sqlite_uri(const std::string& path, const std::string& query) {
  // "file://" and an empty authority: a path that begins with "//" is the
  // path, not an authority SQLite would read as a host.
  std::string out = "file://";
  for (unsigned char c : std::filesystem::absolute(path).string()) {
    if (std::isalnum(c) || std::strchr("/._-~", c)) out += char(c);
    else out += fmt::format("%{:02X}", c);
  }
  return query.empty() ? out : out + "?" + query;
}


// Makes a new store at `path` whole or not at all: the schema is written to a
// file beside it, which is then linked in under its name. A reader (samples
// export during a profile's start) never sees the empty file SQLite first
// makes, which it would take for no store. kNo where the file system links no
// files (the caller then creates the store in place); kElsewhere where another
// process made the store meanwhile (its store is kept). Throws ExternalError
// where there is no room.
enum class StoreMade { kHere, kElsewhere, kNo };
StoreMade create_store_whole(const std::string& path) {
  const TerminationSignalsHeld held;  // a Ctrl-C would leave the staged file behind
  // A name of its own (created exclusively; short, as SQLite's paths are), with the mode SQLite
  // gives a new database (0644 less the umask).
  std::mt19937 random(std::random_device{}());
  std::string staged;
  int made = -1;
  for (int attempt = 0; attempt < 20 && made < 0; ++attempt) {
    staged = fmt::format("{}.{:06x}", path, random() & 0xffffff);
    made = open(staged.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (made < 0 && errno != EEXIST) return StoreMade::kNo;
  }
  if (made < 0) return StoreMade::kNo;
  close(made);
  const auto remove_staged = [&] {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) unlink((staged + suffix).c_str());
  };
  sqlite3* db = nullptr;
  std::string failure;
  int code = SQLITE_OK;
  if (sqlite3_open_v2(sqlite_uri(staged, "").c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
                      nullptr) != SQLITE_OK) {
    failure = db ? sqlite3_errmsg(db) : "out of memory";
    code = db ? sqlite3_errcode(db) : SQLITE_NOMEM;
  } else {
    const std::string sql = std::string("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;") + kSchema;
    char* err = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      failure = err ? err : "unknown error";
      code = sqlite3_errcode(db);
    }
    sqlite3_free(err);
  }
  // Closing the last connection folds the log into the file and removes it.
  if (sqlite3_close(db) != SQLITE_OK && failure.empty()) failure = "cannot close the new store";
  if (!failure.empty()) {
    remove_staged();
    if (code == SQLITE_FULL || code == SQLITE_IOERR)
      throw ExternalError(fmt::format("{}: cannot be written ({}; is the disk full?)", path, failure));
    return StoreMade::kNo;
  }
  const int fd = open(staged.c_str(), O_RDONLY | O_CLOEXEC);
  const bool synced = fd >= 0 && fsync(fd) == 0;
  if (fd >= 0) close(fd);
  if (!synced) {
    remove_staged();
    return StoreMade::kNo;
  }
  // link, not rename: it never replaces a store another process made meanwhile. Over NFS a link
  // whose reply was lost is retried and says EEXIST though it was made: the staged file's second
  // name tells.
  StoreMade outcome = StoreMade::kNo;
  if (link(staged.c_str(), path.c_str()) == 0) {
    outcome = StoreMade::kHere;
  } else if (errno == EEXIST) {
    struct stat st {};
    outcome = stat(staged.c_str(), &st) == 0 && st.st_nlink == 2 ? StoreMade::kHere : StoreMade::kElsewhere;
  }
  remove_staged();
  return outcome;
}

}  // namespace

SampleStore::FileId SampleStore::file_id(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return {};
  return {true, static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino), st.st_uid};
}

void SampleStore::close_db() {
  sqlite3_close(db_);
  db_ = nullptr;
  if (!read_through_log_) return;
  read_through_log_ = false;
  // The owner's profile may have closed the store, removing its log and index, between the
  // check below and SQLite's open: SQLite then made new ones, owned by this user, which the
  // owner could not write, and which would fail their next profile.
  for (const auto& [suffix, before] : {std::pair{"-wal", wal_at_open_}, std::pair{"-shm", shm_at_open_}}) {
    const std::string p = path_ + suffix;
    const FileId now = file_id(p);
    if (!now.exists || now.owner != geteuid()) continue;
    if (!before.exists || before.dev != now.dev || before.ino != now.ino) unlink(p.c_str());
  }
}

void SampleStore::open_read_only() {
  read_only_ = true;
  const auto open = [&](const std::string& query) {
    std::string msg;
    if (sqlite3_open_v2(sqlite_uri(path_, query).c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) ==
        SQLITE_OK) {
      sqlite3_busy_timeout(db_, 5000);  // the owner's profile may be checkpointing its log
      try {
        // Another program's tables are said as such here too, not as an older store's.
        if (std::string foreign = foreign_tables_problem(db_); !foreign.empty()) msg = foreign;
        else if (has_trials_table(db_)) return std::string();
        else msg = kNoTrialsTable;
      } catch (const std::exception&) {
        msg = sqlite3_errmsg(db_);
      }
    } else {
      msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    }
    close_db();
    return msg;
  };
  // A store without a write-ahead log beside it holds every trial in its one file (the profile
  // that closed it folded the log in and removed it), read with immutable=1, which creates
  // nothing: mode=ro would leave an empty log and its index, owned by this user, where the
  // store's owner writes next. immutable=1 takes no lock either, which suits a read of
  // milliseconds by a short-lived command. A log beside it (a profile writing the store, or one
  // that was killed) holds the latest trials; SQLite reads it only through its index (-shm),
  // which a reader cannot create. A profile closing the store removes both, one after the
  // other: a log seen without its index is looked at again before it is refused.
  std::string why;
  for (int look = 0;; ++look) {
    wal_at_open_ = file_id(path_ + "-wal");
    shm_at_open_ = file_id(path_ + "-shm");
    if (!wal_at_open_.exists) {
      why = open("immutable=1");
      break;
    }
    if (shm_at_open_.exists) {
      read_through_log_ = true;
      why = open("mode=ro");
      break;
    }
    if (look == 3)
      throw InputError(path_, 0, "",
                       "cannot read the sample store here: its write-ahead log " + path_ +
                           "-wal, which may hold the latest trials, has no " + path_ +
                           "-shm beside it, and only a user who can write the store can make one; open it as such "
                           "a user, or copy the store with its -wal file to a directory you can write");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (why == kNoTrialsTable) throw InputError(path_, 0, "", why);
  if (!why.empty()) throw InputError(path_, 0, "", "cannot read the sample store (" + why + ")");
  if (const auto missing = missing_columns(db_); !missing.empty())
    throw InputError(path_, 0, "",
                     fmt::format("written by an older trainplan, without the column {}, and it can only be read "
                                 "here: open it once where it can be written (trainplan samples list --store {}) "
                                 "to bring it up to date",
                                 missing.front().first, shell_word(path_)));
  try {
    Stmt st(db_, "SELECT " + std::string(kColumns) + ",seq FROM trials LIMIT 0");
  } catch (const std::exception&) {
    throw InputError(path_, 0, "", unreadable_store(db_));
  }
}

SampleStore::SampleStore(const std::string& path, Open mode) : path_(path) {
  const bool create = mode == Open::kCreate;
  // SQLite names a database's journal within 512 bytes ("-journal" the longest
  // suffix): a longer path fails as "unable to open database file".
  constexpr size_t kMostPathBytes = 504;
  // As SQLite resolves it: through links, without "..".
  std::error_code abs_ec;
  if (const auto full = std::filesystem::weakly_canonical(std::filesystem::absolute(path, abs_ec), abs_ec).string();
      !abs_ec && full.size() > kMostPathBytes)
    throw InputError(path, 0, "",
                     fmt::format("the sample store's full path is {} bytes long, and SQLite opens {} at most: give a "
                                 "store in a folder with a shorter path",
                                 full.size(), kMostPathBytes));
  const bool existed = file_id(path).exists;
  const bool wal_existed = file_id(path + "-wal").exists, shm_existed = file_id(path + "-shm").exists;
  if (const std::string why = why_not_openable(path, create); !why.empty()) {
    if (create || !readable_only(path)) throw InputError(path, 0, "", "cannot open the sample store: " + why);
    try {
      open_read_only();
    } catch (...) {
      close_db();
      throw;
    }
    return;
  }
  const bool made_here = create && !existed && create_store_whole(path) == StoreMade::kHere;
  // As a URI: a path SQLite would otherwise read as one ("file:a.db") or as
  // its in-memory database (":memory:") names the file it says.
  if (sqlite3_open_v2(sqlite_uri(path, "").c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI | (create ? SQLITE_OPEN_CREATE : 0), nullptr) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw InputError(path, 0, "", create ? "cannot open the sample store: " + msg
                                         : "no sample store here (" + msg + "; trainplan profile --store writes one)");
  }
  sqlite3_busy_timeout(db_, 5000);
  // A disk with no room (or failing under a write: SQLite makes the -wal and
  // -shm of a WAL store even to read it) is not a damaged store: a store that
  // is only to be read is read as a user who cannot write it reads it
  // (reading needs no room: copying a store off a full disk is the rescue),
  // and one to be written says it cannot be (exit 1). True where it handled
  // the failure by opening read-only.
  const auto no_room = [&](const std::string& what) {
    const int code = sqlite3_errcode(db_);
    if (code != SQLITE_FULL && code != SQLITE_IOERR) return false;
    close_db();
    std::error_code ec;
    if (!create) {
      // The log and index this open began (an empty -wal, a -shm cut short)
      // would be read through, and fail the read: they go, as they came.
      if (!wal_existed && std::filesystem::file_size(path + "-wal", ec) == 0 && !ec) unlink((path + "-wal").c_str());
      if (!shm_existed) unlink((path + "-shm").c_str());
      open_read_only();
      return true;
    }
    // A store this open made, empty, is not left behind to be taken for one.
    if (made_here || (!existed && std::filesystem::file_size(path, ec) == 0 && !ec)) unlink(path.c_str());
    throw ExternalError(fmt::format("{}: cannot be written ({}; is the disk full?)", path, what));
  };
  {
    std::string foreign;
    try {
      foreign = foreign_tables_problem(db_);
    } catch (const std::exception& e) {
      if (no_room(e.what())) return;
      foreign = unreadable_store(db_);
    }
    if (!foreign.empty()) {
      sqlite3_close(db_);
      db_ = nullptr;
      throw InputError(path, 0, "", foreign);
    }
  }
  if (!create) {
    // Before anything writes: an empty file would otherwise become a store.
    bool has_trials = false;
    std::string unreadable;
    try {
      has_trials = has_trials_table(db_);
    } catch (const std::exception& e) {
      if (no_room(e.what())) return;
      unreadable = unreadable_store(db_);
    }
    if (!has_trials) {
      sqlite3_close(db_);
      db_ = nullptr;
      if (!unreadable.empty()) throw InputError(path, 0, "", unreadable);
      throw InputError(path, 0, "", kNoTrialsTable);
    }
  }
  try {
    // WAL: a crash mid-write leaves the last committed trial intact;
    // synchronous=FULL: a commit survives power loss, at one fsync per trial.
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=FULL");
    exec(kSchema);
    // Stores written before the learning curve or the step times were kept
    // lack their columns.
    for (const auto& [name, ddl] : missing_columns(db_)) exec(ddl);
    Stmt st(db_, "SELECT " + std::string(kColumns) + ",seq FROM trials LIMIT 0");
  } catch (const std::exception& e) {
    if (no_room(e.what())) return;
    const std::string why = unreadable_store(db_);
    sqlite3_close(db_);
    db_ = nullptr;
    throw InputError(path, 0, "", why);
  }
}

SampleStore::~SampleStore() {
  close_db();
  if (lock_fd_ >= 0) close(lock_fd_);
}

void SampleStore::lock_for_profiling() {
  if (lock_fd_ >= 0) return;
  require_writable();
  // flock, not fcntl: SQLite's own locks are fcntl locks, which this does not touch.
  const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path_, 0, "--store", std::string("cannot open to lock: ") + std::strerror(errno));
  // A probe (store_being_profiled) holds a shared lock for microseconds: a
  // refusal is for a lock still held after half a second.
  int locked = flock(fd, LOCK_EX | LOCK_NB);
  for (int tries = 0; locked != 0 && errno == EWOULDBLOCK && tries < 25; ++tries) {
    usleep(20000);
    locked = flock(fd, LOCK_EX | LOCK_NB);
  }
  if (locked != 0) {
    const int err = errno;
    close(fd);
    if (err == EWOULDBLOCK)
      throw InputError(path_, 0, "--store",
                       "another profile is writing into this store now; wait for it, or give this one its own "
                       "--store (two at once would time each trial against the other's work)");
    throw InputError(path_, 0, "--store", std::string("cannot lock: ") + std::strerror(err));
  }
  lock_fd_ = fd;
}

bool store_lock_seen_here(const std::string& path) {
  struct statfs fs {};
  // The store, or the folder it is about to be made in.
  if (statfs(path.c_str(), &fs) != 0) {
    const std::string dir = std::filesystem::path(path).parent_path().string();
    if (statfs(dir.empty() ? "." : dir.c_str(), &fs) != 0) return false;
  }
  // f_type magic numbers (linux/magic.h and the file systems' own headers).
  static constexpr unsigned long kNetworked[] = {
      0x6969,      // NFS
      0x517B,      // SMB
      0xFF534D42,  // CIFS
      0xFE534D42,  // SMB2
      0x0BD00BD0,  // Lustre
      0x47504653,  // GPFS
      0x00C36400,  // Ceph
      0x65735546,  // FUSE (sshfs, and more)
      0x01021997,  // 9P
      0x5346414F,  // AFS
      0xAAD7AAEA,  // PanFS
      0x19830326,  // BeeGFS
  };
  const auto type = static_cast<unsigned long>(fs.f_type) & 0xFFFFFFFFul;
  return std::find(std::begin(kNetworked), std::end(kNetworked), type) == std::end(kNetworked);
}

bool store_being_profiled(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);  // lets go of the shared lock, where it was taken
  return held;
}

void SampleStore::require_writable() const {
  if (read_only_) throw InputError(path_, 0, "--store", "this sample store can only be read here; it cannot be written");
}

void SampleStore::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw std::runtime_error("sqlite: " + msg);
  }
}

std::optional<std::string> SampleStore::meta(const std::string& key) const {
  try {
    Stmt st(db_, "SELECT value FROM meta WHERE key=?");
    st.bind(1, key);
    if (!st.step()) return std::nullopt;
    return st.text(0);
  } catch (const InputError&) {
    throw;
  } catch (const std::runtime_error&) {
    throw InputError(path_, 0, "", unreadable_store(db_));  // damage in the meta table's pages
  }
}

// A write SQLite could not make (a full disk, a file-size limit, a store
// made read-only under it) is said as the store's, with the likely cause.
[[noreturn]] void SampleStore::throw_unwritable(const std::exception& e) const {
  throw ExternalError(fmt::format("{}: cannot be written ({}; is the disk full?)", path_, e.what()));
}

void SampleStore::set_meta(const std::string& key, const std::string& value) {
  require_writable();
  try {
    Stmt st(db_, "INSERT OR REPLACE INTO meta(key,value) VALUES(?,?)");
    st.bind(1, key);
    st.bind(2, value);
    st.step();
  } catch (const std::runtime_error& e) {
    throw_unwritable(e);
  }
}

void SampleStore::put(const TrialRecord& r) {
  require_writable();
  try {
    Stmt st(db_, "INSERT OR REPLACE INTO trials(" + std::string(kColumns) +
                     ",seq) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,(SELECT COALESCE(MAX(seq),0)+1 FROM trials))");
    st.bind(1, long(r.key.batch));
    st.bind(2, long(r.key.workers));
    st.bind(3, long(r.key.epochs));
    st.bind(4, std::string(to_string(r.status)));
    // Text from the trial's program is stored as valid UTF-8: every JSON view
    // of the store writes it, and JSON cannot hold anything else.
    st.bind(5, valid_utf8(r.reason));
    st.bind(6, valid_utf8(r.stderr_tail));
    st.bind(7, r.epoch_time_s);
    st.bind(8, r.metric);
    st.bind(9, r.metric_name);
    st.bind(10, long(r.epochs_reported));
    st.bind(11, r.dataset_size);
    st.bind(12, r.wall_s);
    st.bind(13, r.started_at);
    st.bind(14, r.finished_at);
    st.bind(15, valid_utf8(r.command));
    st.bind(16, format_epoch_metrics(r.epoch_metrics));
    st.bind(17, format_timing(r));
    st.step();  // autocommit: durable when this returns
  } catch (const std::runtime_error& e) {
    throw_unwritable(e);
  }
}

std::optional<TrialRecord> SampleStore::find(const TrialKey& k) const {
  // Damage met only now, past the store's first page, is said as the store's.
  try {
    Stmt st(db_, "SELECT " + std::string(kColumns) + " FROM trials WHERE batch=? AND workers=? AND epochs=?");
    st.bind(1, long(k.batch));
    st.bind(2, long(k.workers));
    st.bind(3, long(k.epochs));
    if (!st.step()) return std::nullopt;
    return read_record(st, path_);
  } catch (const InputError&) {
    throw;  // a record's bad field, named
  } catch (const std::runtime_error&) {
    throw InputError(path_, 0, "", unreadable_store(db_));
  }
}

std::vector<TrialRecord> SampleStore::trials() const {
  std::vector<TrialRecord> out;
  // Damage met only now, past the store's first page, is said as the store's.
  try {
    Stmt st(db_, "SELECT " + std::string(kColumns) + " FROM trials ORDER BY seq");
    while (st.step()) out.push_back(read_record(st, path_));
  } catch (const InputError&) {
    throw;  // a record's bad field, named
  } catch (const std::runtime_error&) {
    throw InputError(path_, 0, "", unreadable_store(db_));
  }
  return out;
}

namespace {

// The epoch time a trial's sample gets, and its relative uncertainty: the
// time trial of its (batch, workers) when there is one, else the trial's own
// steady-state steps (steps per epoch x median step time), else the mean of
// its epochs' wall times.
std::pair<double, std::optional<double>> epoch_time_of(const TrialRecord& r, const TrialRecord* time_trial) {
  for (const TrialRecord* t : {time_trial, &r})
    if (t && t->timing && t->timing->steps_per_epoch > 0) return {t->timing->epoch_time_s(), t->timing->spread};
  return {*r.epoch_time_s, std::nullopt};
}

}  // namespace

SampleSet SampleStore::samples() const { return samples(trials()); }

SampleSet SampleStore::samples(std::vector<TrialRecord> trials) const {
  SampleSet set;
  set.source = path_;
  std::string model = meta("workload").value_or("");
  std::string hardware = meta("hardware").value_or("");
  std::string metric_name;
  // Nodes per trial: 1 for the local launcher, ceil(r / workers_per_node) when known, else unknown (0).
  std::string launcher = meta("launcher").value_or("");
  long per_node = std::atol(meta("workers_per_node").value_or("0").c_str());
  // The ok trials first: the direction and the trial lengths decide the curve points.
  std::vector<TrialRecord> ok;
  std::set<TrialKey> measured;
  std::map<std::pair<int, int>, TrialRecord> time_trials;  // by (batch, workers)
  std::set<std::pair<int, int>> trained;                    // (batch, workers) with a training trial
  std::vector<TrialRecord> cut_short;  // training trials that failed after reporting epochs
  for (auto& r : trials) {
    if (r.status != TrialStatus::kOk && r.key.epochs > 0 && r.epochs_reported > 0 && r.epoch_time_s &&
        *r.epoch_time_s > 0) {
      cut_short.push_back(std::move(r));
      continue;
    }
    if (r.status != TrialStatus::kOk || !r.epoch_time_s) continue;
    if (r.key.epochs == 0) {
      time_trials[{r.key.batch, r.key.workers}] = std::move(r);
      continue;
    }
    if (metric_name.empty()) metric_name = r.metric_name;
    measured.insert(r.key);
    trained.insert({r.key.batch, r.key.workers});
    ok.push_back(std::move(r));
  }
  // A (batch, workers) timed but never trained is a time-only sample.
  for (const auto& [bw, t] : time_trials)
    if (!trained.count(bw)) ok.push_back(t);
  for (const auto& r : cut_short)
    if (metric_name.empty()) metric_name = r.metric_name;
  // One metric for all: an accuracy and a loss cannot share a model or a target.
  std::map<std::string, TrialKey> names;
  std::map<long, TrialKey> sizes;  // the training set's size, as each trial reported it
  for (const auto* group : {&ok, &cut_short})
    for (const auto& r : *group) {
      if (r.key.epochs > 0 && !r.metric_name.empty()) names.try_emplace(r.metric_name, r.key);
      if (r.dataset_size) sizes.try_emplace(*r.dataset_size, r.key);
      if (r.metric_diverged) set.diverged.insert({double(r.key.batch), r.key.workers});
    }
  if (sizes.size() > 1 && training_sets_differ(sizes.begin()->first, sizes.rbegin()->first)) {
    std::string which;
    for (const auto& [n, k] : sizes)
      which += fmt::format("{}{} (batch {}, {} workers)", which.empty() ? "" : ", ", n, k.batch, k.workers);
    throw InputError(path_, 0, "train_samples",
                     "the trials report different training-set sizes: " + which +
                         "; report the whole training set (not one rank's share) in every trial, and profile "
                         "again into a new --store");
  }
  if (names.size() > 1) {
    std::string which;
    for (const auto& [name, k] : names)
      which += fmt::format("{}'{}' (batch {}, {} workers, {} epochs)", which.empty() ? "" : ", ", name, k.batch,
                           k.workers, k.epochs);
    throw InputError(path_, 0, "metric_name",
                     "the trials report different metrics: " + which +
                         "; one model cannot fit them together. Make the command report one metric and profile "
                         "again into a new --store");
  }
  set.direction = metric_is_lower_better(metric_name) ? MetricDirection::kMin : MetricDirection::kMax;
  const bool curve_epochs = meta(kCurveEpochsKey).value_or("") == "1";
  // A curve point once: a 6-epoch trial's epochs 1 and 2 are a 3-epoch trial's too.
  std::set<std::tuple<double, int, int>> curve_points_taken;
  // Sample rows of trial r: the trial itself, when it ran whole, and its curve
  // before the last epoch (or before the epoch it stopped at, when cut short):
  // the best metric so far after each epoch (the run keeps its best
  // checkpoint), where no trial of that length measured it on its own.
  auto add_trial = [&](const TrialRecord& r, bool whole) {
    Sample s;
    s.batch = r.key.batch;
    s.workers = r.key.workers;
    s.epochs = r.key.epochs;
    auto tt = time_trials.find({r.key.batch, r.key.workers});
    std::tie(s.epoch_time_s, s.time_spread) = epoch_time_of(r, tt == time_trials.end() ? nullptr : &tt->second);
    // A spread past what a sample file holds (a step interval wider than the
    // step, from a few steps timed on a loaded machine) says as much at the bound.
    if (s.time_spread) s.time_spread = std::min(*s.time_spread, kMostTimeSpread);
    s.nodes = per_node > 0 ? nodes_for(r.key.workers, int(std::min<long>(per_node, std::numeric_limits<int>::max()))) : launcher == "local" ? 1 : 0;
    s.metric = r.metric;
    s.model = model;
    s.hardware = hardware;
    if (r.dataset_size) set.dataset_size = r.dataset_size;
    std::optional<double> best;
    const size_t curve_points = whole ? r.epoch_metrics.size() - std::min<size_t>(1, r.epoch_metrics.size())
                                      : r.epoch_metrics.size();
    for (size_t k = 0; k < curve_points; ++k) {
      const auto& m = r.epoch_metrics[k];
      if (m && (!best || set.better(*m, *best))) best = m;
      if (!best || measured.count({r.key.batch, r.key.workers, int(k + 1)})) continue;
      if (!curve_points_taken.insert({r.key.batch, r.key.workers, int(k + 1)}).second) continue;
      Sample c = s;
      c.epochs = double(k + 1);
      if (curve_epochs) {
        if (!m) continue;
        c.metric = m;
        set.samples.push_back(c);
      } else {
        c.metric = best;
        set.curve.push_back(c);
      }
    }
    if (whole) set.samples.push_back(s);
  };
  for (const auto& r : ok) add_trial(r, true);
  for (const auto& r : cut_short) add_trial(r, false);
  return set;
}

}  // namespace trainplan::profile
