"""The chat template as each command line applies it: run --chat and generate
render --chat-template-file and --chat-template NAME instead of the model's own,
and a template that raises stops the command with its message."""

import json
import subprocess

from conftest import run_ladder, run_ladder_json

# Writes the user's text in upper case, so the prompt shows which template ran.
UPPER_TEMPLATE = ("{%- for message in messages %}<|im_start|>{{ message.role }}\n"
                  "{{ message.content | upper }}<|im_end|>\n{% endfor %}"
                  "{%- if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
RAISING_TEMPLATE = "{{ raise_exception('no chat here: ' ~ messages[0].role) }}"


def tokens_of(ladder_bin, model, text):
    """The ids ladder's tokenizer gives the text, control tokens recognised."""
    return run_ladder_json(ladder_bin, "tokenize", "-m", model, "-p", text)


def run_chat_prompt(ladder_bin, model, *template_args):
    out = run_ladder_json(ladder_bin, "run", "-m", model, "--chat", "-p", "hi there", "-n", "1",
                          "--temp", "0", "--json", "-t", "2", *template_args)
    return out["prompt_tokens"]


def test_run_chat_renders_the_template_file(ladder_bin, default_model, tmp_path):
    path = tmp_path / "upper.jinja"
    path.write_text(UPPER_TEMPLATE)
    expected = tokens_of(ladder_bin, default_model,
                         "<|im_start|>user\nHI THERE<|im_end|>\n<|im_start|>assistant\n")
    assert run_chat_prompt(ladder_bin, default_model, "--chat-template-file", str(path)) == expected


def test_run_chat_renders_a_builtin_template(ladder_bin, default_model):
    # SmolLM2's own template adds a default system message; the built-in
    # chatml does not.
    own = run_chat_prompt(ladder_bin, default_model)
    chatml = run_chat_prompt(ladder_bin, default_model, "--chat-template", "chatml")
    assert chatml == tokens_of(ladder_bin, default_model,
                               "<|im_start|>user\nhi there<|im_end|>\n<|im_start|>assistant\n")
    assert own != chatml
    assert own[-len(chatml):] == chatml


def test_a_template_that_raises_stops_run_with_its_message(ladder_bin, default_model, tmp_path):
    path = tmp_path / "raising.jinja"
    path.write_text(RAISING_TEMPLATE)
    result = subprocess.run(
        [ladder_bin, "run", "-m", default_model, "--chat", "-p", "hi", "-n", "1",
         "--chat-template-file", str(path)], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "no chat here: user" in result.stderr


def test_generate_renders_messages_with_the_template_file(ladder_bin, default_model, tmp_path):
    template = tmp_path / "upper.jinja"
    template.write_text(UPPER_TEMPLATE)
    requests = tmp_path / "requests.jsonl"
    requests.write_text(json.dumps({"messages": [{"role": "user", "content": "hi there"}],
                                    "max_tokens": 1, "temperature": 0}) + "\n")
    out = run_ladder(ladder_bin, "generate", "-m", default_model, "-i", str(requests),
                     "--no-progress", "--chat-template-file", str(template), "-t", "2")
    result = json.loads(out.splitlines()[0])
    expected = tokens_of(ladder_bin, default_model,
                         "<|im_start|>user\nHI THERE<|im_end|>\n<|im_start|>assistant\n")
    assert result["usage"]["prompt_tokens"] == len(expected)


def test_generate_names_the_line_whose_template_raises(ladder_bin, default_model, tmp_path):
    template = tmp_path / "raising.jinja"
    template.write_text(RAISING_TEMPLATE)
    requests = tmp_path / "requests.jsonl"
    requests.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n")
    result = subprocess.run(
        [ladder_bin, "generate", "-m", default_model, "-i", str(requests), "--no-progress",
         "--chat-template-file", str(template)], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "line 1" in result.stderr and "no chat here: user" in result.stderr
