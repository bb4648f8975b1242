"""Time-to-first-token and total latency, streaming against non-streaming, with usage checked.

tether's seed gave up streaming to keep reliable token counts. With ``stream_usage=True``
ChatOpenAI asks for ``stream_options.include_usage`` and the server's usage arrives on the
last chunk, so streaming costs nothing in accounting. This script measures what it gains.

Each run sends the same fixed request (temperature 0, fixed seed) once non-streamed and once
streamed, alternating which goes first so drift in machine load hits both equally.
Non-streamed, the first token reaches the caller with the whole reply, so its TTFT is its
total latency. Usage "matches" when input and output token counts agree between the pair.

    uv run python benchmarks/streaming_latency.py                 # embedded SmolLM2
    uv run python benchmarks/streaming_latency.py --runs 20 --no-prompt-cache
    uv run python benchmarks/streaming_latency.py --base-url http://127.0.0.1:8000/v1 \\
        --model Qwen2.5-7B-Instruct                               # a running vLLM
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_openai import ChatOpenAI

SYSTEM = (
    "You are a careful tool-calling agent. Answer in this format:\n"
    "Thought: what to do next\nAction: one tool name\nAction Input: a JSON object\n"
    "Tools: get_order_status(order_id) returns an order's status; "
    "calculate_discount(order_id) returns the discount for an order."
)
TASK = "查询订单 ORD-2024-001 的状态并计算折扣"


@dataclass
class Sample:
    """One request's timings (seconds) and server-reported usage."""

    ttft: float
    total: float
    input_tokens: int | None
    output_tokens: int | None


def _usage(message: BaseMessage) -> tuple[int | None, int | None]:
    usage = getattr(message, "usage_metadata", None)
    if not usage:
        return None, None
    return usage["input_tokens"], usage["output_tokens"]


def non_streamed(llm: ChatOpenAI, messages: list[Any]) -> Sample:
    started = time.perf_counter()
    reply = llm.invoke(messages)
    total = time.perf_counter() - started
    return Sample(total, total, *_usage(reply))


def streamed(llm: ChatOpenAI, messages: list[Any]) -> Sample:
    started = time.perf_counter()
    first: float | None = None
    merged: AIMessageChunk | None = None
    for chunk in llm.stream(messages):
        if first is None and chunk.content:
            first = time.perf_counter() - started
        merged = chunk if merged is None else merged + chunk
    total = time.perf_counter() - started
    assert merged is not None, "the stream produced no chunks"
    return Sample(first if first is not None else total, total, *_usage(merged))


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _p90(values: list[float]) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="request pairs to time (10)")
    parser.add_argument("--max-tokens", type=int, default=64, help="completion cap (64)")
    parser.add_argument("--base-url", help="an OpenAI-compatible server; default: embedded")
    parser.add_argument("--model", help="model name on --base-url")
    parser.add_argument("--gguf", type=Path, help="GGUF for the embedded server")
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: cores, max 8)")
    parser.add_argument(
        "--no-prompt-cache",
        action="store_true",
        help="ask llama.cpp to reprocess the whole prompt each time (cache_prompt=false)",
    )
    args = parser.parse_args(argv)

    server = None
    if args.base_url:
        base_url, model, where = args.base_url, args.model or "default", args.base_url
    else:
        from tether_local import EmbeddedServer

        server = EmbeddedServer(args.gguf, threads=args.threads)
        server.start()
        base_url, model = server.base_url, server.model_name or "embedded"
        where = (
            f"embedded llama.cpp (xllamacpp), {model}, {server.threads} threads, "
            f"started in {server.startup_seconds:.2f} s"
        )

    extra_body = {"cache_prompt": False} if args.no_prompt_cache else None
    llm = ChatOpenAI(
        base_url=base_url,
        api_key="EMPTY",
        model=model,
        temperature=0,
        seed=1234,
        max_tokens=args.max_tokens,
        max_retries=0,
        timeout=120,
        stream_usage=True,
        extra_body=extra_body,
    )
    messages: list[Any] = [("system", SYSTEM), ("user", TASK)]
    load_before = os.getloadavg()[0]

    try:
        non_streamed(llm, messages)  # warm-up: first-call allocations, prompt cache
        streamed(llm, messages)
        plain: list[Sample] = []
        stream: list[Sample] = []
        for run in range(args.runs):
            if run % 2 == 0:
                plain.append(non_streamed(llm, messages))
                stream.append(streamed(llm, messages))
            else:
                stream.append(streamed(llm, messages))
                plain.append(non_streamed(llm, messages))
            print(
                f"run {run + 1:>2}: non-streamed {plain[-1].total:.3f} s | streamed "
                f"first token {stream[-1].ttft:.3f} s, total {stream[-1].total:.3f} s | "
                f"tokens {plain[-1].input_tokens}+{plain[-1].output_tokens} vs "
                f"{stream[-1].input_tokens}+{stream[-1].output_tokens}",
                file=sys.stderr,
            )
    finally:
        if server is not None:
            server.stop()

    matched = sum(
        p.input_tokens is not None
        and (p.input_tokens, p.output_tokens) == (s.input_tokens, s.output_tokens)
        for p, s in zip(plain, stream, strict=True)
    )
    missing = sum(s.input_tokens is None for s in stream)
    out_tokens = _median([float(s.output_tokens or 0) for s in stream])
    in_tokens = _median([float(s.input_tokens or 0) for s in stream])

    def row(name: str, samples: list[Sample]) -> str:
        ttft = [s.ttft for s in samples]
        total = [s.total for s in samples]
        return (
            f"| {name} | {_median(ttft):.3f} | {_p90(ttft):.3f} | "
            f"{_median(total):.3f} | {_p90(total):.3f} |"
        )

    cache = "off" if args.no_prompt_cache else "on (server default)"
    print(f"\nServer: {where}")
    print(
        f"Machine: {platform.machine()}, {platform.system()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}; 1-min load average {load_before:.2f} before, "
        f"{os.getloadavg()[0]:.2f} after (other work on the cores inflates the p90s)"
    )
    print(
        f"Request: {in_tokens:.0f} prompt tokens, max_tokens={args.max_tokens} "
        f"(median {out_tokens:.0f} generated), temperature 0, prompt cache {cache}, "
        f"{args.runs} runs each\n"
    )
    print("| mode | TTFT median (s) | TTFT p90 (s) | total median (s) | total p90 (s) |")
    print("|---|---:|---:|---:|---:|")
    print(row("non-streaming", plain))
    print(row("streaming (stream_usage=True)", stream))
    speedup = _median([p.total for p in plain]) / max(_median([s.ttft for s in stream]), 1e-9)
    print(f"\nFirst token {speedup:.1f}x sooner when streaming.")
    print(
        f"Usage matched (input and output tokens, streamed vs non-streamed): "
        f"{matched}/{args.runs}; streamed replies without usage: {missing}/{args.runs}"
    )
    return 0 if matched == args.runs else 1


if __name__ == "__main__":
    raise SystemExit(main())
