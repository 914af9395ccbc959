// `trainplan profile` end to end with a fake trainer (a shell script that
// sleeps a little and prints the JSON lines): grid runs, recorded failures,
// kill-and-resume with SIGKILL, Ctrl-C, budgets, usage errors.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <cstdlib>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "io/sample_csv.h"
#include "profile/profile_plan.h"
#include "profile/sample_store.h"
#include "test_util.h"

using namespace trainplan;
using namespace trainplan::profile;

namespace {

// Args: BATCH WORKERS RANK EPOCHS. Env: SLEEP, FAIL_BATCH, HANG_BATCH, MUTE_BATCH,
// FAIL_IF (a file: batch 32 fails while it exists), HANG_AFTER (hangs after
// that epoch's line), CHATTY_BATCH (17 MiB of JSON log lines before its epochs),
// CHATTY_AFTER (the same after that epoch's line), TIME_SCALE (its epoch times times that),
// EVENT (the epoch lines' event name: a slip).
const char* kFakeTrainer = R"sh(
b=$1; r=$2; k=$3; e=$4
sleep ${SLEEP:-0.05}
if [ "$FAIL_BATCH" = "$b" ]; then echo "fake: CUDA out of memory at batch $b" >&2; exit 1; fi
if [ -n "$FAIL_IF" ] && [ -e "$FAIL_IF" ] && [ "$b" = 32 ]; then echo "fake: flaky" >&2; exit 2; fi
if [ "$HANG_BATCH" = "$b" ]; then sleep 60; fi
if [ "$MUTE_BATCH" = "$b" ]; then echo "training without telling anyone"; exit 0; fi
[ "$k" = 0 ] || exit 0
chatty() { yes '{"event":"log","text":"chatty"}' | head -c 17825792; }
if [ "$CHATTY_BATCH" = "$b" ]; then chatty; fi
i=1
while [ $i -le $e ]; do
  t=$(awk -v b=$b -v r=$r -v s=${TIME_SCALE:-1} 'BEGIN{printf "%.5f", s * (0.01 + 6.4/(b*r))}')
  m=$(awk -v b=$b -v r=$r -v i=$i 'BEGIN{printf "%.5f", 1 - 0.5/(i+1) - 0.0005*b*r}')
  echo "{\"event\":\"${EVENT:-epoch}\",\"epoch\":$i,\"epoch_time_s\":$t,\"metric\":$m,\"metric_name\":\"accuracy\"}"
  if [ "$HANG_AFTER" = "$i" ]; then sleep 60; fi
  if [ "$CHATTY_AFTER" = "$i" ]; then chatty; fi
  i=$((i+1))
done
echo '{"event":"done"}'
)sh";

struct Fixture {
  std::filesystem::path dir;
  std::string fake, store;
  explicit Fixture(const std::string& tag) : dir(tptest::temp_dir(tag)) {
    fake = tptest::write_file(dir / "fake.sh", kFakeTrainer);
    store = (dir / "s.db").string();
  }
  // The --cmd argument, single-quoted for the shell, with env settings in front.
  std::string cmd(const std::string& env = "") const {
    return "--cmd '" + env + " sh " + fake + " {batch} {workers} {rank} {epochs}'";
  }
  // `trainplan profile` of the fake trainer under `env` into this store; `args` from its leading space.
  tptest::CliResult profile(const std::string& env, const std::string& args) const {
    return tptest::run_cli("profile " + cmd(env) + " --store " + store + args);
  }
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The record of trial (b, r, e) in `profile --json`'s "trials" (or a `samples list --json` array).
nlohmann::json trial_of(const nlohmann::json& trials, int b, int r, int e) {
  for (const auto& t : trials)
    if (t["batch"] == b && t["workers"] == r && t["epochs"] == e) return t;
  ADD_FAILURE() << "no trial b=" << b << " r=" << r << " e=" << e << " in " << trials.dump(2);
  return nlohmann::json::object();
}

// Starts the CLI in the background; its stdout and stderr go to files.
pid_t spawn_cli(const std::string& args, const std::string& out, const std::string& err) {
  pid_t pid = fork();
  if (pid == 0) {
    std::string c = "exec " + tptest::cli_word() + " " + args + " >" + out + " 2>" + err;
    execl("/bin/sh", "sh", "-c", c.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

size_t rows_in(const std::string& store) {
  if (!std::filesystem::exists(store)) return 0;
  return SampleStore(store).trials().size();
}

// Waits (up to 30 s) until the store holds at least n trials.
bool wait_rows(const std::string& store, size_t n) {
  for (int i = 0; i < 600; ++i) {
    if (rows_in(store) >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace

// A teammate's store, or one on a read-only mount: readable, but the file or its directory
// (where SQLite keeps its log) not writable. Reading it works and leaves no file behind, which
// would stop its owner's next profile; profiling into it is refused; a log beside it that a
// reader cannot open is refused rather than read without the trials it may hold. Run as nobody
// when the tests run as root, whom permissions do not stop.
// The prefix that runs a command as another user than the tests' (nobody, for root, whom
// permissions do not stop; empty otherwise); nullopt where root cannot drop to nobody.
std::optional<std::string> as_another_user() {
  if (geteuid() != 0) return std::string();
  const std::string p = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  if (std::system((p + "true 2>/dev/null").c_str()) != 0) return std::nullopt;
  return p;
}

TEST(ProfileCli, AStoreThatCanOnlyBeReadIsRead) {
  const auto other = as_another_user();
  if (!other) GTEST_SKIP() << "root, and setpriv cannot drop to nobody here";
  const std::string as_other = *other;
  Fixture f("prof_read_only");
  const std::string grid = " --batches 16,32,64 --workers 1,2 --epochs 1,2";
  ASSERT_EQ(f.profile("", grid).exit_code, 0);
  const auto io = tptest::temp_dir("prof_read_only_io");
  const auto out = io / "out", err = io / "err";
  const auto run = [&](const std::string& args) {
    const std::string cmd = as_other + tptest::cli_word() + " " + args + " >" + out.string() + " 2>" + err.string();
    const int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  };
  const auto files = [&] {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(f.dir)) names.insert(e.path().filename().string());
    return names;
  };
  struct Writable {  // so that the temporary folder can be removed
    std::filesystem::path dir;
    ~Writable() { chmod(dir.c_str(), 0755); }
  } restore{f.dir};

  // The file read-only in a directory anyone may write.
  ASSERT_EQ(chmod(f.store.c_str(), 0444), 0);
  ASSERT_EQ(chmod(f.dir.c_str(), 0777), 0);
  const auto before = files();
  if (const int rc = run("samples list --store " + f.store + " --json"); rc == 126 || rc == 127)
    GTEST_SKIP() << "nobody cannot run " << TRAINPLAN_CLI_PATH;
  ASSERT_EQ(run("samples list --store " + f.store + " --json"), 0) << tptest::read_file(err.string());
  EXPECT_EQ(nlohmann::json::parse(tptest::read_file(out.string())).size(), 12u);
  EXPECT_EQ(files(), before);
  ASSERT_EQ(chmod(f.store.c_str(), 0644), 0);
  // Its owner profiles into it again: four more trials beside the twelve.
  EXPECT_EQ(f.profile("", " --batches 16,32,64,128 --workers 1,2 --epochs 1,2").exit_code, 0);

  // The directory read-only too.
  ASSERT_EQ(chmod(f.store.c_str(), 0444), 0);
  ASSERT_EQ(chmod(f.dir.c_str(), 0555), 0);
  ASSERT_EQ(run("samples list --store " + f.store + " --json"), 0) << tptest::read_file(err.string());
  EXPECT_EQ(nlohmann::json::parse(tptest::read_file(out.string())).size(), 16u);
  EXPECT_EQ(run("fit --samples " + f.store + " --json"), 0) << tptest::read_file(err.string());
  EXPECT_EQ(run("profile " + f.cmd() + " --store " + f.store + grid), 2);
  EXPECT_TRUE(contains(tptest::read_file(err.string()), "cannot write in")) << tptest::read_file(err.string());

  // A log beside it without the index a reader needs to open it.
  chmod(f.dir.c_str(), 0755);
  std::filesystem::copy_file(f.store, f.store + "-wal");
  chmod(f.dir.c_str(), 0555);
  EXPECT_EQ(run("samples list --store " + f.store), 2);
  EXPECT_TRUE(contains(tptest::read_file(err.string()), "write-ahead log")) << tptest::read_file(err.string());
}

// While its owner's profile writes it, a reader who cannot write the store reads the latest
// trials through its log, and leaves nothing behind that would stop the profile.
TEST(ProfileCli, AStoreBeingProfiledIsReadByOneWhoCannotWriteIt) {
  const auto other = as_another_user();
  if (!other) GTEST_SKIP() << "root, and setpriv cannot drop to nobody here";
  Fixture f("prof_read_live");
  ASSERT_EQ(chmod(f.dir.c_str(), 0777), 0);
  const auto io = tptest::temp_dir("prof_read_live_io");
  const std::string out = (io / "out").string(), err = (io / "err").string();
  const pid_t prof = spawn_cli("profile " + f.cmd("SLEEP=0.3") + " --store " + f.store +
                                   " --batches 16,32,64,128 --workers 1,2 --epochs 1",
                               (io / "pout").string(), (io / "perr").string());
  ASSERT_TRUE(wait_rows(f.store, 2));
  std::set<size_t> seen;
  for (int i = 0; i < 5; ++i) {
    const std::string cmd = *other + tptest::cli_word() + " samples list --store " + f.store + " --json >" + out +
                            " 2>" + err;
    const int rc = std::system(cmd.c_str());
    if (WIFEXITED(rc) && (WEXITSTATUS(rc) == 126 || WEXITSTATUS(rc) == 127)) {
      ::kill(prof, SIGKILL);
      waitpid(prof, nullptr, 0);
      GTEST_SKIP() << "nobody cannot run " << TRAINPLAN_CLI_PATH;
    }
    ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << tptest::read_file(err);
    seen.insert(nlohmann::json::parse(tptest::read_file(out)).size());
  }
  int status = 0;
  ASSERT_EQ(waitpid(prof, &status, 0), prof);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << tptest::read_file(io / "perr");
  EXPECT_GE(*seen.begin(), 2u);
  for (const auto& e : std::filesystem::directory_iterator(f.dir)) {
    struct stat st {};
    ASSERT_EQ(stat(e.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, geteuid()) << e.path() << " was left by the reader";
  }
  EXPECT_FALSE(std::filesystem::exists(f.store + "-wal"));
  EXPECT_EQ(rows_in(f.store), 8u);
}

TEST(ProfileCli, GridRunStoresAndExportsEverySample) {
  Fixture f("prof_grid");
  auto r = f.profile("", " --batches 16,32 --workers 1,2 --epochs 1,2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["planned"], 8);
  EXPECT_EQ(j["ran"], 8);
  EXPECT_EQ(j["ok"], 8);
  EXPECT_EQ(j["already_done"], 0);
  EXPECT_EQ(j["trials"].size(), 8u);
  std::string csv = (f.dir / "s.csv").string();
  // Not into the store's live log, which `watch --store` follows.
  auto live = tptest::run_cli("samples export --store " + f.store + " -o " + f.store + ".live");
  EXPECT_EQ(live.exit_code, 2);
  EXPECT_NE(live.err.find("--store's live log"), std::string::npos) << live.err;
  // Nor over the files SQLite keeps beside the store (its -wal holds the latest trials, and
  // replacing it lost them), nor over another store.
  for (const std::string& beside : {f.store + "-wal", f.store + "-shm", f.store}) {
    auto over = tptest::run_cli("samples export --store " + f.store + " -o " + beside);
    EXPECT_EQ(over.exit_code, 2) << beside;
    EXPECT_TRUE(over.err.find("SQLite") != std::string::npos || over.err.find("--store") != std::string::npos)
        << beside << ": " << over.err;
  }
  const std::string other_store = (f.dir / "other.db").string();
  std::filesystem::copy_file(f.store, other_store);
  auto over_other = tptest::run_cli("samples export --store " + f.store + " -o " + other_store);
  EXPECT_EQ(over_other.exit_code, 2) << over_other.err;
  EXPECT_NE(over_other.err.find("it is an SQLite database"), std::string::npos) << over_other.err;
  // A store's live log is truncated only when it is one: another store named so is refused.
  const std::string live_named = (f.dir / "t.db").string();
  std::filesystem::copy_file(f.store, live_named + ".live");
  auto refused = tptest::run_cli("profile " + f.cmd("") + " --store " + live_named + " --batches 16 --workers 1 --epochs 1");
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("holds something else"), std::string::npos) << refused.err;
  EXPECT_EQ(std::filesystem::file_size(live_named + ".live"), std::filesystem::file_size(f.store));
  auto e = tptest::run_cli("samples export --store " + f.store + " -o " + csv);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  SampleSet set = io::read_samples_csv(csv);
  ASSERT_EQ(set.size(), 8u);
  for (const auto& s : set.samples) {
    EXPECT_NEAR(s.epoch_time_s, 0.01 + 6.4 / (s.batch * s.workers), 1e-4);
    ASSERT_TRUE(s.metric.has_value());
    EXPECT_NEAR(*s.metric, 1 - 0.5 / (s.epochs + 1) - 0.0005 * s.batch * s.workers, 1e-4);
  }
  // Running it again does nothing: every trial is already in the store.
  auto again = f.profile("", " --batches 16,32 --workers 1,2 --epochs 1,2 --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  auto ja = nlohmann::json::parse(again.out);
  EXPECT_EQ(ja["planned"], 8);
  EXPECT_EQ(ja["ran"], 0);
  EXPECT_EQ(ja["already_done"], 8);
}

// --timing epochs: the epochs' own wall times, even where the lines carry
// step fields that would give another figure (steps x median: 0.1 s here).
TEST(ProfileCli, TimingEpochsTakesTheEpochsWallTimes) {
  auto dir = tptest::temp_dir("prof_timing_epochs");
  tptest::write_file(dir / "t.sh", "echo '{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":0.5,\"steps\":10,"
                                   "\"step_time_median_s\":0.01,\"metric\":0.9}'");
  for (const auto& [timing, expected] : std::vector<std::pair<std::string, double>>{{"epochs", 0.5}, {"auto", 0.1}}) {
    const std::string store = (dir / (timing + ".db")).string(), csv = (dir / (timing + ".csv")).string();
    auto r = tptest::run_cli("profile --cmd 'bash " + (dir / "t.sh").string() +
                             " {batch} {workers} {epochs}' --batches 8 --workers 1 --epochs 1 --timing " + timing +
                             " --store " + store + " -o " + csv);
    ASSERT_EQ(r.exit_code, 0) << timing << ": " << r.err;
    SampleSet set = io::read_samples_csv(csv);
    ASSERT_EQ(set.size(), 1u);
    EXPECT_NEAR(set.samples[0].epoch_time_s, expected, 1e-9) << timing;
  }
}

TEST(ProfileCli, ExitNonZeroIsRecordedAndTheRunGoesOn) {
  Fixture f("prof_fail");
  auto r = f.profile("FAIL_BATCH=32", " --batches 16,32,64 --workers 2 --epochs 1 --json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ran"], 3);
  EXPECT_EQ(j["ok"], 2);
  EXPECT_EQ(j["failed"], 1);
  const auto failed = trial_of(j["trials"], 32, 2, 1);
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_TRUE(failed["epoch_time_s"].is_null());
  // The trainer's own stderr is kept with the record.
  EXPECT_TRUE(contains(failed["stderr_tail"].get<std::string>(), "CUDA out of memory at batch 32")) << failed;
  EXPECT_EQ(trial_of(j["trials"], 64, 2, 1)["status"], "ok");  // the run went on
  SampleStore s(f.store);
  auto rec = s.find({32, 2, 1});
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->status, TrialStatus::kFailed);
  EXPECT_TRUE(contains(rec->stderr_tail, "out of memory"));
  EXPECT_EQ(s.samples().size(), 2u);
  auto l = tptest::run_cli("samples list --store " + f.store + " --failed --json");
  EXPECT_EQ(l.exit_code, 0);
  auto listed = nlohmann::json::parse(l.out);
  ASSERT_EQ(listed.size(), 1u) << l.out;  // the failed trial only
  EXPECT_EQ(listed[0]["batch"], 32);
  EXPECT_EQ(listed[0]["status"], "failed");
  EXPECT_EQ(listed[0]["stderr_tail"], rec->stderr_tail);
}

// `samples list` shows what the profiler said of each trial, and how far a
// trial that stopped got, in text and JSON.
TEST(ProfileCli, SamplesListShowsNotesAndTheEpochsReported) {
  Fixture f("prof_list_notes");
  {
    SampleStore s(f.store);
    TrialRecord cut;
    cut.key = {32, 2, 2};
    cut.status = TrialStatus::kFailed;
    cut.reason = "the command exited with status 1";
    cut.epochs_reported = 1;
    cut.epoch_time_s = 1.0;
    cut.metric = 0.58;
    cut.note = "the metric of 1 epoch(s) was NaN or Infinity (first: epoch 1)";
    cut.metric_diverged = true;
    s.put(cut);
  }
  auto t = tptest::run_cli("samples list --store " + f.store);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_TRUE(contains(t.out, "reported 1 of its 2 epochs before it stopped")) << t.out;
  EXPECT_TRUE(contains(t.out, "note: the metric of 1 epoch(s) was NaN")) << t.out;
  auto j = tptest::run_cli("samples list --store " + f.store + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto listed = nlohmann::json::parse(j.out);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["epochs_reported"], 1);
  EXPECT_EQ(listed[0]["metric_diverged"], true);
  EXPECT_TRUE(contains(listed[0]["note"].get<std::string>(), "NaN"));
}

TEST(ProfileCli, HungTrialTimesOutAndTheRunGoesOn) {
  Fixture f("prof_hang");
  auto r = f.profile("HANG_BATCH=32", " --batches 16,32 --workers 1 --epochs 1 --trial-timeout 2 --json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["timeout"], 1);
  EXPECT_EQ(j["ok"], 1);
  const auto hung = trial_of(j["trials"], 32, 1, 1);
  EXPECT_EQ(hung["status"], "timeout");
  EXPECT_GE(hung["wall_s"].get<double>(), 2.0);  // killed after --trial-timeout
  EXPECT_LT(hung["wall_s"].get<double>(), 30.0);
  SampleStore s(f.store);
  EXPECT_EQ(s.find({32, 1, 1})->status, TrialStatus::kTimeout);
  EXPECT_EQ(s.find({16, 1, 1})->status, TrialStatus::kOk);
}

// A trial killed at its time limit after two of its four epochs: the two
// are kept, with the record and as points of the curve (not as a run of
// two epochs, whose schedule would have ended there).
TEST(ProfileCli, ATrialCutShortKeepsTheEpochsItReported) {
  Fixture f("prof_cut");
  auto r = f.profile("HANG_AFTER=2", " --batches 16 --workers 1 --epochs 4 --trial-timeout 2");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "its 2 reported epoch(s) of 4 kept, as points of the curve where they have a metric")) << r.err;
  SampleStore s(f.store);
  auto rec = s.find({16, 1, 4});
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->status, TrialStatus::kTimeout);
  EXPECT_EQ(rec->epochs_reported, 2);
  ASSERT_EQ(rec->epoch_metrics.size(), 2u);
  EXPECT_NEAR(*rec->epoch_metrics[1], 1 - 0.5 / 3 - 0.0005 * 16, 1e-4);
  const auto set = s.samples();
  EXPECT_EQ(set.samples.size(), 0u);
  ASSERT_EQ(set.curve.size(), 2u);
  EXPECT_EQ(set.curve[0].epochs, 1);
  EXPECT_EQ(set.curve[1].epochs, 2);
  EXPECT_NEAR(set.curve[1].epoch_time_s, 0.01 + 6.4 / 16, 1e-4);
}

TEST(ProfileCli, NoJsonIsBadOutput) {
  Fixture f("prof_mute");
  auto r = f.profile("MUTE_BATCH=16", " --batches 16,32 --workers 1 --epochs 1 --json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["bad_output"], 1);
  const auto mute = trial_of(j["trials"], 16, 1, 1);
  EXPECT_EQ(mute["status"], "bad-output");
  EXPECT_TRUE(mute["epoch_time_s"].is_null());
  // The reason names what the output lacked (profile::parse_trial_output).
  EXPECT_TRUE(contains(mute["reason"].get<std::string>(), "no JSON lines")) << mute;
  EXPECT_EQ(SampleStore(f.store).find({32, 1, 1})->status, TrialStatus::kOk);
}

// Text that is not valid UTF-8, or becomes invalid when cut to length (a
// protocol line cut off inside its multibyte text, raw bytes, a progress bar
// of block characters on stderr), is stored and shown as valid UTF-8: every
// --json view of the store stays JSON, and the run goes on.
TEST(ProfileCli, TextOfAnyBytesKeepsTheJsonViewsReadable) {
  Fixture f("prof_utf8");
  const std::string script = tptest::write_file(f.dir / "bytes.sh", R"sh(
printf '{"event":"epoch","epoch":1,"epoch_time_s":0.5,"metric":0.5,"metric_name":"accuracy"}\n'
printf '{"event":"log","msg":"%s\n' "$(printf '\303\251%.0s' $(seq 60))"
printf '\377\376 raw {"event":"log"}\n'
i=0; while [ $i -lt 3000 ]; do printf '\342\226\210'; i=$((i+1)); done >&2
[ "$1" = 32 ] && exit 1
echo '{"event":"done"}'
)sh");
  auto r = tptest::run_cli("profile --cmd 'sh " + script + " {batch}' --batches 16,32 --workers 1 --epochs 1 --store " +
                           f.store + " --json");
  EXPECT_EQ(r.exit_code, 1) << r.err;  // batch 32 failed; the run went on
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(trial_of(j["trials"], 16, 1, 1)["status"], "ok") << j;
  EXPECT_EQ(trial_of(j["trials"], 32, 1, 1)["status"], "failed") << j;
  auto list = tptest::run_cli("samples list --store " + f.store + " --json");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const auto trials = nlohmann::json::parse(list.out);
  EXPECT_NE(trials.dump().find("\xE2\x96\x88"), std::string::npos) << "the stderr tail's block characters are kept";
  const auto ok = SampleStore(f.store).find({16, 1, 1});
  ASSERT_TRUE(ok);
  EXPECT_TRUE(contains(ok->note, "stdout line 2")) << ok->note;
}

// The store's labels reach every JSON view and sample file: a --name or
// --hardware that is not UTF-8 is refused before anything runs or is stored.
TEST(ProfileCli, ALabelThatIsNotUtf8IsRefused) {
  Fixture f("prof_label_utf8");
  for (const std::string option : {"--name", "--hardware"}) {
    auto r = tptest::run_cli("profile " + f.cmd("") + " --batches 16 --workers 1 --epochs 1 --store " + f.store + " " +
                             option + " \"$(printf 'bad\\377name')\"");
    EXPECT_EQ(r.exit_code, 2) << option << ": " << r.err;
    EXPECT_TRUE(contains(r.err, option)) << r.err;
    EXPECT_TRUE(contains(r.err, "UTF-8")) << r.err;
  }
}

// An empty file is no store yet: --dry-run lists what the run would make of
// it, as the run does. A profile with no ok trial writes no -o file, which no
// verb would read.
TEST(ProfileCli, AnEmptyStoreAndNoOkTrial) {
  Fixture f("prof_empty");
  tptest::write_file(f.store, "");
  auto dry = tptest::run_cli("profile " + f.cmd("") + " --batches 16 --workers 1 --epochs 1 --store " + f.store +
                             " --dry-run");
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_TRUE(contains(dry.out, "# 1 trials")) << dry.out;
  // A folder the run would refuse as its store, the plan of it refuses too.
  auto folder = tptest::run_cli("profile " + f.cmd("") + " --batches 16 --workers 1 --epochs 1 --store " +
                                f.dir.string() + " --dry-run");
  EXPECT_EQ(folder.exit_code, 2) << folder.out;
  EXPECT_TRUE(contains(folder.err, "is a folder")) << folder.err;
  const auto out = (f.dir / "none.csv").string();
  auto r = tptest::run_cli("profile --cmd 'sh -c \"exit 3\" {batch}' --batches 16 --workers 1 --epochs 1 --store " +
                           (f.dir / "failing.db").string() + " -o " + out);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "not written")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

// A trial's program gets its three streams and nothing of the profiler's:
// not the live log open for writing (which would keep it busy after a kill),
// nor a second /dev/null.
TEST(ProfileCli, ATrialInheritsNoOtherFile) {
  Fixture f("prof_fds");
  const std::string fds = (f.dir / "fds").string();
  const std::string script = tptest::write_file(f.dir / "fds.sh",
      "ls -l /proc/$$/fd > " + fds + "\n"
      "echo '{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":0.5,\"metric\":0.5}'\n");
  auto r = tptest::run_cli("profile --cmd 'sh " + script + " {batch}' --batches 16 --workers 1 --epochs 1 --store " +
                           f.store);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string listed = tptest::read_file(fds);
  EXPECT_FALSE(contains(listed, ".live")) << listed;
  // Opened read-write: stdin, and the profiler's /dev/null had it leaked (a
  // descriptor the test itself inherited is read-only or write-only).
  size_t read_write = 0;
  for (size_t at = 0; (at = listed.find("\nlrwx", at)) != std::string::npos; ++at) ++read_write;
  EXPECT_EQ(read_write, 1u) << listed;
}

// Epoch lines printed past the 16 MiB of JSON lines a trial keeps are never
// read: the trial is bad output, and its reason says why, not only what was
// missing.
TEST(ProfileCli, EpochLinesPastTheOutputCapAreSaidInTheReason) {
  Fixture f("prof_chatty");
  auto r = f.profile("CHATTY_BATCH=16", " --batches 16,32 --workers 1 --epochs 1 --json");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto chatty = trial_of(j["trials"], 16, 1, 1);
  EXPECT_EQ(chatty["status"], "bad-output") << chatty;
  EXPECT_TRUE(contains(chatty["reason"].get<std::string>(), "were not read (past 16 MiB")) << chatty;
  EXPECT_EQ(SampleStore(f.store).find({32, 1, 1})->status, TrialStatus::kOk);

  // One epoch read, the second past the cap: the reason quotes the note
  // that says so, once.
  Fixture g("prof_chatty_after");
  auto r2 = g.profile("CHATTY_AFTER=1", " --batches 16 --workers 1 --epochs 2 --json");
  EXPECT_EQ(r2.exit_code, 1) << r2.err;
  const auto half = trial_of(nlohmann::json::parse(r2.out)["trials"], 16, 1, 2);
  const std::string reason = half["reason"].get<std::string>();
  EXPECT_EQ(half["status"], "bad-output") << half;
  const size_t at = reason.find("were not read (past 16 MiB");
  ASSERT_NE(at, std::string::npos) << half;
  EXPECT_EQ(reason.find("were not read", at + 1), std::string::npos) << half;
}

TEST(ProfileCli, FailedTrialsAreRetriedOnlyWhenAsked) {
  Fixture f("prof_retry");
  std::string flag = tptest::write_file(f.dir / "flaky", "");
  std::string args = "profile " + f.cmd("FAIL_IF=" + flag) + " --store " + f.store + " --batches 16,32 --workers 1 --epochs 1 --json";
  EXPECT_EQ(tptest::run_cli(args).exit_code, 1);
  std::filesystem::remove(flag);  // the cause of the failure is gone
  auto skip = tptest::run_cli(args);
  EXPECT_EQ(skip.exit_code, 1);
  auto js = nlohmann::json::parse(skip.out);
  EXPECT_EQ(js["ran"], 0);
  EXPECT_EQ(js["already_done"], 2);
  EXPECT_EQ(trial_of(js["trials"], 32, 1, 1)["status"], "failed");  // kept as it was
  auto retry = tptest::run_cli(args + " --retry-failed");
  EXPECT_EQ(retry.exit_code, 0) << retry.err;
  auto jr = nlohmann::json::parse(retry.out);
  EXPECT_EQ(jr["ran"], 1);
  EXPECT_EQ(jr["ok"], 1);
  EXPECT_EQ(SampleStore(f.store).find({32, 1, 1})->status, TrialStatus::kOk);
  EXPECT_EQ(SampleStore(f.store).trials().size(), 2u);
}

TEST(ProfileCli, SigkillMidRunThenResumeLosesAndDuplicatesNothing) {
  Fixture f("prof_kill");
  std::string args = "profile " + f.cmd("SLEEP=0.2") + " --store " + f.store +
                     " --batches 16,32 --workers 1,2 --epochs 1,2 --json";
  pid_t pid = spawn_cli(args, (f.dir / "out1").string(), (f.dir / "err1").string());
  ASSERT_TRUE(wait_rows(f.store, 3));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  auto before = SampleStore(f.store).trials();
  ASSERT_GE(before.size(), 3u);
  ASSERT_LT(before.size(), 8u) << "the run finished before it could be killed";

  auto r = tptest::run_cli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["planned"], 8);
  EXPECT_EQ(j["already_done"].get<size_t>(), before.size());
  EXPECT_EQ(j["ran"].get<size_t>(), 8 - before.size());
  auto after = SampleStore(f.store).trials();
  ASSERT_EQ(after.size(), 8u);
  std::set<TrialKey> keys;
  for (const auto& t : after) {
    keys.insert(t.key);
    EXPECT_EQ(t.status, TrialStatus::kOk) << to_string(t.key) << ": " << t.reason;
  }
  EXPECT_EQ(keys.size(), 8u);
  auto grid = grid_trials(normalise({{16, 32}, {1, 2}, {1, 2}}));
  EXPECT_EQ(keys, std::set<TrialKey>(grid.begin(), grid.end()));
  // The trials finished before the kill were kept as they were, not rerun.
  for (const auto& b : before) {
    auto a = SampleStore(f.store).find(b.key);
    EXPECT_EQ(a->finished_at, b.finished_at);
    EXPECT_EQ(a->epoch_time_s, b.epoch_time_s);
  }
}

// Trials that report different metrics cannot be exported together: said
// as the second ends, not only at export after the whole grid has run.
TEST(ProfileCli, ATrialReportingAnotherMetricIsWarnedOfAtOnce) {
  auto d = tptest::temp_dir("prof_metric_names");
  const std::string store = (d / "s.db").string();
  const std::string cmd =
      "--cmd 'if [ {batch} = 16 ]; then n=loss; else n=accuracy; fi; echo "
      "\"{{\\\"event\\\":\\\"epoch\\\",\\\"epoch\\\":1,\\\"epoch_time_s\\\":0.5,\\\"metric\\\":0.5,"
      "\\\"metric_name\\\":\\\"$n\\\"}}\" # {workers} {epochs}'";
  auto r = tptest::run_cli("profile " + cmd + " --store " + store + " --batches 8,16 --workers 1 --epochs 1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: b=16 r=1 e=1 reported metric 'loss' where b=8 r=1 e=1 reported 'accuracy'"),
            std::string::npos)
      << r.err;
}

TEST(ProfileCli, CtrlCStopsCleanlyAndSaysHowToResume) {
  Fixture f("prof_int");
  std::string args = "profile " + f.cmd("SLEEP=0.3") + " --store " + f.store + " --batches 16,32,64 --workers 1,2 --epochs 1 --json";
  std::string err = (f.dir / "err").string(), out = (f.dir / "out").string();
  pid_t pid = spawn_cli(args, out, err);
  ASSERT_TRUE(wait_rows(f.store, 2));
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  auto j = nlohmann::json::parse(tptest::read_file(out));
  EXPECT_TRUE(j["interrupted"].get<bool>());
  EXPECT_EQ(j["planned"], 6);
  EXPECT_LT(j["ran"].get<int>(), 6);
  // The command to resume with, on the line after "resume with:", runs on the same store.
  auto l = tptest::lines(tptest::read_file(err));
  auto at = std::find(l.begin(), l.end(), "resume with:");
  ASSERT_TRUE(at != l.end() && at + 1 != l.end()) << tptest::read_file(err);
  EXPECT_TRUE(contains(at[1], " profile ")) << at[1];
  EXPECT_TRUE(contains(at[1], " --store " + f.store + " ")) << at[1];
  // The program as it was started (a path here, not a trainplan that PATH may not hold).
  EXPECT_EQ(at[1].find("  " + tptest::cli_word() + " profile "), 0u) << at[1];
  auto rows = SampleStore(f.store).trials();
  EXPECT_EQ(rows.size(), j["ok"].get<size_t>());
  EXPECT_GE(rows.size(), 2u);
  for (const auto& t : rows) EXPECT_EQ(t.status, TrialStatus::kOk);
}

// A second Ctrl-C exits at once, and a hang-up (a closed terminal) stops as
// one Ctrl-C does; either way the running trial, one that ignores SIGTERM,
// does not outlive the tool.
// Nor a descendant that left the trial's process group (setsid), which the
// group's kill does not reach; a closed output pipe stops the run as Ctrl-C.
TEST(ProfileCli, NoTrialOutlivesASecondCtrlCOrAHangUp) {
  struct Case {
    std::vector<int> signals;
    const char* start;
  };
  for (const Case& c : {Case{{SIGINT, SIGINT}, "sleep"}, Case{{SIGHUP}, "sleep"},
                        Case{{SIGINT, SIGINT}, "setsid sleep"}, Case{{SIGPIPE}, "sleep"}}) {
    const std::vector<int>& signals = c.signals;
    auto d = tptest::temp_dir("prof_second_signal");
    const std::string pidfile = (d / "sleeper.pid").string();
    const std::string args = "profile --cmd 'trap \"\" TERM; " + std::string(c.start) + " 1000 & echo $! > " + pidfile +
                             "; wait # {batch} {workers} {epochs}' --store " + (d / "s.db").string() +
                             " --batches 8 --workers 1 --epochs 1 -q";
    pid_t pid = spawn_cli(args, (d / "out").string(), (d / "err").string());
    for (int i = 0; i < 300 && !std::filesystem::exists(pidfile); ++i) usleep(20000);
    usleep(100000);
    const pid_t sleeper = std::atol(tptest::read_file(pidfile).c_str());
    ASSERT_GT(sleeper, 0);
    for (int sig : signals) {
      ASSERT_EQ(kill(pid, sig), 0);
      usleep(200000);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) gone = kill(sleeper, 0) != 0, usleep(gone ? 0 : 50000);
    if (!gone) kill(sleeper, SIGKILL);
    EXPECT_TRUE(gone) << c.start << ", signals " << signals.size() << ": " << tptest::read_file((d / "err").string());
    if (signals.size() == 1) EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status;  // as Ctrl-C
  }
}

// A store's labels are its trials': a later run that gives another name,
// machine or node size, or another time command, is refused naming the
// option, not allowed to relabel the trials already there.
TEST(ProfileCli, ALaterRunCannotRelabelAStoresTrials) {
  Fixture f("prof_relabel");
  auto first = f.profile("", " --batches 16 --workers 1 --epochs 1 --name lenet --hardware box-a");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  for (const auto& [extra, option] : std::vector<std::pair<std::string, std::string>>{
           {" --name other --hardware box-a", "--name"},
           {" --name lenet --hardware box-b", "--hardware"},
           {" --name lenet --hardware box-a --workers-per-node 1", "--workers-per-node"}}) {
    auto r = f.profile("", " --batches 16,32 --workers 1 --epochs 1" + extra);
    EXPECT_EQ(r.exit_code, 2) << extra << ": " << r.err;
    EXPECT_TRUE(tptest::names_input_error(r.err, f.store, 0, option, {"relabelling its trials would be wrong"}))
        << extra << ": " << r.err;
  }
  auto same = f.profile("", " --batches 16,32 --workers 1 --epochs 1 --name lenet --hardware box-a");
  EXPECT_EQ(same.exit_code, 0) << same.err;
}

TEST(ProfileCli, BudgetRunsTheCornersFirstAndStopsEarly) {
  Fixture f("prof_budget");
  auto r = f.profile("SLEEP=0.4", " --batches 16,32,64 --workers 1,2 --epochs 1,2 --budget 2s --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["planned"], 12);
  EXPECT_GT(j["over_budget"].get<int>(), 0);  // left out to keep within the budget
  EXPECT_EQ(j["ran"].get<int>() + j["over_budget"].get<int>(), 12);
  auto rows = SampleStore(f.store).trials();
  ASSERT_GE(rows.size(), 1u);
  EXPECT_LT(rows.size(), 12u);
  EXPECT_EQ(rows[0].key, (TrialKey{64, 1, 1}));  // the first corner of the budget order
}

TEST(ProfileCli, BudgetCounterOnlyFallsAndTheEstimateIsShownApart) {
  // Trials that cost more as the batch falls, so that the estimate of how
  // many fit the budget moves up and down as costs are learned.
  Fixture f("prof_counter");
  auto r = f.profile("SLEEP=0.2", " --batches 16,32,64 --workers 1,2 --epochs 1,2 --budget 3s");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::pair<int, int>> counts;  // (k, n) of each "starting" line
  bool estimate_shown = false;
  for (const auto& line : tptest::lines(r.err)) {
    int k = 0, n = 0;
    if (line.find("starting") == std::string::npos || std::sscanf(line.c_str(), "[%d/%d]", &k, &n) != 2) continue;
    counts.push_back({k, n});
    estimate_shown = estimate_shown || contains(line, "fit the budget");
  }
  ASSERT_GE(counts.size(), 2u) << r.err;
  EXPECT_EQ(counts.front().second, 12) << r.err;  // every planned trial, before any is left out
  for (size_t i = 0; i < counts.size(); ++i) {
    EXPECT_EQ(counts[i].first, int(i) + 1) << r.err;
    EXPECT_LE(counts[i].first, counts[i].second) << r.err;
    if (i > 0) {
      EXPECT_LE(counts[i].second, counts[i - 1].second) << r.err;  // never jumps back up
    }
  }
  EXPECT_TRUE(estimate_shown) << r.err;
}

TEST(ProfileCli, DryRunListsTheTrialsAndRunsNothing) {
  Fixture f("prof_dry");
  auto r = f.profile("", " --batches 8,16 --workers 1,2,3 --epochs 1 --dry-run");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The listing: a count, then one line per trial, its key and its command.
  auto l = tptest::lines(r.out);
  ASSERT_EQ(l.size(), 7u) << r.out;
  EXPECT_EQ(l[0].rfind("# 6 trials", 0), 0u) << r.out;
  std::set<std::string> keys;
  for (size_t i = 1; i < l.size(); ++i) keys.insert(l[i].substr(0, l[i].find('\t')));
  EXPECT_EQ(keys, (std::set<std::string>{"b=8 r=1 e=1", "b=16 r=1 e=1", "b=8 r=2 e=1", "b=16 r=2 e=1", "b=8 r=3 e=1",
                                         "b=16 r=3 e=1"}));
  EXPECT_FALSE(std::filesystem::exists(f.store));
  EXPECT_NE(r.err.find("warning: 3 worker(s)"), std::string::npos) << r.err;  // more workers than 2 CPUs
}

// A dry run shows what a run would do: the trials a store holds are left out.
TEST(ProfileCli, ADryRunLeavesOutTheTrialsTheStoreHolds) {
  Fixture f("prof_dry_store");
  ASSERT_EQ(f.profile("", " --batches 8 --workers 1 --epochs 1").exit_code, 0);
  auto r = f.profile("", " --batches 8,16 --workers 1 --epochs 1 --dry-run");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto l = tptest::lines(r.out);
  ASSERT_EQ(l.size(), 2u) << r.out;
  EXPECT_EQ(l[0].rfind("# 1 trials (grid order); 1 of 2 already in", 0), 0u) << r.out;
  EXPECT_EQ(l[1].rfind("b=16 r=1 e=1\t", 0), 0u) << r.out;
}

// A grid value that never reaches the command would make every trial the same run.
TEST(ProfileCli, AGridTheCommandNeverReceivesIsRefused) {
  Fixture f("prof_unused");
  auto a = tptest::run_cli("profile --cmd 'train --batch 32 --workers {workers} --epochs {epochs}' --batches 16,32 "
                           "--workers 1 --epochs 1 --store " + f.store);
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(a.err, "", 0, "--cmd", {"2 batches", "{batch}"})) << a.err;
  auto b = tptest::run_cli("profile --cmd 'train --batch {batch} --rank {rank} --epochs {epochs}' --batches 16 "
                           "--workers 1,2 --epochs 1 --store " + f.store);
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(b.err, "", 0, "--cmd", {"2 worker counts", "{workers}"})) << b.err;
  // So is a grid of several epoch counts: all but one would run the wrong epochs.
  auto e = tptest::run_cli("profile --cmd 'train --batch {batch} --workers {workers}' --batches 16 --workers 1 "
                           "--epochs 1,2 --store " + f.store);
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(e.err, "", 0, "--cmd", {"2 epoch counts (1,2)", "{epochs}"})) << e.err;
  // One worker count hard-wired in the command is no mistake (a dry run only lists the trials);
  // nor is one epoch count.
  auto c = tptest::run_cli("profile --cmd 'torchrun --nproc-per-node 2 train.py --batch {batch}' --batches 16 "
                           "--workers 2 --epochs 3 --dry-run --store " + f.store);
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_FALSE(std::filesystem::exists(f.store));  // refused before anything ran
}

// What a program of one's own gets wrong is said: epoch times that add up to far more than the
// trial ran (milliseconds), an event name not the protocol's, a template left unquoted; and a
// budget bounds a trial that hangs.
TEST(ProfileCli, AnOwnProgramsSlipsAreSaid) {
  Fixture f("prof_slips");
  auto ms = f.profile("TIME_SCALE=1000", " --batches 16 --workers 1 --epochs 2 --json");
  ASSERT_EQ(ms.exit_code, 0) << ms.err;
  const auto t = trial_of(nlohmann::json::parse(ms.out)["trials"], 16, 1, 2);
  EXPECT_EQ(t["status"], "ok") << t.dump();
  EXPECT_NE(t["note"].get<std::string>().find("written in milliseconds?"), std::string::npos) << t.dump();
  Fixture h("prof_slips_fine");
  auto fine = h.profile("", " --batches 32 --workers 1 --epochs 2 --json");
  ASSERT_EQ(fine.exit_code, 0) << fine.err;
  EXPECT_EQ(trial_of(nlohmann::json::parse(fine.out)["trials"], 32, 1, 2).dump().find("milliseconds"),
            std::string::npos);

  Fixture g("prof_slips_event");
  auto event = g.profile("EVENT=epoc", " --batches 16 --workers 1 --epochs 1");
  EXPECT_EQ(event.exit_code, 1) << event.err;
  EXPECT_NE(event.err.find("events seen: 'epoc'; the protocol's is 'epoch', lowercase"), std::string::npos)
      << event.err;

  auto unquoted = tptest::run_cli("profile --cmd python3 train.py --batch {batch} --store " + g.store);
  EXPECT_EQ(unquoted.exit_code, 2);
  EXPECT_NE(unquoted.err.find("if it belongs to the --cmd template, quote the whole template"), std::string::npos)
      << unquoted.err;

  // What the shell would refuse is said before any trial runs: a program it cannot find, a
  // template it cannot parse.
  auto missing = tptest::run_cli("profile --cmd 'pyhton3 train.py {batch} {workers} {epochs}' --batches 16 "
                                 "--workers 1 --epochs 1 --store " + (g.dir / "m.db").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(missing.err, "", 0, "--cmd", {"'pyhton3' is not a program the shell finds"}))
      << missing.err;
  auto unbalanced = tptest::run_cli("profile --cmd \"sh -c 'echo {batch} {workers} {epochs}\" --batches 16 "
                                    "--workers 1 --epochs 1 --store " + (g.dir / "m.db").string());
  EXPECT_EQ(unbalanced.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(unbalanced.err, "", 0, "--cmd", {"the shell cannot parse it"})) << unbalanced.err;
  EXPECT_FALSE(std::filesystem::exists(g.dir / "m.db"));  // refused before the store was made
  // Not for a program the grid names ("./run_{workers}.sh": the stand-ins name none), and a script
  // without its execute bit is said as that.
  tptest::write_file(g.dir / "run_2.sh", "exit 0\n");
  auto named = tptest::run_cli("profile --cmd '" + (g.dir / "run_{workers}.sh").string() + " {batch} {rank}' --batches 8 "
                               "--workers 2 --epochs 1 --dry-run --store " + (g.dir / "n.db").string());
  EXPECT_EQ(named.exit_code, 0) << named.err;
  auto noexec = tptest::run_cli("profile --cmd '" + (g.dir / "run_2.sh").string() + " {batch} {workers} {epochs}' "
                                "--batches 8 --workers 1 --epochs 1 --store " + (g.dir / "n.db").string());
  EXPECT_EQ(noexec.exit_code, 2);
  EXPECT_NE(noexec.err.find("is there but not executable"), std::string::npos) << noexec.err;
  // A template quoted in a message keeps its own options as written: the user typed --timeout
  // for the trial's limit, and the stored template's --trial-timeout is not renamed to it.
  Fixture k("prof_slips_quoted");
  ASSERT_EQ(k.profile("X=--trial-timeout", " --batches 16 --workers 1 --epochs 1").exit_code, 0);
  auto own = k.profile("Y=1", " --batches 16 --workers 1 --epochs 1 --timeout 5m");
  EXPECT_EQ(own.exit_code, 2);
  EXPECT_NE(own.err.find("X=--trial-timeout sh"), std::string::npos) << own.err;
  // A template given whole, then a misspelt option: the nearest option, not the quoting hint.
  auto typo = tptest::run_cli("profile " + g.cmd() + " --bugdet 10m --store " + (g.dir / "n.db").string());
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("did you mean --budget?"), std::string::npos) << typo.err;
  EXPECT_EQ(typo.err.find("quote the whole template"), std::string::npos) << typo.err;
  // A template without {rank} and trials of several workers: started once a trial, as a launcher.
  auto launcher = tptest::run_cli("profile --cmd 'sh " + g.fake + " {batch} {workers} 0 {epochs}' --batches 16 "
                                  "--workers 2 --epochs 1 --dry-run --store " + (g.dir / "l.db").string());
  EXPECT_EQ(launcher.exit_code, 0) << launcher.err;
  EXPECT_NE(launcher.err.find("--cmd has no {rank}: each trial starts it once (under Slurm, once a node), as a launcher"),
            std::string::npos)
      << launcher.err;

  auto budget = g.profile("", " --batches 16 --workers 1 --epochs 1 --budget 10s --dry-run");
  EXPECT_EQ(budget.exit_code, 0) << budget.err;
  EXPECT_NE(budget.err.find("--budget 10s without --trial-timeout: a trial still running after 60 s is killed"),
            std::string::npos)
      << budget.err;
  auto given = g.profile("", " --batches 16 --workers 1 --epochs 1 --budget 10s --trial-timeout 5m --dry-run");
  EXPECT_EQ(given.err.find("without --trial-timeout"), std::string::npos) << given.err;
}

// --time-trial-s reaches the built-in trainer's time trials as --max-timed-s,
// and only those: a --cmd program's time command sets its own limits.
TEST(ProfileCli, TimeTrialSecondsCapTheBuiltInTimeTrials) {
  Fixture f("prof_time_cap");
  std::string trainer = tptest::write_file(f.dir / "trainplan-train", "#!/bin/sh\nexit 0\n");
  std::filesystem::permissions(trainer, std::filesystem::perms::owner_all);
  const std::string base = "profile --workload lenet-mnist --trainer " + trainer +
                           " --batches 16,32 --workers 1 --epochs 1 --dry-run --store " + f.store;
  auto capped = tptest::run_cli(base + " --time-trial-s 2.5");
  ASSERT_EQ(capped.exit_code, 0) << capped.err;
  EXPECT_TRUE(contains(capped.out, "--time-only")) << capped.out;
  EXPECT_TRUE(contains(capped.out, "--max-timed-s 2.5")) << capped.out;
  auto plain = tptest::run_cli(base);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_TRUE(contains(plain.out, "--time-only")) << plain.out;
  EXPECT_FALSE(contains(plain.out, "--max-timed-s")) << plain.out;
  auto cmd = tptest::run_cli("profile " + f.cmd() + " --time-cmd 'sh -c true {batch}' --time-trial-s 2 --dry-run --store " +
                             f.store);
  EXPECT_EQ(cmd.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(cmd.err, "", 0, "--time-trial-s", {"built-in"})) << cmd.err;
  auto negative = tptest::run_cli(base + " --time-trial-s -1");
  EXPECT_EQ(negative.exit_code, 2) << negative.err;
  auto epochs = tptest::run_cli(base + " --timing epochs --time-trial-s 2");
  EXPECT_EQ(epochs.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(epochs.err, "", 0, "--time-trial-s", {"--timing epochs"})) << epochs.err;
}

// A time command may take every batch of a worker count at once: {batches}
// alone carries the grid's batches to it.
TEST(ProfileCli, ATimeCommandOfAllBatchesAtOnceIsNotRefused) {
  Fixture f("prof_time_batches");
  auto ok = tptest::run_cli("profile " + f.cmd() + " --time-cmd 'sh -c true {batches} {workers}' --batches 8,16 "
                            "--workers 1,2 --epochs 1 --dry-run --store " + f.store);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  auto none = tptest::run_cli("profile " + f.cmd() + " --time-cmd 'sh -c true {workers}' --batches 8,16 "
                              "--workers 1,2 --epochs 1 --dry-run --store " + f.store);
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_TRUE(tptest::names_input_error(none.err, "", 0, "--time-cmd", {"never receives {batch}"})) << none.err;
}

TEST(ProfileCli, BadUsageIsExitTwoWithAClearMessage) {
  Fixture f("prof_usage");
  auto a = tptest::run_cli("profile --cmd 'train {batchsize}' --store " + f.store);
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(a.err, "", 0, "--cmd", {"{batchsize}"}));
  auto b = tptest::run_cli("profile " + f.cmd() + " --launcher k8s --store " + f.store);
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(b.err, "", 0, "--launcher", {"'k8s'"}));
  auto c = tptest::run_cli("profile " + f.cmd() + " --workers 1,two --store " + f.store);
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(c.err, "", 0, "--workers", {"'two'"}));
  auto d = tptest::run_cli("profile --store " + f.store);
  EXPECT_EQ(d.exit_code, 2);
  auto e = tptest::run_cli("samples export --store " + (f.dir / "missing.db").string());
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(e.err, (f.dir / "missing.db").string(), 0, ""));
  // A store of another command is not mixed with this one's trials.
  ASSERT_EQ(f.profile("", " --batches 16 --workers 1 --epochs 1").exit_code, 0);
  auto g = f.profile("X=1", " --batches 16 --workers 1 --epochs 1");
  EXPECT_EQ(g.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(g.err, f.store, 0, "")) << g.err;
  EXPECT_TRUE(contains(g.err, "X=1 sh " + f.fake)) << g.err;  // names the command it would have mixed in
  EXPECT_TRUE(contains(g.err, "mixing two programs' samples would be wrong")) << g.err;
  // A store whose trials all failed holds no sample to mix: the refusal says what to do.
  Fixture h("prof_failed_only");
  EXPECT_EQ(h.profile("FAIL_BATCH=16", " --batches 16 --workers 1 --epochs 1").exit_code, 1);
  auto again = h.profile("X=1", " --batches 16 --workers 1 --epochs 1");
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_TRUE(contains(again.err, "none of its 1 trial(s) ran ok, so it holds no sample: remove it")) << again.err;
}

namespace {

// Speaks trainplan-train's command line: --batch B --workers R --rank K --epochs E ...
const char* kFakeTrainTrainer = R"sh(#!/bin/sh
while [ $# -gt 0 ]; do
  case "$1" in
    --batch) b=$2; shift ;;
    --workers) r=$2; shift ;;
    --rank) k=$2; shift ;;
    --epochs) e=$2; shift ;;
    --time-only) time_only=1 ;;
    --time-batches) bs=$2; shift ;;
  esac
  shift
done
sleep 0.05
[ "$k" = 0 ] || exit 0
if [ -n "$time_only" ]; then
  for b in $(echo ${bs:-$b} | tr , ' '); do
    m=$(awk -v b=$b -v r=$r 'BEGIN{printf "%.7f", (0.5 + 640/(b*r)) / 100}')
    echo "{\"event\":\"step_timing\",\"batch\":$b,\"step_time_median_s\":$m,\"steps_per_epoch\":100,\"train_samples\":6000}"
  done
  exit 0
fi
i=1
while [ $i -le $e ]; do
  t=$(awk -v b=$b -v r=$r 'BEGIN{printf "%.5f", 0.5 + 640/(b*r)}')
  m=$(awk -v b=$b -v r=$r -v i=$i 'BEGIN{printf "%.5f", 0.99 - 0.3/(i+1) - 0.0002*b*r}')
  echo "{\"event\":\"epoch\",\"epoch\":$i,\"epoch_time_s\":$t,\"metric\":$m,\"metric_name\":\"accuracy\",\"train_samples\":6000}"
  i=$((i+1))
done
echo '{"event":"done"}'
)sh";

}  // namespace

TEST(ProfileCli, DemoRunsTheWholePathWithAFakeTrainer) {
  Fixture f("prof_demo");
  std::string trainer = tptest::write_file(f.dir / "trainplan-train", kFakeTrainTrainer);
  std::filesystem::permissions(trainer, std::filesystem::perms::owner_all);
  std::string csv = (f.dir / "demo.csv").string();
  std::string chart = (f.dir / "demo-plan.svg").string();
  auto r = tptest::run_cli("demo --trainer " + trainer + " --store " + f.store + " -o " + csv +
                           " --epochs 1,2 --budget 60s --json --plot " + chart);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "step 3/3")) << r.err;  // progress: the last of the three steps ran
  // The live log `watch --store` follows, as a profile writes it.
  const auto live = tptest::lines(tptest::read_file(f.store + ".live"));
  ASSERT_FALSE(live.empty());
  EXPECT_EQ(nlohmann::json::parse(live.front())["event"], "trial_start");
  EXPECT_EQ(nlohmann::json::parse(live.back())["event"], "profile_done");
  auto j = nlohmann::json::parse(r.out);
  // A time trial of each of the 3 x 2 (b, r), then one training trial of 2
  // epochs per global batch (32, 64, 128, 256), whose first epoch is the
  // 1-epoch sample: 8 trained samples from 4 training trials, and the 2 (b, r)
  // never trained, (64, 1) and (128, 1), as time-only ones.
  EXPECT_EQ(SampleStore(f.store).trials().size(), 10u);
  auto samples = io::read_samples_csv(csv);
  EXPECT_EQ(samples.size(), 10u);
  EXPECT_EQ(samples.with_metric().size(), 8u);
  std::map<double, int> by_epochs;
  for (const auto& s : samples.with_metric()) ++by_epochs[s.epochs];
  EXPECT_EQ(by_epochs, (std::map<double, int>{{1, 4}, {2, 4}}));
  for (const auto& s : samples.samples)  // epoch time from the time trials
    EXPECT_NEAR(s.epoch_time_s, 0.5 + 640 / s.global_batch(), 1e-4);
  // The fake's accuracy falls with the global batch and rises with epochs:
  // the cheapest configuration that reaches 99% of the best is a single worker.
  EXPECT_EQ(j["samples"], 10);
  EXPECT_TRUE(j["batch"].is_number()) << r.out;
  EXPECT_GE(j["epochs"].get<int>(), 1) << r.out;
  EXPECT_EQ(j["workers"], 1) << r.out;
  EXPECT_GE(j["metric"].get<double>(), j["target"].get<double>()) << r.out;
  // How far to trust it: both chosen parts' CV error on the trials.
  ASSERT_TRUE(j["cv_mre"]["time"].is_number()) << r.out;
  ASSERT_TRUE(j["cv_mre"]["metric"].is_number()) << r.out;
  EXPECT_GE(j["cv_mre"]["time"].get<double>(), 0.0);
  EXPECT_LT(j["cv_mre"]["metric"].get<double>(), 0.5);  // the fake's curve is smooth
  // Fewer than 10 configurations per part: each left out alone (6 (b, r) for
  // the time, 8 (b, r, epochs) for the metric), and the time model is the one
  // with the lowest such error; `evaluate --cv 6` on the CSV gives the figure.
  EXPECT_EQ(j["cv_folds"]["time"], 6) << r.out;
  EXPECT_EQ(j["cv_folds"]["metric"], 8) << r.out;
  EXPECT_NE(j["model_choice"].get<std::string>().find("leave-one-out over 6 configurations"), std::string::npos)
      << r.out;
  auto e = tptest::run_cli("evaluate --samples " + csv + " --models " + j["time_model"].get<std::string>() +
                           " --cv 6 --json");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  auto ej = nlohmann::json::parse(e.out);
  const auto& scored = ej["datasets"]["demo"][j["time_model"].get<std::string>()]["time"]["cv_mre"];
  ASSERT_TRUE(scored.is_number()) << e.out;
  EXPECT_NEAR(scored.get<double>(), j["cv_mre"]["time"].get<double>(), 1e-4);
  // `plan` on the demo's samples with its target, limits and models (the command it prints under
  // "Next") recommends what the demo did: both hold the model to the trials.
  auto p = tptest::run_cli(fmt::format(
      "plan --samples {} --target {:.4g} --deadline {:.17g} --max-workers {} --max-epochs {} --time-model {} "
      "--metric-model {} --json",
      csv, j["target"].get<double>(), j["deadline_s"].get<double>(), j["max_workers"].get<int>(),
      j["max_epochs"].get<int>(), j["time_model"].get<std::string>(), j["metric_model"].get<std::string>()));
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto pj = nlohmann::json::parse(p.out);
  EXPECT_EQ(pj["choice"]["batch"], j["batch"]) << p.out;
  EXPECT_EQ(pj["choice"]["workers"], j["workers"]) << p.out;
  EXPECT_EQ(pj["choice"]["epochs"], j["epochs"]) << p.out;
  // The plan's chart, when gnuplot is there (otherwise a note and "plot": null).
  if (std::system("gnuplot --version >/dev/null 2>&1") == 0) {
    EXPECT_TRUE(std::filesystem::exists(chart));
    EXPECT_EQ(j["plot"], chart);
  } else {
    EXPECT_TRUE(j["plot"].is_null()) << r.out;
  }
}

// When every trial fails alike (a trainer without its data, say), the demo
// says why in the trainer's own words, each line once, before it gives up.
TEST(ProfileCli, DemoSaysWhyItsTrialsFailed) {
  Fixture f("prof_demo_fail");
  std::string trainer = tptest::write_file(f.dir / "trainplan-train",
                                           "#!/bin/sh\necho 'reading the data' >&2\n"
                                           "echo 'no mnist data: run trainplan-datasets' >&2\nexit 1\n");
  std::filesystem::permissions(trainer, std::filesystem::perms::owner_all);
  auto r = tptest::run_cli("demo --trainer " + trainer + " --store " + f.store + " --budget 60s");
  EXPECT_EQ(r.exit_code, 1) << r.err;  // a program it relies on failed; not bad input
  const std::string said = "stderr: no mnist data: run trainplan-datasets";
  const size_t first = r.err.find(said);
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(said, first + 1), std::string::npos) << "said once while it repeats: " << r.err;
  EXPECT_TRUE(contains(r.err, "too few ok trials to fit the models: 10 trials of this run failed")) << r.err;
  EXPECT_FALSE(contains(r.err, "--budget")) << "a larger budget would not help: " << r.err;
  // Run again (its data fetched, say): the failed trials run again, not
  // found done in the store.
  auto again = tptest::run_cli("demo --trainer " + trainer + " --store " + f.store + " --budget 60s");
  EXPECT_FALSE(contains(again.err, "already in")) << again.err;
  EXPECT_TRUE(contains(again.err, "10 trials of this run failed")) << again.err;
}

TEST(ProfileCli, BuiltinWorkloadErrorsAreClear) {
  Fixture f("prof_builtin");
  // Each is refused before any trial runs: no store is made.
  const struct {
    std::string args, option;
    std::vector<std::string> named;
  } cases[] = {
      {"profile --workload resnet-imagenet", "--workload", {"'resnet-imagenet'", "lenet-mnist"}},
      {"demo --trainer /nonexistent/trainplan-train", "--trainer", {"/nonexistent/trainplan-train"}},
      {"demo --plot chart.gif", "--plot", {"'chart.gif'"}},
      {"demo --time-model nope", "--time-model", {"'nope'", "allreduce-physical"}},
      {"demo --metric-model allreduce-local", "--metric-model", {"'allreduce-local'"}},
  };
  for (const auto& c : cases) {
    auto r = tptest::run_cli(c.args + " --store " + f.store);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_TRUE(tptest::names_input_error(r.err, "", 0, c.option, c.named)) << c.args << ": " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(f.store));
  // A trainplan without its trainer beside it or on PATH says where it looked.
  const auto alone = f.dir / "alone";
  std::filesystem::create_directories(alone);
  std::filesystem::copy_file(TRAINPLAN_CLI_PATH, alone / "trainplan");
  const std::string err = (f.dir / "alone.err").string();
  const int rc = std::system(("PATH=/usr/bin:/bin " + (alone / "trainplan").string() + " demo --store " + f.store +
                              " 2>" + err + " >/dev/null")
                                 .c_str());
  EXPECT_EQ(WEXITSTATUS(rc), 2);
  EXPECT_TRUE(contains(tptest::read_file(err), "neither next to trainplan (in " + alone.string() + ") nor on PATH"))
      << tptest::read_file(err);
}

// The live log (profile/live_log.h) holds each trial between its start and
// end lines, and `watch --store` forecasts each trial and ends with the run.
TEST(ProfileCli, WatchStoreForecastsEachTrialFromTheLiveLog) {
  Fixture f("prof_live");
  auto r = f.profile("", " --batches 16,32 --workers 1 --epochs 6 -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto live = tptest::lines(tptest::read_file(f.store + ".live"));
  ASSERT_EQ(live.size(), 2u * (1 + 6 + 1 + 1) + 1) << tptest::read_file(f.store + ".live");
  EXPECT_EQ(nlohmann::json::parse(live.front())["event"], "trial_start");
  EXPECT_EQ(nlohmann::json::parse(live[8])["status"], "ok");
  EXPECT_EQ(nlohmann::json::parse(live.back())["event"], "profile_done");

  auto w = tptest::run_cli("watch --store " + f.store + " --target 0.85 --json --stall 5");
  ASSERT_EQ(w.exit_code, 0) << w.err;
  std::vector<nlohmann::json> ups;
  for (const auto& l : tptest::lines(w.out)) ups.push_back(nlohmann::json::parse(l));
  int trials = 0, forecasts = 0;
  for (const auto& u : ups) {
    trials += u["event"] == "trial";
    forecasts += u["event"] == "forecast";
  }
  EXPECT_EQ(trials, 2);
  EXPECT_EQ(forecasts, 12);  // each trial's epochs, counted from 1 again
  EXPECT_EQ(ups.back()["event"], "profile_done");
  // The second trial's first forecast starts afresh at its epoch 1.
  auto second = std::find_if(ups.begin() + 1, ups.end(), [](const auto& u) { return u["event"] == "trial"; });
  ASSERT_NE(second, ups.end());
  EXPECT_EQ((*second)["batch"], 32);
  EXPECT_EQ((*(second + 1))["epoch"], 1);

  auto missing = tptest::run_cli("watch --store " + (f.dir / "none.db").string() + " --target 0.9");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("none.db.live"), std::string::npos) << missing.err;
}

// A watch that reads the last run's log to its profile_done while a profile
// holds the store (one just started, about to rewrite the log) follows the
// rewrite, not the last run's end; and a profile killed outright is reported
// ended as soon as its log is read out, not after --stall.
TEST(ProfileCli, WatchStoreFollowsTheNewRunOfAProfileThatHoldsTheStore) {
  Fixture f("prof_live_again");
  ASSERT_EQ(f.profile("", " --batches 16 --workers 1 --epochs 1 -q").exit_code, 0);
  const std::string live = f.store + ".live";
  ASSERT_TRUE(contains(tptest::read_file(live), "profile_done"));
  // Stand in for the new run's profile: its lock on the store, as lock_for_profiling takes it.
  const int lock = open(f.store.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(lock, 0);
  ASSERT_EQ(flock(lock, LOCK_EX | LOCK_NB), 0);
  const std::string out = (f.dir / "w.out").string();
  pid_t watch = spawn_cli("watch --store " + f.store + " --target 0.99 --json --stall 20 --poll 0.05", out,
                          (f.dir / "w.err").string());
  for (int i = 0; i < 250 && !contains(tptest::read_file(out), "profile_done"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(contains(tptest::read_file(out), "profile_done")) << tptest::read_file(f.dir / "w.err");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // The new run: the log truncated, then its one trial and its end.
  tptest::write_file(live, "");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  tptest::write_file(live,
                     "{\"event\":\"trial_start\",\"batch\":64,\"workers\":1,\"epochs\":1}\n"
                     "{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":0.6,\"metric\":0.8,\"metric_name\":\"accuracy\"}\n"
                     "{\"event\":\"done\"}\n{\"event\":\"trial_end\",\"status\":\"ok\"}\n"
                     "{\"event\":\"profile_done\",\"interrupted\":false}\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  close(lock);  // the new run's end
  int status = 0;
  waitpid(watch, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 0) << tptest::read_file(f.dir / "w.err");
  bool saw_new = false;
  for (const auto& l : tptest::lines(tptest::read_file(out))) {
    const auto u = nlohmann::json::parse(l);
    saw_new = saw_new || (u["event"] == "trial" && u["batch"] == 64);
  }
  EXPECT_TRUE(saw_new) << tptest::read_file(out);

  Fixture k("prof_live_killed");
  pid_t prof = spawn_cli("profile " + k.cmd("SLEEP=30") + " --store " + k.store + " --batches 16 --workers 1 --epochs 1 -q",
                         (k.dir / "p.out").string(), (k.dir / "p.err").string());
  for (int i = 0; i < 250 && !contains(tptest::read_file(k.store + ".live"), "trial_start"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  kill(prof, SIGKILL);
  status = 0;
  waitpid(prof, &status, 0);
  const auto t0 = std::chrono::steady_clock::now();
  auto w = tptest::run_cli("watch --store " + k.store + " --target 0.9 --json --stall 60");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(w.exit_code, 1) << w.err;
  EXPECT_LT(took, 10) << "waited for the stall";
  const auto last = nlohmann::json::parse(tptest::lines(w.out).back());
  EXPECT_EQ(last["event"], "ended") << w.out;
  EXPECT_TRUE(last["exit_code"].is_null()) << w.out;
  EXPECT_TRUE(contains(w.err, "samples list --store")) << w.err;
  // The killed profile's trial, left running.
  std::system(("pkill -f '" + k.dir.string() + "' >/dev/null 2>&1").c_str());
}

// A budget spent before a worker count's time trials ever ran leaves them
// out, as it leaves out every trial past it: the check for repeats that
// disagree looked up their runs and ended the profile as an internal error.
TEST(ProfileCli, ABudgetSpentBeforeAWorkerCountsTimeRunsLeavesThemOut) {
  Fixture f("prof_budget_groups");
  std::string slow = kFakeTrainTrainer;
  slow.replace(slow.find("sleep 0.05"), 10, "sleep 1.2");
  const std::string trainer = tptest::write_file(f.dir / "trainplan-train", slow);
  std::filesystem::permissions(trainer, std::filesystem::perms::owner_all);
  auto r = tptest::run_cli("profile --workload lenet-mnist --trainer " + trainer +
                           " --batches 16,32 --workers 1,2 --epochs 1 --budget 1s -q --json --store " + f.store);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ok"], 2) << r.out;  // one worker count's two time trials, run together
  EXPECT_EQ(j["over_budget"], 6) << r.out;
}

// -o is checked again before it is written: a store another profile made at
// that path while the trials ran is never replaced by the samples CSV.
TEST(ProfileCli, AStoreMadeAtTheOutputWhileTheTrialsRanIsKept) {
  Fixture f("prof_out_taken");
  const std::string out = (f.dir / "taken.db").string();
  pid_t prof = spawn_cli("profile " + f.cmd("SLEEP=1") + " --store " + f.store + " -o " + out +
                             " --batches 16 --workers 1 --epochs 1 -q",
                         (f.dir / "p.out").string(), (f.dir / "p.err").string());
  for (int i = 0; i < 250 && !contains(tptest::read_file(f.store + ".live"), "trial_start"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  {
    SampleStore other(out);
    TrialRecord rec;
    rec.key = {16, 1, 1};
    rec.epoch_time_s = 1.0;
    rec.metric = 0.5;
    other.put(rec);
  }
  int status = 0;
  waitpid(prof, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 2) << tptest::read_file(f.dir / "p.err");
  EXPECT_TRUE(contains(tptest::read_file(f.dir / "p.err"), "--out")) << tptest::read_file(f.dir / "p.err");
  EXPECT_EQ(rows_in(out), 1u);  // still the other store, whole
  EXPECT_EQ(rows_in(f.store), 1u);  // and this run's trial in its own
}

// Time trials whose runs were taken ahead of their turn, each worker count's
// batches together, still have their own lines in their frame of the live
// log: each the step_timing line of its batch, none of another's.
TEST(ProfileCli, TimeTrialsTakenAheadHaveTheirLinesInTheLiveLog) {
  Fixture f("prof_live_early");
  std::string trainer = tptest::write_file(f.dir / "trainplan-train", kFakeTrainTrainer);
  std::filesystem::permissions(trainer, std::filesystem::perms::owner_all);
  auto r = tptest::run_cli("profile --workload lenet-mnist --trainer " + trainer +
                           " --batches 16,32,64 --workers 1,2 --epochs 1 -q --store " + f.store);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = tptest::read_file(f.store + ".live");
  std::optional<nlohmann::json> frame;
  int time_frames = 0, lines = 0;
  for (const auto& l : tptest::lines(text)) {
    const auto e = nlohmann::json::parse(l);
    if (e["event"] == "trial_start") {
      frame = e;
      lines = 0;
    } else if (e["event"] == "trial_end") {
      if (frame && (*frame)["epochs"] == 0) {
        ++time_frames;
        EXPECT_GE(lines, 1) << "batch " << (*frame)["batch"] << ":\n" << text;
      }
      frame.reset();
    } else if (frame && (*frame)["epochs"] == 0) {
      ++lines;
      EXPECT_EQ(e["event"], "step_timing") << l;
      EXPECT_EQ(e["batch"], (*frame)["batch"]) << l;
    }
  }
  EXPECT_EQ(time_frames, 6) << text;
}

// Started while the profile runs, `watch --store` follows the growing live log
// through the trial (2 s long) to the run's end, losing no line.
TEST(ProfileCli, WatchStoreFollowsARunningTrialToTheEnd) {
  Fixture f("prof_live_run");
  const std::string slow = (f.dir / "slow.sh").string();
  tptest::write_file(slow, "i=1; while [ $i -le 40 ]; do echo \"{\\\"event\\\":\\\"epoch\\\",\\\"epoch\\\":$i,"
                           "\\\"epoch_time_s\\\":0.05,\\\"metric\\\":0.$((50 + i)),\\\"metric_name\\\":\\\"accuracy\\\"}\"; "
                           "sleep 0.05; i=$((i+1)); done; echo '{\"event\":\"done\"}'\n");
  pid_t prof = spawn_cli("profile --cmd 'sh " + slow + " {batch}' --store " + f.store +
                             " --batches 8 --workers 1 --epochs 40 -q",
                         (f.dir / "p.out").string(), (f.dir / "p.err").string());
  for (int i = 0; i < 200 && !std::filesystem::exists(f.store + ".live"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto w = tptest::run_cli("watch --store " + f.store + " --target 0.85 --json --stall 10 --poll 0.05");
  int status = 0;
  waitpid(prof, &status, 0);
  ASSERT_EQ(w.exit_code, 0) << w.err;
  EXPECT_EQ(WEXITSTATUS(status), 0) << tptest::read_file(f.dir / "p.err");
  int forecasts = 0;
  for (const auto& l : tptest::lines(w.out)) forecasts += nlohmann::json::parse(l)["event"] == "forecast";
  EXPECT_EQ(forecasts, 40);
}

// A program that printed its epochs and "done" but hangs in its teardown (a
// collective's destroy, a data loader's workers) is ended a few seconds later
// and its trial kept, with a note, not held to its timeout and lost.
TEST(ProfileCli, ARunThatSaysDoneButHangsIsEndedAndKept) {
  Fixture f("prof_done_hang");
  const std::string script = tptest::write_file(
      f.dir / "donehang.sh",
      "echo '{\"event\":\"epoch\",\"epoch\":1,\"epoch_time_s\":1.5,\"metric\":0.5,\"metric_name\":\"accuracy\"}'\n"
      "echo 'log {\"event\": \"done\"}'\nexec sleep 300\n");
  auto r = tptest::run_cli("profile --cmd 'sh " + script + " {batch}' --batches 16 --workers 1 --epochs 1 --store " +
                           f.store + " --trial-timeout 120 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto trial = nlohmann::json::parse(r.out)["trials"][0];
  EXPECT_EQ(trial["status"], "ok") << trial;
  EXPECT_LT(trial["wall_s"].get<double>(), 60);
  EXPECT_TRUE(contains(trial["note"].get<std::string>(), "printed \"done\", but the processes had not exited 10 s"))
      << trial;
}

// What reaches the trial's shell is checked or quoted: a --master-addr is an
// address, and braces in a built-in workload's paths are no placeholders.
TEST(ProfileCli, AddressesAndPathsReachTheCommandAsThemselves) {
  Fixture f("prof_addr");
  auto addr = tptest::run_cli("profile " + f.cmd() + " --batches 16 --workers 1 --epochs 1 --store " + f.store +
                              " --master-addr 'h;touch " + (f.dir / "PWNED").string() + "'");
  EXPECT_EQ(addr.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(addr.err, "", 0, "--master-addr", {"not a host name"})) << addr.err;
  EXPECT_FALSE(std::filesystem::exists(f.dir / "PWNED"));
  std::string trainer = tptest::write_file(f.dir / "trainplan-train", "#!/bin/sh\nexit 0\n");
  std::filesystem::permissions(trainer, std::filesystem::perms::owner_all);
  auto braces = tptest::run_cli("profile --workload lenet-mnist --trainer " + trainer + " --data-dir '" +
                                (f.dir / "a{b}").string() + "' --batches 16 --workers 1 --epochs 1 --dry-run --store " +
                                f.store);
  ASSERT_EQ(braces.exit_code, 0) << braces.err;
  EXPECT_TRUE(contains(braces.out, "--data-dir '" + (f.dir / "a{b}").string() + "'")) << braces.out;
}
