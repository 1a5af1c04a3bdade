"""planaudit's own time per call against a real server's generation time.

A real model behind a real server (SmolLM2-135M-Instruct on llama-cpp-python, built by
`local/server.sh install`), called through `planaudit.llm.client.Client`: the whole door
(cache lookup and write, litellm, the HTTP exchange, the Call record). Two measures of
planaudit's share, at concurrency 1 and 4:

- cpu: the client process's CPU time over the server's own generation time, summed from
  the `llama_perf_context_print: total time` line the server prints for every request;
  at concurrency 1 it is split into litellm's part (CPU spent inside `litellm.acompletion`,
  the HTTP exchange included) and planaudit's own (the rest: cache key and lookup, the
  cache write, the Call record), by timing litellm's entry point (calls never overlap
  there, so the split is exact up to background threads);
- wall: (the run's wall time - the server's summed generation time) / that sum. The
  server runs one request at a time, so this gap is everything that is not generation:
  planaudit, litellm, HTTP, and FastAPI inside the server. It is an upper bound on
  planaudit's share.

Every prompt is distinct and the cache is fresh, so each call reaches the server. Two
prompt sizes: a short one (the worst case for the share: the server's time is smallest)
and one of about a brief's length (`--words`, 600 by default; the default run's briefs
are 700-1,700 tokens).

    .venv/bin/python benchmarks/live_overhead.py [--calls 8] [--max-tokens 48] [--words 600]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import tempfile
import time
from pathlib import Path

import record
from planaudit.llm.cache import Cache
from planaudit.llm.client import Client, ModelConfig
from planaudit.llm.server import local_server

TOTAL = re.compile(r"llama_perf_context_print:\s+total time =\s+([\d.]+) ms")
PROMPT = ("Blocks {i}-a and {i}-b are on the table, both clear, and the hand is empty. "
          "Write a plan that puts {i}-a on {i}-b, one action per line.")
FILLER = "Each block is either on the table, on another block, or held by the hand. "


class LitellmClock:
    """CPU seconds spent inside litellm.acompletion (the door's library call)."""

    def __init__(self):
        import litellm

        self.seconds = 0.0
        self.inner = litellm.acompletion
        litellm.acompletion = self

    async def __call__(self, *args, **kwargs):
        start = time.process_time()
        try:
            return await self.inner(*args, **kwargs)
        finally:
            self.seconds += time.process_time() - start


def server_ms(log: Path, offset: int) -> tuple[float, int]:
    text = log.read_text(errors="replace")[offset:]
    times = [float(m) for m in TOTAL.findall(text)]
    return sum(times), len(times)


async def batch(client: Client, calls: int, max_tokens: int, tag: str, words: int) -> list:
    filler = (FILLER * (words // len(FILLER.split()) + 1)) if words else ""

    async def one(i: int):
        messages = [{"role": "user", "content": filler + PROMPT.format(i=f"{tag}{i}")}]
        return await client.complete(messages, max_tokens=max_tokens)

    return await asyncio.gather(*(one(i) for i in range(calls)))


def measure(url: str, log: Path, concurrency: int, calls: int, max_tokens: int,
            cache: Path, clock: LitellmClock, words: int = 0) -> dict:
    cfg = ModelConfig("smollm2", "openai/smollm2", api_base=url, api_key_env="none",
                      max_concurrency=concurrency, input_price=0, output_price=0,
                      timeout=600, max_retries=0)
    client = Client(cfg, Cache(cache))
    offset = len(log.read_text(errors="replace"))
    lit0, cpu0, wall0 = clock.seconds, time.process_time(), time.perf_counter()
    results = asyncio.run(batch(client, calls, max_tokens, f"c{concurrency}w{words}-", words))
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    lit = clock.seconds - lit0
    time.sleep(0.5)  # the server's timing lines are flushed after its response
    gen_ms, n = server_ms(log, offset)
    errors = [r.error for r in results if r.error]
    if errors or n != calls:
        raise SystemExit(f"concurrency {concurrency}: {len(errors)} errors, {n} timing lines "
                         f"for {calls} calls: {errors[:2]}")
    gen = gen_ms / 1000
    out_tokens = sum(r.output_tokens for r in results)
    own = cpu - lit if concurrency == 1 else None
    return {"concurrency": concurrency, "words": words, "calls": calls, "wall_s": wall,
            "server_s": gen, "own_per_call_ms": None if own is None else 1000 * own / calls,
            "own_share": None if own is None else own / gen,
            "cpu_s": cpu, "cpu_per_call_ms": 1000 * cpu / calls,
            "server_per_call_ms": gen_ms / calls, "cpu_share": cpu / gen,
            "wall_share": (wall - gen) / gen, "tokens_per_s": out_tokens / gen}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--words", type=int, default=600)
    args = ap.parse_args()
    clock = LitellmClock()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        with local_server(log) as server:
            print(f"server up in {server.start_seconds:.1f} s at {server.url}")
            warm = measure(server.url, log, 1, 1, 8, Path(tmp) / "warm", clock)  # the imports
            print(f"warm-up call: {warm['wall_s']:.2f} s (litellm imported)")
            rows = [measure(server.url, log, c, args.calls, args.max_tokens,
                            Path(tmp) / f"cache{c}-{w}", clock, w)
                    for w in (0, args.words) for c in (1, 4)]

    def pct(v):
        return "–" if v is None else f"{v:.2%}"

    def ms(v):
        return "–" if v is None else f"{v:.1f}"

    print(f"\n{'prompt':>9} {'conc.':>5} {'calls':>5} {'wall s':>7} {'server ms/call':>14} "
          f"{'own ms/call':>11} {'own share':>9} {'door cpu ms/call':>16} {'door share':>10} "
          f"{'wall share':>10} {'tok/s':>6}")
    for r in rows:
        prompt = "short" if not r["words"] else f"+{r['words']}w"
        print(f"{prompt:>9} {r['concurrency']:>5} {r['calls']:>5} {r['wall_s']:>7.2f} "
              f"{r['server_per_call_ms']:>14.0f} {ms(r['own_per_call_ms']):>11} "
              f"{pct(r['own_share']):>9} {r['cpu_per_call_ms']:>16.1f} {pct(r['cpu_share']):>10} "
              f"{pct(r['wall_share']):>10} {r['tokens_per_s']:>6.1f}")
    print("\nown: planaudit's own CPU per call (the door less litellm; concurrency 1), over the "
          "server's generation time (goal: under 1%); door: the client process's whole CPU "
          "(planaudit and litellm); wall share: every second that is not generation, an "
          "upper bound.")
    own = next(r for r in rows if r["concurrency"] == 1 and not r["words"])
    record.write("live_overhead", {
        "own_share_short": record.figure(100 * own["own_share"], "%", "planaudit's own CPU over "
                                         "generation, short prompt, concurrency 1 (goal: under 1%)"),
        "server_up": record.figure(server.start_seconds, "s", "server up"),
    }, anchor={"name": "the server's own generation time (llama-cpp-python, SmolLM2-135M)",
               "ratio": round(own["own_share"], 5),
               "about": "planaudit's own CPU a call over the server's generation time a call"},
        tables={"calls": record.table(
            ["prompt words", "concurrency", "calls", "wall s", "server ms/call", "own ms/call",
             "own share", "door CPU ms/call", "door share", "wall share", "tokens/s"],
            [(r["words"], r["concurrency"], r["calls"], r["wall_s"], r["server_per_call_ms"],
              r["own_per_call_ms"], r["own_share"], r["cpu_per_call_ms"], r["cpu_share"],
              r["wall_share"], r["tokens_per_s"]) for r in rows], "Per prompt size and concurrency")})


if __name__ == "__main__":
    main()
