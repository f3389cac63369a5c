"""Structured output through the server: every schema of structured_schemas
on both models, greedy, sampled with n = 3 and streamed (recursive ones
greedy only), each answer checked by the jsonschema package (formats
included); the openai client's parse()
with pydantic models; regex, choice and grammar fields; the completions
endpoint; and the 400s for what cannot be honoured."""

import concurrent.futures
import json
import threading

import jsonschema
import pytest
from openai import BadRequestError, OpenAI
from pydantic import BaseModel, Field

from ladder_server import GEMMA3_MODEL, start_server
from structured_schemas import GREEDY_ONLY, PROMPTS, SCHEMAS

MODEL = ""  # the one model the server serves

FORMATS = jsonschema.Draft202012Validator.FORMAT_CHECKER
MAX_TOKENS = 96
MODES = ("greedy", "n3", "stream")
# Sampled as a user would sample structured output: at 0.8 with the whole
# distribution, models this small wander into strings that never end.
SAMPLED = dict(temperature=0.7, top_p=0.8)
CASES = [(name, mode) for name in sorted(SCHEMAS) for mode in MODES
         if mode == "greedy" or name not in GREEDY_ONLY]


def client_for(server):
    return OpenAI(base_url=server.base_url + "/v1", api_key=server.api_key, max_retries=0,
                  timeout=300)


def messages_for(name):
    schema = json.dumps(SCHEMAS[name])
    return [{"role": "system", "content": "Answer with JSON that follows this schema: " + schema},
            {"role": "user", "content": PROMPTS[name]}]


def response_format(name):
    return {"type": "json_schema",
            "json_schema": {"name": name, "strict": True, "schema": SCHEMAS[name]}}


def ask(client, name, mode):
    """The (finish_reason, text) of each choice of one request."""
    request = dict(model=MODEL, messages=messages_for(name), max_tokens=MAX_TOKENS,
                   response_format=response_format(name))
    if mode == "greedy":
        reply = client.chat.completions.create(temperature=0, **request)
        return [(c.finish_reason, c.message.content) for c in reply.choices]
    if mode == "n3":
        reply = client.chat.completions.create(n=3, seed=5, **SAMPLED, **request)
        return [(c.finish_reason, c.message.content) for c in reply.choices]
    text, finish = "", None
    for chunk in client.chat.completions.create(seed=9, stream=True, **SAMPLED, **request):
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
    return [(finish, text)]


def run_all(server):
    """Every schema in every mode, as concurrent requests (the engine batches them)."""
    client = client_for(server)
    jobs = {(name, mode): None for name, mode in CASES}
    with concurrent.futures.ThreadPoolExecutor(max_workers=12) as pool:
        futures = {key: pool.submit(ask, client, *key) for key in jobs}
        return {key: future.result() for key, future in futures.items()}


@pytest.fixture(scope="module")
def smollm2_answers():
    server = start_server("--max-num-seqs", "32")
    try:
        yield run_all(server)
    finally:
        assert server.stop() == 0


@pytest.fixture(scope="module")
def gemma3_answers():
    server = start_server("--max-num-seqs", "32", "--chat-template", "gemma", model=GEMMA3_MODEL)
    try:
        yield run_all(server)
    finally:
        assert server.stop() == 0


# A small model sampling at temperature 0.7 can loop inside a string the
# schema leaves unbounded (an email's local part, a URI's path) until
# max_tokens: the grammar keeps the prefix valid, the answer is cut. Greedy
# answers must all finish; of the sampled ones at most this share may be cut.
MAX_CUT_SAMPLED_SHARE = 0.05


def check_answers(answers, name, mode):
    for finish, text in answers[(name, mode)]:
        if finish == "length" and mode != "greedy":
            continue  # counted by check_cut_share
        assert finish == "stop", f"{name}/{mode}: finished with {finish}: {text!r}"
        instance = json.loads(text)
        jsonschema.validate(instance, SCHEMAS[name], format_checker=FORMATS)


def check_cut_share(answers):
    sampled = [(key, finish) for key, choices in answers.items() if key[1] != "greedy"
               for finish, _ in choices]
    cut = [key for key, finish in sampled if finish == "length"]
    assert len(cut) <= MAX_CUT_SAMPLED_SHARE * len(sampled), f"cut by max_tokens: {cut}"


def test_smollm2_sampled_answers_finish(smollm2_answers):
    check_cut_share(smollm2_answers)


def test_gemma3_sampled_answers_finish(gemma3_answers):
    check_cut_share(gemma3_answers)


@pytest.mark.parametrize("name,mode", CASES)
def test_smollm2_answers_follow_the_schema(smollm2_answers, name, mode):
    check_answers(smollm2_answers, name, mode)


@pytest.mark.parametrize("name,mode", CASES)
def test_gemma3_answers_follow_the_schema(gemma3_answers, name, mode):
    check_answers(gemma3_answers, name, mode)


# --- the openai client's parse() with pydantic models


class City(BaseModel):
    name: str = Field(max_length=20)
    population: int = Field(ge=0, le=50_000_000)


class Trip(BaseModel):
    origin: City
    stops: list[City] = Field(max_length=2)
    by_train: bool


class Weather(BaseModel):
    sky: str = Field(pattern="^(sunny|cloudy|rainy)$")
    celsius: int = Field(ge=-40, le=50)
    wind: float | None = Field(ge=0, le=200)


class Verdict(BaseModel):
    verdict: bool
    reasons: list[str] = Field(min_length=1, max_length=2)


@pytest.mark.parametrize("model,prompt", [
    (City, "Tell me about Paris."),
    (Trip, "Plan a trip from Paris to Lyon by train."),
    (Weather, "What is the weather like in London?"),
    (Verdict, "Is the earth round? Give reasons of a few words."),
])
def test_openai_parse_returns_pydantic_objects(client, model, prompt):
    completion = client.beta.chat.completions.parse(
        model=MODEL, messages=[{"role": "user", "content": prompt}], response_format=model,
        max_tokens=160, temperature=0)
    choice = completion.choices[0]
    assert choice.finish_reason == "stop", choice.message.content
    assert isinstance(choice.message.parsed, model)


# --- vLLM's and llama.cpp's fields, and the completions endpoint


def test_regex_choice_and_grammar_fields(client):
    common = dict(model=MODEL, messages=[{"role": "user", "content": "Pick one."}],
                  max_tokens=20, temperature=0.7, seed=3, n=3)
    reply = client.chat.completions.create(
        extra_body={"structured_outputs": {"regex": "[A-Z][a-z]{2,6} [0-9]{2}"}}, **common)
    import re
    for choice in reply.choices:
        assert re.fullmatch("[A-Z][a-z]{2,6} [0-9]{2}", choice.message.content), choice
    reply = client.chat.completions.create(
        extra_body={"structured_outputs": {"choice": ["left", "right", "up \"quoted\""]}},
        **common)
    for choice in reply.choices:
        assert choice.message.content in ("left", "right", "up \"quoted\"")
    gbnf = 'root ::= "x=" [0-9] [0-9]? ";"'
    reply = client.chat.completions.create(extra_body={"grammar": gbnf}, **common)
    for choice in reply.choices:
        assert re.fullmatch("x=[0-9][0-9]?;", choice.message.content), choice
    lark = 'start: "y" DIGIT+\nDIGIT: /[0-9]/'
    reply = client.chat.completions.create(
        extra_body={"structured_outputs": {"grammar": lark}}, **{**common, "max_tokens": 6})
    for choice in reply.choices:
        assert re.fullmatch("y[0-9]+", choice.message.content), choice


def test_json_object_and_llama_cpp_json_schema(client):
    reply = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Give a JSON object with the name and age of a cat."}],
        max_tokens=200, temperature=0, response_format={"type": "json_object"})
    assert reply.choices[0].finish_reason == "stop", reply.choices[0].message.content
    assert isinstance(json.loads(reply.choices[0].message.content), dict)
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1,
                                                     "maximum": 9}}, "required": ["n"]}
    reply = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "A digit, please."}], max_tokens=32,
        temperature=0, extra_body={"json_schema": schema})
    jsonschema.validate(json.loads(reply.choices[0].message.content), schema)


def test_completions_endpoint_takes_the_same_fields(client):
    schema = SCHEMAS["person"]
    reply = client.completions.create(
        model=MODEL, prompt="A person as JSON:", max_tokens=MAX_TOKENS, temperature=0.6, seed=1,
        n=2, extra_body={"response_format": {"type": "json_schema",
                                             "json_schema": {"name": "p", "schema": schema}}})
    for choice in reply.choices:
        assert choice.finish_reason == "stop", choice.text
        jsonschema.validate(json.loads(choice.text), schema)
    text = ""
    for chunk in client.completions.create(
            model=MODEL, prompt="Yes or no?", max_tokens=8, stream=True,
            extra_body={"structured_outputs": {"choice": ["yes", "no"]}}):
        text += chunk.choices[0].text if chunk.choices else ""
    assert text in ("yes", "no")


def test_a_grammar_cut_off_by_max_tokens_ends_with_length_and_a_valid_prefix(client):
    value = "the quick brown fox jumps over the lazy dog " * 3
    reply = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Go."}], max_tokens=6, temperature=0,
        extra_body={"json_schema": {"const": value}})
    choice = reply.choices[0]
    assert choice.finish_reason == "length"
    assert json.dumps(value).startswith(choice.message.content)
    assert reply.usage.completion_tokens == 6


# --- what cannot be honoured: a 400 that names it, and nothing else disturbed


def bad_request(client, **fields):
    with pytest.raises(BadRequestError) as raised:
        client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "Hi"}], max_tokens=4,
            extra_body=fields)
    return raised.value.body


@pytest.mark.parametrize("fields,param,words", [
    ({"response_format": {"type": "json_schema", "json_schema": {
        "name": "x", "schema": {"type": "object", "properties": {"a": {"not": {}}}}}}},
     "response_format.json_schema.schema", "'not'"),
    ({"response_format": {"type": "json_schema", "json_schema": {
        "name": "x", "schema": {"type": "array", "uniqueItems": True}}}},
     "response_format.json_schema.schema", "uniqueItems"),
    ({"json_schema": {"type": "string", "format": "color"}}, "json_schema", "format"),
    ({"structured_outputs": {"regex": "(unclosed"}}, "structured_outputs.regex", "not valid"),
    ({"grammar": "root ::= \"a\" |"}, "grammar", "not valid"),
    ({"structured_outputs": {"grammar": "root ::= undefined_rule"}},
     "structured_outputs.grammar", "not valid"),
    ({"structured_outputs": {"json": {"type": "object"}, "regex": "a"}},
     "structured_outputs.regex", "both"),
    ({"structured_outputs": {"regex": "a", "whitespace_pattern": " "}},
     "structured_outputs.whitespace_pattern", "not supported"),
    ({"response_format": {"type": "json_object"}, "grammar": "root ::= \"a\""}, "grammar",
     "both constrain"),
    ({"response_format": {"type": "xml"}}, "response_format.type", "xml"),
    ({"structured_outputs": {"regex": "a" * (600 << 10)}}, "structured_outputs.regex",
     "too large"),
])
def test_bad_grammar_fields_get_a_400_naming_them(client, fields, param, words):
    error = bad_request(client, **fields)
    assert error["param"] == param, error
    assert words in error["message"], error


def test_a_slow_compile_gets_a_400_and_the_server_carries_on():
    server = start_server("--grammar-compile-timeout", "0.001")
    try:
        client = client_for(server)
        error = bad_request(client, response_format=response_format("object_array"))
        assert error["param"] == "response_format.json_schema.schema"
        assert "too slow" in error["message"]
        reply = client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "Hi"}], max_tokens=4)
        assert reply.choices[0].finish_reason == "length"
    finally:
        assert server.stop() == 0


def test_bad_requests_leave_a_stream_in_flight_alone(client):
    """A structured stream keeps going, and stays valid, while bad ones are refused."""
    result = {}

    def stream():
        text = ""
        for chunk in client.chat.completions.create(
                model=MODEL, messages=messages_for("object_array"), max_tokens=MAX_TOKENS,
                temperature=0, stream=True, response_format=response_format("object_array")):
            text += chunk.choices[0].delta.content or "" if chunk.choices else ""
        result["text"] = text

    thread = threading.Thread(target=stream)
    thread.start()
    for _ in range(5):
        bad_request(client, structured_outputs={"regex": "(("})
        bad_request(client, json_schema={"if": {}})
    thread.join(120)
    jsonschema.validate(json.loads(result["text"]), SCHEMAS["object_array"])
