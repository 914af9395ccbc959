// A small CSV reader that remembers where each value came from, so that
// callers can report bad input as FILE:LINE: column 'NAME'.
// Handles comma-separated values, a field in double quotes holding commas
// or line breaks ("" inside it is a quote; the record is named by the line it
// starts on), line breaks of any platform (LF, CRLF, CR alone), blank lines
// and '#' comment lines. Leading comment lines are kept for format headers.
#pragma once
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.h"

namespace trainplan::io {

// `s` with ASCII letters lowercased.
std::string lowercase(std::string s);
// A cell that says its value is missing: empty, or a word tools write for one (R's NA, pandas'
// NaN, Python's None, JSON's null, a spreadsheet's n/a or -), in any case. Where "none" or "-"
// could be a value (a yes/no column), `words_that_could_be_values` false leaves them out.
bool says_missing(const std::string& cell, bool words_that_could_be_values = true);
// A header name as it is matched when not found exactly: lowercased, with '-'
// and ' ' read as '_' ("Sequence-Parallel" is sequence_parallel).
std::string fold_column_name(std::string s);
// A value as an error message quotes it, in single quotes: past 60
// characters cut, with its length said (a field of megabytes is not echoed).
std::string quoted_value(const std::string& s);

// A '#' line: where it is, and its text without the '#', trimmed.
struct CsvComment {
  long line = 0;
  std::string text;
};

struct CsvRow {
  long line = 0;                    // 1-based line number in the file
  std::vector<std::string> fields;  // trimmed values, one per header column
};

// What a row whose field count differs from the header's does: stop the
// read (kThrow), or leave the row out and keep why in malformed_rows()
// (kSkip), so that one bad line does not lose the others.
enum class BadFieldCount { kThrow, kSkip };

class CsvTable {
 public:
  // Reads `path`. Lines starting with '#' are comments; blank lines and rows
  // of empty fields are skipped; a column with an empty name is kept but
  // cannot be looked up. Throws InputError if the file cannot be read, is
  // empty, has duplicate header names, a quoted field that is never closed, or
  // (with kThrow) a row whose field count differs from the header.
  static CsvTable read(const std::string& path, BadFieldCount bad = BadFieldCount::kThrow);
  // Parses CSV text; `name` is used in messages in place of a path.
  static CsvTable parse(const std::string& text, const std::string& name, BadFieldCount bad = BadFieldCount::kThrow);

  const std::string& path() const { return path_; }
  const std::vector<std::string>& header() const { return header_; }
  long header_line() const { return header_line_; }  // 1-based line of the header
  const std::vector<CsvRow>& rows() const { return rows_; }
  // '#' lines that came before the header.
  const std::vector<CsvComment>& leading_comments() const { return comments_; }
  // The lines after the header that start with '#', read as comments: a
  // caller may say so, as such a line may have been meant as a row.
  const std::vector<CsvComment>& comments_after_header() const { return later_comments_; }
  // With BadFieldCount::kSkip, the rows left out (file, line, and the counts),
  // and their fields as split, in file order, for a writer that passes every
  // line of its input through.
  const std::vector<InputError>& malformed_rows() const { return malformed_; }
  const std::vector<CsvRow>& malformed_fields() const { return malformed_fields_; }

  // Columns are found by exact name, else by the folded name (any case, '-'
  // or ' ' for '_') when only one header entry matches it so ("TP" is tp).
  bool has_column(const std::string& name) const { return column(name) >= 0; }
  // Throws InputError naming the file and the missing column.
  void require_columns(const std::vector<std::string>& names) const;
  int column(const std::string& name) const;  // -1 if absent
  // The column the file itself calls `name` (exactly, else its one header entry
  // of that folded name), never another spelling read_column_as made `name`
  // find: where a writer of this table's rows puts a column of that name.
  int own_column(const std::string& name) const;
  // Every header entry whose folded name is `name`'s: more than one where a
  // file names a column twice in different spellings ("tp" and "TP").
  std::vector<std::string> columns_named(const std::string& name) const;
  // Throws InputError (the header's line, `name`) when columns_named(name)
  // holds more than one entry: which was meant cannot be told, and neither
  // would be read. For the optional columns a reader knows; require_columns
  // says the same of the required ones.
  void refuse_ambiguous(const std::string& name) const;
  // From now on `name` finds the column `header_name` (another tool's spelling
  // of it); errors in it still name `header_name`. Throws std::logic_error
  // when there is no such column.
  void read_column_as(const std::string& header_name, const std::string& name);

  // Typed access; each throws InputError with file, line and column on failure.
  const std::string& text(const CsvRow& row, const std::string& name) const;
  // A finite number. Rejects empty text, non-numbers, NaN and Inf.
  double number(const CsvRow& row, const std::string& name) const;
  // Like number() but an empty cell gives nullopt.
  std::optional<double> optional_number(const CsvRow& row, const std::string& name) const;
  // A finite number > 0.
  double positive(const CsvRow& row, const std::string& name) const;
  // An integer from 1 to INT_MAX: the counts it reads (workers, replicas,
  // GPUs, nodes, batches) are ints, which a larger value would not fit.
  int positive_int(const CsvRow& row, const std::string& name) const;
  // true for true/yes/y/t/on/1, false for false/no/n/f/off/0 or an empty
  // field (any case).
  bool truth(const CsvRow& row, const std::string& name) const;

  [[noreturn]] void fail(const CsvRow& row, const std::string& name, const std::string& msg) const;

 private:
  std::string path_;
  std::vector<std::string> header_;
  long header_line_ = 1;
  std::vector<CsvRow> rows_;
  std::vector<CsvComment> comments_;
  std::vector<CsvComment> later_comments_;
  std::vector<InputError> malformed_;
  std::vector<CsvRow> malformed_fields_;
  std::unordered_map<std::string, int> index_;
  std::unordered_map<std::string, int> folded_index_;  // folded name -> column, -2 where two share it
};

// Splits one CSV line on the commas outside double quotes and trims spaces
// around each field (inside its quotes too: "256 " is 256); a quoted field
// loses its quotes.
std::vector<std::string> split_csv_line(const std::string& line);
// `value` as one CSV field: quoted when it holds a comma, a quote or a line
// break.
std::string csv_field(const std::string& value);
// Parses a finite double from the whole string; nullopt on failure, NaN/Inf
// or hexadecimal.
std::optional<double> parse_finite(const std::string& s);
// A yes/no cell as CsvTable::truth reads it (true/yes/y/t/on/1 and pandas'
// 1.0; false/no/n/f/off/0, 0.0 and an empty cell; any case); nullopt for
// anything else.
std::optional<bool> parse_truth(const std::string& cell);

}  // namespace trainplan::io
