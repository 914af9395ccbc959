// valid_utf8 keeps valid text and replaces each invalid byte; the prefix and
// suffix cuts never split a character.
#include "core/valid_utf8.h"

#include <gtest/gtest.h>

using trainplan::utf8_prefix;
using trainplan::utf8_suffix;
using trainplan::valid_utf8;

namespace {
const std::string kReplacement = "\xEF\xBF\xBD";
}

TEST(ValidUtf8, ValidTextIsUnchanged) {
  const std::string text = "ascii, \xC3\xA9t\xC3\xA9, \xE2\x96\x88, \xF0\x9F\x98\x80";
  EXPECT_EQ(valid_utf8(text), text);
  EXPECT_EQ(valid_utf8(""), "");
}

TEST(ValidUtf8, EachInvalidByteIsReplaced) {
  EXPECT_EQ(valid_utf8("a\xFF" "b"), "a" + kReplacement + "b");
  EXPECT_EQ(valid_utf8("\x80"), kReplacement);                          // a stray continuation byte
  EXPECT_EQ(valid_utf8("x\xC3"), "x" + kReplacement);                   // cut short at the end
  EXPECT_EQ(valid_utf8("\xE2\x96" "a"), kReplacement + kReplacement + "a");  // cut short inside
  EXPECT_EQ(valid_utf8("\xC0\xAF"), kReplacement + kReplacement);        // overlong
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), kReplacement + kReplacement + kReplacement);  // a surrogate
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), kReplacement + kReplacement + kReplacement + kReplacement);  // past U+10FFFF
}

TEST(ValidUtf8, CutsFallBetweenCharacters) {
  const std::string e = "\xC3\xA9";  // two bytes
  const std::string text = "ab" + e + e;  // 6 bytes
  EXPECT_EQ(utf8_prefix(text, 3), "ab");
  EXPECT_EQ(utf8_prefix(text, 4), "ab" + e);
  EXPECT_EQ(utf8_prefix(text, 100), text);
  EXPECT_EQ(utf8_suffix(text, 3), e);
  EXPECT_EQ(utf8_suffix(text, 5), "b" + e + e);
  EXPECT_EQ(utf8_suffix(text, 4), e + e);
  EXPECT_EQ(utf8_suffix(text, 1), "");
  EXPECT_EQ(utf8_suffix(text, 6), text);
}
