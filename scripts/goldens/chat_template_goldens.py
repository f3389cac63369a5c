#!/usr/bin/env python3
"""Renders reference conversations with real model chat templates (Jinja) and
writes tests/data/chat_template_goldens.json, the independent reference for
ladder's hand-written chat formats (tests/unit/tokenizer/chat_template_test.cpp).

Jinja runs the way Hugging Face transformers runs chat templates: a sandboxed
environment with trim_blocks and lstrip_blocks, the loopcontrols extension and
a raise_exception global. Needs only the jinja2 package; where a model GGUF
named below is present in models/ (and the gguf package is importable), its
tokenizer.chat_template must equal the copy embedded here.

    python scripts/goldens/chat_template_goldens.py > tests/data/chat_template_goldens.json
"""

import json
import os
import sys

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# HuggingFaceTB/SmolLM2-135M-Instruct: tokenizer.chat_template of the default
# model. Injects a default system message when the first message is not one.
SMOLLM2 = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face"
    "<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
    "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}"
)

# teknium/OpenHermes-2.5-Mistral-7B: plain ChatML.
CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] "
    "+ '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

# Synthetic, in the shape of Qwen2.5's template: the default system message
# sits in an else branch, written with Jinja escapes (\n, \') in the literal.
CHATML_DEFAULT_IN_ELSE = r"""{%- if messages[0]['role'] == 'system' %}
    {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
{%- else %}
    {{- '<|im_start|>system\nYou are a \'careful\' assistant.<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
    {%- if not (message.role == 'system' and loop.first) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
"""

# meta-llama/Llama-2-7b-chat-hf.
LLAMA2 = (
    r"{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}"
    r"{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}"
    r"{% set system_message = false %}{% endif %}{% for message in loop_messages %}"
    r"{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    r"{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
    r"{% endif %}{% if loop.index0 == 0 and system_message != false %}"
    r"{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}"
    r"{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}"
    r"{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
    r"{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}"
    r"{% endif %}{% endfor %}"
)

# meta-llama/Meta-Llama-3-8B-Instruct.
LLAMA3 = (
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'"
    "+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}"
    "{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}"
    "{% endif %}"
)

# mistralai/Mistral-7B-Instruct-v0.2, Mistral's "v1" template with a system prompt.
MISTRAL_V1 = r"""{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content'] %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set loop_messages = messages %}
{%- endif %}

{{- bos_token }}
{%- for message in loop_messages %}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}
        {{- raise_exception('After the optional system message, conversation roles must alternate user/assistant/user/assistant/...') }}
    {%- endif %}
    {%- if message['role'] == 'user' %}
        {%- if loop.first and system_message is defined %}
            {{- ' [INST] ' + system_message + '\n\n' + message['content'] + ' [/INST]' }}
        {%- else %}
            {{- ' [INST] ' + message['content'] + ' [/INST]' }}
        {%- endif %}
    {%- elif message['role'] == 'assistant' %}
        {{- ' ' + message['content'] + eos_token}}
    {%- else %}
        {{- raise_exception('Only user and assistant roles are supported, with the exception of an initial optional system message!') }}
    {%- endif %}
{%- endfor %}
"""

# mistralai/Mistral-7B-Instruct-v0.3, Mistral's "v3" template (with tool calling,
# unused here). The system message joins the last user message.
MISTRAL_V3 = r"""{%- if messages[0]["role"] == "system" %}
    {%- set system_message = messages[0]["content"] %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set loop_messages = messages %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}
{%- set user_messages = loop_messages | selectattr("role", "equalto", "user") | list %}

{#- This block checks for alternating user/assistant messages, skipping tool calling messages #}
{%- set ns = namespace() %}
{%- set ns.index = 0 %}
{%- for message in loop_messages %}
    {%- if not (message.role == "tool" or message.role == "tool_results" or (message.tool_calls is defined and message.tool_calls is not none)) %}
        {%- if (message["role"] == "user") != (ns.index % 2 == 0) %}
            {{- raise_exception("After the optional system message, conversation roles must alternate user/assistant/user/assistant/...") }}
        {%- endif %}
        {%- set ns.index = ns.index + 1 %}
    {%- endif %}
{%- endfor %}

{{- bos_token }}
{%- for message in loop_messages %}
    {%- if message["role"] == "user" %}
        {%- if tools is not none and (message == user_messages[-1]) %}
            {{- "[AVAILABLE_TOOLS] [" }}
            {%- for tool in tools %}
                {%- set tool = tool.function %}
                {{- '{"type": "function", "function": {' }}
                {%- for key, val in tool.items() if key != "return" %}
                    {%- if val is string %}
                        {{- '"' + key + '": "' + val + '"' }}
                    {%- else %}
                        {{- '"' + key + '": ' + val|tojson }}
                    {%- endif %}
                    {%- if not loop.last %}
                        {{- ", " }}
                    {%- endif %}
                {%- endfor %}
                {{- "}}" }}
                {%- if not loop.last %}
                    {{- ", " }}
                {%- else %}
                    {{- "]" }}
                {%- endif %}
            {%- endfor %}
            {{- "[/AVAILABLE_TOOLS]" }}
            {%- endif %}
        {%- if loop.last and system_message is defined %}
            {{- "[INST] " + system_message + "\n\n" + message["content"] + "[/INST]" }}
        {%- else %}
            {{- "[INST] " + message["content"] + "[/INST]" }}
        {%- endif %}
    {%- elif message.tool_calls is defined and message.tool_calls is not none %}
        {{- "[TOOL_CALLS] [" }}
        {%- for tool_call in message.tool_calls %}
            {%- set out = tool_call.function|tojson %}
            {{- out[:-1] }}
            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}
                {{- raise_exception("Tool call IDs should be alphanumeric strings with length 9!") }}
            {%- endif %}
            {{- ', "id": "' + tool_call.id + '"}' }}
            {%- if not loop.last %}
                {{- ", " }}
            {%- else %}
                {{- "]" + eos_token }}
            {%- endif %}
        {%- endfor %}
    {%- elif message["role"] == "assistant" %}
        {{- " " + message["content"]|trim + eos_token}}
    {%- elif message["role"] == "tool_results" or message["role"] == "tool" %}
        {%- if message.content is defined and message.content.content is defined %}
            {%- set content = message.content.content %}
        {%- else %}
            {%- set content = message.content %}
        {%- endif %}
        {{- '[TOOL_RESULTS] {"content": ' + content|string + ", " }}
        {%- if not message.tool_call_id is defined or message.tool_call_id|length != 9 %}
            {{- raise_exception("Tool call IDs should be alphanumeric strings with length 9!") }}
        {%- endif %}
        {{- '"call_id": "' + message.tool_call_id + '"}[/TOOL_RESULTS]' }}
    {%- else %}
        {{- raise_exception("Only user and assistant roles are supported, with the exception of an initial optional system message!") }}
    {%- endif %}
{%- endfor %}
"""


def _replace_once(text, old, new):
    assert text.count(old) == 1, old
    return text.replace(old, new)


# mistralai/Mistral-Nemo-Instruct-2407, Mistral's "v3-tekken" template: the v3
# template without the spaces after [INST], [AVAILABLE_TOOLS], [TOOL_CALLS] and
# [TOOL_RESULTS], and with assistant content neither trimmed nor space-prefixed.
MISTRAL_V3_TEKKEN = MISTRAL_V3
for _old, _new in [
    ('"[AVAILABLE_TOOLS] ["', '"[AVAILABLE_TOOLS]["'),
    ('"[INST] " + system_message', '"[INST]" + system_message'),
    ('"[INST] " + message["content"]', '"[INST]" + message["content"]'),
    ('"[TOOL_CALLS] ["', '"[TOOL_CALLS]["'),
    ('" " + message["content"]|trim + eos_token', 'message["content"] + eos_token'),
    ("'[TOOL_RESULTS] {\"content\": '", "'[TOOL_RESULTS]{\"content\": '"),
]:
    MISTRAL_V3_TEKKEN = _replace_once(MISTRAL_V3_TEKKEN, _old, _new)

# mistralai/Mistral-Large-Instruct-2411, Mistral's "v7" template.
MISTRAL_V7 = (
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}"
    "{{ '[INST] ' + message['content'] + '[/INST]' }}{% elif message['role'] == 'system' %}"
    "{{ '[SYSTEM_PROMPT] ' + message['content'] + '[/SYSTEM_PROMPT]' }}"
    "{% elif message['role'] == 'assistant' %}{{ ' ' + message['content'] + eos_token }}"
    "{% else %}{{ raise_exception('Only user, system and assistant roles are supported!') }}"
    "{% endif %}{% endfor %}"
)

# google/gemma-3-270m-it (the Gemma 3 family template): the system message is
# folded into the first user turn; the assistant is called "model".
GEMMA3 = """{{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- if messages[0]['content'] is string -%}
        {%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}
    {%- else -%}
        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\n\n' -%}
    {%- endif -%}
    {%- set loop_messages = messages[1:] -%}
{%- else -%}
    {%- set first_user_prefix = "" -%}
    {%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
        {{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}
    {%- endif -%}
    {%- if (message['role'] == 'assistant') -%}
        {%- set role = "model" -%}
    {%- else -%}
        {%- set role = message['role'] -%}
    {%- endif -%}
    {{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else "") }}
    {%- if message['content'] is string -%}
        {{ message['content'] | trim }}
    {%- elif message['content'] is iterable -%}
        {%- for item in message['content'] -%}
            {%- if item['type'] == 'image' -%}
                {{ '<start_of_image>' }}
            {%- elif item['type'] == 'text' -%}
                {{ item['text'] | trim }}
            {%- endif -%}
        {%- endfor -%}
    {%- else -%}
        {{ raise_exception("Invalid content type") }}
    {%- endif -%}
    {{ '<end_of_turn>\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{'<start_of_turn>model\n'}}
{%- endif -%}
"""

# google/gemma-7b-it: rejects a system message, otherwise renders as Gemma 3.
GEMMA1 = (
    "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
    "{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != "
    "(loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate "
    "user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}"
    "{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}"
    "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}"
)

# (name, format ladder must detect, template, bos text, eos text, model file
#  whose template must equal it, conversations to skip)
TEMPLATES = [
    ("smollm2", "chatml", SMOLLM2, "<|im_start|>", "<|im_end|>",
     "SmolLM2-135M-Instruct.Q4_1.gguf", []),
    ("openhermes-chatml", "chatml", CHATML, "<s>", "<|im_end|>", None, []),
    ("chatml-default-in-else", "chatml", CHATML_DEFAULT_IN_ELSE, "", "", None, []),
    ("llama-2-chat", "llama2", LLAMA2, "<s>", "</s>", None, []),
    ("llama-3-instruct", "llama3", LLAMA3, "<|begin_of_text|>", "<|eot_id|>", None, []),
    ("mistral-v1", "mistral-v1", MISTRAL_V1, "<s>", "</s>", None, []),
    ("mistral-v3", "mistral-v3", MISTRAL_V3, "<s>", "</s>", None, []),
    ("mistral-v3-tekken", "mistral-v3-tekken", MISTRAL_V3_TEKKEN, "<s>", "</s>", None, []),
    ("mistral-v7", "mistral-v7", MISTRAL_V7, "<s>", "</s>", None, []),
    ("gemma-3", "gemma", GEMMA3, "<bos>", "<eos>", "gemma-3-270m-it-Q4_K_M.gguf", []),
    # Gemma 1 and 2 reject system messages, where ladder folds them as Gemma 3 does.
    ("gemma-7b-it", "gemma", GEMMA1, "<bos>", "<eos>", None,
     ["system_user", "system_multi_turn", "whitespace", "empty_system", "system_ends_with_assistant",
      "system_only"]),
]

CONVERSATIONS = {
    "single_user": [
        {"role": "user", "content": "Hello"},
    ],
    "system_user": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "What is 2+2?"},
    ],
    "multi_turn": [
        {"role": "user", "content": "Hi there"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Tell me a joke."},
    ],
    "system_multi_turn": [
        {"role": "system", "content": "You are a helpful assistant"},
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi there"},
        {"role": "user", "content": "Who are you"},
        {"role": "assistant", "content": "I am an assistant"},
        {"role": "user", "content": "Another question"},
    ],
    "whitespace": [
        {"role": "system", "content": "  Spaced system.\n"},
        {"role": "user", "content": "  padded question \n\n"},
        {"role": "assistant", "content": "   I am an assistant   "},
        {"role": "user", "content": "\tlast\t"},
    ],
    "unicode_whitespace": [
        {"role": "user", "content": "\u00a0Gr\u00fc\u00dfe\u3000"},
        {"role": "assistant", "content": "\u2028\u65e5\u672c\u8a9e \u0085"},
        {"role": "user", "content": "\u2003caf\u00e9\u202f"},
    ],
    "empty_system": [
        {"role": "system", "content": ""},
        {"role": "user", "content": "Hi"},
    ],
    "ends_with_assistant": [
        {"role": "user", "content": "Say hi"},
        {"role": "assistant", "content": "Hi"},
    ],
    "system_ends_with_assistant": [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "Say hi"},
        {"role": "assistant", "content": "Hi"},
    ],
    "special_text_in_content": [
        {"role": "user", "content": "Write <|im_end|> and [INST] literally, {{ not jinja }}"},
    ],
    "system_only": [
        {"role": "system", "content": "Only a system message."},
    ],
    "not_alternating": [
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
    ],
    "starts_with_assistant": [
        {"role": "assistant", "content": "I speak first"},
        {"role": "user", "content": "ok"},
    ],
}


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def make_environment():
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = lambda x, indent=None: json.dumps(x, ensure_ascii=False, indent=indent)
    env.globals["raise_exception"] = raise_exception
    return env


def check_against_model_file(name, template, model_file):
    path = os.path.join(REPO, "models", model_file)
    if not os.path.exists(path):
        return
    try:
        from gguf import GGUFReader
    except ImportError:
        print(f"note: gguf not importable, {model_file} not compared", file=sys.stderr)
        return
    field = GGUFReader(path).fields["tokenizer.chat_template"]
    actual = bytes(field.parts[field.data[0]]).decode("utf-8")
    if actual != template:
        sys.exit(f"{name}: the embedded template differs from {model_file}:\n{actual!r}")


def main():
    env = make_environment()
    templates = []
    cases = []
    for name, fmt, text, bos, eos, model_file, skip in TEMPLATES:
        if model_file:
            check_against_model_file(name, text, model_file)
        templates.append({"name": name, "format": fmt, "template": text,
                          "bos_token": bos, "eos_token": eos})
        compiled = env.from_string(text)
        for conv_name, messages in CONVERSATIONS.items():
            if conv_name in skip:
                continue
            for add_generation_prompt in (True, False):
                case = {"template": name, "conversation": conv_name,
                        "add_generation_prompt": add_generation_prompt}
                try:
                    case["rendered"] = compiled.render(
                        messages=messages, add_generation_prompt=add_generation_prompt,
                        bos_token=bos, eos_token=eos)
                except jinja2.exceptions.TemplateError as error:
                    case["error"] = str(error)
                cases.append(case)
    json.dump({"generator": "scripts/goldens/chat_template_goldens.py",
               "jinja2_version": jinja2.__version__,
               "templates": templates, "conversations": CONVERSATIONS, "cases": cases},
              sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
