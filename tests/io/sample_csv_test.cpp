#include "io/sample_csv.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "test_util.h"

#include <algorithm>
#include <sstream>
#include <utility>

using namespace trainplan;

namespace {

// Expects parse to throw an InputError whose message names line and column.
void expect_error(const std::string& text, long line, const std::string& field, const std::string& fragment) {
  try {
    io::parse_samples_csv(text, "s.csv");
    FAIL() << "expected an error for:\n" << text;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "s.csv");
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(SampleCsv, ReadsFormatLineAndOptionalColumns) {
  auto s = io::parse_samples_csv(
      "# trainplan: metric=min dataset_size=1000\n"
      "batch,workers,epochs,epoch_time_s,metric,nodes,model\n"
      "32,2,3,10.5,0.25,1,m\n"
      "64,4,1,6.0,,2,m\n",
      "s.csv");
  EXPECT_EQ(s.direction, MetricDirection::kMin);
  ASSERT_TRUE(s.dataset_size);
  EXPECT_EQ(*s.dataset_size, 1000);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_DOUBLE_EQ(s.samples[0].batch, 32);
  EXPECT_EQ(s.samples[0].workers, 2);
  EXPECT_DOUBLE_EQ(*s.samples[0].metric, 0.25);
  EXPECT_FALSE(s.samples[1].metric.has_value());
  EXPECT_EQ(s.samples[1].nodes, 2);
  EXPECT_DOUBLE_EQ(s.samples[1].global_batch(), 256);
}

// A key of the format line a typo away from a known one is refused with the
// known one named; a key of a newer version is read past.
TEST(SampleCsv, AMisspeltFormatKeyIsRefused) {
  const std::string rows = "batch,workers,epochs,epoch_time_s,metric\n8,1,1,1,0.5\n";
  auto e = tptest::input_error_of([&] { io::parse_samples_csv("# trainplan: datset_size=100\n" + rows, "s.csv"); });
  EXPECT_EQ(e.file(), "s.csv");
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.field(), "datset_size");
  EXPECT_NE(e.message().find("did you mean 'dataset_size'?"), std::string::npos) << e.what();
  EXPECT_EQ(tptest::input_error_of([&] { io::parse_samples_csv("# trainplan: Metric=min\n" + rows, "s.csv"); }).field(),
            "Metric");
  // A newer key, even one that extends a known one, is read past.
  auto s = io::parse_samples_csv("# trainplan: metric=min trial_seconds=12 metrics=3\n" + rows, "s.csv");
  EXPECT_EQ(s.direction, MetricDirection::kMin);
  // The direction under its own name, and a format line in other case, would leave a loss
  // maximised without a word: both refused, with what to write.
  auto d = tptest::input_error_of([&] { io::parse_samples_csv("# trainplan: direction=min\n" + rows, "s.csv"); });
  EXPECT_EQ(d.field(), "direction");
  EXPECT_NE(d.message().find("metric=min or metric=max"), std::string::npos) << d.what();
  auto c = tptest::input_error_of([&] { io::parse_samples_csv("# TrainPlan: metric=min\n" + rows, "s.csv"); });
  EXPECT_EQ(c.line(), 1);
  EXPECT_NE(c.message().find("begins '# trainplan:', lowercase"), std::string::npos) << c.what();
}

// A header in one column with ';' or tabs between the names is a CSV in
// another locale's export: the message says so.
TEST(SampleCsv, AnotherSeparatorIsNamed) {
  for (const auto& [csv, words] :
       {std::pair<std::string, std::string>{"batch;workers;epochs;epoch_time_s;metric\n8;1;1;1;0.5\n", "';'"},
        {"batch\tworkers\tepochs\tepoch_time_s\tmetric\n8\t1\t1\t1\t0.5\n", "tabs"}}) {
    const std::string text = csv;  // clang does not capture a structured binding in a lambda
    auto e = tptest::input_error_of([&] { io::parse_samples_csv(text, "s.csv"); });
    EXPECT_EQ(e.line(), 1);
    EXPECT_NE(e.message().find("the header is separated by " + words + ": trainplan reads commas"), std::string::npos)
        << e.what();
  }
}

TEST(SampleCsv, DirectionDefaultsToMax) {
  auto s = io::parse_samples_csv("batch,workers,epochs,epoch_time_s,metric\n8,1,1,1,0.5\n", "s.csv");
  EXPECT_EQ(s.direction, MetricDirection::kMax);
}

TEST(SampleCsv, RoundTrips) {
  auto s = io::parse_samples_csv("# trainplan: metric=min\nbatch,workers,epochs,epoch_time_s,metric\n8,1,2,1.5,0.5\n16,2,1,0.75,\n", "s.csv");
  auto back = io::parse_samples_csv(io::format_samples_csv(s), "t.csv");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back.direction, MetricDirection::kMin);
  EXPECT_DOUBLE_EQ(back.samples[0].epoch_time_s, 1.5);
  EXPECT_FALSE(back.samples[1].metric);
}

// Times predicted on another GPU carry the transfer's error on the format line.
TEST(SampleCsv, TheTransfersErrorRoundTripsAndIsChecked) {
  const std::string rows = "batch,workers,epochs,epoch_time_s,metric\n8,1,2,1.5,0.5\n";
  auto s = io::parse_samples_csv("# trainplan: times_predicted_from=t4 times_predicted_log_sd=0.25\n" + rows, "s.csv");
  ASSERT_TRUE(s.times_predicted_log_sd);
  EXPECT_DOUBLE_EQ(*s.times_predicted_log_sd, 0.25);
  auto back = io::parse_samples_csv(io::format_samples_csv(s), "t.csv");
  EXPECT_EQ(back.times_predicted_from, "t4");
  EXPECT_DOUBLE_EQ(*back.times_predicted_log_sd, 0.25);
  EXPECT_FALSE(io::parse_samples_csv("# trainplan: metric=max\n" + rows, "s.csv").times_predicted_log_sd);
  for (const char* bad : {"-0.1", "nan", "x", "11"})
    expect_error(std::string("# trainplan: times_predicted_from=t4 times_predicted_log_sd=") + bad + "\n" + rows, 1,
                 "times_predicted_log_sd", "must be a number from 0 to 10");
  expect_error("# trainplan: times_predicted_log_sd=0.25\n" + rows, 1, "times_predicted_log_sd",
               "give times_predicted_from=NAME with it");
}

TEST(SampleCsv, NamesWithCommasAndQuotesRoundTrip) {
  // A --name (or a CPU's model string) with a comma wrote a row of one field too many.
  auto s = io::parse_samples_csv("batch,workers,epochs,epoch_time_s,metric\n8,1,1,0.5,0.6\n", "s.csv");
  s.samples[0].model = "my,model \"x\"";
  s.samples[0].hardware = "AMD EPYC, 2 cores";
  auto back = io::parse_samples_csv(io::format_samples_csv(s), "t.csv");
  ASSERT_EQ(back.samples.size(), 1u);
  EXPECT_EQ(back.samples[0].model, "my,model \"x\"");
  EXPECT_EQ(back.samples[0].hardware, "AMD EPYC, 2 cores");
}

TEST(SampleCsv, CurvePointsAreReadApartFromTrialsAndRoundTrip) {
  auto s = io::parse_samples_csv(
      "batch,workers,epochs,epoch_time_s,metric,source\n"
      "8,1,3,1.5,0.7,trial\n"
      "8,1,1,1.5,0.4,curve\n"
      "8,1,2,1.5,0.6,curve\n"
      "16,2,1,0.75,0.5,\n",
      "s.csv");
  ASSERT_EQ(s.size(), 2u);  // the trials: a curve point is not one
  ASSERT_EQ(s.curve.size(), 2u);
  EXPECT_DOUBLE_EQ(s.curve[1].epochs, 2);
  EXPECT_DOUBLE_EQ(*s.curve[1].metric, 0.6);
  // metric_runs leaves the curve out unless asked.
  EXPECT_EQ(s.metric_runs().at({8.0, 1}).size(), 1u);
  EXPECT_EQ(s.metric_runs(true).at({8.0, 1}).size(), 3u);
  auto back = io::parse_samples_csv(io::format_samples_csv(s), "t.csv");
  ASSERT_EQ(back.size(), 2u);
  ASSERT_EQ(back.curve.size(), 2u);
  EXPECT_DOUBLE_EQ(*back.curve[0].metric, 0.4);
  // Without curve points the column is not written.
  SampleSet plain = s;
  plain.curve.clear();
  const auto columns = [](const std::string& csv) {  // of the first line that is not a comment
    std::vector<std::string> out;
    for (const auto& l : tptest::lines(csv)) {
      if (l.rfind("#", 0) == 0) continue;
      std::stringstream in(l);
      for (std::string c; std::getline(in, c, ',');) out.push_back(c);
      break;
    }
    return out;
  };
  const auto with = columns(io::format_samples_csv(s)), without = columns(io::format_samples_csv(plain));
  EXPECT_EQ(std::count(with.begin(), with.end(), "source"), 1);
  EXPECT_EQ(std::count(without.begin(), without.end(), "source"), 0);
  EXPECT_EQ(without.size() + 1, with.size());  // the other columns alike
}

TEST(SampleCsv, RejectsBadCurvePoints) {
  expect_error("batch,workers,epochs,epoch_time_s,metric,source\n8,1,3,1.5,0.7,trial\n8,1,1,1.5,0.4,guess\n", 3,
               "source", "'trial' or 'curve'");
  expect_error("batch,workers,epochs,epoch_time_s,metric,source\n8,1,3,1.5,0.7,trial\n8,1,1,1.5,,curve\n", 3,
               "metric", "needs a metric");
  expect_error("batch,workers,epochs,epoch_time_s,metric,source\n8,1,1,1.5,0.4,curve\n", 0, "", "no trial samples");
}

TEST(SampleCsv, RejectsMissingColumn) {
  expect_error("batch,workers,epochs,metric\n8,1,1,0.5\n", 1, "epoch_time_s", "missing");
}

TEST(SampleCsv, RejectsNonNumber) {
  expect_error("batch,workers,epochs,epoch_time_s,metric\n8,1,1,1,0.5\n8,x,1,1,0.5\n", 3, "workers", "not a number");
}

TEST(SampleCsv, RejectsNaNAndInf) {
  expect_error("batch,workers,epochs,epoch_time_s,metric\n8,1,1,nan,0.5\n", 2, "epoch_time_s", "not finite");
  expect_error("batch,workers,epochs,epoch_time_s,metric\n8,1,1,1,inf\n", 2, "metric", "not finite");
}

// A metric past +-1e12 overflowed the fits (1e308: a cross-validated error
// of inf, a point outside its own interval); no metric a run trains to comes near.
TEST(SampleCsv, RejectsAMetricPastATrillion) {
  expect_error("batch,workers,epochs,epoch_time_s,metric\n8,1,1,1,1e308\n", 2, "metric", "within +-1e+12");
  expect_error("batch,workers,epochs,epoch_time_s,metric\n8,1,1,1,-2e12\n", 2, "metric", "within +-1e+12");
  EXPECT_NO_THROW(io::parse_samples_csv("batch,workers,epochs,epoch_time_s,metric\n8,1,1,1,35000.5\n", "s.csv"));
}

TEST(SampleCsv, RejectsNonPositiveTimeAndBatch) {
  expect_error("batch,workers,epochs,epoch_time_s,metric\n8,1,1,0,0.5\n", 2, "epoch_time_s", "> 0");
  expect_error("batch,workers,epochs,epoch_time_s,metric\n8,1,1,-3,0.5\n", 2, "epoch_time_s", "> 0");
  expect_error("batch,workers,epochs,epoch_time_s,metric\n0,1,1,1,0.5\n", 2, "batch", "> 0");
}

// A batch past an int's range, and more nodes than workers, are named
// where they are rather than failing later in the planner.
TEST(SampleCsv, RejectsEpochTimesPastABillionSecondsAndSaysWhatIsOutOfRange) {
  // 1e160 s squared overflowed the fits' sums of squares; no epoch lasts 30 years.
  try {
    io::parse_samples_csv("batch,workers,epochs,epoch_time_s,metric\n8,1,1,1e160,0.5\n", "s.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("must be in [1e-09, 1e+09] s"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("s.csv:2"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(io::parse_samples_csv("batch,workers,epochs,epoch_time_s,metric\n8,1,1,9e8,0.5\n", "s.csv"));
  // A number past the doubles' range is named as such, not as "not a number".
  try {
    io::parse_samples_csv("batch,workers,epochs,epoch_time_s,metric\n8,1,1,9e-311,0.5\n", "s.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("outside the range"), std::string::npos) << e.what();
  }
}

TEST(SampleCsv, RejectsHugeBatchesAndMoreNodesThanWorkers) {
  expect_error("batch,workers,epochs,epoch_time_s,metric\n1e12,1,1,1,0.5\n", 2, "batch", "at most 1e9");
  // An epoch count past the planner's largest made the curve fits infinite (an internal error, and nulls).
  expect_error("batch,workers,epochs,epoch_time_s,metric\n8,1,1e308,1,0.5\n", 2, "epochs", "[0, 1000000]");
  expect_error("batch,workers,epochs,epoch_time_s,metric,nodes\n16,4,1,1,0.5,1\n16,4,1,1,0.5,9\n", 3, "nodes",
               "9 nodes for 4 workers");
}

TEST(SampleCsv, RejectsEmptyFileAndNoRows) {
  expect_error("", 0, "", "empty");
  expect_error("# trainplan: metric=max\n", 0, "", "empty");
  expect_error("batch,workers,epochs,epoch_time_s,metric\n", 0, "", "no samples");
}

TEST(SampleCsv, RejectsDuplicateHeader) {
  expect_error("batch,workers,batch,epochs,epoch_time_s,metric\n", 1, "batch", "duplicate");
  // Two that differ only in case: which is meant is not the reader's guess (the exact name was read,
  // the other passed over).
  expect_error("batch,workers,epochs,epoch_time_s,metric,Batch\n64,1,1,2,0.5,32\n", 1, "batch", "ambiguous");
}

TEST(SampleCsv, RejectsWrongFieldCount) {
  // A short line names the first column it lacks; a long one the header's
  // last, and quotes its first field past it.
  expect_error("batch,workers,epochs,epoch_time_s,metric\n8,1,1,1\n", 2, "metric", "expected 5 fields");
  expect_error("batch,workers,epochs,epoch_time_s,metric\n8,1,1,1,1,7\n", 2, "metric", "field 6, '7', has none");
}

TEST(SampleCsv, RejectsBadDirection) {
  expect_error("# trainplan: metric=up\nbatch,workers,epochs,epoch_time_s,metric\n8,1,1,1,1\n", 1, "metric", "max");
}

// A written file reads back to the same doubles, to the last bit: a plan on
// an exported store answers as the store does.
TEST(SampleCsv, WrittenFiguresReadBackExactly) {
  SampleSet set;
  set.direction = MetricDirection::kMax;
  Sample s;
  s.batch = 16, s.workers = 1, s.epochs = 3;
  s.epoch_time_s = 1.38631685995113174;
  s.metric = 0.2000000000016;
  s.time_spread = 0.0123456789012345;
  set.samples.push_back(s);
  s.batch = 32, s.epoch_time_s = 1.0 / 3.0, s.metric = 0.2000000000032, s.time_spread = 1e-17;
  set.samples.push_back(s);
  const auto path = tptest::temp_dir("sample_csv_exact") / "s.csv";
  io::write_samples_csv(path.string(), set);
  const SampleSet back = io::read_samples_csv(path.string());
  ASSERT_EQ(back.samples.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back.samples[i].epoch_time_s, set.samples[i].epoch_time_s) << i;
    EXPECT_EQ(back.samples[i].metric, set.samples[i].metric) << i;
    EXPECT_EQ(back.samples[i].time_spread, set.samples[i].time_spread) << i;
  }
}

// The format line is read wherever it stands among the comments before the
// header (an exporter's comment first dropped a metric's direction: a word
// error rate planned as a metric to maximise), once, and never after it.
TEST(SampleCsv, TheFormatLineIsReadAfterOtherCommentsAndRefusedAfterTheHeader) {
  const std::string rows = "batch,workers,epochs,epoch_time_s,metric\n32,2,3,10.5,0.25\n";
  auto s = io::parse_samples_csv("# exported 2024-05-01\n\n# trainplan: metric=min dataset_size=1000\n" + rows, "s.csv");
  EXPECT_EQ(s.direction, MetricDirection::kMin);
  EXPECT_EQ(s.dataset_size, 1000);
  expect_error("# x\n# trainplan: metric=min\n# trainplan: metric=max\n" + rows, 3, "", "second format line");
  expect_error("# x\n\n# trainplan: metric=sideways\n" + rows, 3, "metric", "");
  expect_error("batch,workers,epochs,epoch_time_s,metric\n# trainplan: metric=min\n32,2,3,10.5,0.25\n", 2, "",
               "before the header");
}

// A byte-order mark on the header's line, after a format line put in front of
// a spreadsheet's export, is not part of the first column's name (the column
// was never read: 20 curve points were fitted as trials).
TEST(SampleCsv, AByteOrderMarkOnTheHeadersLineIsDropped) {
  auto s = io::parse_samples_csv(
      "# trainplan: metric=max\n\xEF\xBB\xBFsource,batch,workers,epochs,epoch_time_s,metric\n"
      "trial,32,2,3,10.5,0.25\ncurve,32,2,1,5,0.1\n",
      "s.csv");
  EXPECT_EQ(s.samples.size(), 1u);
  EXPECT_EQ(s.curve.size(), 1u);
}

TEST(SampleCsv, ADeclaredMetricRangeRoundTripsToTheLastDigit) {
  auto s = io::parse_samples_csv(
      "# trainplan: metric=max metric_range=0:0.9796004\nbatch,workers,epochs,epoch_time_s,metric\n"
      "32,2,3,10.5,0.9796003\n",
      "s.csv");
  const auto path = tptest::temp_dir("sample_csv_range") / "s.csv";
  io::write_samples_csv(path.string(), s);
  const SampleSet back = io::read_samples_csv(path.string());
  ASSERT_TRUE(back.declared_metric_range);
  EXPECT_EQ(back.declared_metric_range->hi, 0.9796004);
}

// A configuration's nodes stated on some rows and blank on others would be
// two configurations of the same runs: refused, naming both lines.
TEST(SampleCsv, NodesStatedOnSomeRowsOfAConfigurationAndBlankOnOthersAreRefused) {
  expect_error("batch,workers,epochs,epoch_time_s,metric,nodes\n32,2,1,10,0.2,1\n32,2,2,10,0.3,\n", 3, "nodes",
               "line 2 gives 1");
  // One worker runs on one node, stated or not; other configurations may leave it blank.
  auto s = io::parse_samples_csv(
      "batch,workers,epochs,epoch_time_s,metric,nodes\n32,1,1,10,0.2,1\n32,1,2,10,0.3,\n64,2,1,6,0.2,\n", "s.csv");
  EXPECT_EQ(s.samples.size(), 3u);
}

// Two columns whose names differ only in case are neither read: "ambiguous",
// not "missing"; a field of megabytes is not echoed whole.
TEST(SampleCsv, AnAmbiguousColumnAndAHugeFieldAreSaidAsSuch) {
  expect_error("Batch,workers,epochs,epoch_time_s,metric,BATCH\n32,2,1,10,0.2,32\n", 1, "batch", "ambiguous");
  try {
    io::parse_samples_csv("batch,workers,epochs,epoch_time_s,metric\n32,2,1,10," + std::string(100000, '9') + "x\n",
                          "s.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_LT(std::string(e.what()).size(), 300u) << e.what();
    EXPECT_NE(std::string(e.what()).find("100001 characters"), std::string::npos) << e.what();
  }
}
