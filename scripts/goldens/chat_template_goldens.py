#!/usr/bin/env python3
"""Renders reference conversations, with and without tools, through real model
chat templates exactly as transformers.apply_chat_template does, and writes
tests/data/chat_template_goldens.json: the independent reference for ladder's
Jinja interpreter (tests/unit/tokenizer/chat_template_test.cpp).

The templates are files: the built-in ones (src/ladder/tokenizer/
builtin_chat_templates/) and tests/data/chat_templates/; TEMPLATES below says
where each comes from. Needs only the jinja2 package; where a model GGUF named
below is present in models/ (and the gguf package is importable), its
tokenizer.chat_template must equal the file.

    python scripts/goldens/chat_template_goldens.py > tests/data/chat_template_goldens.json
"""

import json
import os
import sys

import jinja2

from chat_template_environment import FIXED_NOW, make_environment

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILTIN = "src/ladder/tokenizer/builtin_chat_templates"
TESTDATA = "tests/data/chat_templates"
LLAMA_CPP = "llama.cpp models/templates/"  # as vendored in the llama-cpp-python 0.3.36 sdist

LLAMA3_TOKENS = ("<|begin_of_text|>", "<|eot_id|>")
MISTRAL_TOKENS = ("<s>", "</s>")
QWEN_TOKENS = ("", "<|im_end|>")

# Conversations every template renders, and those only the first templates
# (ladder's former hand-written formats) render: the rest are not worth the
# file size for every template.
PLAIN = ["single_user", "system_user", "multi_turn", "system_multi_turn", "whitespace",
         "unicode_whitespace", "empty_system", "ends_with_assistant",
         "system_ends_with_assistant", "special_text_in_content", "system_only",
         "not_alternating", "starts_with_assistant"]
PLAIN_SHORT = ["single_user", "system_multi_turn", "whitespace", "ends_with_assistant",
               "special_text_in_content", "not_alternating"]
WITH_TOOLS = ["tool_request", "tool_result", "parallel_tool_calls", "tool_round_trip"]

TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    }},
    {"type": "function", "function": {
        "name": "get_time",
        "description": "The local time in a time zone",
        "parameters": {"type": "object", "properties": {"zone": {"type": "string"}},
                       "required": []},
    }},
]

# Tool call ids of 9 letters and digits, which Mistral's templates require.
WEATHER_CALL = {"id": "call12345", "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}
TIME_CALL = {"id": "call67890", "type": "function",
             "function": {"name": "get_time", "arguments": {"zone": "Europe/Paris"}}}

# Firefunction's template reads its functions from a variable of its own, a
# JSON string (its model card passes json.dumps of the function specs).
FIREFUNCTION_FUNCTIONS = json.dumps([tool["function"] for tool in TOOLS], indent=4)

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
    "reasoning_history": [
        {"role": "user", "content": "What is 2+2?"},
        {"role": "assistant", "content": "<think>\nTwo and two make four.\n</think>\n\nIt is 4."},
        {"role": "user", "content": "And 3+3?"},
    ],
    # With tools: a request, a call answered by its tool, two calls at once,
    # and a whole round trip followed by another question.
    "tool_request": [
        {"role": "system", "content": "You can look things up."},
        {"role": "user", "content": "What's the weather in Paris?"},
    ],
    "tool_result": [
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [WEATHER_CALL]},
        {"role": "tool", "tool_call_id": "call12345", "name": "get_weather",
         "content": "{\"temperature\": 21, \"sky\": \"clear\"}"},
    ],
    "parallel_tool_calls": [
        {"role": "user", "content": "Weather and time in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [WEATHER_CALL, TIME_CALL]},
        {"role": "tool", "tool_call_id": "call12345", "name": "get_weather",
         "content": "{\"temperature\": 21}"},
        {"role": "tool", "tool_call_id": "call67890", "name": "get_time", "content": "14:05"},
    ],
    "tool_round_trip": [
        {"role": "system", "content": "You can look things up."},
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [WEATHER_CALL]},
        {"role": "tool", "tool_call_id": "call12345", "name": "get_weather",
         "content": "{\"temperature\": 21}"},
        {"role": "assistant", "content": "It is 21 \u00b0C in Paris."},
        {"role": "user", "content": "Thanks! And in Rome?"},
    ],
}



# (name, file, where the file comes from, (bos, eos), conversations,
#  the sets of keyword arguments to render with, model file whose template must equal it)
TEMPLATES = [
    ("smollm2", f"{TESTDATA}/smollm2.jinja",
     "HuggingFaceTB/SmolLM2-135M-Instruct: the GGUF's tokenizer.chat_template",
     ("<|im_start|>", "<|im_end|>"), PLAIN, [{}], "SmolLM2-135M-Instruct.Q4_1.gguf"),
    ("openhermes-chatml", f"{BUILTIN}/chatml.jinja",
     "teknium/OpenHermes-2.5-Mistral-7B: tokenizer_config.json", ("<s>", "<|im_end|>"),
     PLAIN, [{}], None),
    ("chatml-default-in-else", f"{TESTDATA}/chatml-default-in-else.jinja",
     "synthetic, in the shape of Qwen2.5's: a default system message in an else branch, "
     "with Jinja escapes in the literal", ("", ""), PLAIN, [{}], None),
    ("llama-2-chat", f"{BUILTIN}/llama2.jinja",
     "meta-llama/Llama-2-7b-chat-hf: tokenizer_config.json", MISTRAL_TOKENS, PLAIN, [{}], None),
    ("llama-3-instruct", f"{BUILTIN}/llama3.jinja",
     "meta-llama/Meta-Llama-3-8B-Instruct: tokenizer_config.json", LLAMA3_TOKENS, PLAIN, [{}],
     None),
    ("mistral-v1", f"{BUILTIN}/mistral-v1.jinja",
     "mistralai/Mistral-7B-Instruct-v0.2 with a system prompt: llama.cpp "
     "tests/test-chat-template.cpp", MISTRAL_TOKENS, PLAIN, [{}], None),
    ("mistral-v3", f"{BUILTIN}/mistral-v3.jinja",
     "mistralai/Mistral-7B-Instruct-v0.3: tokenizer_config.json", MISTRAL_TOKENS,
     PLAIN + WITH_TOOLS, [{}], None),
    ("mistral-v3-tekken", f"{TESTDATA}/mistral-v3-tekken-spacing.jinja",
     "the Mistral v3 template with Nemo's (tekken) spacing, as ladder's former golden script "
     "derived it", MISTRAL_TOKENS, PLAIN + WITH_TOOLS, [{}], None),
    ("mistral-v7", f"{BUILTIN}/mistral-v7.jinja",
     "mistralai/Mistral-Large-Instruct-2411: llama.cpp tests/test-chat-template.cpp",
     MISTRAL_TOKENS, PLAIN, [{}], None),
    ("gemma-3", f"{BUILTIN}/gemma.jinja",
     "google/gemma-3-270m-it: the GGUF's tokenizer.chat_template", ("<bos>", "<eos>"), PLAIN, [{}],
     "gemma-3-270m-it-Q4_K_M.gguf"),
    ("gemma-7b-it", f"{TESTDATA}/gemma-7b-it.jinja", "google/gemma-7b-it: tokenizer_config.json",
     ("<bos>", "<eos>"), PLAIN, [{}], None),
    # From here on llama.cpp's collection of real templates.
    ("hermes-3-llama-3.1-tool-use", f"{TESTDATA}/hermes-3-llama-3.1-8b-tool-use.jinja",
     LLAMA_CPP + "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja", LLAMA3_TOKENS,
     PLAIN_SHORT + WITH_TOOLS, [{}], None),
    ("llama-3.1-8b-instruct", f"{BUILTIN}/llama3.1.jinja",
     LLAMA_CPP + "meta-llama-Llama-3.1-8B-Instruct.jinja", LLAMA3_TOKENS,
     PLAIN_SHORT + WITH_TOOLS, [{}, {"tools_in_user_message": False}], None),
    ("llama-3.2-3b-instruct", f"{TESTDATA}/llama-3.2-3b-instruct.jinja",
     LLAMA_CPP + "meta-llama-Llama-3.2-3B-Instruct.jinja", LLAMA3_TOKENS,
     PLAIN_SHORT + WITH_TOOLS, [{}], None),
    ("mistral-nemo-instruct-2407", f"{BUILTIN}/mistral-v3-tekken.jinja",
     LLAMA_CPP + "mistralai-Mistral-Nemo-Instruct-2407.jinja", MISTRAL_TOKENS,
     PLAIN_SHORT + WITH_TOOLS, [{}], None),
    ("mistral-small-3.2-24b-instruct-2506", f"{TESTDATA}/mistral-small-3.2-24b-instruct-2506.jinja",
     LLAMA_CPP + "Mistral-Small-3.2-24B-Instruct-2506.jinja (Mistral's v7 format, with tools)",
     MISTRAL_TOKENS, PLAIN_SHORT + WITH_TOOLS, [{}], None),
    ("devstral-small-2507", f"{TESTDATA}/devstral-small-2507.jinja",
     LLAMA_CPP + "unsloth-mistral-Devstral-Small-2507.jinja", MISTRAL_TOKENS,
     PLAIN_SHORT + WITH_TOOLS, [{}], None),
    ("phi-3.5-mini-instruct", f"{BUILTIN}/phi3.jinja",
     LLAMA_CPP + "microsoft-Phi-3.5-mini-instruct.jinja", ("<s>", "<|endoftext|>"), PLAIN_SHORT, [{}], None),
    ("phi-4", f"{BUILTIN}/phi4.jinja", "microsoft/phi-4: llama.cpp tests/test-chat-template.cpp",
     ("<|endoftext|>", "<|im_end|>"), PLAIN_SHORT, [{}], None),
    ("qwen2.5-7b-instruct", f"{TESTDATA}/qwen2.5-7b-instruct.jinja",
     LLAMA_CPP + "Qwen-Qwen2.5-7B-Instruct.jinja", QWEN_TOKENS, PLAIN_SHORT + WITH_TOOLS, [{}], None),
    ("qwq-32b", f"{TESTDATA}/qwq-32b.jinja", LLAMA_CPP + "Qwen-QwQ-32B.jinja", QWEN_TOKENS,
     PLAIN_SHORT + WITH_TOOLS + ["reasoning_history"], [{}], None),
    ("qwen3-0.6b", f"{TESTDATA}/qwen3-0.6b.jinja", LLAMA_CPP + "Qwen-Qwen3-0.6B.jinja", QWEN_TOKENS,
     PLAIN_SHORT + WITH_TOOLS + ["reasoning_history"], [{}, {"enable_thinking": False}], None),
    ("qwen3-coder", f"{TESTDATA}/qwen3-coder.jinja", LLAMA_CPP + "Qwen3-Coder.jinja", QWEN_TOKENS,
     PLAIN_SHORT + WITH_TOOLS, [{}], None),
    ("smollm3-3b", f"{TESTDATA}/smollm3-3b.jinja", LLAMA_CPP + "HuggingFaceTB-SmolLM3-3B.jinja",
     ("", "<|im_end|>"), PLAIN_SHORT + WITH_TOOLS, [{}, {"enable_thinking": False}], None),
    ("deepseek-r1-distill-llama-8b", f"{TESTDATA}/deepseek-r1-distill-llama-8b.jinja",
     LLAMA_CPP + "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja",
     ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"),
     PLAIN_SHORT + WITH_TOOLS + ["reasoning_history"], [{}], None),
    ("deepseek-r1-distill-qwen-32b", f"{TESTDATA}/deepseek-r1-distill-qwen-32b.jinja",
     LLAMA_CPP + "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
     ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"),
     PLAIN_SHORT + WITH_TOOLS + ["reasoning_history"], [{}], None),
    ("deepseek-v3.1", f"{TESTDATA}/deepseek-v3.1.jinja", LLAMA_CPP + "deepseek-ai-DeepSeek-V3.1.jinja",
     ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"), PLAIN_SHORT + WITH_TOOLS, [{}, {"thinking": True}], None),
    ("gemma-2-2b-it", f"{TESTDATA}/gemma-2-2b-it.jinja", LLAMA_CPP + "google-gemma-2-2b-it.jinja",
     ("<bos>", "<eos>"), PLAIN_SHORT, [{}], None),
    ("granite-3.3-2b-instruct", f"{TESTDATA}/granite-3.3-2b-instruct.jinja",
     LLAMA_CPP + "ibm-granite-granite-3.3-2B-Instruct.jinja", ("<|end_of_text|>", "<|end_of_text|>"),
     PLAIN_SHORT + WITH_TOOLS, [{}, {"thinking": True}], None),
    ("firefunction-v2", f"{TESTDATA}/firefunction-v2.jinja",
     LLAMA_CPP + "fireworks-ai-llama-3-firefunction-v2.jinja", LLAMA3_TOKENS,
     PLAIN_SHORT + WITH_TOOLS, [{"functions": FIREFUNCTION_FUNCTIONS, "datetime": "Jul 26 2024"}], None),
    ("functionary-medium-v3.2", f"{TESTDATA}/functionary-medium-v3.2.jinja",
     LLAMA_CPP + "meetkai-functionary-medium-v3.2.jinja", LLAMA3_TOKENS, PLAIN_SHORT + WITH_TOOLS, [{}], None),
    ("glm-4.6", f"{TESTDATA}/glm-4.6.jinja", LLAMA_CPP + "GLM-4.6.jinja", ("", "<|endoftext|>"),
     PLAIN_SHORT + WITH_TOOLS + ["reasoning_history"], [{}], None),
    ("gpt-oss-120b", f"{TESTDATA}/gpt-oss-120b.jinja", LLAMA_CPP + "openai-gpt-oss-120b.jinja",
     ("<|startoftext|>", "<|return|>"), PLAIN_SHORT + WITH_TOOLS, [{}, {"reasoning_effort": "high"}],
     None),
    ("kimi-k2", f"{TESTDATA}/kimi-k2.jinja", LLAMA_CPP + "moonshotai-Kimi-K2.jinja",
     ("[BOS]", "[EOS]"), PLAIN_SHORT + WITH_TOOLS, [{}], None),
]


def render(compiled, messages, tools, add_generation_prompt, bos, eos, kwargs):
    """transformers' render_jinja_template: the special tokens, then the
    caller's keyword arguments, as template variables."""
    return compiled.render(messages=messages, tools=tools, documents=None,
                           add_generation_prompt=add_generation_prompt,
                           **{"bos_token": bos, "eos_token": eos, **kwargs})


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
        sys.exit(f"{name}: the template file differs from {model_file}:\n{actual!r}")


def main():
    env = make_environment()
    templates = []
    cases = []
    for name, path, origin, (bos, eos), conversations, kwargs_sets, model_file in TEMPLATES:
        with open(os.path.join(REPO, path), encoding="utf-8") as f:
            text = f.read()
        if model_file:
            check_against_model_file(name, text, model_file)
        templates.append({"name": name, "file": path, "origin": origin,
                          "bos_token": bos, "eos_token": eos})
        compiled = env.from_string(text)
        for conversation in conversations:
            with_tools = conversation in WITH_TOOLS
            for kwargs in kwargs_sets:
                for add_generation_prompt in (True, False):
                    case = {"template": name, "conversation": conversation, "tools": with_tools,
                            "add_generation_prompt": add_generation_prompt}
                    if kwargs:
                        case["kwargs"] = kwargs
                    try:
                        case["rendered"] = render(compiled, CONVERSATIONS[conversation],
                                                  TOOLS if with_tools else None,
                                                  add_generation_prompt, bos, eos, kwargs)
                    except jinja2.exceptions.TemplateError as error:
                        case["error"] = str(error)
                    except Exception as error:  # a template bug: Python's error is the reference
                        case["error"] = f"{type(error).__name__}: {error}"
                    cases.append(case)
    json.dump({"generator": "scripts/goldens/chat_template_goldens.py",
               "jinja2_version": jinja2.__version__, "now": FIXED_NOW.isoformat(),
               "tools": TOOLS, "templates": templates, "conversations": CONVERSATIONS,
               "cases": cases},
              sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
