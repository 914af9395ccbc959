#include "io/csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "core/error.h"

namespace trainplan::io {

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool says_missing(const std::string& cell, bool words_that_could_be_values) {
  const std::string v = lowercase(cell);
  if (v.empty() || v == "na" || v == "n/a" || v == "nan" || v == "null") return true;
  return words_that_could_be_values && (v == "none" || v == "-");
}

std::string fold_column_name(std::string s) {
  s = lowercase(std::move(s));
  for (char& c : s)
    if (c == '-' || c == ' ') c = '_';
  return s;
}

static std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return "";
  size_t b = s.find_last_not_of(" \t\r\n");
  return s.substr(a, b - a + 1);
}

std::string quoted_value(const std::string& s) {
  constexpr size_t kMostQuoted = 60;
  if (s.size() <= kMostQuoted) return "'" + s + "'";
  return "'" + s.substr(0, kMostQuoted) + "...' (" + std::to_string(s.size()) + " characters)";
}

namespace {

// Splits `line` as split_csv_line does; false when it ends inside a quoted
// field (a field that goes on past a line break, or a quote never closed).
bool split_fields(const std::string& line, std::vector<std::string>& out) {
  out.clear();
  std::string cur;
  bool quoted = false;  // inside a "..." field, where commas are text and "" is a quote
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cur.push_back('"'), ++i;
      else if (c == '"') quoted = false;
      else cur.push_back(c);
    } else if (c == '"' && trim(cur).empty()) {
      cur.clear();
      quoted = true;
    } else if (c == ',') {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(trim(cur));
  return !quoted;
}

// Whether a record is still inside a quoted field, fed piece by piece, so
// that a record of many lines is scanned once (split_fields' rules: a quote
// opens a field only at its start, "" inside one is a quote).
class QuoteState {
 public:
  void feed(const std::string& text) {
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (quoted_) {
        if (c != '"') continue;
        if (i + 1 < text.size() && text[i + 1] == '"') ++i;
        else quoted_ = false, field_blank_ = false;
      } else if (c == ',') {
        field_blank_ = true;
      } else if (c == '"' && field_blank_) {
        quoted_ = true;
      } else if (c != ' ' && c != '\t') {
        field_blank_ = false;
      }
    }
  }
  bool open() const { return quoted_; }

 private:
  bool quoted_ = false, field_blank_ = true;
};

}  // namespace

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  split_fields(line, out);
  return out;
}

std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\n\r") == std::string::npos) return value;
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::optional<double> parse_finite(const std::string& s) {
  if (s.empty()) return std::nullopt;
  // strtod also reads hexadecimal ("0x10" is 16), which no measurement is written in.
  if (s.find_first_of("xX") != std::string::npos) return std::nullopt;
  const char* begin = s.c_str();
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(begin, &end);
  if (end != begin + s.size() || errno == ERANGE) return std::nullopt;
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

CsvTable CsvTable::read(const std::string& path, BadFieldCount bad) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path, 0, "", "is a folder, not a CSV file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot open file");
  // Read into one string of the file's size (a string stream would hold the
  // text twice over, at a few hundred megabytes of trace); a pipe or a file
  // that grows meanwhile is read to its end.
  std::string text;
  const auto size = std::filesystem::is_regular_file(path, ec) ? std::filesystem::file_size(path, ec) : 0;
  if (!ec && size > 0) {
    text.resize(size);
    in.read(text.data(), static_cast<std::streamsize>(size));
    text.resize(static_cast<size_t>(in.gcount()));
  }
  if (in) {
    std::ostringstream rest;
    rest << in.rdbuf();
    text += std::move(rest).str();
  }
  return parse(text, path, bad);
}

CsvTable CsvTable::parse(const std::string& text, const std::string& name, BadFieldCount bad) {
  CsvTable t;
  t.path_ = name;
  // UTF-16 (a spreadsheet's "Unicode text"), or a binary file: every other byte is NUL, and
  // the lines would read as garbled fields. Said as such, at once.
  const std::string_view head = std::string_view(text).substr(0, 4096);
  if (head.starts_with("\xFF\xFE") || head.starts_with("\xFE\xFF") || head.find('\0') != std::string_view::npos)
    throw InputError(name, 0, "",
                     "is not UTF-8 text (UTF-16, or a binary file: it holds NUL bytes); save it as a UTF-8 CSV");
  // A spreadsheet's UTF-8 byte-order mark is not part of the first column's name.
  const std::string_view kBom = "\xEF\xBB\xBF";
  std::string_view body = text;
  if (body.starts_with(kBom)) body.remove_prefix(kBom.size());
  // Line breaks of old Macintosh files (a carriage return alone) are line breaks.
  std::string mac_text;
  if (body.find('\n') == std::string_view::npos && body.find('\r') != std::string_view::npos) {
    mac_text.assign(body);
    std::replace(mac_text.begin(), mac_text.end(), '\r', '\n');
    body = mac_text;
  }
  // The next line of `body` without its '\n' (a last line may lack one); false at its end.
  size_t at = 0;
  auto getline = [&](std::string& out) {
    if (at >= body.size()) return false;
    const size_t nl = body.find('\n', at);
    const size_t end = nl == std::string_view::npos ? body.size() : nl;
    out.assign(body.substr(at, end - at));
    at = end + 1;
    return true;
  };
  std::string line;
  long lineno = 0;
  bool have_header = false;
  std::vector<std::string> fields;
  while (getline(line)) {
    ++lineno;
    std::string trimmed = trim(line);
    // A byte-order mark on the header's line, where a format line was put
    // in front of a spreadsheet's export, is no more a part of the first
    // column's name than at the file's start.
    if (!have_header && trimmed.starts_with(kBom)) trimmed = trim(trimmed.substr(kBom.size()));
    if (trimmed.empty()) continue;
    if (trimmed[0] == '#') {
      (have_header ? t.later_comments_ : t.comments_).push_back({lineno, trim(trimmed.substr(1))});
      continue;
    }
    // A quoted field may hold line breaks: the record goes on over the next
    // lines, and is named by the line it starts on.
    const long record_line = lineno;
    std::string record = trimmed;
    QuoteState quotes;
    quotes.feed(record);
    while (quotes.open()) {
      if (!getline(line))
        throw InputError(name, record_line, "", "a quoted field opened on this line is never closed (a '\"' is missing)");
      ++lineno;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      line.insert(0, 1, '\n');
      quotes.feed(line);
      record += line;
    }
    split_fields(record, fields);
    // A row of commas alone, as a spreadsheet leaves where rows were cleared, is a blank line.
    if (std::all_of(fields.begin(), fields.end(), [](const std::string& f) { return f.empty(); })) continue;
    if (!have_header) {
      // A file whose first record is all numbers has no header: say so, rather
      // than what its numbers as names would give (a "duplicate column '1'").
      if (std::all_of(fields.begin(), fields.end(), [](const std::string& f) { return parse_finite(f).has_value(); }))
        throw InputError(name, record_line, "",
                         "this line holds numbers where the header naming the columns belongs: add the header line");
      t.header_ = fields;
      t.header_line_ = record_line;
      for (size_t i = 0; i < fields.size(); ++i) {
        // A column without a name (pandas' unnamed index, a comma ending every line) is kept for
        // what passes it through and never read: nothing can ask for it.
        if (fields[i].empty()) continue;
        if (!t.index_.emplace(fields[i], static_cast<int>(i)).second)
          throw InputError(name, record_line, fields[i], "duplicate column name in header");
        auto [it, fresh] = t.folded_index_.emplace(fold_column_name(fields[i]), static_cast<int>(i));
        if (!fresh) it->second = -2;
      }
      have_header = true;
      continue;
    }
    // A comma ending every data line but not the header (some exporters write one) adds an empty
    // field no column names: dropped, as a reader of the header's columns would never see it.
    while (fields.size() > t.header_.size() && fields.back().empty()) fields.pop_back();
    if (fields.size() != t.header_.size()) {
      // A short line names the first column it lacks; a long one the
      // header's last column, after which its fields have none.
      const bool short_line = fields.size() < t.header_.size();
      InputError e(name, record_line, short_line ? t.header_[fields.size()] : t.header_.back(),
                   "expected " + std::to_string(t.header_.size()) + " fields as in the header, found " +
                       std::to_string(fields.size()) +
                       (short_line ? ": this column is the first the line lacks"
                                   : ": this column is the header's last; the line's field " +
                                         std::to_string(t.header_.size() + 1) + ", " +
                                         quoted_value(fields[t.header_.size()]) +
                                         ", has none (a value holding a comma must be quoted)"));
      if (bad == BadFieldCount::kThrow) throw e;
      t.malformed_.push_back(std::move(e));
      t.malformed_fields_.push_back({record_line, std::move(fields)});
      continue;
    }
    t.rows_.push_back({record_line, std::move(fields)});
    fields.clear();
  }
  if (!have_header) throw InputError(name, 0, "", "file is empty (no header line)");
  return t;
}

// Two names that differ only in case or '-', ' ' and '_' (folded alike).
void CsvTable::refuse_ambiguous(const std::string& name) const {
  const auto named = columns_named(name);
  if (named.size() < 2) return;
  std::string list;
  for (const auto& h : named) list += (list.empty() ? "'" : ", '") + h + "'";
  throw InputError(path_, header_line_, name,
                   "is ambiguous: the header names it " + std::to_string(named.size()) + " times (" + list +
                       "); keep one");
}

void CsvTable::require_columns(const std::vector<std::string>& names) const {
  for (const auto& n : names)
    if (!has_column(n)) {
      // The header as far as a reader needs it: a file that is not a CSV at
      // all (a binary, a one-line dump) would otherwise come back whole.
      constexpr size_t kMostQuoted = 200;
      std::string have;
      for (const auto& h : header_) {
        have += (have.empty() ? "" : ",") + h;
        if (have.size() > kMostQuoted) break;
      }
      if (have.size() > kMostQuoted) have = have.substr(0, kMostQuoted) + fmt::format("... ({} columns)", header_.size());
      // One column holding the names with another separator between them:
      // a spreadsheet's export in its locale (';') or a TSV.
      std::string hint;
      if (header_.size() == 1)
        for (const auto& [sep, what] : {std::pair{';', "';'"}, std::pair{'\t', "tabs"}, std::pair{'|', "'|'"}})
          if (header_[0].find(n) != std::string::npos && header_[0].find(sep) != std::string::npos)
            hint = fmt::format("; the header is separated by {}: trainplan reads commas", what);
      refuse_ambiguous(n);
      throw InputError(path_, header_line_, n, "required column is missing (header has: " + have + ")" + hint);
    }
}

int CsvTable::column(const std::string& name) const {
  if (auto it = index_.find(name); it != index_.end()) return it->second;
  auto it = folded_index_.find(fold_column_name(name));
  return it == folded_index_.end() || it->second < 0 ? -1 : it->second;
}

int CsvTable::own_column(const std::string& name) const {
  if (auto it = index_.find(name); it != index_.end()) return it->second;
  const std::vector<std::string> named = columns_named(name);
  if (named.size() != 1) return -1;
  return index_.at(named.front());
}

std::vector<std::string> CsvTable::columns_named(const std::string& name) const {
  std::vector<std::string> named;
  const std::string folded = fold_column_name(name);
  for (const auto& h : header_)
    if (fold_column_name(h) == folded) named.push_back(h);
  return named;
}

void CsvTable::read_column_as(const std::string& header_name, const std::string& name) {
  const int c = column(header_name);
  if (c < 0) throw std::logic_error("read_column_as: no column '" + header_name + "'");
  folded_index_[fold_column_name(name)] = c;
}

void CsvTable::fail(const CsvRow& row, const std::string& name, const std::string& msg) const {
  // Under the file's own name where it is read as another (read_column_as).
  const int c = column(name);
  const bool renamed = c >= 0 && fold_column_name(header_[c]) != fold_column_name(name);
  throw InputError(path_, row.line, renamed ? header_[c] : name, msg);
}

const std::string& CsvTable::text(const CsvRow& row, const std::string& name) const {
  int c = column(name);
  if (c < 0) throw InputError(path_, row.line, name, "no such column");
  return row.fields[c];
}

double CsvTable::number(const CsvRow& row, const std::string& name) const {
  const std::string& s = text(row, name);
  if (s.empty()) fail(row, name, "value is empty");
  auto v = parse_finite(s);
  if (!v) {
    const std::string lower = lowercase(s);
    if (lower.find("nan") != std::string::npos || lower.find("inf") != std::string::npos)
      fail(row, name, "value " + quoted_value(s) + " is not finite (NaN or Inf)");
    // A number strtod reads whole but only out of range (1e400, or 1e-310 below the normal doubles).
    char* end = nullptr;
    errno = 0;
    std::strtod(s.c_str(), &end);
    if (end == s.c_str() + s.size() && errno == ERANGE && s.find_first_of("xX") == std::string::npos)
      fail(row, name, quoted_value(s) + " is outside the range of the numbers read (about 1e-308 to 1e308)");
    fail(row, name, quoted_value(s) + " is not a number");
  }
  return *v;
}

std::optional<double> CsvTable::optional_number(const CsvRow& row, const std::string& name) const {
  if (column(name) < 0 || text(row, name).empty()) return std::nullopt;
  return number(row, name);
}

double CsvTable::positive(const CsvRow& row, const std::string& name) const {
  double v = number(row, name);
  if (v <= 0) fail(row, name, "must be > 0, got " + text(row, name));
  return v;
}

int CsvTable::positive_int(const CsvRow& row, const std::string& name) const {
  double v = number(row, name);
  if (v < 1 || std::floor(v) != v) fail(row, name, "must be an integer >= 1, got " + text(row, name));
  if (v > std::numeric_limits<int>::max())
    fail(row, name, "must be at most " + std::to_string(std::numeric_limits<int>::max()) + ", got " + text(row, name));
  return static_cast<int>(v);
}

std::optional<bool> parse_truth(const std::string& cell) {
  const std::string v = lowercase(cell);
  if (v == "true" || v == "yes" || v == "y" || v == "t" || v == "on" || v == "1") return true;
  if (v == "false" || v == "no" || v == "n" || v == "f" || v == "off" || v == "0" || v.empty()) return false;
  // 1.0 and 0.0 (any number of zeros after the point): how pandas writes a 0/1 column that has a
  // missing value somewhere. Not any number equal to 1 or 0 (1e0, 0x1): those are not yes or no.
  if (v.size() >= 3 && (v[0] == '0' || v[0] == '1') && v[1] == '.' &&
      v.find_first_not_of('0', 2) == std::string::npos)
    return v[0] == '1';
  return std::nullopt;
}

bool CsvTable::truth(const CsvRow& row, const std::string& name) const {
  if (const auto b = parse_truth(text(row, name))) return *b;
  fail(row, name, "must be true or false, not '" + text(row, name) + "'");
}

}  // namespace trainplan::io
