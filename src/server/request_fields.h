// Reading the fields of an API request (server/service.h), each check
// throwing RequestError with the field at fault, so that every 4xx answer
// names it. The getters take a field that is absent or null as not given:
// `def` then, or a 400 "missing field" when there is no default.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace trainplan::server {

// A request the service refuses before any library call: its status and the
// field at fault ("" for the body as a whole); `retry_after_s` > 0 when the
// same request can succeed later.
struct RequestError : std::runtime_error {
  RequestError(int status, std::string field, const std::string& message, int retry_after_s = 0)
      : std::runtime_error(message), status(status), field(std::move(field)), retry_after_s(retry_after_s) {}
  int status;
  std::string field;
  int retry_after_s;
};

// {"error": message}.
nlohmann::json error_body(const std::string& message);

// The most JSON values (objects, arrays, members and elements) a request
// body may hold: past it 413, before it is parsed.
inline constexpr size_t kMostBodyJsonValues = 100000;

// The body as one JSON object; 400 for bad JSON, a key given twice or a body
// that is not an object, 413 for more than kMostBodyJsonValues values. An
// empty body is {}.
nlohmann::json parse_body(const std::string& body);

// A value quoted back in a message: at most 100 characters, control
// characters (a NUL would end the message for many readers) escaped.
std::string quoted_prefix(const std::string& s);

// 400 for the first field of `req` not in `allowed`, named in part
// (quoted_prefix), the message ending with `listed` in brackets: where the
// known ones are said.
void refuse_unknown_fields(const nlohmann::json& req, const std::set<std::string>& allowed, const std::string& listed);

// 400 for a field of `req` that is neither in `allowed` nor one every request
// on samples may carry (id, samples_csv, samples_path, model, time_model,
// metric_model), and for a model field naming no registered model part.
void check_fields(const nlohmann::json& req, std::set<std::string> allowed);

// The field `name` of `req`; null when absent or null.
const nlohmann::json* find(const nlohmann::json& req, const char* name);

double get_number(const nlohmann::json& req, const char* name, std::optional<double> def);
// Seconds, as a number or as the CLI's durations ("90", "36h", "1h30m", "2w");
// "0" reads as the number 0 (where 0 means no deadline).
double get_duration(const nlohmann::json& req, const char* name, std::optional<double> def);
// An integer, or a number with no fraction; 400 past int's range.
int get_int(const nlohmann::json& req, const char* name, std::optional<int> def);
uint64_t get_seed(const nlohmann::json& req, const char* name, uint64_t def);
std::string get_string(const nlohmann::json& req, const char* name, const std::string& def);
bool get_bool(const nlohmann::json& req, const char* name, bool def);
// An array of positive integers; empty when absent.
std::vector<int> get_int_list(const nlohmann::json& req, const char* name);
// 400 unless `v` is one of `allowed`, listing them.
void one_of(const std::string& v, const char* name, const std::vector<std::string>& allowed);

// Counts the data rows of sample CSV text fed in pieces: the lines (ended by
// "\n", "\r\n" or a "\r" alone) that are neither blank nor comments ('#'),
// less the header. Never fewer than the CSV reader reads. Memory: none.
class RowCounter {
 public:
  void feed(std::string_view text);
  size_t rows() const;

 private:
  size_t lines_ = 0;
  bool start_ = true, comment_ = false, data_ = false, after_cr_ = false;
};

// The CSV text of `field` (`what` names it in the message), held to the
// server's row limit before anything parses it: 422 past it.
void check_csv_rows(std::string_view text, const char* field, const std::string& what, size_t max_rows);

// `text` with every CLI option in it ("--early-stop") written as the request
// field it stands for ("early_stop"): the library's messages name options.
std::string api_wording(const std::string& text);
// The request field a CLI option ("--tabu-iterations") stands for
// ("tabu_iterations"). REQUIRES: `option` starts with "--".
std::string api_field_name(const std::string& option);

// The JSON of an InputError, in the API's terms: a CLI option at fault is
// named as its request field ("deadline must be > 0 seconds", field
// "deadline"); a CSV place keeps its file, line and column, the column as
// `column` and `field` the request field that carried the text: the file
// label itself where it is one ("samples_csv", "trials_csv", "calibrate";
// "trials.h100" is "trials"), else the field of `req` whose value is that
// path (samples_path, log_path).
nlohmann::json input_error_body(const InputError& e, const nlohmann::json& req = nlohmann::json::object());

}  // namespace trainplan::server
