"""Model-level goldens from llama.cpp (through llama-cpp-python): greedy
continuations, the top-20 next-token log-probabilities at every position, and
perplexity computed the way llama.cpp's perplexity tool does."""

import json
import math

import numpy as np

TOP_N = 20
N_GREEDY = 48
PPL_CTX = 512


def log_softmax(logits):
    logits = logits.astype(np.float64)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def evaluate_all(llm, tokens):
    """Logits [len(tokens), vocab] of a fresh sequence."""
    llm.reset()
    llm.eval(tokens)
    return np.array(llm.scores[: len(tokens)], dtype=np.float32)


def greedy_continuation(llm, prompt_tokens, n):
    llm.reset()
    llm.eval(prompt_tokens)
    generated = []
    for _ in range(n):
        next_id = int(np.argmax(llm.scores[llm.n_tokens - 1]))
        generated.append(next_id)
        llm.eval([next_id])
    return generated


def prompt_goldens(llm, prompts, add_bos):
    cases = []
    for text in prompts:
        tokens = llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=False)
        greedy = greedy_continuation(llm, tokens, N_GREEDY)
        # Distributions at every position of prompt + continuation (teacher forcing).
        sequence = tokens + greedy
        logprobs = log_softmax(evaluate_all(llm, sequence))
        top = []
        for row in logprobs:
            ids = np.argsort(-row, kind="stable")[:TOP_N]
            top.append([[int(i), round(float(row[i]), 6)] for i in ids])
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
        logprobs = log_softmax(evaluate_all(llm, window))
        for j in range(first, ctx - 1):
            nll -= logprobs[j][window[j + 1]]
            count += 1
    return {
        "ctx": ctx,
        "n_tokens": len(tokens),
        "n_chunks": n_chunks,
        "n_scored": count,
        "perplexity": math.exp(nll / count),
    }


def make(model_path, prompts_path, perplexity_text_path):
    import llama_cpp

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
    return {
        "llama_cpp_python": llama_cpp.__version__,
        "add_bos": add_bos,
        "top_n": TOP_N,
        "prompts": prompt_goldens(llm, prompts, add_bos),
        "perplexity": perplexity(llm, text, add_bos, bos_id, PPL_CTX),
    }
