#include "core/json_parse.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

using trainplan::JsonDuplicateKey;
using trainplan::parse_json_unique_keys;

TEST(JsonParse, ReadsWhatNlohmannReads) {
  const std::string text = R"({"a": 1, "b": {"a": 2, "c": [{"a": 3}, {"a": 4}]}, "d": [1, 2]})";
  EXPECT_EQ(parse_json_unique_keys(text), nlohmann::json::parse(text));
  std::istringstream in(text);
  EXPECT_EQ(parse_json_unique_keys(in), nlohmann::json::parse(text));
}

TEST(JsonParse, RefusesAKeyTwiceInOneObjectAtAnyDepth) {
  for (const std::string text : {R"({"a": 1, "a": 2})", R"({"x": {"b": 1, "c": 2, "b": 3}})",
                                 R"({"x": [{"b": 1}, {"b": 2, "b": 3}]})"}) {
    try {
      parse_json_unique_keys(text);
      ADD_FAILURE() << text << " was read";
    } catch (const JsonDuplicateKey& e) {
      EXPECT_EQ(e.key(), text.find("\"a\": 2") != std::string::npos ? "a" : "b") << text;
    }
  }
}

TEST(JsonParse, ADuplicateKeyIsNamedByItsPathFromTheRoot) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"a": 1, "a": 2})", "a"},
      {R"({"x": {"b": 1, "c": 2, "b": 3}})", "x.b"},
      {R"({"x": [{"b": 1}, {"b": 2, "b": 3}]})", "x[1].b"},
      {R"({"n": [1, [2, 3], {"k": 0}], "layers": [{"name": "a"}, 7, [], {"name": "b", "name": "c"}]})",
       "layers[3].name"},
      {R"([{"a": 1}, {"a": 1, "a": 2}])", "[1].a"},
  };
  for (const auto& [text, path] : cases) {
    try {
      parse_json_unique_keys(text);
      ADD_FAILURE() << text << " was read";
    } catch (const JsonDuplicateKey& e) {
      EXPECT_EQ(e.path(), path) << text;
    }
  }
}

TEST(JsonParse, StillThrowsNlohmannsErrorsForBadText) {
  EXPECT_THROW(parse_json_unique_keys(std::string(R"({"a": )")), nlohmann::json::exception);
  EXPECT_THROW(parse_json_unique_keys(std::string(R"({"a": 1e400})")), nlohmann::json::exception);
}
