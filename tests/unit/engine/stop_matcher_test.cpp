// Stop strings across delta boundaries: text is held back only while it could
// still begin a stop string, and the stop string never comes out.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ladder/engine/stop_matcher.h"

namespace ladder::engine {
namespace {

// Feeds the deltas one by one; returns everything released and whether it stopped.
std::pair<std::string, bool> feed(StopMatcher& matcher, const std::vector<std::string>& deltas) {
    std::string out;
    for (const std::string& delta : deltas) {
        StopMatcher::Result result = matcher.push(delta);
        out += result.text;
        if (result.stopped) return {out, true};
    }
    return {out + matcher.flush(), false};
}

TEST(StopMatcher, WithoutStopsEverythingPassesAtOnce) {
    StopMatcher matcher({});
    EXPECT_EQ(matcher.push("Hello").text, "Hello");
    EXPECT_EQ(matcher.flush(), "");
}

TEST(StopMatcher, FindsAStopSplitAcrossDeltas) {
    StopMatcher matcher({"END"});
    EXPECT_EQ(matcher.push("abc E").text, "abc ");  // "E" could begin END
    EXPECT_EQ(matcher.push("N").text, "");
    const StopMatcher::Result result = matcher.push("Dxyz");
    EXPECT_TRUE(result.stopped);
    EXPECT_EQ(result.text, "");
}

TEST(StopMatcher, ReleasesHeldTextOnceItCannotBeAStop) {
    StopMatcher matcher({"END"});
    EXPECT_EQ(matcher.push("EN").text, "");
    const StopMatcher::Result result = matcher.push("X");
    EXPECT_FALSE(result.stopped);
    EXPECT_EQ(result.text, "ENX");
}

TEST(StopMatcher, KeepsOnlyTheLongestPossibleStart) {
    StopMatcher matcher({"aab"});
    // "aaa" ends in "aa", which could still begin "aab": one 'a' is released.
    EXPECT_EQ(matcher.push("aaa").text, "a");
    const StopMatcher::Result result = matcher.push("b!");
    EXPECT_TRUE(result.stopped);
    EXPECT_EQ(result.text, "");
}

TEST(StopMatcher, TheEarliestOfSeveralStopsWins) {
    StopMatcher matcher({"world", "lo w"});
    auto [text, stopped] = feed(matcher, {"hel", "lo wor", "ld"});
    EXPECT_TRUE(stopped);
    EXPECT_EQ(text, "hel");
}

TEST(StopMatcher, StopAtTheVeryStartReleasesNothing) {
    StopMatcher matcher({"\n\n"});
    auto [text, stopped] = feed(matcher, {"\n", "\nmore"});
    EXPECT_TRUE(stopped);
    EXPECT_EQ(text, "");
}

TEST(StopMatcher, FlushReturnsHeldTextWhenTheStreamEnds) {
    StopMatcher matcher({"</s>"});
    auto [text, stopped] = feed(matcher, {"done <", "/"});
    EXPECT_FALSE(stopped);
    EXPECT_EQ(text, "done </");
}

TEST(StopMatcher, EmptyStopStringsAreIgnored) {
    StopMatcher matcher({"", "x"});
    EXPECT_EQ(matcher.push("abc").text, "abc");
}

TEST(StopMatcher, MultibyteStopSpanningDeltas) {
    StopMatcher matcher({"é!"});
    auto [text, stopped] = feed(matcher, {"caf", "é", "!", "tail"});
    EXPECT_TRUE(stopped);
    EXPECT_EQ(text, "caf");
}

}  // namespace
}  // namespace ladder::engine
