"""Goldens of the quantized KV cache from llama.cpp (through llama-cpp-python):
the top-20 next-token log-probabilities at every position of fixed token
sequences, computed with K and V cached as Q8_0 (type_k = type_v = q8_0,
flash attention on, as llama.cpp requires for a quantized V cache; llama.cpp
then holds the cache Walsh-Hadamard-rotated, as ladder does). The sequences
are each model golden's prompt and greedy continuation, and one window of
text long enough for the cache's rounding to accumulate."""

from goldens import model_goldens as mg

GGML_TYPE_Q8_0 = 8
TEXT_TOKENS = 512


def make(model_path, model_goldens, perplexity_text_path, cache_type=GGML_TYPE_Q8_0):
    import llama_cpp

    mg.with_plain_dot_products(llama_cpp)
    llm = llama_cpp.Llama(
        model_path=model_path, n_ctx=2048, n_batch=512, logits_all=True, n_threads=2,
        flash_attn=True, type_k=cache_type, type_v=cache_type, verbose=False,
    )
    add_bos = model_goldens["add_bos"]
    sequences = [case["prompt_tokens"] + case["greedy"] for case in model_goldens["prompts"]]
    with open(perplexity_text_path, encoding="utf-8") as f:
        text = f.read()
    sequences.append(llm.tokenize(text.encode("utf-8"), add_bos=add_bos,
                                  special=False)[:TEXT_TOKENS])
    cases = []
    for tokens in sequences:
        logprobs = mg.log_softmax(mg.evaluate_all(llm, tokens))
        cases.append({"tokens": [int(t) for t in tokens],
                      "top_logprobs": [mg.top_of(row) for row in logprobs]})
    return {
        "llama_cpp_python": llama_cpp.__version__,
        "type_k": "q8_0",
        "type_v": "q8_0",
        "flash_attn": True,
        "top_n": mg.TOP_N,
        "sequences": cases,
    }


def summary(result):
    n = sum(len(case["top_logprobs"]) for case in result["sequences"])
    return f"{len(result['sequences'])} sequences, {n} positions"

