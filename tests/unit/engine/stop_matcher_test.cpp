// Stop strings across delta boundaries: text is held back only while it could
// still begin a stop string, and the stop string never comes out.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ladder/engine/stop_matcher.h"

namespace ladder::engine {
namespace {

util::Shared<StopStrings> stops(std::vector<std::string> texts) {
    return StopStrings(std::move(texts));
}

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
    StopMatcher matcher(stops({}));
    EXPECT_EQ(matcher.push("Hello").text, "Hello");
    EXPECT_EQ(matcher.flush(), "");
}

TEST(StopMatcher, FindsAStopSplitAcrossDeltas) {
    StopMatcher matcher(stops({"END"}));
    EXPECT_EQ(matcher.push("abc E").text, "abc ");  // "E" could begin END
    EXPECT_EQ(matcher.push("N").text, "");
    const StopMatcher::Result result = matcher.push("Dxyz");
    EXPECT_TRUE(result.stopped);
    EXPECT_EQ(result.text, "");
}

TEST(StopMatcher, ReleasesHeldTextOnceItCannotBeAStop) {
    StopMatcher matcher(stops({"END"}));
    EXPECT_EQ(matcher.push("EN").text, "");
    const StopMatcher::Result result = matcher.push("X");
    EXPECT_FALSE(result.stopped);
    EXPECT_EQ(result.text, "ENX");
}

TEST(StopMatcher, KeepsOnlyTheLongestPossibleStart) {
    StopMatcher matcher(stops({"aab"}));
    // "aaa" ends in "aa", which could still begin "aab": one 'a' is released.
    EXPECT_EQ(matcher.push("aaa").text, "a");
    const StopMatcher::Result result = matcher.push("b!");
    EXPECT_TRUE(result.stopped);
    EXPECT_EQ(result.text, "");
}

TEST(StopMatcher, TheEarliestOfSeveralStopsWins) {
    StopMatcher matcher(stops({"world", "lo w"}));
    auto [text, stopped] = feed(matcher, {"hel", "lo wor", "ld"});
    EXPECT_TRUE(stopped);
    EXPECT_EQ(text, "hel");
}

TEST(StopMatcher, StopAtTheVeryStartReleasesNothing) {
    StopMatcher matcher(stops({"\n\n"}));
    auto [text, stopped] = feed(matcher, {"\n", "\nmore"});
    EXPECT_TRUE(stopped);
    EXPECT_EQ(text, "");
}

TEST(StopMatcher, FlushReturnsHeldTextWhenTheStreamEnds) {
    StopMatcher matcher(stops({"</s>"}));
    auto [text, stopped] = feed(matcher, {"done <", "/"});
    EXPECT_FALSE(stopped);
    EXPECT_EQ(text, "done </");
}

TEST(StopMatcher, EmptyStopStringsAreIgnored) {
    StopMatcher matcher(stops({"", "x"}));
    EXPECT_EQ(matcher.push("abc").text, "abc");
}

TEST(StopMatcher, MultibyteStopSpanningDeltas) {
    StopMatcher matcher(stops({"é!"}));
    auto [text, stopped] = feed(matcher, {"caf", "é", "!", "tail"});
    EXPECT_TRUE(stopped);
    EXPECT_EQ(text, "caf");
}

// The bytes at the end of text that could still begin a stop string.
size_t longest_partial(const std::string& text, const std::vector<std::string>& stops) {
    size_t longest = 0;
    for (const std::string& stop : stops) {
        for (size_t len = std::min(text.size(), stop.size() - 1); len > longest; --len) {
            if (text.compare(text.size() - len, len, stop, 0, len) == 0) longest = len;
        }
    }
    return longest;
}

// Against a direct reading of the rules on random streams over a small
// alphabet (where overlaps and repeats are common): the stream stops at the
// first delta in which a stop string ends, at the earliest start among those,
// and until then exactly what can no longer begin a stop string is released.
TEST(StopMatcher, AgreesWithTheRulesOnRandomStreams) {
    std::mt19937 random(20250101);
    auto text_of = [&](size_t max_len) {
        std::string text(1 + random() % max_len, 'a');
        for (char& c : text) c = static_cast<char>('a' + random() % 3);
        return text;
    };
    for (int trial = 0; trial < 3000; ++trial) {
        std::vector<std::string> stop_texts;
        for (size_t i = 0, n = 1 + random() % 3; i < n; ++i) stop_texts.push_back(text_of(5));
        StopMatcher matcher(stops(stop_texts));
        std::string stream;
        std::string released;
        bool stopped = false;
        for (int d = 0; d < 12 && !stopped; ++d) {
            const std::string delta = text_of(4);
            stream += delta;
            StopMatcher::Result result = matcher.push(delta);
            released += result.text;
            // Stops whose first occurrence ends within the stream so far.
            size_t expected_cut = std::string::npos;
            for (const std::string& stop : stop_texts) {
                const size_t at = stream.find(stop);
                if (at != std::string::npos) expected_cut = std::min(expected_cut, at);
            }
            stopped = result.stopped;
            ASSERT_EQ(stopped, expected_cut != std::string::npos) << stream;
            if (stopped) {
                ASSERT_EQ(released, stream.substr(0, expected_cut)) << stream;
            } else {
                const size_t keep = longest_partial(stream, stop_texts);
                ASSERT_EQ(released, stream.substr(0, stream.size() - keep)) << stream;
            }
        }
        if (!stopped) {
            EXPECT_EQ(released + matcher.flush(), stream);
        }
    }
}

}  // namespace
}  // namespace ladder::engine
