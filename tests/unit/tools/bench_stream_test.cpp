// The SSE parser on tricky framing (lines split anywhere, CRLF, comments,
// multi-line data) and the reading of OpenAI chunks into timings and counts.
#include "ladder/tools/bench_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ladder/tools/bench_http.h"
#include "ladder/tools/sse_parser.h"
#include "ladder/util/error.h"

namespace ladder::tools {
namespace {

std::vector<SseEvent> parse_in_pieces(const std::string& stream, size_t piece) {
    SseParser parser;
    std::vector<SseEvent> events;
    for (size_t i = 0; i < stream.size(); i += piece) {
        parser.feed(std::string_view(stream).substr(i, piece), events);
    }
    parser.finish(events);
    return events;
}

TEST(SseParser, events_are_the_same_whatever_the_pieces) {
    const std::string stream =
        ": keep-alive\r\n\r\n"
        "data: {\"a\": 1}\r\n\r\n"
        "event: error\ndata: line one\ndata: line two\n\n"
        "data:no-space\r\rdata: [DONE]\n\n";
    for (size_t piece = 1; piece <= stream.size(); ++piece) {
        const std::vector<SseEvent> events = parse_in_pieces(stream, piece);
        ASSERT_EQ(events.size(), 4u) << "pieces of " << piece << " bytes";
        EXPECT_EQ(events[0].data, "{\"a\": 1}");
        EXPECT_EQ(events[1].type, "error");
        EXPECT_EQ(events[1].data, "line one\nline two");
        EXPECT_EQ(events[2].data, "no-space") << "the space after the colon is optional";
        EXPECT_EQ(events[2].type, "") << "the event type does not carry over";
        EXPECT_EQ(events[3].data, "[DONE]");
    }
}

TEST(SseParser, counts_comments_and_data_lines) {
    SseParser parser;
    std::vector<SseEvent> events;
    parser.feed(": ping\n\n: ping\n\ndata: x\n\n", events);
    EXPECT_EQ(parser.n_comment_lines(), 2);
    EXPECT_EQ(parser.n_data_lines(), 1);
    EXPECT_EQ(events.size(), 1u);
}

TEST(SseParser, a_last_event_without_its_blank_line_still_arrives) {
    const std::vector<SseEvent> events = parse_in_pieces("data: [DONE]", 5);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].data, "[DONE]");
    EXPECT_TRUE(parse_in_pieces("<html><body>hi</body></html>", 7).empty())
        << "a page that is not SSE has no data";
}

SseEvent data(std::string text) { return SseEvent{"", std::move(text)}; }

std::string text_chunk(const std::string& text) {
    return R"({"choices":[{"index":0,"text":")" + text +
           R"(","finish_reason":null}],"usage":null})";
}

TEST(OpenAiStreamReader, times_tokens_and_reads_usage) {
    RequestResult result;
    OpenAiStreamReader reader(BenchEndpoint::Completions, result);
    EXPECT_EQ(reader.read({data(text_chunk("Hello"))}, 0.25), 1);
    EXPECT_EQ(reader.read({data(text_chunk(" there")), data(text_chunk("!"))}, 0.35), 2);
    EXPECT_EQ(reader.read({data(text_chunk(""))}, 0.40), 0) << "an empty chunk is no token";
    reader.read({data(R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,)"
                      R"("total_tokens":15,"prompt_tokens_details":{"cached_tokens":8}}})"),
                 data("[DONE]")},
                0.45);
    reader.finish(0.5);
    EXPECT_TRUE(result.success) << result.error;
    EXPECT_DOUBLE_EQ(result.ttft_s, 0.25);
    ASSERT_EQ(result.itls_s.size(), 2u);
    EXPECT_NEAR(result.itls_s[0], 0.10, 1e-12);
    EXPECT_EQ(result.itls_s[1], 0.0) << "two tokens in one read share its time";
    EXPECT_DOUBLE_EQ(result.e2e_s, 0.5);
    EXPECT_EQ(result.n_stream_tokens, 3);
    EXPECT_EQ(result.usage_prompt_tokens, 12);
    EXPECT_EQ(result.usage_completion_tokens, 3);
    EXPECT_EQ(result.usage_cached_tokens, 8);
    EXPECT_FALSE(result.usage_mismatch());
}

TEST(OpenAiStreamReader, chat_counts_content_not_the_role_chunk) {
    RequestResult result;
    OpenAiStreamReader reader(BenchEndpoint::Chat, result);
    reader.read({data(R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})")},
                0.1);
    reader.read({data(R"({"choices":[{"index":0,"delta":{"content":"Hi"}}]})")}, 0.3);
    reader.read({data(R"({"choices":[{"index":0,"delta":{},"finish_reason":"length"}]})"),
                 data(R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}})"),
                 data("[DONE]")},
                0.4);
    reader.finish(0.4);
    EXPECT_TRUE(result.success);
    EXPECT_DOUBLE_EQ(result.ttft_s, 0.3) << "TTFT is the first content, not the role";
    EXPECT_EQ(result.n_stream_tokens, 1);
    EXPECT_TRUE(result.usage_mismatch()) << "2 tokens by usage, 1 chunk on the stream";
    EXPECT_EQ(result.output_tokens(), 2);
}

TEST(OpenAiStreamReader, error_events_fail_the_request_with_their_message) {
    RequestResult in_data;
    OpenAiStreamReader reader(BenchEndpoint::Completions, in_data);
    reader.read({data(text_chunk("a")),
                 data(R"({"error":{"message":"KV cache exhausted","type":"server_error"}})")},
                0.1);
    EXPECT_TRUE(reader.failed());
    reader.finish(0.2);
    EXPECT_FALSE(in_data.success);
    EXPECT_EQ(in_data.error, "error event in the stream: KV cache exhausted");

    RequestResult typed;
    OpenAiStreamReader typed_reader(BenchEndpoint::Completions, typed);
    typed_reader.read({SseEvent{"error", "overloaded"}}, 0.1);
    typed_reader.finish(0.1);
    EXPECT_EQ(typed.error, "error event in the stream: overloaded");
}

TEST(OpenAiStreamReader, a_stream_cut_short_or_empty_fails) {
    RequestResult cut;
    OpenAiStreamReader reader(BenchEndpoint::Completions, cut);
    reader.read({data(text_chunk("a"))}, 0.1);
    reader.finish(0.2);
    EXPECT_FALSE(cut.success);
    EXPECT_NE(cut.error.find("[DONE]"), std::string::npos) << cut.error;

    RequestResult empty;
    OpenAiStreamReader empty_reader(BenchEndpoint::Completions, empty);
    empty_reader.read({data("[DONE]")}, 0.1);
    empty_reader.finish(0.1);
    EXPECT_EQ(empty.error, "the stream carried no output text");

    RequestResult garbage;
    OpenAiStreamReader garbage_reader(BenchEndpoint::Completions, garbage);
    garbage_reader.read({data("not json")}, 0.1);
    garbage_reader.finish(0.1);
    EXPECT_NE(garbage.error.find("not a JSON object"), std::string::npos) << garbage.error;
}

TEST(OpenAiErrors, message_of_an_error_body) {
    EXPECT_EQ(error_message_of(R"({"error":{"message":"incorrect API key provided"}})"),
              "incorrect API key provided");
    EXPECT_EQ(error_message_of(R"({"error":"Not Found"})"), "Not Found");
    EXPECT_EQ(error_message_of(R"({"detail":"x","message":"m"})"), "m");
    EXPECT_EQ(error_message_of("<html>oops</html>"), "<html>oops</html>");
}

TEST(BaseUrl, takes_the_url_with_or_without_v1) {
    const BaseUrl plain = parse_base_url("http://127.0.0.1:8080");
    EXPECT_EQ(plain.origin, "http://127.0.0.1:8080");
    EXPECT_EQ(plain.path_prefix, "");
    EXPECT_EQ(parse_base_url("http://127.0.0.1:8080/v1/").path_prefix, "");
    const BaseUrl proxied = parse_base_url("https://example.com/serve/v1");
    EXPECT_EQ(proxied.origin, "https://example.com");
    EXPECT_EQ(proxied.path_prefix, "/serve");
    EXPECT_THROW(parse_base_url("127.0.0.1:8080"), util::InputError);
    EXPECT_THROW(parse_base_url("http://"), util::InputError);
}

}  // namespace
}  // namespace ladder::tools
