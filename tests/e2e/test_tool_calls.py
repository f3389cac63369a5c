"""Tool calling through the server with the official openai client: forced
and named calls whose arguments match the function's schema, the round trip
with a tool result, streamed delta.tool_calls that reassemble to exactly the
whole response, each format (Hermes by the template, Llama 3 JSON and
Mistral by --tool-call-parser), both models; and reasoning output."""

import json

import jsonschema
import pytest
from openai import BadRequestError, OpenAI

from ladder_server import GEMMA3_MODEL, start_server

MODEL = ""  # the one model the server serves

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "maxLength": 24},
                           "unit": {"enum": ["celsius", "fahrenheit"]}},
            "required": ["city", "unit"],
            "additionalProperties": False,
        },
    },
}
CLOCK = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "The time in a time zone.",
        "parameters": {"type": "object",
                       "properties": {"zone": {"type": "string", "pattern": "^[A-Z]{3}$"}},
                       "required": ["zone"]},
    },
}
TOOLS = [WEATHER, CLOCK]
SCHEMAS = {tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOLS}
QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]


def client_for(server):
    return OpenAI(base_url=server.base_url + "/v1", api_key=server.api_key, max_retries=0,
                  timeout=120)


def check_calls(message, names=None):
    assert message.tool_calls, message
    for call in message.tool_calls:
        assert call.type == "function"
        assert call.id
        assert names is None or call.function.name in names
        jsonschema.validate(json.loads(call.function.arguments), SCHEMAS[call.function.name])


def streamed(client, **request):
    """The stream's message, joined as a client joins it, and its finish reason."""
    content, calls, finish = "", {}, None
    for chunk in client.chat.completions.create(stream=True, **request):
        for choice in chunk.choices:
            delta = choice.delta
            content += delta.content or ""
            for fragment in delta.tool_calls or []:
                if fragment.id:
                    assert fragment.index not in calls, "a second first fragment"
                    assert fragment.type == "function" and fragment.function.name
                    calls[fragment.index] = {"id": fragment.id, "name": fragment.function.name,
                                             "arguments": ""}
                else:
                    assert fragment.function.name is None
                calls[fragment.index]["arguments"] += fragment.function.arguments or ""
            finish = choice.finish_reason or finish
    return content, [calls[i] for i in sorted(calls)], finish


def whole(message):
    return [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
            for c in message.tool_calls or []]


def test_required_call_round_trip(client):
    # One call: with parallel calls allowed, a small model goes on calling
    # until max_tokens.
    request = dict(model=MODEL, messages=QUESTION, tools=TOOLS, tool_choice="required",
                   parallel_tool_calls=False, max_tokens=80, temperature=0)
    reply = client.chat.completions.create(**request)
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    check_calls(choice.message)
    assert choice.message.content is None
    call = choice.message.tool_calls[0]
    history = QUESTION + [
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": call.id, "type": "function",
                         "function": {"name": call.function.name,
                                      "arguments": call.function.arguments}}]},
        {"role": "tool", "tool_call_id": call.id, "content": "18 degrees and sunny"},
    ]
    answer = client.chat.completions.create(model=MODEL, messages=history, tools=TOOLS,
                                            max_tokens=40, temperature=0)
    final = answer.choices[0]
    assert final.finish_reason in ("stop", "length")
    assert final.message.tool_calls is None
    assert isinstance(final.message.content, str) and final.message.content.strip()


def test_named_function_is_the_one_called(client):
    reply = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "What time is it in Tokyo?"}],
        tools=TOOLS, tool_choice={"type": "function", "function": {"name": "get_time"}},
        parallel_tool_calls=False, max_tokens=120, temperature=0.9, seed=4, n=3)
    # With parallel calls allowed the small model may go on calling until
    # max_tokens; at temperature 0.9 a call may also spend up to 12 characters
    # of whitespace in each of its gaps, so the budget covers that.
    for choice in reply.choices:
        assert choice.finish_reason == "tool_calls"
        check_calls(choice.message, names={"get_time"})
        assert len(choice.message.tool_calls) == 1


def test_parallel_calls_off_gives_one_call(client):
    reply = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Weather in Paris and in Rome?"}],
        tools=TOOLS, tool_choice="required", parallel_tool_calls=False, max_tokens=80,
        temperature=0.8, seed=2, n=2)
    for choice in reply.choices:
        check_calls(choice.message)
        assert len(choice.message.tool_calls) == 1


def test_tool_choice_none_answers_in_text(client):
    reply = client.chat.completions.create(model=MODEL, messages=QUESTION, tools=TOOLS,
                                           tool_choice="none", max_tokens=16, temperature=0)
    assert reply.choices[0].message.tool_calls is None
    assert reply.choices[0].message.content


@pytest.mark.parametrize("tool_choice", ["required", "auto"])
def test_streamed_deltas_reassemble_to_the_whole_message(client, tool_choice):
    request = dict(model=MODEL, messages=QUESTION, tools=TOOLS, tool_choice=tool_choice,
                   max_tokens=80, temperature=0)
    message = client.chat.completions.create(**request).choices[0]
    content, calls, finish = streamed(client, **request)
    assert finish == message.finish_reason
    assert content == (message.message.content or "")
    expected = whole(message.message)
    assert [dict(c, id=None) for c in calls] == [dict(c, id=None) for c in expected]
    if tool_choice == "required":
        assert calls, "no call was streamed"


@pytest.mark.parametrize("parser", ["llama3_json", "mistral"])
def test_other_formats_by_flag(parser):
    server = start_server("--tool-call-parser", parser)
    try:
        client = client_for(server)
        request = dict(model=MODEL, messages=QUESTION, tools=TOOLS, tool_choice="required",
                       parallel_tool_calls=False, max_tokens=80, temperature=0)
        reply = client.chat.completions.create(**request)
        assert reply.choices[0].finish_reason == "tool_calls"
        check_calls(reply.choices[0].message)
        if parser == "mistral":
            assert all(len(c.id) == 9 for c in reply.choices[0].message.tool_calls)
        content, calls, _ = streamed(client, **request)
        assert [c["arguments"] for c in calls] == [
            c.function.arguments for c in reply.choices[0].message.tool_calls]
    finally:
        assert server.stop() == 0


def test_gemma3_forced_calls():
    server = start_server("--chat-template", "gemma", model=GEMMA3_MODEL)
    try:
        client = client_for(server)
        reply = client.chat.completions.create(
            model=MODEL, messages=QUESTION, tools=TOOLS, tool_choice="required",
            parallel_tool_calls=False, max_tokens=80, temperature=0.7, seed=8, n=2)
        for choice in reply.choices:
            assert choice.finish_reason == "tool_calls"
            check_calls(choice.message)
    finally:
        assert server.stop() == 0


@pytest.mark.parametrize("fields,param", [
    ({"tool_choice": {"type": "function", "function": {"name": "launch"}}}, "tool_choice"),
    ({"tool_choice": "sometimes"}, "tool_choice"),
    ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "dependentRequired": {}}}}]}, "tools[0].function.parameters"),
    ({"tools": [{"type": "function", "function": {"name": "bad name"}}]},
     "tools[0].function.name"),
])
def test_bad_tool_fields_get_a_400_naming_them(client, fields, param):
    request = dict(model=MODEL, messages=QUESTION, max_tokens=4, tools=TOOLS)
    request.update(fields)
    with pytest.raises(BadRequestError) as raised:
        client.chat.completions.create(**request)
    assert raised.value.body["param"] == param


def test_tools_on_completions_get_a_400(client):
    with pytest.raises(BadRequestError) as raised:
        client.completions.create(model=MODEL, prompt="x", max_tokens=2,
                                  extra_body={"tools": TOOLS})
    assert raised.value.body["param"] == "tools"


def test_reasoning_goes_to_reasoning_content():
    """deepseek_r1's rule: before </think> is reasoning; an output that never
    closes it is all reasoning."""
    server = start_server("--reasoning-parser", "deepseek_r1")
    try:
        client = client_for(server)
        request = dict(model=MODEL, messages=[{"role": "user", "content": "Hello"}],
                       max_tokens=12, temperature=0)
        message = client.chat.completions.create(**request).choices[0].message
        assert message.content is None
        assert message.model_extra["reasoning_content"]
        text = ""
        for chunk in client.chat.completions.create(stream=True, **request):
            for choice in chunk.choices:
                assert not choice.delta.content
                text += (choice.delta.model_extra or {}).get("reasoning_content") or ""
        assert text == message.model_extra["reasoning_content"]
    finally:
        assert server.stop() == 0
