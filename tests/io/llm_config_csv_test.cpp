// Transformer configuration CSVs: columns by name with defaults, errors
// naming file, line and column; quoted fields; the Korthikanti readers.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <utility>
#include <vector>

#include "core/error.h"
#include "io/csv.h"
#include "io/korthikanti_csv.h"
#include "io/llm_config_csv.h"
#include "structure/parallel_layout.h"
#include "structure/transformer.h"
#include "test_util.h"

using namespace trainplan;

namespace {

const char* kHeader = "gpus,global_batch,micro_batch,hidden,heads,layers,seq,tp,dp,pp";

std::string write(const std::string& text) {
  static int n = 0;
  auto d = tptest::temp_dir("llmcsv");
  return tptest::write_file(d / ("c" + std::to_string(n++) + ".csv"), text);
}

}  // namespace

// A Llama-shaped row: rotary positions (no s·h parameters) and bias-free
// linears with RMSNorm, as the zoo's Llama; Megatron-LM's column name read too.
TEST(LlmConfigCsv, RotaryPositionsAndNoBiasesDescribeALlama) {
  auto path = write(std::string(kHeader) + ",vocab,kv_groups,ffn_hidden,gated_mlp,tied_embeddings,position_embedding,biases\n" +
                    "8,128,1,8192,64,80,8192,8,1,1,128256,8,28672,true,false,rope,false\n" +
                    "8,128,1,8192,64,80,8192,8,1,1,128256,8,28672,true,false,learned_absolute,\n");
  auto t = io::read_llm_configs(path);
  ASSERT_EQ(t.rows.size(), 2u);
  const auto zoo = *structure::find_transformer("llama3-70b");
  EXPECT_FALSE(t.rows[0].spec.learned_positions);
  EXPECT_FALSE(t.rows[0].spec.biases);
  EXPECT_DOUBLE_EQ(t.rows[0].spec.total_params(), zoo.total_params());
  EXPECT_TRUE(t.rows[1].spec.learned_positions);
  EXPECT_TRUE(t.rows[1].spec.biases);
  EXPECT_GT(t.rows[1].spec.total_params(), t.rows[0].spec.total_params());
  auto megatron = io::read_llm_configs(
      write(std::string(kHeader) + ",position_embedding_type\n8,128,1,4096,32,32,4096,8,1,1,rope\n"));
  EXPECT_FALSE(megatron.rows[0].spec.learned_positions);
  const std::string bad = write(std::string(kHeader) + ",position_embedding\n8,128,1,4096,32,32,4096,8,1,1,alibi\n");
  try {
    io::read_llm_configs(bad);
    ADD_FAILURE() << "an unknown position embedding was read";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), bad);
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.field(), "position_embedding");
  }
}

TEST(LlmConfigCsv, ReadsColumnsByNameWithDefaults) {
  auto path = write(std::string("note,") + kHeader + ",recompute,precision\n" +
                    "a,64,64,1,12288,96,96,2048,8,1,8,selective,bf16\n");
  auto t = io::read_llm_configs(path);
  ASSERT_EQ(t.rows.size(), 1u);
  const auto& r = t.rows[0];
  EXPECT_EQ(r.line, 2);
  EXPECT_EQ(r.spec.vocab, 51200);
  EXPECT_EQ(r.spec.ffn(), 4 * 12288);
  EXPECT_EQ(r.layout.virtual_stages, 1);
  EXPECT_EQ(r.layout.recompute, structure::Recompute::kSelective);
  EXPECT_EQ(r.layout.precision, structure::Precision::kBf16);
  EXPECT_FALSE(r.layout.sequence_parallel);
  EXPECT_EQ(r.layout.micro_batches(), 64);
}

TEST(LlmConfigCsv, TiedEmbeddingsDefaultToTrue) {
  auto path = write(std::string(kHeader) + ",tied_embeddings\n" + "64,64,1,12288,96,96,2048,8,1,8,false\n" +
                    "64,64,1,12288,96,96,2048,8,1,8,\n" + "64,64,1,12288,96,96,2048,8,1,8,true\n");
  auto t = io::read_llm_configs(path);
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_FALSE(t.rows[0].spec.tied_embeddings);
  EXPECT_TRUE(t.rows[1].spec.tied_embeddings);
  EXPECT_TRUE(t.rows[2].spec.tied_embeddings);
  auto bad = write(std::string(kHeader) + ",tied_embeddings\n" + "64,64,1,12288,96,96,2048,8,1,8,maybe\n");
  EXPECT_EQ(tptest::input_error_of([&] { io::read_llm_configs(bad); }).field(), "tied_embeddings");
}

// Spreadsheets and pandas write True, FALSE, BF16: the words are read in any case.
TEST(LlmConfigCsv, WordsAreReadInAnyCase) {
  auto path = write(std::string(kHeader) + ",recompute,precision,sequence_parallel,distributed_optimizer\n" +
                    "64,64,1,12288,96,96,2048,8,1,8,Selective,BF16,True,FALSE\n");
  auto t = io::read_llm_configs(path);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0].layout.recompute, structure::Recompute::kSelective);
  EXPECT_EQ(t.rows[0].layout.precision, structure::Precision::kBf16);
  EXPECT_TRUE(t.rows[0].layout.sequence_parallel);
  EXPECT_FALSE(t.rows[0].layout.distributed_optimizer);
}

TEST(LlmConfigCsv, ASpreadsheetsFileReadsTheSame) {
  // A byte-order mark, Windows line ends, headers in capitals and the
  // spellings PyTorch and spreadsheets use.
  auto path = write(std::string("\xEF\xBB\xBF") +
                    "GPUs,Global_Batch,Micro_Batch,Hidden,Heads,Layers,Seq,TP,DP,PP,Recompute,Precision,Sequence_Parallel\r\n" +
                    "64,64,1,12288,96,96,2048,8,1,8,selective (attention),bfloat16,yes\r\n" +
                    "64,64,1,12288,96,96,2048,8,1,8,off,float16,no\r\n");
  auto t = io::read_llm_configs(path);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].layout.tp, 8);
  EXPECT_EQ(t.rows[0].layout.recompute, structure::Recompute::kSelective);
  EXPECT_EQ(t.rows[0].layout.precision, structure::Precision::kBf16);
  EXPECT_TRUE(t.rows[0].layout.sequence_parallel);
  EXPECT_EQ(t.rows[1].layout.recompute, structure::Recompute::kNone);
  EXPECT_EQ(t.rows[1].layout.precision, structure::Precision::kFp16);
  EXPECT_FALSE(t.rows[1].layout.sequence_parallel);
  // Two columns that differ only in case name neither: the exact name still reads.
  auto both = io::CsvTable::parse("tp,TP\n1,2\n", "both.csv");
  EXPECT_EQ(both.column("TP"), 1);
  EXPECT_EQ(both.column("Tp"), -1);
}

TEST(LlmConfigCsv, ErrorsNameLineAndColumn) {
  struct Case {
    std::string row;
    std::string column;
  };
  for (const auto& c : {Case{"8,8,1,1024,16,24,2048,3,1,1", "gpus"},        // 8 != 3 x 1 x 1
                        Case{"6,6,1,1024,16,24,2048,3,2,1", "tp"},          // 3 does not divide 16 heads
                        Case{"8,12,5,1024,16,24,2048,8,1,1", "global_batch"},  // 5 x 1 does not divide 12
                        Case{"56,56,1,1024,16,24,2048,8,1,7", "pp"},       // 7 stages do not divide 24 layers
                        Case{"8,8,1,1000,16,24,2048,8,1,1", "heads"},      // 1000 not a multiple of 16
                        Case{"8,8,x,1024,16,24,2048,8,1,1", "micro_batch"},
                        Case{"8,8,1,1024,16,24,2048,8,1", "pp"}}) {        // a field short: the first it lacks
    auto path = write(std::string(kHeader) + "\n8,8,1,1024,16,24,2048,8,1,1\n" + c.row + "\n");
    auto e = tptest::input_error_of([&] { io::read_llm_configs(path); });
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), 3) << c.row;
    EXPECT_EQ(e.field(), c.column) << c.row << ": " << e.what();
  }
  // Given end stages: read where given, 0 (the even share) where empty,
  // refused naming the column where they cannot split the layers.
  auto ends = write(std::string(kHeader) + ",first_stage_layers,last_stage_layers\n"
                    "32,32,1,1024,16,24,2048,8,1,4,5,7\n32,32,1,1024,16,24,2048,8,1,4,,\n");
  auto read = io::read_llm_configs(ends);
  EXPECT_EQ(read.rows[0].layout.first_stage_layers, 5);
  EXPECT_EQ(read.rows[0].layout.last_stage_layers, 7);
  EXPECT_FALSE(read.rows[1].layout.uneven());
  for (auto [cells, column] : {std::pair{"5,8", "last_stage_layers"}, {"-1,", "first_stage_layers"},
                               {"x,", "first_stage_layers"}}) {
    auto f = write(std::string(kHeader) + ",first_stage_layers,last_stage_layers\n32,32,1,1024,16,24,2048,8,1,4," +
                   cells + "\n");
    auto e = tptest::input_error_of([&] { io::read_llm_configs(f); });
    EXPECT_EQ(e.line(), 2) << cells;
    EXPECT_EQ(e.field(), column) << cells << ": " << e.what();
  }
  auto bad = write(std::string(kHeader) + ",recompute\n8,8,1,1024,16,24,2048,8,1,1,some\n");
  EXPECT_EQ(tptest::input_error_of([&] { io::read_llm_configs(bad); }).field(), "recompute");
  auto no_time = write(std::string(kHeader) + "\n8,8,1,1024,16,24,2048,8,1,1\n");
  EXPECT_EQ(tptest::input_error_of([&] { io::read_llm_configs(no_time, true); }).field(), "iteration_time_s");
}

// The groups' communication seconds of `trainplan llm profile`: in a measured
// file read where given, absent where empty or missing, never negative; in a
// file of configurations to predict not read at all.
TEST(LlmConfigCsv, CommunicationColumnsAreOptionalSeconds) {
  const std::string header = std::string(kHeader) + ",iteration_time_s";
  auto measured = [&](const std::string& more, const std::string& cells) {
    return io::read_llm_configs(write(header + more + "\n8,8,1,1024,16,24,2048,8,1,1,1.5" + cells + "\n"), true);
  };
  auto rows = measured(",tp_comm_s,pp_comm_s,dp_comm_s", ",0.25,,0").rows;
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(*rows[0].tp_comm_s, 0.25);
  EXPECT_FALSE(rows[0].pp_comm_s);
  EXPECT_DOUBLE_EQ(*rows[0].dp_comm_s, 0);
  EXPECT_FALSE(measured("", "").rows[0].tp_comm_s);
  // pandas writes a missing measurement as NaN: no value, as an empty cell.
  EXPECT_FALSE(measured(",dp_comm_s", ",NaN").rows[0].dp_comm_s);
  for (const char* bad : {"-0.1", "inf", "slow"}) {
    auto e = tptest::input_error_of([&] { measured(",dp_comm_s", std::string(",") + bad); });
    EXPECT_EQ(e.line(), 2) << bad;
    EXPECT_EQ(e.field(), "dp_comm_s") << bad;
    // Configurations to predict: the cell is not read, whatever it holds.
    auto f = write(header + ",dp_comm_s\n8,8,1,1024,16,24,2048,8,1,1,OOM," + bad + "\n");
    auto config = io::read_llm_configs(f).rows;
    ASSERT_EQ(config.size(), 1u) << bad;
    EXPECT_FALSE(config[0].dp_comm_s);
    EXPECT_FALSE(config[0].iteration_time_s);
  }
}

TEST(Csv, QuotedFieldsHoldCommasAndQuotes) {
  EXPECT_EQ(io::split_csv_line(R"(a,"b, c","say ""hi""",d)"),
            (std::vector<std::string>{"a", "b, c", "say \"hi\"", "d"}));
  EXPECT_EQ(io::csv_field("b, c"), "\"b, c\"");
  EXPECT_EQ(io::csv_field("plain"), "plain");
  EXPECT_EQ(io::csv_field("two\nlines"), "\"two\nlines\"");
  // Text after a closing quote joins it as written; spaces around a field, inside quotes too, are trimmed.
  EXPECT_EQ(io::split_csv_line(R"("my" cpu,"AMD EPYC" 2 cores, "256 " ,x)"),
            (std::vector<std::string>{"my cpu", "AMD EPYC 2 cores", "256", "x"}));
  // Hexadecimal and infinite numbers are no measurements.
  for (const char* bad : {"0x10", "0X1p3", "inf", "nan", "1e400", "12abc", ""}) EXPECT_FALSE(io::parse_finite(bad)) << bad;
  EXPECT_DOUBLE_EQ(*io::parse_finite("1e5"), 1e5);
  EXPECT_DOUBLE_EQ(*io::parse_finite("-0.25"), -0.25);
}

// A quoted field may hold a line break (the record is named by its first
// line); a quote never closed is an error naming the line it opened on; a
// file whose lines end in a carriage return alone reads as any other.
TEST(Csv, QuotedLineBreaksUnclosedQuotesAndCarriageReturns) {
  auto t = io::CsvTable::parse("a,b\n1,\"x\ny\"\n2,z\n", "f.csv");
  ASSERT_EQ(t.rows().size(), 2u);
  EXPECT_EQ(t.rows()[0].line, 2);
  EXPECT_EQ(t.rows()[0].fields[1], "x\ny");
  EXPECT_EQ(t.rows()[1].line, 4);
  auto e = tptest::input_error_of([] { io::CsvTable::parse("a,b\n1,2\n3,\"open\n4,5\n", "f.csv"); });
  EXPECT_EQ(e.line(), 3);
  EXPECT_NE(e.message().find("never closed"), std::string::npos) << e.what();
  // A record of many lines is scanned once: 200,000 line breaks after an
  // open quote are a quick error, not minutes of rescanning.
  const auto t0 = std::chrono::steady_clock::now();
  auto many = tptest::input_error_of([] { io::CsvTable::parse("a,b\n1,\"" + std::string(200000, '\n'), "big.csv"); });
  EXPECT_EQ(many.line(), 2);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
  auto cr = io::CsvTable::parse("a,b\r1,2\r3,4\r", "mac.csv");
  ASSERT_EQ(cr.rows().size(), 2u);
  EXPECT_EQ(cr.rows()[1].line, 3);
  EXPECT_EQ(cr.rows()[1].fields[1], "4");
}

// A comma ending every data line but not the header is an empty field no
// column names: the rows read; a non-empty field past the header's still
// makes its row malformed.
TEST(Csv, ACommaEndingEveryDataLineIsNotAField) {
  auto t = io::CsvTable::parse("a,b\n1,2,\n3,4,,\n", "export.csv");
  ASSERT_EQ(t.rows().size(), 2u);
  EXPECT_EQ(t.rows()[1].fields, (std::vector<std::string>{"3", "4"}));
  auto bad = io::CsvTable::parse("a,b\n1,2,x\n3,4\n", "extra.csv", io::BadFieldCount::kSkip);
  ASSERT_EQ(bad.rows().size(), 1u);
  ASSERT_EQ(bad.malformed_rows().size(), 1u);
  EXPECT_EQ(bad.malformed_rows()[0].line(), 2);
}

// own_column finds what the file itself calls a name, in any case, and never
// another spelling read_column_as made the name find.
TEST(Csv, OwnColumnIsTheFilesOwnName) {
  auto t = io::CsvTable::parse("measured_iteration_time_s,Memory_GiB\n1,2\n", "m.csv");
  t.read_column_as("measured_iteration_time_s", "iteration_time_s");
  EXPECT_EQ(t.column("iteration_time_s"), 0);
  EXPECT_EQ(t.own_column("iteration_time_s"), -1);
  EXPECT_EQ(t.own_column("memory_gib"), 1);
}

TEST(KorthikantiCsv, ReadsTheSharedRuns) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  auto dir = tptest::shared_data_dir() + "/llm/";
  auto runs = io::read_korthikanti_iterations(dir + "korthikanti2022_megatron_a100_iteration_time.csv");
  ASSERT_EQ(runs.size(), 8u);
  EXPECT_EQ(runs[0].run.model, "megatron-22B");
  EXPECT_EQ(runs[0].run.layout.recompute, structure::Recompute::kFull);
  EXPECT_EQ(runs[1].run.layout.recompute, structure::Recompute::kSelective);
  EXPECT_TRUE(runs[1].run.layout.sequence_parallel);
  EXPECT_EQ(runs[2].run.layout.virtual_stages, 3);
  auto memory = io::read_korthikanti_memory(dir + "korthikanti2022_memory_per_gpu.csv");
  EXPECT_EQ(memory.size(), 36u);
}

TEST(LlmConfigCsv, DropoutDefaultsToTrue) {
  auto path = write(std::string(kHeader) + ",dropout\n" + "64,64,1,12288,96,96,2048,8,1,8,false\n" +
                    "64,64,1,12288,96,96,2048,8,1,8,\n" + "64,64,1,12288,96,96,2048,8,1,8,TRUE\n");
  auto t = io::read_llm_configs(path);
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_FALSE(t.rows[0].layout.dropout);
  EXPECT_TRUE(t.rows[1].layout.dropout);
  EXPECT_TRUE(t.rows[2].layout.dropout);
  auto without_column = write(std::string(kHeader) + "\n64,64,1,12288,96,96,2048,8,1,8\n");
  EXPECT_TRUE(io::read_llm_configs(without_column).rows[0].layout.dropout);
  EXPECT_FALSE(io::read_llm_configs(without_column).rows[0].layout.fp32_residual);
  auto wide = write(std::string(kHeader) + ",fp32_residual\n64,64,1,12288,96,96,2048,8,1,8,true\n");
  EXPECT_TRUE(io::read_llm_configs(wide).rows[0].layout.fp32_residual);
  auto bad = write(std::string(kHeader) + ",dropout\n" + "64,64,1,12288,96,96,2048,8,1,8,0.1\n");
  EXPECT_EQ(tptest::input_error_of([&] { io::read_llm_configs(bad); }).field(), "dropout");
}

// Files written by Megatron-LM, NeMo or Calculon name the columns their own way; each such name is
// read as the documented column, with a note, instead of being passed over for the default.
TEST(LlmConfigCsv, OtherToolsColumnNamesAreReadWithANote) {
  auto path = write(
      "num_gpus,global_batch_size,micro_batch_size,hidden_size,num_attention_heads,num_layers,seq_length,"
      "tensor_model_parallel_size,dp,pipeline_model_parallel_size,vp,recompute_granularity,seq_parallel,dist_optimizer,"
      "vocab_size,ffn_hidden_size,dtype\n"
      "64,64,1,12288,96,96,2048,8,1,8,3,selective,True,True,50000,40000,bf16 mixed\n"
      "64,64,1,12288,96,96,2048,8,1,8,n/a,full,False,False,50000,40000,torch.float16\n");
  auto t = io::read_llm_configs(path);
  ASSERT_EQ(t.rows.size(), 2u);
  const auto& a = t.rows[0];
  EXPECT_EQ(a.layout.tp, 8);
  EXPECT_EQ(a.layout.pp, 8);
  EXPECT_EQ(a.layout.virtual_stages, 3);
  EXPECT_EQ(a.layout.recompute, structure::Recompute::kSelective);
  EXPECT_TRUE(a.layout.sequence_parallel);
  EXPECT_TRUE(a.layout.distributed_optimizer);
  EXPECT_EQ(a.spec.vocab, 50000);
  EXPECT_EQ(a.spec.ffn(), 40000);
  EXPECT_EQ(a.layout.precision, structure::Precision::kBf16);
  const auto& b = t.rows[1];
  EXPECT_EQ(b.layout.virtual_stages, 1);  // NeMo's "n/a": no interleaving
  EXPECT_EQ(b.layout.recompute, structure::Recompute::kFull);
  EXPECT_FALSE(b.layout.sequence_parallel);
  EXPECT_EQ(b.layout.precision, structure::Precision::kFp16);
  bool noted = false;
  for (const auto& n : t.notes) noted = noted || n.find("'recompute_granularity' is read as 'recompute'") != std::string::npos;
  EXPECT_TRUE(noted);

  // The documented name beside another tool's is the one read, and the note says the other is not;
  // of two other names, the first in priority (Megatron computes with the padded vocabulary, so the
  // two vocabularies may differ).
  auto both = write(std::string(kHeader) +
                    ",recompute,recompute_granularity,vocab_size,padded_vocab_size,world_size\n"
                    "64,64,1,12288,96,96,2048,8,1,8,full,Full,50257,50304,64.0\n");
  auto tb = io::read_llm_configs(both);
  EXPECT_EQ(tb.rows[0].layout.recompute, structure::Recompute::kFull);
  EXPECT_EQ(tb.rows[0].spec.vocab, 50304);
  bool said = false;
  for (const auto& n : tb.notes) said = said || n.find("'recompute_granularity' is not read: 'recompute' gives") != std::string::npos;
  EXPECT_TRUE(said);
  // Where the two say different things the row is refused, naming the column not read: the file
  // is wrong in one of them and which is not the reader's guess.
  auto disagree = write(std::string(kHeader) +
                        ",tensor_model_parallel_size\n"
                        "64,64,1,12288,96,96,2048,8,1,8,8\n"
                        "64,64,1,12288,96,96,2048,8,1,8,4\n");
  const auto e = tptest::input_error_of([&] { io::read_llm_configs(disagree); });
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.field(), "tensor_model_parallel_size");
  EXPECT_NE(std::string(e.what()).find("'4' here, but '8' in column 'tp': which is meant?"), std::string::npos) << e.what();
  // Two spellings of one value are one value, as the reader takes each (and a cell that says
  // nothing says nothing against the other): none of these is refused.
  auto synonyms = write(std::string(kHeader) +
                        ",precision,dtype,sequence_parallel,seq_parallel,virtual_stages,vpp,recompute,"
                        "recompute_granularity,position_embedding,position_embedding_type,kv_groups,num_key_value_heads,"
                        "tensor_model_parallel_size\n"
                        "64,64,1,12288,96,96,2048,8,1,8,bf16,torch.bfloat16,true,1,0,None,off,None,rope,rotary,NA,None,"
                        "8.0\n");
  EXPECT_EQ(io::read_llm_configs(synonyms).rows.size(), 1u);
  // A measured time beside the predicted one (llm predict's output read again) is no disagreement.
  auto times = write(std::string(kHeader) + ",step_time_s,iteration_time_s\n64,64,1,12288,96,96,2048,8,1,8,1.25,1.02\n");
  EXPECT_EQ(io::read_llm_configs(times).rows.size(), 1u);
  // Under kSkip the other rows are kept.
  auto skipped = io::read_llm_configs(disagree, false, io::RowErrors::kSkip);
  ASSERT_EQ(skipped.rows.size(), 1u);
  ASSERT_EQ(skipped.rejected.size(), 1u);
  EXPECT_EQ(skipped.rejected[0].line(), 3);
  // A bad value in a renamed column is named by the file's own name.
  auto bad = write(std::string(kHeader) + ",dtype\n64,64,1,12288,96,96,2048,8,1,8,fp7\n");
  EXPECT_EQ(tptest::input_error_of([&] { io::read_llm_configs(bad); }).field(), "dtype");
}

// Hugging Face's and nanoGPT's names for the shape, DeepSpeed's for the batches, and Megatron-LM's
// yes/no recomputation flags; 1.0 and 0.0 (a pandas 0/1 column with a gap) as yes and no.
TEST(LlmConfigCsv, HuggingFaceNamesAndMegatronsRecomputationFlags) {
  auto path = write(
      "n_gpus,train_batch_size,train_micro_batch_size_per_gpu,d_model,n_heads,num_hidden_layers,seqlen,tp,dp,pp,"
      "intermediate_size,num_key_value_heads,recompute_activations,checkpoint_activations,sequence_parallel,virtual_stages\n"
      "64,512,1,8192,64,80,4096,8,4,2,28672,8,1.0,0.0,1.0,0.0\n"
      "64,512,1,8192,64,80,4096,8,4,2,28672,8,false,true,0.0,0.0\n"
      "64,512,1,8192,64,80,4096,8,4,2,28672,8,,,,\n");
  auto t = io::read_llm_configs(path);
  ASSERT_EQ(t.rows.size(), 3u);
  const auto& a = t.rows[0];
  EXPECT_EQ(a.layout.global_batch, 512);
  EXPECT_EQ(a.spec.hidden, 8192);
  EXPECT_EQ(a.spec.heads, 64);
  EXPECT_EQ(a.spec.layers, 80);
  EXPECT_EQ(a.spec.seq, 4096);
  EXPECT_EQ(a.spec.ffn(), 28672);
  EXPECT_EQ(a.spec.kv_groups, 8);
  EXPECT_EQ(a.layout.virtual_stages, 1);
  EXPECT_EQ(a.layout.recompute, structure::Recompute::kSelective);
  EXPECT_TRUE(a.layout.sequence_parallel);
  EXPECT_EQ(t.rows[1].layout.recompute, structure::Recompute::kFull);
  EXPECT_FALSE(t.rows[1].layout.sequence_parallel);
  EXPECT_EQ(t.rows[2].layout.recompute, structure::Recompute::kNone);
  // Both flags at once say two different things: refused, naming the row.
  auto both = write(std::string(kHeader) + ",recompute_activations,checkpoint_activations\n8,64,1,4096,32,32,2048,8,1,1,true,true\n");
  auto e = tptest::input_error_of([&] { io::read_llm_configs(both); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "checkpoint_activations");
  // A granularity column, where there is one, is what the row means.
  auto granularity =
      write(std::string(kHeader) + ",recompute,checkpoint_activations\n8,64,1,4096,32,32,2048,8,1,1,selective,true\n");
  EXPECT_EQ(io::read_llm_configs(granularity).rows[0].layout.recompute, structure::Recompute::kSelective);
  // Another number than 1 or 0 is not a yes or a no, nor another spelling of one.
  for (const char* cell : {"2.0", "1e0", "0x1", "+1", "1."}) {
    auto other = write(std::string(kHeader) + ",sequence_parallel\n8,64,1,4096,32,32,2048,8,1,1," + cell + "\n");
    EXPECT_EQ(tptest::input_error_of([&] { io::read_llm_configs(other); }).field(), "sequence_parallel") << cell;
  }
  EXPECT_TRUE(io::read_llm_configs(write(std::string(kHeader) + ",sequence_parallel\n8,64,1,4096,32,32,2048,8,1,1,1.00\n"))
                  .rows[0].layout.sequence_parallel);
}

// Megatron's scaling tables write "fp16 mixed"; PyTorch prints torch.bfloat16; none of these is a
// precision of its own. "fp32 mixed" is no precision at all.
TEST(LlmConfigCsv, PrecisionSpellingsOfOtherTools) {
  for (const auto& [text, want] : std::vector<std::pair<std::string, structure::Precision>>{
           {"fp16 mixed", structure::Precision::kFp16}, {"BF16 (mixed)", structure::Precision::kBf16},
           {"fp16-mixed", structure::Precision::kFp16}, {"bf16_mixed", structure::Precision::kBf16},
           {"torch.bfloat16", structure::Precision::kBf16}, {"torch.float32", structure::Precision::kFp32},
           {"16-mixed", structure::Precision::kFp16}, {"bf16-mixed", structure::Precision::kBf16}}) {
    auto p = structure::parse_precision(text);
    ASSERT_TRUE(p.has_value()) << text;
    EXPECT_EQ(*p, want) << text;
  }
  EXPECT_FALSE(structure::parse_precision("fp32 mixed").has_value());
  for (const char* none : {"false", "null", "n/a", "None"})
    EXPECT_EQ(structure::parse_recompute(none), structure::Recompute::kNone) << none;
  auto vs = write(std::string(kHeader) + ",virtual_stages\n64,64,1,12288,96,96,2048,8,1,8,None\n"
                  "64,64,1,12288,96,96,2048,8,1,8,-\n64,64,1,12288,96,96,2048,8,1,8,0\n64,64,1,12288,96,96,2048,8,1,8,2\n");
  auto tv = io::read_llm_configs(vs);
  ASSERT_EQ(tv.rows.size(), 4u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(tv.rows[i].layout.virtual_stages, 1) << i;
  EXPECT_EQ(tv.rows[3].layout.virtual_stages, 2);
  // "mixed" alone: the interface's default, fp16 mixed precision (a bf16 or
  // fp16 layout prices the same products on every catalog GPU with both; a
  // row refused for the spelling would lose its prediction). "amp" is
  // PyTorch's, fp32 weights: amp-fp32-master, which it does not say.
  for (const char* mixed : {"mixed", "Mixed"})
    EXPECT_EQ(structure::parse_precision(mixed), structure::Precision::kFp16) << mixed;
  EXPECT_FALSE(structure::parse_precision("amp").has_value());
}

// pandas writes its unnamed index first; a comma ending every line leaves an unnamed last column;
// a spreadsheet leaves rows of commas where rows were cleared. None of them is an error.
TEST(Csv, UnnamedColumnsAndRowsOfCommasAreNotErrors) {
  auto t = io::CsvTable::parse(",a,b,\n0,1,2,\n,,,\n1,3,4,\n", "p.csv");
  ASSERT_EQ(t.rows().size(), 2u);
  EXPECT_EQ(t.text(t.rows()[1], "b"), "4");
  EXPECT_EQ(t.column(""), -1);
  EXPECT_EQ(t.rows()[1].line, 4);
  auto path = write("," + std::string(kHeader) + "\n0,64,64,1,12288,96,96,2048,8,1,8\n,,,,,,,,,,\n");
  EXPECT_EQ(io::read_llm_configs(path).rows.size(), 1u);
}

// Korthikanti's table as the shared file writes it (Calculon's column names: num_gpus, num_layers,
// seq_len, vpp_interleave, optimizer_sharding, datatype) reads through llm predict's own reader as
// the dedicated reader reads it: the same shapes and layouts, row by row.
TEST(LlmConfigCsv, TheSharedKorthikantiFileReadsAsItsOwnReaderReadsIt) {
  TRAINPLAN_REQUIRE_SHARED_DATA();
  const std::string path = tptest::shared_data_dir() + "/llm/korthikanti2022_megatron_a100_iteration_time.csv";
  auto runs = io::read_korthikanti_iterations(path);
  auto configs = io::read_llm_configs(path);
  ASSERT_EQ(configs.rows.size(), runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& a = configs.rows[i];
    const auto& b = runs[i].run;
    EXPECT_EQ(a.spec.layers, b.spec.layers) << i;
    EXPECT_EQ(a.spec.hidden, b.spec.hidden) << i;
    EXPECT_EQ(a.spec.seq, b.spec.seq) << i;
    EXPECT_EQ(a.layout.tp, b.layout.tp) << i;
    EXPECT_EQ(a.layout.pp, b.layout.pp) << i;
    EXPECT_EQ(a.layout.virtual_stages, b.layout.virtual_stages) << i;
    EXPECT_EQ(a.layout.recompute, b.layout.recompute) << i;
    EXPECT_EQ(a.layout.sequence_parallel, b.layout.sequence_parallel) << i;
    EXPECT_EQ(a.layout.distributed_optimizer, b.layout.distributed_optimizer) << i;
    EXPECT_EQ(a.layout.precision, b.layout.precision) << i;
  }
}

// What other tools write for a missing value (R's NA, pandas' NaN, Python's
// None, JSON's null, a spreadsheet's n/a or -) takes an optional column's
// default, as an empty cell does; a required column still needs its value.
TEST(LlmConfigCsv, MissingValueWordsTakeTheDefault) {
  const std::string header = std::string(kHeader) +
                             ",vocab,ffn_hidden,virtual_stages,recompute,sequence_parallel,distributed_optimizer,precision,memory_gib\n";
  const std::string filled = "8,64,1,4096,32,32,2048,8,1,1,";
  auto path = write(header + filled + "NA,NA,NA,NA,NA,NA,NA,NA\n" + filled + "-,NaN,None,null,N/A,nan,none,null\n");
  auto t = io::read_llm_configs(path);
  ASSERT_EQ(t.rows.size(), 2u);
  for (const auto& r : t.rows) {
    EXPECT_EQ(r.spec.vocab, 51200) << r.line;
    EXPECT_EQ(r.spec.ffn(), 4 * 4096) << r.line;
    EXPECT_EQ(r.layout.virtual_stages, 1) << r.line;
    EXPECT_EQ(r.layout.recompute, structure::Recompute::kNone) << r.line;
    EXPECT_FALSE(r.layout.sequence_parallel) << r.line;
    EXPECT_FALSE(r.layout.distributed_optimizer) << r.line;
    EXPECT_EQ(r.layout.precision, structure::Precision::kFp16) << r.line;
    EXPECT_FALSE(r.memory_gib) << r.line;
  }
  auto required = write(header + "8,64,1,4096,32,NA,2048,8,1,1,,,,,,,,\n");
  auto e = tptest::input_error_of([&] { io::read_llm_configs(required); });
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.field(), "layers");
  // In a yes/no column "none" or "-" may mean no: refused, not read as the default (dropout's is true).
  for (const char* word : {"none", "-"}) {
    auto flag = write(std::string(kHeader) + ",dropout\n8,64,1,4096,32,32,2048,8,1,1," + word + "\n");
    EXPECT_EQ(tptest::input_error_of([&] { io::read_llm_configs(flag); }).field(), "dropout") << word;
  }
  EXPECT_TRUE(io::read_llm_configs(write(std::string(kHeader) + ",dropout\n8,64,1,4096,32,32,2048,8,1,1,NA\n"))
                  .rows[0].layout.dropout);
  // "none" is a kind of position embedding, not a missing one.
  auto none = write(std::string(kHeader) + ",position_embedding\n8,64,1,4096,32,32,2048,8,1,1,none\n");
  EXPECT_FALSE(io::read_llm_configs(none).rows[0].spec.learned_positions);
}

// A file saved as UTF-16 (a spreadsheet's "Unicode text") is named as such,
// not read as garbled fields.
TEST(Csv, Utf16IsNamedNotMisread) {
  std::string utf16 = "\xFF\xFE";
  for (char c : std::string("gpus,tp\n1,1\n")) utf16 += std::string{c, '\0'};
  auto e = tptest::input_error_of([&] { io::CsvTable::parse(utf16, "u16.csv"); });
  EXPECT_EQ(e.file(), "u16.csv");
  EXPECT_NE(e.message().find("UTF-8"), std::string::npos) << e.message();
  std::string no_bom = utf16.substr(2);
  EXPECT_NE(tptest::input_error_of([&] { io::CsvTable::parse(no_bom, "u16.csv"); }).message().find("NUL"),
            std::string::npos);
}
