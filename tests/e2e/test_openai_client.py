"""The official `openai` package against `ladder serve`: what an operator's
existing code does, streaming and not."""

import pytest

import http_raw
from ladder_server import MODEL_NAME

CHAT = [{"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Name three colours."}]


def test_chat_completion_has_message_and_usage(client):
    response = client.chat.completions.create(model=MODEL_NAME, messages=CHAT, max_tokens=8,
                                              temperature=0)
    assert response.object == "chat.completion"
    assert response.id.startswith("chatcmpl-")
    assert response.model == MODEL_NAME
    choice = response.choices[0]
    assert choice.index == 0
    assert choice.message.role == "assistant"
    assert choice.message.content, "the reply is empty"
    assert choice.finish_reason in ("stop", "length")
    usage = response.usage
    assert usage.prompt_tokens > 10
    assert 1 <= usage.completion_tokens <= 8
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert usage.prompt_tokens_details.cached_tokens >= 0


def test_chat_stream_matches_the_whole_response(client):
    whole = client.chat.completions.create(model=MODEL_NAME, messages=CHAT, max_tokens=10,
                                           temperature=0)
    stream = client.chat.completions.create(model=MODEL_NAME, messages=CHAT, max_tokens=10,
                                            temperature=0, stream=True,
                                            stream_options={"include_usage": True})
    chunks = list(stream)
    assert all(chunk.object == "chat.completion.chunk" for chunk in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == whole.choices[0].finish_reason
    assert all(f is None for f in finishes[:-1])
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens
    assert all(c.usage is None for c in chunks[:-1])


def test_completion_accepts_every_prompt_shape(client, server):
    ids = http_raw.request_json(server, "POST", "/tokenize", {"prompt": "The sky is"})[2]["tokens"]
    for prompt in ("The sky is", ["The sky is"], ids, [ids]):
        response = client.completions.create(model=MODEL_NAME, prompt=prompt, max_tokens=4,
                                             temperature=0)
        assert response.object == "text_completion"
        assert response.usage.prompt_tokens == len(ids)
        assert len(response.choices) == 1


def test_completion_stream_without_usage(client):
    stream = client.completions.create(model=MODEL_NAME, prompt="Once upon a time", max_tokens=6,
                                       temperature=0, stream=True)
    chunks = list(stream)
    assert chunks and all(c.usage is None for c in chunks)
    assert chunks[-1].choices[0].finish_reason in ("stop", "length")


def test_n_choices_and_several_prompts_are_numbered(client, server):
    every_token = {"ignore_eos": True}
    response = client.completions.create(model=MODEL_NAME, prompt=["Hello", "Goodbye"], n=3,
                                         max_tokens=4, seed=11, extra_body=every_token)
    assert [c.index for c in response.choices] == list(range(6))
    hello = client.completions.create(model=MODEL_NAME, prompt="Hello", n=3, max_tokens=4,
                                      seed=11, extra_body=every_token)
    # Choice i of prompt p is index p * n + i, seeded seed + i.
    assert [c.text for c in response.choices[:3]] == [c.text for c in hello.choices]
    assert len({c.text for c in hello.choices}) > 1, "the n choices are all alike"
    assert response.usage.completion_tokens == 6 * 4
    # A prompt counts once, however many choices it has.
    assert response.usage.prompt_tokens == hello.usage.prompt_tokens + len(
        http_raw.request_json(server, "POST", "/tokenize", {"prompt": "Goodbye"})[2]["tokens"])


def test_chat_n_choices_stream(client):
    stream = client.chat.completions.create(model=MODEL_NAME, messages=CHAT, n=2, max_tokens=5,
                                            seed=5, stream=True)
    texts = {0: "", 1: ""}
    finished = set()
    for chunk in stream:
        for choice in chunk.choices:
            texts[choice.index] += choice.delta.content or ""
            if choice.finish_reason:
                finished.add(choice.index)
    assert finished == {0, 1}
    assert all(texts.values())


def test_same_seed_gives_same_text(client):
    def sample(seed):
        return client.completions.create(model=MODEL_NAME, prompt="My favourite animal is",
                                         max_tokens=12, temperature=1.0, seed=seed).choices[0].text

    first = sample(1234)
    assert sample(1234) == first
    assert any(sample(seed) != first for seed in (1, 2, 3)), "the seed changes nothing"


def test_stop_string_ends_the_text_before_it(client):
    prompt = "Count: one, two, three, four, five, six,"
    greedy = client.completions.create(model=MODEL_NAME, prompt=prompt, max_tokens=12,
                                       temperature=0).choices[0].text
    assert len(greedy.strip()) > 4
    stop = greedy.strip()[2:5]
    stopped = client.completions.create(model=MODEL_NAME, prompt=prompt, max_tokens=12,
                                        temperature=0, stop=[stop, "never-seen"]).choices[0]
    assert stopped.finish_reason == "stop"
    assert stopped.text == greedy[:greedy.index(stop)]


def test_streamed_stop_string_across_a_token_boundary(client):
    """A stop string that starts inside one token and ends inside the next: the
    stream holds back the first token's tail until it knows, and never sends
    any of the stop string."""
    prompt = "Count: one, two, three, four, five, six,"
    greedy = client.completions.create(model=MODEL_NAME, prompt=prompt, max_tokens=16,
                                       temperature=0, logprobs=0).choices[0]
    pieces = greedy.logprobs.tokens
    assert "".join(pieces) == greedy.text
    stop = None
    for k in range(1, len(pieces) - 1):
        candidate = pieces[k][-2:] + pieces[k + 1][:2]
        boundary = len("".join(pieces[:k + 1]))
        if (len(pieces[k]) >= 2 and len(pieces[k + 1]) >= 2 and candidate.strip() == candidate
                and greedy.text.find(candidate) == boundary - 2):
            stop = candidate
            break
    assert stop, f"no two-character token pair in {pieces}"
    stream = client.completions.create(model=MODEL_NAME, prompt=prompt, max_tokens=16,
                                       temperature=0, stop=[stop], stream=True)
    chunks = list(stream)
    text = "".join(c.choices[0].text for c in chunks if c.choices)
    assert text == greedy.text[:greedy.text.index(stop)], f"stop {stop!r}"
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_choice_i_is_sampled_with_seed_plus_i(client):
    def sample(n, seed):
        response = client.completions.create(model=MODEL_NAME, prompt="My favourite animal is",
                                             max_tokens=8, temperature=1.0, n=n, seed=seed,
                                             extra_body={"ignore_eos": True})
        return [c.text for c in response.choices]

    together = sample(3, 40)
    assert together == [sample(1, 40 + i)[0] for i in range(3)]
    assert len(set(together)) > 1, "the choices are all alike"


def test_completion_logprobs(client):
    response = client.completions.create(model=MODEL_NAME, prompt="The capital of France is",
                                         max_tokens=5, temperature=0, logprobs=3)
    choice = response.choices[0]
    logprobs = choice.logprobs
    assert len(logprobs.tokens) == response.usage.completion_tokens
    assert len(logprobs.token_logprobs) == len(logprobs.tokens)
    assert all(lp <= 0 for lp in logprobs.token_logprobs)
    assert all(1 <= len(top) <= 4 for top in logprobs.top_logprobs)
    # Greedy: the chosen token is the most likely one.
    for token, logprob, top in zip(logprobs.tokens, logprobs.token_logprobs,
                                   logprobs.top_logprobs):
        assert logprob == pytest.approx(max(top.values()))
        assert top[token] == pytest.approx(logprob)
    assert logprobs.text_offset == sorted(logprobs.text_offset)
    assert "".join(logprobs.tokens) == choice.text


def test_chat_logprobs(client):
    response = client.chat.completions.create(model=MODEL_NAME, messages=CHAT, max_tokens=4,
                                              temperature=0, logprobs=True, top_logprobs=2)
    content = response.choices[0].logprobs.content
    assert len(content) == response.usage.completion_tokens
    for entry in content:
        assert entry.logprob <= 0
        assert bytes(entry.bytes).decode(errors="replace") == entry.token
        assert len(entry.top_logprobs) == 2
        assert entry.top_logprobs[0].logprob >= entry.top_logprobs[1].logprob


def test_models_list_and_retrieve(client):
    models = client.models.list()
    assert [m.id for m in models.data] == [MODEL_NAME]
    assert client.models.retrieve(MODEL_NAME).id == MODEL_NAME


def test_unknown_model_is_404(client):
    import openai
    with pytest.raises(openai.NotFoundError) as error:
        client.chat.completions.create(model="gpt-4", messages=CHAT, max_tokens=2)
    assert error.value.body["code"] == "model_not_found"


def test_file_name_is_accepted_as_model(client):
    response = client.completions.create(model=MODEL_NAME + ".gguf", prompt="Hi", max_tokens=2)
    assert response.choices


def test_bad_parameter_is_400_naming_it(client):
    import openai
    with pytest.raises(openai.BadRequestError) as error:
        client.chat.completions.create(model=MODEL_NAME, messages=CHAT, max_tokens=2,
                                       temperature=3.5)
    assert error.value.body["param"] == "temperature"
