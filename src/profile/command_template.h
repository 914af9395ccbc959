// A trial's command line with placeholders, e.g.
//   python train.py --batch {batch} --world {workers} --rank {rank} --port {master_port}
// Placeholders: {batch} {workers} {epochs} {rank} {master_port} {master_addr} {nodes},
// and the parallel layout {tp} {pp} {dp} {micro_batch} {global_batch}: a
// transformer grid (`trainplan llm profile`) sets them per configuration, with
// {workers} = tp·pp·dp and {batch} = micro_batch; a data-parallel trial of
// `trainplan profile` is tp = pp = 1, dp = workers, micro_batch = batch and
// global_batch = batch·workers, so one template serves both. A time trial's
// template may take {batches}: the per-worker batches of several time trials
// of one worker count, comma-separated, which the program then times in one
// run, printing a step_timing line for each (docs/PROFILING.md); {batch} is
// the first of them. Elsewhere {batches} is {batch}. A transformer
// grid also sets its row's shape and settings: {hidden} {heads} {layers} {seq}
// {vocab} {ffn_hidden} {kv_groups} {virtual_stages} {recompute} {precision}
// {sequence_parallel} {distributed_optimizer} {flash_attention} {dropout} {fp32_residual}
// (numbers, or the CSV's words: none|selective|full, fp16|bf16|fp32|
// amp-fp32-master, true|false); `trainplan profile` has no shape and rejects
// them.
// A template with {rank} is started once per rank; one without it is started
// once per trial as a launcher (torchrun, mpirun) that starts the ranks itself.
// The expanded text is run by /bin/bash -c (else /bin/sh -c), so values are inserted unquoted:
// they are numbers and addresses chosen by trainplan, never user text.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace trainplan::profile {

class CommandTemplate {
 public:
  // Throws InputError for an empty template, an unknown {name}, or an
  // unclosed '{'. `{{` and `}}` stand for literal braces. A line break
  // (after a backslash or not) is a space: a template is one command, and
  // a multi-line example pasted as it is shown runs as written.
  // `option` names the flag the template came from, for error messages.
  explicit CommandTemplate(std::string text, const std::string& option = "--cmd");

  const std::string& text() const { return text_; }
  bool per_rank() const { return uses("rank"); }
  bool uses(const std::string& name) const;

  // Replaces each placeholder by values.at(name); throws std::out_of_range
  // if a used placeholder has no value.
  std::string expand(const std::map<std::string, std::string>& values) const;

  static const std::vector<std::string>& placeholder_names();
  // The transformer grid's shape placeholders (above), a subset of those.
  static const std::vector<std::string>& shape_placeholder_names();

 private:
  struct Piece {
    bool placeholder;
    std::string text;  // literal text or placeholder name
  };
  std::string text_;
  std::vector<Piece> pieces_;
};

}  // namespace trainplan::profile
