"""--chat-template-file, and what /tokenize and /v1/chat/completions hand the
chat template: tools, chat_template_kwargs, and the template's own errors as
a 400 with its message."""

import pytest

import http_raw
from ladder_server import start_server

# ChatML that also writes what it was given, and raises where told to.
TEMPLATE = """{%- if tools %}<|im_start|>system
tools: {{ tools | map(attribute='function') | map(attribute='name') | join(', ') }}<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.content == 'raise' %}{{ raise_exception('This template refuses: ' ~ message.role) }}{% endif %}
{{- '<|im_start|>' + message.role + '\\n' + message.content }}
{%- for call in message.tool_calls | default([]) %}call {{ call.function.name }}({{ call.function.arguments.city }}){% endfor %}
{{- '<|im_end|>\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% if enable_thinking is defined and not enable_thinking %}<think></think>{% endif %}
{%- endif %}"""

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]


@pytest.fixture(scope="module")
def templated_server(tmp_path_factory):
    path = tmp_path_factory.mktemp("template") / "chat.jinja"
    path.write_text(TEMPLATE)
    instance = start_server("--chat-template-file", str(path))
    yield instance
    instance.stop()


def rendered(server, body):
    status, _, tokens = http_raw.request_json(server, "POST", "/tokenize", body)
    assert status == 200, tokens
    status, _, text = http_raw.request_json(server, "POST", "/detokenize",
                                            {"tokens": tokens["tokens"]})
    assert status == 200, text
    return text["prompt"]


def test_tokenize_renders_tools_calls_and_template_kwargs(templated_server):
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call12345", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call12345", "content": "21 C"},
    ]
    text = rendered(templated_server, {"messages": messages, "tools": TOOLS,
                                       "chat_template_kwargs": {"enable_thinking": False}})
    assert text == ("<|im_start|>system\ntools: get_weather<|im_end|>\n"
                    "<|im_start|>user\nWeather?<|im_end|>\n"
                    "<|im_start|>assistant\ncall get_weather(Paris)<|im_end|>\n"
                    "<|im_start|>tool\n21 C<|im_end|>\n"
                    "<|im_start|>assistant\n<think></think>")
    plain = rendered(templated_server, {"messages": messages[:1], "add_generation_prompt": False})
    assert plain == "<|im_start|>user\nWeather?<|im_end|>\n"


def test_a_template_that_raises_is_a_400_with_its_message(templated_server):
    body = {"messages": [{"role": "user", "content": "raise"}]}
    for path in ("/tokenize", "/v1/chat/completions"):
        status, _, error = http_raw.request_json(templated_server, "POST", path,
                                                 dict(body, max_tokens=1))
        assert status == 400, error
        assert error["error"]["message"] == "This template refuses: user"
        assert error["error"]["param"] == "messages"


def test_template_fields_are_checked(templated_server):
    messages = [{"role": "user", "content": "hi"}]
    for extra, param in (({"tools": "x"}, "tools"),
                         ({"chat_template_kwargs": [1]}, "chat_template_kwargs"),
                         ({"chat_template": "{{ 1 }}"}, "chat_template")):
        status, _, error = http_raw.request_json(templated_server, "POST", "/tokenize",
                                                 dict(extra, messages=messages))
        assert status == 400 and error["error"]["param"] == param, error
