// The SQLite sample store: rows survive reopening, a rerun replaces its
// row, the file is in WAL mode, and ok rows become samples.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <fcntl.h>
#include <sys/file.h>

#include <atomic>
#include <filesystem>
#include <thread>
#include <unistd.h>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "io/sample_csv.h"
#include "profile/sample_store.h"
#include "test_util.h"

using namespace trainplan;
using namespace trainplan::profile;

namespace {

TrialRecord ok_record(int b, int r, int e, double t, double m) {
  TrialRecord rec;
  rec.key = {b, r, e};
  rec.epoch_time_s = t;
  rec.metric = m;
  rec.metric_name = "accuracy";
  rec.epochs_reported = e;
  rec.wall_s = t * e + 1;
  rec.started_at = "2026-01-01T00:00:00Z";
  rec.finished_at = "2026-01-01T00:00:05Z";
  rec.command = "train --batch " + std::to_string(b);
  return rec;
}

}  // namespace

TEST(StoreSqlite, PersistsAcrossReopenAndReplacesReruns) {
  auto dir = tptest::temp_dir("store");
  std::string path = (dir / "s.db").string();
  {
    SampleStore s(path);
    s.set_meta("workload", "lenet-mnist");
    s.put(ok_record(16, 1, 1, 2.0, 0.9));
    TrialRecord bad;
    bad.key = {32, 2, 1};
    bad.status = TrialStatus::kFailed;
    bad.reason = "rank 1 exited with status 1";
    bad.stderr_tail = "Traceback...\nRuntimeError: boom\n";
    s.put(bad);
  }
  SampleStore s(path);
  EXPECT_EQ(s.meta("workload").value_or(""), "lenet-mnist");
  EXPECT_FALSE(s.meta("nothing").has_value());
  auto all = s.trials();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].key, (TrialKey{16, 1, 1}));
  EXPECT_EQ(all[1].status, TrialStatus::kFailed);
  EXPECT_EQ(all[1].stderr_tail, "Traceback...\nRuntimeError: boom\n");
  EXPECT_FALSE(all[1].epoch_time_s.has_value());

  s.put(ok_record(32, 2, 1, 1.5, 0.8));  // the failed trial, rerun
  all = s.trials();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].key, (TrialKey{32, 2, 1}));
  EXPECT_EQ(all[1].status, TrialStatus::kOk);
  EXPECT_DOUBLE_EQ(*s.find({32, 2, 1})->epoch_time_s, 1.5);
  EXPECT_FALSE(s.find({64, 1, 1}).has_value());
}

TEST(StoreSqlite, IsInWalMode) {
  auto dir = tptest::temp_dir("store");
  std::string path = (dir / "wal.db").string();
  { SampleStore s(path); s.put(ok_record(16, 1, 1, 2, 0.5)); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST(StoreSqlite, OkRowsBecomeSamples) {
  auto dir = tptest::temp_dir("store");
  SampleStore s((dir / "x.db").string());
  s.set_meta("workload", "toy");
  s.set_meta("launcher", "local");
  s.put(ok_record(16, 1, 2, 2.0, 0.9));
  auto r2 = ok_record(64, 2, 1, 1.0, 0.8);
  r2.dataset_size = 6000;
  s.put(r2);
  TrialRecord t;
  t.key = {128, 2, 1};
  t.status = TrialStatus::kTimeout;
  s.put(t);
  SampleSet set = s.samples();
  ASSERT_EQ(set.size(), 2u);
  EXPECT_EQ(set.direction, MetricDirection::kMax);
  EXPECT_EQ(set.dataset_size.value_or(0), 6000);
  EXPECT_DOUBLE_EQ(set.samples[0].batch, 16);
  EXPECT_DOUBLE_EQ(set.samples[0].epochs, 2);
  EXPECT_EQ(set.samples[0].nodes, 1);
  EXPECT_EQ(set.samples[0].model, "toy");
  EXPECT_DOUBLE_EQ(*set.samples[1].metric, 0.8);
}

// A trial whose metric went NaN marks its (batch, workers) as diverged, through
// the store and a CSV export, so that a plan leaves it out.
TEST(StoreSqlite, DivergedTrialsAreKeptAsSuch) {
  auto dir = tptest::temp_dir("store-diverged");
  SampleStore s((dir / "x.db").string());
  s.put(ok_record(16, 1, 2, 2.0, 0.9));
  auto nan = ok_record(64, 2, 2, 1.0, 0.0);
  nan.metric.reset();
  nan.epoch_metrics = {0.5, std::nullopt};
  nan.metric_diverged = true;
  s.put(nan);
  SampleStore again((dir / "x.db").string());
  const SampleSet set = again.samples();
  EXPECT_EQ(set.diverged, (std::set<std::pair<double, int>>{{64, 2}}));
  const std::string csv = io::format_samples_csv(set);
  EXPECT_NE(csv.find(" diverged=64x2\n"), std::string::npos) << csv;
  EXPECT_EQ(io::parse_samples_csv(csv, "x.csv").diverged, set.diverged);
  for (const char* bad : {"diverged=64", "diverged=", "diverged=32.5x2", "diverged=1e300x1", "diverged=0x1"})
    EXPECT_THROW(io::parse_samples_csv(std::string("# trainplan: ") + bad + "\n" + csv.substr(csv.find('\n') + 1), "y.csv"),
                 InputError)
        << bad;
}

// An accuracy and a loss in one store cannot be fitted together: refused, naming both.
TEST(StoreSqlite, TrialsReportingDifferentMetricsAreRefused) {
  auto dir = tptest::temp_dir("store-mixed");
  SampleStore s((dir / "x.db").string());
  s.put(ok_record(16, 1, 2, 2.0, 0.9));
  auto loss = ok_record(64, 1, 2, 1.0, 1.9);
  loss.metric_name = "loss";
  s.put(loss);
  try {
    s.samples();
    FAIL() << "mixed metrics accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'accuracy' (batch 16"), std::string::npos) << what;
    EXPECT_NE(what.find("'loss' (batch 64"), std::string::npos) << what;
  }
}

// One rank's share reported as the training set (1000 on one worker, 500 on
// two) is refused; a dropped last batch's few per cent are not.
TEST(StoreSqlite, TrainingSetSizesAFactorApartAreRefused) {
  auto dir = tptest::temp_dir("store-sizes");
  SampleStore s((dir / "x.db").string());
  auto one = ok_record(16, 1, 2, 2.0, 0.9);
  one.dataset_size = 1000;
  auto nearly = ok_record(32, 1, 2, 2.0, 0.9);
  nearly.dataset_size = 820;  // drop_last at a global batch of 256 on a small set
  s.put(one);
  s.put(nearly);
  EXPECT_NO_THROW(s.samples());
  auto share = ok_record(16, 2, 2, 1.0, 0.9);
  share.dataset_size = 500;
  s.put(share);
  try {
    s.samples();
    FAIL() << "a rank's share was taken as the training set";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("500 (batch 16, 2 workers)"), std::string::npos) << e.what();
  }
}

// A path that cannot hold a store says why in words a user can act on.
TEST(StoreSqlite, AnUnusablePathSaysWhy) {
  auto dir = tptest::temp_dir("store-paths");
  auto why = [](const std::string& path, SampleStore::Open mode) {
    try {
      SampleStore s(path, mode);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(opened)");
  };
  EXPECT_NE(why(dir.string(), SampleStore::Open::kCreate).find("it is a directory"), std::string::npos);
  EXPECT_NE(why((dir / "nodir" / "s.db").string(), SampleStore::Open::kCreate).find("no such directory"),
            std::string::npos);
  EXPECT_NE(why((dir / "nodir" / "s.db").string(), SampleStore::Open::kExisting).find("no such directory"),
            std::string::npos);
  EXPECT_EQ(why((dir / "s.db").string(), SampleStore::Open::kCreate), "(opened)");
}

// A store appears whole: a reader that finds the file while a profile is
// making it reads a store with no trials, never "no store here" (SQLite's
// empty first file), and the file it was staged in is gone.
TEST(StoreSqlite, AStoreBeingMadeIsNeverSeenHalfMade) {
  auto dir = tptest::temp_dir("store-made");
  constexpr int kStores = 60;
  std::atomic<int> next{0};
  std::vector<std::string> failures;
  std::thread reader([&] {
    for (int i = 0; i < kStores; ++i) {
      const std::string path = (dir / ("s" + std::to_string(i) + ".db")).string();
      while (access(path.c_str(), F_OK) != 0) std::this_thread::yield();
      try {
        SampleStore s(path, SampleStore::Open::kExisting);
        if (!s.trials().empty()) failures.push_back(path + ": trials in a new store");
      } catch (const std::exception& e) {
        failures.push_back(e.what());
      }
      next = i + 1;
    }
  });
  for (int i = 0; i < kStores; ++i) {
    SampleStore s((dir / ("s" + std::to_string(i) + ".db")).string());
    while (next.load() <= i) std::this_thread::yield();
  }
  reader.join();
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << kStores << " reads failed; first: " << failures.front();
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename().string().find(".new-"), std::string::npos) << entry.path();
    ++files;
  }
  EXPECT_EQ(files, kStores);
}

// Two profiles into one store at once would time each other's work: the second is refused.
TEST(StoreSqlite, OneProfileAtATime) {
  auto dir = tptest::temp_dir("store-lock");
  const std::string path = (dir / "x.db").string();
  {
    SampleStore first(path);
    first.lock_for_profiling();
    SampleStore second(path);
    EXPECT_NO_THROW(second.samples());  // reading is not profiling
    try {
      second.lock_for_profiling();
      FAIL() << "a second profile was let in";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("another profile is writing into this store"), std::string::npos) << e.what();
    }
  }
  SampleStore later(path);
  EXPECT_NO_THROW(later.lock_for_profiling());  // released with the first
}

// store_being_profiled says whether a profile holds the store, and its
// probe's brief shared lock never turns away a profile starting meanwhile.
TEST(StoreSqlite, AProbeSeesAProfileAndNeverTurnsOneAway) {
  auto dir = tptest::temp_dir("store-probe");
  const std::string path = (dir / "x.db").string();
  EXPECT_FALSE(store_being_profiled(path));  // no file
  {
    SampleStore first(path);
    EXPECT_FALSE(store_being_profiled(path));
    first.lock_for_profiling();
    EXPECT_TRUE(store_being_profiled(path));
  }
  EXPECT_FALSE(store_being_profiled(path));
  // A probe that holds its shared lock for 0.2 s (a slow one) is waited out.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_SH | LOCK_NB), 0);
  std::thread release([fd] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    close(fd);
  });
  SampleStore starting(path);
  EXPECT_NO_THROW(starting.lock_for_profiling());
  release.join();
}

TEST(StoreSqlite, LearningCurvesBecomeCurvePointsOfTheBestSoFar) {
  auto dir = tptest::temp_dir("store");
  std::string path = (dir / "c.db").string();
  {
    SampleStore s(path);
    auto rec = ok_record(16, 1, 4, 2.0, 0.70);
    rec.epoch_metrics = {0.5, 0.8, std::nullopt, 0.70};  // a dip at 4, no metric at 3
    s.put(rec);
    s.put(ok_record(16, 1, 2, 2.0, 0.78));  // a trial of its own at 2 epochs
  }
  SampleStore s(path);  // the curve survives reopening
  ASSERT_EQ(s.find({16, 1, 4})->epoch_metrics.size(), 4u);
  EXPECT_FALSE(s.find({16, 1, 4})->epoch_metrics[2].has_value());
  SampleSet set = s.samples();
  ASSERT_EQ(set.size(), 2u);
  // Epochs 1 and 3 (2 has a trial of its own; 4 is the trial itself): the best so far.
  ASSERT_EQ(set.curve.size(), 2u);
  EXPECT_DOUBLE_EQ(set.curve[0].epochs, 1);
  EXPECT_DOUBLE_EQ(*set.curve[0].metric, 0.5);
  EXPECT_DOUBLE_EQ(set.curve[1].epochs, 3);
  EXPECT_DOUBLE_EQ(*set.curve[1].metric, 0.8);
  EXPECT_DOUBLE_EQ(set.curve[1].epoch_time_s, 2.0);
}

// Two trials of one configuration share the epochs before the shorter one's
// end: each curve point is kept once (3 and 6 epochs gave epochs 1 and 2 twice).
TEST(StoreSqlite, ACurvePointSharedByTwoTrialsIsKeptOnce) {
  auto dir = tptest::temp_dir("store");
  SampleStore s((dir / "d.db").string());
  auto three = ok_record(32, 1, 3, 2.0, 0.7);
  three.epoch_metrics = {0.5, 0.6, 0.7};
  auto six = ok_record(32, 1, 6, 2.0, 0.9);
  six.epoch_metrics = {0.52, 0.62, 0.72, 0.8, 0.85, 0.9};
  s.put(three);
  s.put(six);
  std::map<double, int> points;
  for (const auto& c : s.samples().curve) ++points[c.epochs];
  EXPECT_EQ(points, (std::map<double, int>{{1, 1}, {2, 1}, {4, 1}, {5, 1}}));  // 3 and 6 are trials of their own
}

// With kCurveEpochsKey set, the same curve gives samples: each epoch's own
// metric (what a trial of that length would report, dip and all), none
// where the epoch had no metric, and none where a trial of its own ran.
TEST(StoreSqlite, CurveEpochsBecomeSamplesWhenTheStoreSaysSo) {
  auto dir = tptest::temp_dir("store");
  SampleStore s((dir / "e.db").string());
  auto rec = ok_record(16, 1, 5, 2.0, 0.70);
  rec.epoch_metrics = {0.5, 0.8, std::nullopt, 0.75, 0.70};
  s.put(rec);
  s.put(ok_record(16, 1, 2, 2.0, 0.78));
  EXPECT_EQ(s.samples().curve.size(), 3u);  // not yet: the default keeps epochs 1, 3 and 4 apart
  s.set_meta(SampleStore::kCurveEpochsKey, "1");
  SampleSet set = s.samples();
  EXPECT_TRUE(set.curve.empty());
  std::map<double, double> by_epochs;
  for (const auto& x : set.samples) by_epochs[x.epochs] = *x.metric;
  EXPECT_EQ(by_epochs, (std::map<double, double>{{1, 0.5}, {2, 0.78}, {4, 0.75}, {5, 0.70}}));
  for (const auto& x : set.samples) EXPECT_DOUBLE_EQ(x.epoch_time_s, 2.0);
}

TEST(StoreSqlite, OpensAStoreWrittenBeforeCurvesWereKept) {
  auto dir = tptest::temp_dir("store");
  std::string path = (dir / "old.db").string();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const char* old_schema =
      "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
      "CREATE TABLE trials(batch INTEGER NOT NULL, workers INTEGER NOT NULL, epochs INTEGER NOT NULL,"
      " status TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '', stderr_tail TEXT NOT NULL DEFAULT '',"
      " epoch_time_s REAL, metric REAL, metric_name TEXT NOT NULL DEFAULT '', epochs_reported INTEGER NOT NULL"
      " DEFAULT 0, dataset_size INTEGER, wall_s REAL NOT NULL DEFAULT 0, started_at TEXT NOT NULL DEFAULT '',"
      " finished_at TEXT NOT NULL DEFAULT '', command TEXT NOT NULL DEFAULT '', seq INTEGER NOT NULL DEFAULT 0,"
      " PRIMARY KEY(batch, workers, epochs));"
      "INSERT INTO trials(batch,workers,epochs,status,epoch_time_s,metric,metric_name,epochs_reported,seq)"
      " VALUES(32,1,3,'ok',1.5,0.9,'accuracy',3,1);";
  ASSERT_EQ(sqlite3_exec(db, old_schema, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  SampleStore s(path);
  SampleSet set = s.samples();
  ASSERT_EQ(set.size(), 1u);
  EXPECT_DOUBLE_EQ(*set.samples[0].metric, 0.9);
  EXPECT_TRUE(set.curve.empty());
  s.put(ok_record(32, 1, 2, 1.5, 0.8));  // and it can be written to
  EXPECT_EQ(s.trials().size(), 2u);
}

TEST(StoreSqlite, LossMetricsAreMinimised) {
  EXPECT_TRUE(metric_is_lower_better("val_loss"));
  EXPECT_TRUE(metric_is_lower_better("WER"));
  EXPECT_FALSE(metric_is_lower_better("accuracy"));
  EXPECT_FALSE(metric_is_lower_better(""));
  // Words, not substrings: a short stem begins a word.
  for (const char* lower : {"top1_err", "error_rate", "valLoss", "trainloss", "eval_mse", "test_ppl", "char_CER", "nll"})
    EXPECT_TRUE(metric_is_lower_better(lower)) << lower;
  for (const char* higher : {"answer_f1", "precision", "stderr_free_acc", "top5", "bleu"})
    EXPECT_FALSE(metric_is_lower_better(higher)) << higher;
}

TEST(StoreSqlite, RejectsAFileThatIsNotAStore) {
  auto dir = tptest::temp_dir("store");
  std::string junk = tptest::write_file(dir / "junk.db", "this is not sqlite at all, just text padding padding padding");
  EXPECT_THROW(SampleStore s(junk), InputError);
  sqlite3* db = nullptr;
  std::string other = (dir / "other.db").string();
  ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "CREATE TABLE trials(x INTEGER)", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_THROW(SampleStore s(other), InputError);
}

// Another program's database is refused before anything is written to it:
// no table added, the journal mode left as it was.
TEST(StoreSqlite, AnotherProgramsDatabaseIsLeftUnchanged) {
  auto dir = tptest::temp_dir("store_foreign");
  const std::string path = (dir / "other.db").string();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE foo(x INTEGER); INSERT INTO foo VALUES(1)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  try {
    SampleStore s(path);
    ADD_FAILURE() << "opened another program's database as a store";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("other tables (foo)"), std::string::npos) << e.what();
  }
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::vector<std::string> tables;
  sqlite3_exec(
      db, "SELECT name FROM sqlite_master WHERE type = 'table'",
      [](void* out, int, char** values, char**) {
        static_cast<std::vector<std::string>*>(out)->push_back(values[0]);
        return 0;
      },
      &tables, nullptr);
  std::string mode;
  sqlite3_exec(
      db, "PRAGMA journal_mode",
      [](void* out, int, char** values, char**) {
        *static_cast<std::string*>(out) = values[0];
        return 0;
      },
      &mode, nullptr);
  sqlite3_close(db);
  EXPECT_EQ(tables, std::vector<std::string>{"foo"});
  EXPECT_EQ(mode, "delete");
}

// A store whose rows were changed by something other than trainplan (a text
// where a number belongs, a negative time, a curve that is not one) is an
// input error naming the store, the column and the trial, not a sample of 0 s.
TEST(StoreSqlite, RowsChangedOutsideTrainplanAreInputErrors) {
  auto dir = tptest::temp_dir("store_edited");
  const std::string path = (dir / "s.db").string();
  {
    SampleStore s(path, SampleStore::Open::kCreate);
    s.put(ok_record(16, 1, 1, 2.0, 0.8));
    s.put(ok_record(32, 1, 2, 1.0, 0.85));
  }
  const std::vector<std::pair<std::string, std::string>> edits = {
      {"epoch_time_s='fast'", "epoch_time_s"}, {"epoch_time_s=-3", "epoch_time_s"},
      {"metric='high'", "metric"},             {"epoch_metrics='[[['", "epoch_metrics"},
      {"batch='b'", "batch"},                  {"wall_s=-1", "wall_s"},
      {"timing='{\"step_time_s\":\"x\"}'", "timing"},
      {"timing='{\"step_time_s\":-0.01,\"steps_per_epoch\":100}'", "timing"},
      {"timing='{\"step_time_s\":0.01,\"steps_per_epoch\":-5}'", "timing"},
      {"batch=2000000000", "batch"},           {"dataset_size=2.5", "dataset_size"},
      {"dataset_size=1e30", "dataset_size"},
  };
  for (const auto& [edit, column] : edits) {
    const std::string copy = (dir / "edited.db").string();
    std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(copy.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, ("UPDATE trials SET " + edit + " WHERE epochs=1").c_str(), nullptr, nullptr, nullptr),
              SQLITE_OK)
        << edit;
    sqlite3_close(db);
    try {
      SampleStore s(copy, SampleStore::Open::kExisting);
      s.trials();
      ADD_FAILURE() << edit << ": read without an error";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), copy) << edit;
      EXPECT_EQ(e.field(), column) << edit << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("trial b="), std::string::npos) << e.what();
    }
  }
}

// A store cut short is said to be damaged (SQLite's words), not to lack its table.
TEST(StoreSqlite, ADamagedStoreIsSaidToBeDamaged) {
  auto dir = tptest::temp_dir("store_damaged");
  const std::string path = (dir / "s.db").string();
  {
    SampleStore s(path, SampleStore::Open::kCreate);
    for (int b = 1; b <= 200; ++b) s.put(ok_record(b, 1, 1, 2.0, 0.8));
  }
  const std::string text = tptest::read_file(path);
  ASSERT_GT(text.size(), 8192u);
  const std::string cut = tptest::write_file(dir / "cut.db", text.substr(0, 8192));
  try {
    SampleStore s(cut, SampleStore::Open::kExisting);
    s.trials();
    ADD_FAILURE() << "a store cut to 8 KiB was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("damaged"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("no trials table"), std::string::npos) << e.what();
  }
}

// What an older trainplan stored as it came and the reader now refuses
// elsewhere (a metric past 1e12, a training-set size of 0) reads as absent,
// with a note, so that such a store still opens.
TEST(StoreSqlite, WhatOlderVersionsStoredReadsAsAbsentWithANote) {
  auto dir = tptest::temp_dir("store_older");
  const std::string path = (dir / "s.db").string();
  {
    SampleStore s(path, SampleStore::Open::kCreate);
    s.put(ok_record(16, 1, 1, 2.0, 0.8));
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE trials SET metric=2.5e13, dataset_size=0, epoch_metrics='[2.5e13]'", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  SampleStore s(path, SampleStore::Open::kExisting);
  const auto trials = s.trials();
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_FALSE(trials[0].metric);
  EXPECT_FALSE(trials[0].dataset_size);
  ASSERT_EQ(trials[0].epoch_metrics.size(), 1u);
  EXPECT_FALSE(trials[0].epoch_metrics[0]);
  EXPECT_NE(trials[0].note.find("read as absent"), std::string::npos) << trials[0].note;
}

namespace {
// The file's bytes, to tell that nothing was written to it.
std::string bytes_of(const std::string& path) { return tptest::read_file(path); }

void sql(const std::string& path, const std::string& statements) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, statements.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << statements;
  sqlite3_close(db);
}
}  // namespace

// Another program's tables named as a store's are not a store's: a meta
// table of other columns, a trials table without a store's columns. Either is
// refused before anything is written, however the store is opened.
TEST(StoreSqlite, TablesNamedAsAStoresButNotOneAreLeftUnchanged) {
  auto dir = tptest::temp_dir("store_lookalike");
  const std::string meta = (dir / "meta.db").string(), trials = (dir / "trials.db").string();
  sql(meta, "CREATE TABLE meta(id INTEGER PRIMARY KEY, data BLOB); INSERT INTO meta(data) VALUES('important')");
  sql(trials, "CREATE TABLE trials(batch INT, workers INT, epochs INT, status TEXT, note TEXT)");
  for (const auto& [path, says] : {std::pair{meta, "meta table"}, std::pair{trials, "no column 'reason'"}})
    for (auto mode : {SampleStore::Open::kCreate, SampleStore::Open::kExisting}) {
      const std::string before = bytes_of(path);
      try {
        SampleStore s(path, mode);
        ADD_FAILURE() << path << ": opened as a store";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
      }
      EXPECT_EQ(bytes_of(path), before) << path;
      EXPECT_FALSE(std::filesystem::exists(path + "-wal")) << path;
    }
}

// Damage met in the meta table is said as the store's (exit 2), not as an
// internal error.
TEST(StoreSqlite, ADamagedMetaTableIsSaidToBeDamaged) {
  auto dir = tptest::temp_dir("store_meta_damage");
  const std::string path = (dir / "s.db").string();
  {
    SampleStore s(path, SampleStore::Open::kCreate);
    s.set_meta("workload", "lenet");
    s.put(ok_record(16, 1, 1, 2.0, 0.8));
  }
  // Page 2 is the meta table's (created first): its page header made nonsense.
  std::string file = bytes_of(path);
  ASSERT_GT(file.size(), 8192u);
  file[4096] = '\x0d';
  for (int i = 1; i < 200; ++i) file[4096 + i] = '\xff';
  tptest::write_file(path, file);
  try {
    SampleStore s(path, SampleStore::Open::kExisting);
    (void)s.meta("workload");
    ADD_FAILURE() << "read a damaged meta table";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
  }
}

// SQLite opens no database whose full path is past 504 bytes (its journal's
// name within 512): a path of 504 opens, one of 505 is refused naming the
// limit, not as "unable to open database file".
TEST(StoreSqlite, APathTooLongForSqliteSaysSo) {
  auto dir = tptest::temp_dir("store-long");
  const std::string base = std::filesystem::weakly_canonical(dir).string();
  // base/ddd.../eee.../NAME with the total given.
  auto path_of = [&](size_t total) {
    const std::filesystem::path deep = std::filesystem::path(base) / std::string(200, 'd') / std::string(200, 'e');
    std::filesystem::create_directories(deep);
    return (deep / std::string(total - deep.string().size() - 1, 'f')).string();
  };
  ASSERT_LT(base.size() + 402 + 2, size_t(504)) << "the temporary folder's path is too long for this test";
  const std::string fits = path_of(504), over = path_of(505);
  ASSERT_EQ(fits.size(), 504u);
  EXPECT_NO_THROW({
    SampleStore s(fits);
    s.put(ok_record(16, 1, 1, 2.0, 0.9));
  });
  EXPECT_EQ(SampleStore(fits, SampleStore::Open::kExisting).trials().size(), 1u);
  try {
    SampleStore s(over);
    FAIL() << "opened";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("SQLite opens 504 at most"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(over));
  // Through a link to the deep folder the path is as long.
  const auto link = std::filesystem::path(base) / "l";
  std::filesystem::create_directory_symlink(std::filesystem::path(over).parent_path(), link);
  EXPECT_THROW(SampleStore((link / std::filesystem::path(over).filename()).string()), InputError);
}
