// The crash-safe sample store: one SQLite file in WAL mode with a row per
// trial, committed (and synced) the moment the trial finishes, so that a
// killed profiler loses at most the trial that was running. Keys are
// (batch, workers, epochs); a rerun of a trial replaces its row.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/sample.h"
#include "profile/trial.h"

struct sqlite3;

namespace trainplan::profile {

class SampleStore {
 public:
  // kCreate opens `path` or creates it (profiling); kExisting opens a store
  // that exists and changes no other file: a missing file, an empty one or
  // an SQLite file without a trials table is refused, not made a store.
  // kExisting on a store this user may read but not write (the file, or the
  // directory SQLite writes its log in) opens it read-only, creating no
  // file: put, set_meta and lock_for_profiling then throw. Such a store with
  // a write-ahead log beside it but not the log's index (-shm), which only a
  // writer can create, is refused rather than read without its latest trials.
  enum class Open { kCreate, kExisting };
  // Throws InputError if `path` cannot be opened or is not a trainplan
  // store (an SQLite file whose tables are another's, or with kExisting no
  // store at all).
  explicit SampleStore(const std::string& path, Open mode = Open::kCreate);
  ~SampleStore();
  SampleStore(const SampleStore&) = delete;
  SampleStore& operator=(const SampleStore&) = delete;

  const std::string& path() const { return path_; }

  // Holds the store for one profile at a time (an advisory lock on its file,
  // released with this object): a second profile into the same store is
  // refused, since each would time its trials against the other's work and
  // both would write the same rows. Throws InputError naming --store.
  // A probe's momentary hold (store_being_profiled) is waited out, up to half a second.
  void lock_for_profiling();

  // Facts about the run (command template, workload, hardware).
  std::optional<std::string> meta(const std::string& key) const;
  void set_meta(const std::string& key, const std::string& value);

  // Inserts or replaces the trial's row; committed when this returns.
  // put and set_meta throw ExternalError naming the store where SQLite
  // cannot write (a full disk).
  void put(const TrialRecord& r);
  std::optional<TrialRecord> find(const TrialKey& k) const;
  // All trials in the order they finished.
  std::vector<TrialRecord> trials() const;

  // The ok trials as samples (epochs = the trial's planned epochs).
  // Direction follows the metric name ("loss", "error", "wer", "perplexity": min).
  // Epochs before a training trial's last, where no trial of that length ran,
  // go to SampleSet::curve (best metric so far); when the store's meta
  // kCurveEpochsKey is "1" they are samples instead, with that epoch's own
  // metric: the trainer then promises that the first k epochs of a longer
  // run are a k-epoch run (a schedule that does not depend on the total).
  SampleSet samples() const;
  // The same from `trials` already read from this store (trials()), so that a
  // caller needing both reads the store once.
  SampleSet samples(std::vector<TrialRecord> trials) const;
  static constexpr const char* kCurveEpochsKey = "curve_epochs";

 private:
  void exec(const std::string& sql);
  void open_read_only();
  void require_writable() const;
  [[noreturn]] void throw_unwritable(const std::exception& e) const;
  // Closes the database; for a store read through its log, also removes a
  // log or index this user's open created (open_read_only says why).
  void close_db();
  std::string path_;
  bool read_only_ = false;
  struct FileId {
    bool exists = false;
    unsigned long long dev = 0, ino = 0;
    unsigned owner = 0;
  };
  static FileId file_id(const std::string& path);
  bool read_through_log_ = false;
  FileId wal_at_open_, shm_at_open_;
  sqlite3* db_ = nullptr;
  int lock_fd_ = -1;
};

// Whether two trials' training-set sizes are of different training sets:
// apart by a factor of 1.5 or more (one rank's share, 2 for two ranks),
// where sizes closer than that are dropped last batches of one set.
bool training_sets_differ(long a, long b);

// Whether a metric with this name is better when smaller: a word of it
// (letters, split at other characters and at a capital after a small
// letter) begins with err, wer, cer, ppl, nll, mse or mae, or holds loss or
// perplexity, in any case. answer_f1 is maximised, top1_err and valLoss
// minimised.
bool metric_is_lower_better(const std::string& metric_name);

// Whether a profile holds the store at `path` now (lock_for_profiling):
// probed with a shared lock let go at once, which a profile starting at that
// moment waits out. False where the file cannot be opened.
bool store_being_profiled(const std::string& path);

// Whether the store's lock, as store_being_profiled sees it, is the one a
// profile on any host would hold: false on a network file system (NFS, SMB,
// Lustre, GPFS, Ceph, FUSE, ...), where a lock taken on another host may not
// show here, and where the file system cannot be told.
bool store_lock_seen_here(const std::string& path);

}  // namespace trainplan::profile
