"""Model-level goldens from llama.cpp (through llama-cpp-python): greedy
continuations, the top-20 next-token log-probabilities at every position, and
perplexity computed the way llama.cpp's perplexity tool does. For a model with
sliding-window layers, the perplexity window and one long teacher-forced
sequence reach well past the window, so local and global layers both count."""

import json
import math
import os

import numpy as np

TOP_N = 20
N_GREEDY = 48
PPL_CTX = 512
# Models with a sliding window: perplexity windows of this many tokens, and one
# long sequence of LONG_TOKENS whose last LONG_SCORED positions are recorded.
LONG_CTX = 2048
LONG_TOKENS = 1600
LONG_SCORED = 512


def log_softmax(logits):
    logits = logits.astype(np.float64)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def top_of(row):
    ids = np.argsort(-row, kind="stable")[:TOP_N]
    return [[int(i), round(float(row[i]), 6)] for i in ids]


def evaluate_all(llm, tokens):
    """Logits [len(tokens), vocab] of a fresh sequence."""
    llm.reset()
    llm.eval(tokens)
    return np.array(llm.scores[: len(tokens)], dtype=np.float32)


def greedy_continuation(llm, prompt_tokens, n):
    """Greedy tokens, each from one batched evaluation of the whole sequence so
    far. llama.cpp's CPU attention sums in another order for a single-token
    batch than for several, so its token-by-token decode is not batch
    invariant; re-evaluating keeps every token on the same kernels as the
    teacher-forced distributions below (ladder gives the same bits either way)."""
    tokens = list(prompt_tokens)
    generated = []
    for _ in range(n):
        llm.reset()
        llm.eval(tokens)
        next_id = int(np.argmax(llm.scores[len(tokens) - 1]))
        generated.append(next_id)
        tokens.append(next_id)
    return generated


def prompt_goldens(llm, prompts, add_bos):
    cases = []
    for text in prompts:
        tokens = llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=False)
        greedy = greedy_continuation(llm, tokens, N_GREEDY)
        # Distributions at every position of prompt + continuation (teacher forcing).
        sequence = tokens + greedy
        logprobs = log_softmax(evaluate_all(llm, sequence))
        top = [top_of(row) for row in logprobs]
        cases.append({"text": text, "prompt_tokens": tokens, "greedy": greedy, "top_logprobs": top})
    return cases


def perplexity(llm, text, add_bos, bos_id, ctx):
    """llama.cpp tools/perplexity: windows of ctx tokens, BOS in the first slot
    when the model adds one, score only the second half of each window."""
    tokens = llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=False)
    n_chunks = len(tokens) // ctx
    first = ctx // 2
    nll = 0.0
    count = 0
    for chunk in range(n_chunks):
        window = list(tokens[chunk * ctx : (chunk + 1) * ctx])
        if add_bos:
            window[0] = bos_id
        logits = evaluate_all(llm, window)
        # Row by row: a whole window of a 262k vocabulary in float64 is gigabytes.
        for j in range(first, ctx - 1):
            nll -= log_softmax(logits[j])[window[j + 1]]
            count += 1
    return {
        "ctx": ctx,
        "n_tokens": len(tokens),
        "n_chunks": n_chunks,
        "n_scored": count,
        "perplexity": math.exp(nll / count),
    }


def long_sequence(llm, text, add_bos):
    """Teacher-forced distributions at the last LONG_SCORED positions of the
    first LONG_TOKENS tokens of text: positions far past the sliding window."""
    tokens = llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=False)[:LONG_TOKENS]
    logits = evaluate_all(llm, tokens)
    first = len(tokens) - LONG_SCORED
    return {
        "tokens": [int(t) for t in tokens],
        "first_scored": first,
        "top_logprobs": [top_of(log_softmax(logits[j])) for j in range(first, len(tokens))],
    }


def sliding_window(llm):
    arch = llm.metadata.get("general.architecture", "")
    return int(llm.metadata.get(f"{arch}.attention.sliding_window", "0"))


def with_plain_dot_products(llama_cpp):
    """llama.cpp on x86 has two faster paths for K-quant and some legacy
    weights: it repacks them into interleaved layouts (Q4_K, Q6_K, Q8_0, ...),
    and it runs batches of 8+ rows through a tiled kernel. Both sum in other
    orders than its plain per-row dot products, so one token's logits differ in
    the last bits between prefill and decode, and Gemma 3 amplifies such bits
    into different greedy tokens. ladder reproduces the plain dot products,
    which llama.cpp uses with repacking off (its --no-repack) and
    GGML_CPU_TILED_MM=0; the goldens come from that configuration."""
    os.environ["GGML_CPU_TILED_MM"] = "0"
    default_params = llama_cpp.llama_cpp.llama_model_default_params

    def params():
        p = default_params()
        p.use_extra_bufts = False
        return p

    llama_cpp.llama_cpp.llama_model_default_params = params


def make(model_path, prompts_path, perplexity_text_path):
    import llama_cpp

    with_plain_dot_products(llama_cpp)
    llm = llama_cpp.Llama(
        model_path=model_path, n_ctx=2048, n_batch=512, logits_all=True, n_threads=2,
        verbose=False,
    )
    add_bos = bool(llm._model.add_bos_token()) if hasattr(llm._model, "add_bos_token") else False
    bos_id = int(llm.token_bos())
    with open(prompts_path, encoding="utf-8") as f:
        prompts = json.load(f)["prompts"]
    with open(perplexity_text_path, encoding="utf-8") as f:
        text = f.read()
    window = sliding_window(llm)
    local_layers = 0 < window < LONG_CTX
    result = {
        "llama_cpp_python": llama_cpp.__version__,
        "add_bos": add_bos,
        "top_n": TOP_N,
        "prompts": prompt_goldens(llm, prompts, add_bos),
        "perplexity": perplexity(llm, text, add_bos, bos_id, LONG_CTX if local_layers else PPL_CTX),
    }
    if local_layers:
        result["sliding_window"] = window
        result["long_sequence"] = long_sequence(llm, text, add_bos)
    return result
