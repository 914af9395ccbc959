// Every bad-input case of the sample format, through the CLI: exit code 2 and
// a message naming the file, the line and the column.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "test_util.h"

namespace {

struct BadCase {
  const char* name;
  const char* text;
  long line;          // where the error is (0: the file as a whole)
  const char* field;  // the column to fix ("": none)
  const char* value;  // the bad value the message names, or for the file as a whole what it lacks ("": none)
};

const BadCase kCases[] = {
    {"missing_column", "batch,workers,epochs,metric\n8,1,1,0.5\n", 1, "epoch_time_s", ""},
    {"non_number", "batch,workers,epochs,epoch_time_s,metric\n8,1,1,1,0.5\n8,two,1,1,0.5\n", 3, "workers", "'two'"},
    {"nan", "batch,workers,epochs,epoch_time_s,metric\n8,1,1,nan,0.5\n", 2, "epoch_time_s", "'nan'"},
    {"inf", "batch,workers,epochs,epoch_time_s,metric\n8,1,1,1,inf\n", 2, "metric", "'inf'"},
    {"zero_time", "batch,workers,epochs,epoch_time_s,metric\n8,1,1,0,0.5\n", 2, "epoch_time_s", ""},
    {"negative_time", "batch,workers,epochs,epoch_time_s,metric\n8,1,1,-2.5,0.5\n", 2, "epoch_time_s", ""},
    {"zero_batch", "batch,workers,epochs,epoch_time_s,metric\n0,1,1,1,0.5\n", 2, "batch", ""},
    {"empty_file", "", 0, "", "empty"},
    {"header_only", "batch,workers,epochs,epoch_time_s,metric\n", 0, "", "no samples"},
    {"duplicate_header", "batch,workers,epochs,epoch_time_s,metric,batch\n8,1,1,1,0.5,8\n", 1, "batch", ""},
    {"no_header", "8,1,1,1,0.5\n16,1,1,1,0.5\n", 1, "", "header"},
    {"fractional_batch", "batch,workers,epochs,epoch_time_s,metric\n8,1,1,1,0.5\n32.5,1,1,1,0.5\n", 3, "batch", "32.5"},
    {"tiny_time", "batch,workers,epochs,epoch_time_s,metric\n8,1,1,3e-308,0.5\n", 2, "epoch_time_s", ""},
    {"huge_spread", "batch,workers,epochs,epoch_time_s,metric,time_spread\n8,1,1,1,0.5,1e308\n", 2, "time_spread", ""},
    {"two_models", "batch,workers,epochs,epoch_time_s,metric,model\n8,1,1,1,0.5,lenet\n16,1,1,1,0.5,mlp\n", 3, "model",
     "'mlp'"},
};

class BadSampleFile : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadSampleFile, EvaluateAndPlanExitTwoNamingFileLineColumn) {
  const BadCase& c = GetParam();
  auto dir = tptest::temp_dir(std::string("bad_") + c.name);
  std::string path = tptest::write_file(dir / (std::string(c.name) + ".csv"), c.text);
  std::vector<std::string> values;
  if (*c.value) values.push_back(c.value);
  for (const std::string verb : {"evaluate --samples " + path + " --models isotonic-mi",
                                 "plan --samples " + path + " --target 0.9 --deadline 100 --max-workers 2 --model isotonic-mi"}) {
    auto r = tptest::run_cli(verb);
    EXPECT_EQ(r.exit_code, 2) << verb << "\n" << r.err;
    EXPECT_TRUE(tptest::names_input_error(r.err, path, c.line, c.field, values)) << verb;
  }
}

INSTANTIATE_TEST_SUITE_P(AllCases, BadSampleFile, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(BadSampleFile, MissingFileExitsTwo) {
  auto r = tptest::run_cli("evaluate --samples /nonexistent/samples.csv --models isotonic-mi");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(r.err, "/nonexistent/samples.csv", 0, ""));
}

// Metrics that are all 0 leave no relative error to score a metric model by:
// fit, predict and plan all refuse them alike, naming the column.
TEST(BadSampleFile, MetricsThatAreAllZeroAreNamed) {
  auto dir = tptest::temp_dir("bad_zero_metrics");
  std::string text = "batch,workers,epochs,epoch_time_s,metric\n";
  for (int b : {16, 32, 64})
    for (int r : {1, 2})
      for (int e : {1, 2}) text += fmt::format("{},{},{},{},0\n", b, r, e, 10.0 / (b * r));
  const std::string path = tptest::write_file(dir / "zeros.csv", text);
  for (const std::string verb : {"fit --samples " + path + " --time-model per-batch-extrapolation --metric-model global-batch",
                                 "fit --samples " + path, "predict --samples " + path + " --batch 16 --workers 1 --epochs 2",
                                 "plan --samples " + path + " --target 0.5 --deadline 1h"}) {
    auto r = tptest::run_cli(verb);
    EXPECT_EQ(r.exit_code, 2) << verb << "\n" << r.err;
    EXPECT_TRUE(tptest::names_input_error(r.err, path, 0, "metric", {"every metric value is 0"})) << verb << r.err;
  }
}

// A folder where a JSON file is due: named, exit 2, and with --json one line of JSON on stdout.
TEST(BadInputFile, AFolderForACommunicationProfileIsNamed) {
  const auto dir = tptest::temp_dir("comm_profile_folder");
  const std::string samples = tptest::write_file(dir / "s.csv", "batch,workers,epochs,epoch_time_s,metric\n8,1,1,1,0.5\n"
                                                                "16,1,1,0.8,0.6\n8,2,1,0.6,0.5\n16,2,2,0.5,0.7\n");
  const auto r = tptest::run_cli("predict --samples " + samples + " --batch 8 --workers 2 --comm-profile " +
                                 dir.string() + " --json");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is a folder"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("underflow"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_EQ(j["file"], dir.string());
}

// A misspelt key in a network file would leave its default in place unseen.
TEST(BadInputFile, ANetworkFilesUnknownKeyIsRefused) {
  const auto dir = tptest::temp_dir("network_keys");
  const std::string path = tptest::write_file(
      dir / "g.json",
      R"({"name":"x","input":{"image":[3,32,32]},"layers":[{"type":"conv","out":8,"kernel":3,"stirde":2}]})");
  const auto r = tptest::run_cli("network --graph " + path);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(tptest::names_input_error(r.err, path, 0, "layers[0].stirde", {"stride"}));
  // A flag of the wrong kind is named with its layer.
  const std::string flag = tptest::write_file(
      dir / "flag.json",
      R"({"name":"x","input":{"image":[3,32,32]},"layers":[{"type":"conv","out":8,"kernel":3,"bias":"yes"}]})");
  const auto f = tptest::run_cli("network --graph " + flag);
  EXPECT_EQ(f.exit_code, 2) << f.err;
  EXPECT_TRUE(tptest::names_input_error(f.err, flag, 0, "layers[0].bias", {"true or false"})) << f.err;
}

// A conv (or pool) after flatten or linear was priced on the input image, as
// if the vector were never made.
TEST(BadInputFile, AnImageLayerAfterASequenceIsRefused) {
  const auto dir = tptest::temp_dir("network_shapes");
  for (const std::string& before : {std::string(R"({"type":"flatten"})"), std::string(R"({"type":"linear","out":64})")})
    for (const std::string& image_layer : {std::string(R"({"type":"conv","out":10,"kernel":3})"),
                                           std::string(R"({"type":"pool","kernel":2})"),
                                           std::string(R"({"type":"global_pool"})")}) {
      const std::string path = tptest::write_file(
          dir / "g.json", R"({"name":"x","input":{"image":[3,32,32]},"layers":[)" + before + "," + image_layer + "]}");
      const auto r = tptest::run_cli("network --graph " + path + " --layers");
      EXPECT_EQ(r.exit_code, 2) << before << " " << image_layer << ": " << r.out << r.err;
      EXPECT_TRUE(tptest::names_input_error(r.err, path, 0, "layers[1]", {"needs an image", "sequence of"}))
          << r.err;
    }
  // The image layers before it still stand.
  const std::string ok = tptest::write_file(
      dir / "ok.json",
      R"({"name":"x","input":{"image":[3,32,32]},"layers":[{"type":"conv","out":8,"kernel":3},{"type":"flatten"},{"type":"linear","out":10}]})");
  EXPECT_EQ(tptest::run_cli("network --graph " + ok).exit_code, 0);
}

// A value an option cannot take is said as such, naming the option, not as
// CLI11's "Could not convert: --global-batch = 1e3".
TEST(BadInputOption, AValueOfTheWrongKindIsSaidAsSuch) {
  auto r = tptest::run_cli("llm plan --model gpt3-175b --gpu a100-80gb --tokens 1e9 --global-batch 1e3 --json");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("error: --global-batch: '1e3' is not a value it takes"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("Could not convert"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["field"], "--global-batch");
}

// An answer that could not be written (a full disk under a redirection) is
// a failure, not exit 0.
TEST(BadInputOutput, AnAnswerThatCannotBeWrittenFails) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  const auto dir = tptest::temp_dir("stdout_full");
  const std::string err = (dir / "err").string();
  for (const std::string args : {"hardware --json", "llm memory --model gpt3-175b --tp 8 --pp 8 --json",
                                 "network resnet50 --batch 32"}) {
    const int rc = std::system((tptest::cli_word() + " " + args + " >/dev/full 2>" + err).c_str());
    EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 1) << args << ": " << rc;
    EXPECT_NE(tptest::read_file(err).find("cannot write standard output"), std::string::npos)
        << args << ": " << tptest::read_file(err);
    EXPECT_EQ(tptest::run_cli(args).exit_code, 0) << args;  // the same verb, written
  }
}

TEST(BadInputFile, TheEvaluationFoldersRefuseAnotherFile) {
  const auto dir = tptest::temp_dir("llm_eval_file");
  const std::string path = tptest::write_file(dir / "other.csv", "a,b\n1,2\n");
  for (const std::string option : {"--korthikanti", "--scale", "--nemo", "--neusight", "--megatron-ci"}) {
    const auto r = tptest::run_cli("llm evaluate " + option + " " + path);
    EXPECT_EQ(r.exit_code, 2) << option << ": " << r.err;
    EXPECT_NE(r.err.find("give the folder"), std::string::npos) << option << ": " << r.err;
  }
}

TEST(BadInputOption, SimulatesPoliciesMayNotRepeatOrBeEmpty) {
  const auto dir = tptest::temp_dir("sim_policies");
  const std::string w = tptest::write_file(dir / "w.csv", "name,time,application,num_replicas,batch_size\n");
  for (const std::string policies : {"fifo,fifo", "fifo,", "fifo,,tiresias"}) {
    const auto r = tptest::run_cli("simulate --workload " + w + " --data " + dir.string() + " --policy " + policies);
    EXPECT_EQ(r.exit_code, 2) << policies << ": " << r.err;
    EXPECT_NE(r.err.find("option '--policy'"), std::string::npos) << policies << ": " << r.err;
  }
  const auto r = tptest::run_cli("simulate --workload " + w + " --data " + (dir / "none").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("option '--data'"), std::string::npos) << r.err;
  // Past 1 the power mean would reward piling GPUs on one job; NaN would decide nothing.
  for (const std::string p : {"2", "nan", "-11"}) {
    const auto bad = tptest::run_cli("simulate --workload " + w + " --data " + dir.string() + " --policy pollux --pollux-p " + p);
    EXPECT_EQ(bad.exit_code, 2) << p << ": " << bad.err;
    EXPECT_NE(bad.err.find("--pollux-p"), std::string::npos) << p << ": " << bad.err;
  }
}

// An option no simulation of the run reads is refused, naming it: a policy's
// own option without that policy, --philly-limit without --philly, --data
// with it.
TEST(BadInputOption, SimulateRefusesOptionsNoPolicyItRunsReads) {
  const auto dir = tptest::temp_dir("sim_unread");
  const std::string w = tptest::write_file(dir / "w.csv", "name,time,application,num_replicas,batch_size\n");
  const std::string p = tptest::write_file(dir / "p.csv", "timestamp,duration,num_gpus,gpu_time,cluster\n0,50,1,50,x\n");
  const std::string run = "simulate --workload " + w + " --data " + dir.string();
  for (const auto& [extra, option] : std::vector<std::pair<std::string, std::string>>{
           {" --policy fifo --gittins", "--gittins"},
           {" --policy tiresias --pollux-p 0", "--pollux-p"},
           {" --policy pollux --min-gain 0.3", "--min-gain"},
           {" --policy fifo,tiresias --oracle", "--oracle"},
           {" --policy fifo,srtf --time-model allreduce-local", "--time-model"},
           {" --policy pollux --oracle --time-model allreduce-local", "--time-model"},
           {" --policy fifo --tiresias-thresholds 100", "--tiresias-thresholds"},
           {" --load-scale inf", "--load-scale"},
           {" --philly-limit 5", "--philly-limit"}}) {
    const auto r = tptest::run_cli(run + extra);
    EXPECT_EQ(r.exit_code, 2) << extra << ": " << r.err;
    EXPECT_TRUE(tptest::names_input_error(r.err, "", 0, option)) << extra << ": " << r.err;
  }
  for (const auto& [extra, option] : std::vector<std::pair<std::string, std::string>>{
           {" --philly-limit -5", "--philly-limit"}, {" --placement spread", "--placement"}}) {
    const auto r = tptest::run_cli("simulate --philly " + p + extra);
    EXPECT_EQ(r.exit_code, 2) << extra << ": " << r.err;
    EXPECT_TRUE(tptest::names_input_error(r.err, "", 0, option)) << extra << ": " << r.err;
  }
  const auto data = tptest::run_cli("simulate --philly " + p + " --data " + dir.string());
  EXPECT_EQ(data.exit_code, 2) << data.err;
  EXPECT_TRUE(tptest::names_input_error(data.err, "", 0, "--data")) << data.err;
  // Read where their policy runs, "all" included.
  EXPECT_EQ(tptest::run_cli("simulate --philly " + p + " --policy fifo,tiresias --gittins --philly-limit 1").exit_code, 0);
  EXPECT_EQ(tptest::run_cli("simulate --philly " + p + " --policy all --oracle --min-gain 0.3").exit_code, 0);
}

TEST(BadInputOption, SimulateClusterOfSeveralTypes) {
  const auto dir = tptest::temp_dir("sim_cluster");
  const std::string w = tptest::write_file(dir / "w.csv", "name,time,application,num_replicas,batch_size\n");
  const std::string run = "simulate --workload " + w + " --data " + dir.string();
  for (const std::string cluster : {"t4", "t4=4", "t4=4x", "=4x4", "t4=ax4", "t4=4x4x", "t4=0x4", "t4=2x4,t4=1x8"}) {
    const auto r = tptest::run_cli(run + " --cluster " + cluster);
    EXPECT_EQ(r.exit_code, 2) << cluster << ": " << r.err;
    EXPECT_NE(r.err.find("--cluster"), std::string::npos) << cluster << ": " << r.err;
  }
  for (const std::string extra : {std::string(" --gpu h100"), std::string(" --nodes 2"), " --philly " + w}) {
    const auto r = tptest::run_cli(run + " --cluster t4=1x4" + extra);
    EXPECT_EQ(r.exit_code, 2) << extra << ": " << r.err;
  }
  auto r = tptest::run_cli(run + " --cluster t4=1x4,a100-40gb=1x8 --step-times " + dir.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("GPU=FOLDER"), std::string::npos) << r.err;
  r = tptest::run_cli(run + " --cluster t4=1x4 --step-times h100=" + dir.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("not a GPU of --cluster"), std::string::npos) << r.err;
  r = tptest::run_cli(run + " --from-gpu t4");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--from-gpu"), std::string::npos) << r.err;
  for (const std::string extra : {" --cluster t4=1x4 --pollux-types some", " --pollux-types blind"}) {
    r = tptest::run_cli(run + extra);
    EXPECT_EQ(r.exit_code, 2) << extra << ": " << r.err;
    EXPECT_NE(r.err.find("--pollux-types"), std::string::npos) << extra << ": " << r.err;
  }
  r = tptest::run_cli(run + " --cluster t4=1x4,h100=1x4 --step-times h100=" + dir.string() + ",h100=" + dir.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("two folders"), std::string::npos) << r.err;
  // --trials correct a moved group's steps: not the traces' own GPU's, not a measured group's.
  for (const std::string extra :
       {" --cluster t4=1x4,h100=1x4 --trials t4=" + dir.string(),
        " --cluster t4=1x4,h100=1x4 --step-times h100=" + dir.string() + " --trials h100=" + dir.string(),
        " --cluster t4=1x4,h100=1x4 --trials " + dir.string(), " --trials " + dir.string()}) {
    r = tptest::run_cli(run + extra);
    EXPECT_EQ(r.exit_code, 2) << extra << ": " << r.err;
    EXPECT_NE(r.err.find("option '--trials'"), std::string::npos) << extra << ": " << r.err;
  }
  // A moved group's node is the group's: said of --cluster, not of --gpus-per-node.
  r = tptest::run_cli(run + " --cluster t4=1x4,h100=1x12");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("option '--cluster': h100"), std::string::npos) << r.err;
}

}  // namespace

TEST(InputErrorText, NamesAnOptionAsAnOptionAndAColumnAsAColumn) {
  EXPECT_STREQ(trainplan::InputError("", 0, "--cv", "need at least 2 folds").what(), "option '--cv': need at least 2 folds");
  EXPECT_STREQ(trainplan::InputError("s.csv", 3, "batch", "must be > 0").what(), "s.csv:3: column 'batch': must be > 0");
  auto r = tptest::run_cli("evaluate --samples /nonexistent.csv --cv 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(r.err, "", 0, "--cv", {"1"}));  // checked before the file is read
}

TEST(CliUsage, NoVerbPrintsTheVerbsAndExitsTwo) {
  auto r = tptest::run_cli("");
  EXPECT_EQ(r.exit_code, 2);
  for (const char* verb : {"plan", "profile", "fit", "predict", "evaluate", "simulate", "serve"})
    EXPECT_NE(r.err.find(std::string("  ") + verb + " "), std::string::npos) << verb << "\n" << r.err;
  EXPECT_TRUE(r.out.empty());
}

// A word where a command is due that names none: said as such, with the
// commands there and the nearest one, in text and in --json.
TEST(CliUsage, AnUnknownCommandIsNamedWithTheNearestKnownOne) {
  auto r = tptest::run_cli("llm plann --model gpt3-175b");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'plann' is not a trainplan llm command; did you mean 'plan'?"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("predict"), std::string::npos) << r.err;
  r = tptest::run_cli("samples exprt --store x.db --json");
  EXPECT_EQ(r.exit_code, 2);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NE(j["error"].get<std::string>().find("did you mean 'export'?"), std::string::npos) << r.out;
  r = tptest::run_cli("zzzz");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'zzzz' is not a trainplan command ("), std::string::npos) << r.err;  // nothing near
  // A verb's own words are its arguments, not commands.
  EXPECT_EQ(tptest::run_cli("hardware t4").exit_code, 0);
}

// An option word a command does not have is named, with the nearest of its
// options, before any required option is asked for (CLI11 would say only
// "--samples is required" of "plan --sample x.csv").
// One idea, one name whichever verb asks (docs/USAGE.md): the verb's own name stays, the
// common one is taken beside it.
TEST(CliUsage, ACoverageAFoldCountAndATrialLimitHaveTheirCommonNameOnEveryVerb) {
  const std::vector<std::pair<std::string, std::string>> verbs = {
      {"llm predict", "--interval,--confidence"}, {"llm plan", "--interval,--confidence"},
      {"llm evaluate", "--interval,--confidence"}, {"watch", "--coverage,--confidence"},
      {"evaluate", "--cv,--folds"},                 {"speed", "--cv,--folds"},
      {"profile", "--trial-timeout,--timeout"},     {"llm profile", "--timeout,--trial-timeout"}};
  for (const auto& [verb, names] : verbs) {
    auto r = tptest::run_cli(verb + " --help");
    ASSERT_EQ(r.exit_code, 0) << verb << ": " << r.err;
    EXPECT_NE(r.out.find(names), std::string::npos) << verb << " --help:\n" << r.out;
  }
}

// An error about such an option names it as typed, in the message and in the JSON's field.
TEST(CliUsage, AnOptionOfTwoNamesIsNamedAsTyped) {
  const std::string samples = tptest::source_dir() + "/examples/lenet-mnist-samples.csv";
  auto folds = tptest::run_cli("evaluate --samples " + samples + " --folds 1 --json");
  EXPECT_EQ(folds.exit_code, 2) << folds.err;
  EXPECT_NE(folds.err.find("option '--folds': need at least 2 folds"), std::string::npos) << folds.err;
  EXPECT_EQ(folds.err.find("--cv"), std::string::npos) << folds.err;
  EXPECT_EQ(nlohmann::json::parse(folds.out)["field"], "--folds") << folds.out;
  auto cv = tptest::run_cli("evaluate --samples " + samples + " --cv 1");
  EXPECT_NE(cv.err.find("option '--cv': need at least 2 folds"), std::string::npos) << cv.err;
  // CLI11's own checks too.
  auto coverage = tptest::run_cli("watch --log /dev/null --target 0.9 --confidence 1.5");
  EXPECT_EQ(coverage.exit_code, 2) << coverage.err;
  EXPECT_NE(coverage.err.find("--confidence"), std::string::npos) << coverage.err;
  EXPECT_EQ(coverage.err.find("--coverage"), std::string::npos) << coverage.err;
}

TEST(CliUsage, AnUnknownOptionIsNamedWithTheNearestKnownOne) {
  auto r = tptest::run_cli("plan --sample x.csv --target 0.9");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--sample is not an option of trainplan plan (did you mean --samples?)"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("required"), std::string::npos) << r.err;
  r = tptest::run_cli("llm plan --modle gpt3-175b --json");
  EXPECT_EQ(r.exit_code, 2);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["field"], "--modle") << r.out;
  EXPECT_NE(j["error"].get<std::string>().find("did you mean --model?"), std::string::npos) << r.out;
  r = tptest::run_cli("hardware --zzzzzz");  // nothing near
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--zzzzzz is not an option of trainplan hardware; "), std::string::npos) << r.err;
  // Known options and a verb's own words pass; --version belongs to trainplan itself.
  EXPECT_EQ(tptest::run_cli("hardware t4 --json").exit_code, 0);
  EXPECT_EQ(tptest::run_cli("--version").exit_code, 0);
}

// CLI11's usage messages, said as what is wrong with the value, each exit 2.
TEST(CliUsage, UsageMessagesSayWhatIsWrongWithTheValue) {
  const std::string samples = tptest::source_dir() + "/examples/lenet-mnist-samples.csv";
  struct Case {
    std::string args, says;
  } cases[] = {
      {"plan --samples " + samples + " --target 90%", "--target: '90%' is not a number"},
      {"plan --samples " + samples + " --target 0.9 --max-workers 2.5", "--max-workers: '2.5' is not a value it takes (a count"},
      {"plan --samples " + samples + " --target --deadline 1h", "--target needs a value: what follows it, --deadline, is an option"},
      {"plan --samples " + samples + " --target 0.9 --target 0.8", "--target is given 2 times: give it once"},
      {"plan --samples " + samples + " --target 0.9 --deadline", "--deadline needs a value"},
      {"profile --workload lenet-mnist --time-trial-s 1h", "--time-trial-s: must be a number, got '1h'"},
      {"profile --workload lenet-mnist --time-trial-s nan", "--time-trial-s: must be from 0 to 3600, got 'nan'"},
      {"demo --max-workers -1", "--max-workers: -1 is out of range: it must be from 1 to 1048576"},
      {"demo --target nan", "--target: must be a finite number > 0"},
      {"watch --log x --target 0.9 --poll nan", "--poll: must be from 0.01 to 60, got 'nan'"},
      {"serve --max-rows -1", "--max-rows: '-1' is negative"},
      {"serve --max-body-bytes=-5", "--max-body-bytes: '-5' is negative"},
      {"bench simulate --min-gain nan", "--min-gain"},
      {"bench coconfig --data /nonexistent --tabu-seeds 0", "--tabu-seeds"},
      // A count's value that is a number but not a whole one, with a check on the option.
      {"demo --max-epochs 2.5", "--max-epochs: '2.5' is not a value it takes (a count is a whole number"},
      {"watch --log x --target 1 --batch 2.5", "--batch: '2.5' is not a value it takes (a count"},
      // An option where a count's value is due is no negative number.
      {"serve --max-rows --quiet", "--max-rows needs a value: what follows it, --quiet, is an option"},
  };
  for (const auto& c : cases) {
    const auto r = tptest::run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << ": " << r.err;
  }
  // A model name no model has is named with the option that gave it.
  for (const char* option : {"--model", "--time-model", "--metric-model"}) {
    const auto r = tptest::run_cli("fit --samples " + samples + " " + option + " global-batc --json");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["field"], option) << r.out;
    EXPECT_NE(j["error"].get<std::string>().find("did you mean 'global-batch'?"), std::string::npos) << r.out;
  }
  // `trainplan help [COMMAND...]` is `trainplan [COMMAND...] --help`.
  const auto help = tptest::run_cli("help llm plan");
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_NE(help.out.find("--global-batch"), std::string::npos) << help.out;
  // Help comes before any option's check, and is not taken as an option's value.
  for (const char* asked : {"help plan --samples", "plan --sample x.csv --help"}) {
    const auto r = tptest::run_cli(asked);
    EXPECT_EQ(r.exit_code, 0) << asked << ": " << r.err;
    EXPECT_NE(r.out.find("--deadline"), std::string::npos) << asked << ": " << r.out;
  }
}

// bench coconfig's other-GPU options go together and name the one at fault.
TEST(CoconfigBenchCli, OtherGpuOptionsGoTogether) {
  const std::string bench = "bench coconfig --data /nonexistent --models auto";
  struct Case {
    std::string args, option;
  };
  for (const auto& c : {Case{" --sample-from /x", "--gpu"}, Case{" --gpu zz", "--gpu"},
                        Case{" --gpu t4 --sample-from /x", "--sample-gpu"},
                        Case{" --gpu t4 --target-trials 3", "--target-trials"},
                        Case{" --gpu t4 --as-measured", "--sample-from"}, Case{" --target-trials 3", "--gpu"}}) {
    auto r = tptest::run_cli(bench + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_TRUE(tptest::names_input_error(r.err, "", 0, c.option)) << c.args << ": " << r.err;
  }
  // A folder that is not there is named, not reported as the source of learning curves.
  auto gone = tptest::run_cli(bench + " --gpu t4 --curves-from /nonexistent");
  EXPECT_EQ(gone.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(gone.err, "/nonexistent", 0, "--curves-from")) << gone.err;
  // An option that qualifies another is refused without it, not ignored.
  for (const char* alone : {" --bounds one-sided", " --early-stop-budget target", " --regret-limit 0.1"}) {
    auto r = tptest::run_cli(bench + alone);
    EXPECT_EQ(r.exit_code, 2) << alone;
    EXPECT_NE(r.err.find("requires"), std::string::npos) << alone << ": " << r.err;
  }
}

// A file a verb will write is checked before the verb's work: a folder that
// does not exist exits 2 naming the option, and nothing else is printed.
TEST(OutputPath, AFolderThatDoesNotExistFailsBeforeTheWork) {
  auto dir = tptest::temp_dir("output_path");
  const std::string nowhere = (dir / "no-such-folder" / "out.csv").string();
  auto in = tptest::write_file(dir / "in.csv", "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp\n"
                                               "8,8,1,1024,16,24,2048,8,1,1\n");
  auto llm = tptest::run_cli("llm predict --configs " + in + " --gpu a100-80gb -o " + nowhere);
  EXPECT_EQ(llm.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(llm.err, "", 0, "--out", {"no folder"})) << llm.err;
  auto sim = tptest::run_cli("simulate --philly " + in + " --jobs-csv " + nowhere + " --json");
  EXPECT_EQ(sim.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(sim.err, "", 0, "--jobs-csv", {"no folder"})) << sim.err;
  EXPECT_EQ(tptest::lines(sim.out).size(), 1u) << sim.out;  // the error's JSON alone: no results before it
}

// Values a typo gives, refused before any work and before anything is
// written: a search space of 5 x 10^8 cells (which would take gigabytes), an
// image that would break the manifest's YAML, a folder as a job's log, a
// transformer placeholder in a data-parallel template (no store is made).
TEST(BadOptions, TyposAreRefusedBeforeTheWork) {
  const std::string samples = tptest::source_dir() + "/examples/lenet-mnist-samples.csv";
  const std::string plan = "plan --samples " + samples + " --target 0.95 --deadline 10m";
  auto huge = tptest::run_cli(plan + " --max-workers 100000000");
  EXPECT_EQ(huge.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(huge.err, "", 0, "--max-workers", {"500000000"})) << huge.err;
  for (const char* image : {"'a: b'", "'#x'", "'\"q'", "'img foo'"}) {
    auto r = tptest::run_cli(plan + " --emit k8s --image " + image);
    EXPECT_EQ(r.exit_code, 2) << image;
    EXPECT_TRUE(tptest::names_input_error(r.err, "", 0, "--image")) << r.err;
  }
  auto ok = tptest::run_cli(plan + " --emit k8s --image registry.example.com:5000/team/train:1.2@sha256:abc");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  auto dir = tptest::temp_dir("bad_options");
  auto watch = tptest::run_cli("watch --log " + dir.string() + " --target 0.9");
  EXPECT_EQ(watch.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(watch.err, dir.string(), 0, "--log")) << watch.err;
  const auto store = dir / "s.db";
  auto profile = tptest::run_cli("profile --cmd 'echo {hidden} {batch}' --store " + store.string() +
                                 " --batches 16 --workers 1 --epochs 1");
  EXPECT_EQ(profile.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(profile.err, "", 0, "--cmd", {"{hidden}"})) << profile.err;
  EXPECT_FALSE(std::filesystem::exists(store));
}

// A rigid job whose run alone needs more scheduling rounds than a simulation
// takes at --interval is refused before the run, naming the option; at
// --interval 0 (each event) the same job simulates at once.
TEST(BadOptions, AJobOfMoreRoundsThanASimulationTakesIsRefused) {
  auto dir = tptest::temp_dir("sim_rounds");
  auto in = tptest::write_file(dir / "p.csv", "timestamp,duration,num_gpus,gpu_time,cluster\n"
                                              "0,1e13,1,1e13,x\n100,50,2,100,x\n");
  auto ticks = tptest::run_cli("simulate --philly " + in + " --policy fifo --interval 60");
  EXPECT_EQ(ticks.exit_code, 2) << ticks.err;
  EXPECT_TRUE(tptest::names_input_error(ticks.err, "", 0, "--interval", {"--interval 0"})) << ticks.err;
  auto events = tptest::run_cli("simulate --philly " + in + " --policy fifo --interval 0 --json");
  EXPECT_EQ(events.exit_code, 0) << events.err;
}

// A trace's step time shorter than any training step (1e-300 s gave an
// infinite TFLOP/s) is refused, naming file, line and column.
TEST(BadInputFile, AStepTimeShorterThanAnyStepIsRefused) {
  auto dir = tptest::temp_dir("short_step");
  std::filesystem::create_directories(dir / "net");
  const auto file = tptest::write_file(dir / "net" / "placements.csv",
                                       "placement,local_bsz,step_time,sync_time\n1,32,0.05,0\n1,64,1e-300,0\n");
  auto r = tptest::run_cli("transfer --from " + (dir / "net").string() + " --from-gpu t4 --to-gpu h100 --batches 32");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(tptest::names_input_error(r.err, file, 3, "step_time", {"shorter than any training step"})) << r.err;
}
