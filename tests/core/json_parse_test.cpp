#include "core/json_parse.h"

#include "core/error.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
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

// Nesting past 256 levels is refused as the library's own errors are, before
// its frames take memory (8 MB of '[' held 1.4 GB); 256 levels are read, and
// so is a long flat array of objects, with their keys still checked.
TEST(JsonParse, NestingHasALimitAndWidthHasNone) {
  EXPECT_NO_THROW(parse_json_unique_keys(std::string(256, '[') + std::string(256, ']')));
  try {
    parse_json_unique_keys(std::string(257, '[') + std::string(257, ']'));
    ADD_FAILURE() << "257 levels were read";
  } catch (const nlohmann::json::exception& e) {
    EXPECT_NE(trainplan::json_error_text(e).find("nests deeper than 256"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_json_unique_keys(std::string(8 << 20, '[')), nlohmann::json::exception);
  std::string flat = "[";
  for (int i = 0; i < 100000; ++i) flat += i ? R"(,{"k":1})" : R"({"k":1})";
  EXPECT_EQ(parse_json_unique_keys(flat + "]").size(), 100000u);
  try {
    parse_json_unique_keys(flat + R"(,{"k":1,"k":2}])");
    ADD_FAILURE() << "a repeated key was read";
  } catch (const JsonDuplicateKey& e) {
    EXPECT_EQ(e.path(), "[100000].k");
  }
}

TEST(JsonParse, AFileIsReadWithEveryFailureNamingIt) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("json_parse_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string good = (dir / "good.json").string(), bad = (dir / "bad.json").string();
  std::ofstream(good) << R"({"a": [1, 2]})";
  std::ofstream(bad) << R"({"a": )";
  EXPECT_EQ(trainplan::read_json_file(good, "test file")["a"][1], 2);
  for (const std::string& path : {dir.string(), bad, (dir / "absent.json").string()}) {
    try {
      trainplan::read_json_file(path, "test file");
      ADD_FAILURE() << path << " read";
    } catch (const trainplan::InputError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_EQ(e.message().find("[json.exception"), std::string::npos) << e.message();
    }
  }
  fs::remove_all(dir);
}
