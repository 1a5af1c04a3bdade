"""One model behind one door: a cached, retried, priced call.

Real models are called through litellm; the reference models (`reference/...`) are
answered in process (`llm/local.py`), so a process that runs only references never
imports litellm (seconds of start-up). Both take the same path through the
cache, the concurrency limit, the retry loop and the `Call` record.

Every call returns a `Call` record (reply, tokens, cost, latency, cache hit,
attempts, error) that the episode sums into its row and writes into its
transcript. A call that still fails after its retries comes back with `error`
set instead of raising, so one bad call ends one episode, never a shard.
API keys are read by litellm from the environment and never pass through here.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import inspect
import os
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path

import planaudit.llm  # noqa: F401  (sets the local price map before litellm loads)
from planaudit.llm.cache import Cache, cache_key, planner_key
from planaudit.llm.local import PRICE_SOURCES, handler, prefix
from planaudit.llm.preflight import NO_KEY


@dataclass
class ModelConfig:
    name: str
    model: str  # the litellm model string
    family: str = ""
    tier: str = ""
    api_base: str | None = None
    input_price: float | None = None  # dollars per million tokens
    output_price: float | None = None
    max_concurrency: int = 4
    timeout: float | None = None  # seconds; None: 120 for a provider, 600 for a server of one's own
    max_retries: int = 5
    backoff_base: float = 1.0
    backoff_cap: float = 60.0
    api_key_env: str | None = None  # the variable holding the key; "none": the server needs none
    # sent with every request that carries tools: without it llama.cpp's and llama-cpp-python's
    # servers drop the tools silently; "omit" for a server that refuses the field
    tool_choice: str = "auto"
    # a timed-out request retried? None: yes for a provider, no for a server at api_base
    retry_timeouts: bool | None = None
    # reasoning as a factor: {"effort": "low"|"medium"|"high"} (litellm's reasoning_effort)
    # or {"budget_tokens": N} (litellm's thinking); part of every request's cache key
    reasoning: dict | None = None
    # sent to a provider as its `seed` (a reference model's seeds its faults instead); part
    # of the cache key when set, and said in every row (`provider_seed`)
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.timeout is None:
            self.timeout = 600.0 if self.api_base else 120.0
        if self.retry_timeouts is None:
            # llama.cpp's and llama-cpp-python's servers go on generating a reply whose
            # client gave up on it (their non-streaming handlers never look at the socket),
            # so a retry only queues behind it and, on a one-slot CPU server, times out too
            self.retry_timeouts = not self.api_base


@dataclass
class Call:
    content: str | None
    tool_calls: list = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0  # None: a model with no known price (unpriced, not free)
    latency_s: float = 0.0
    cache_hit: bool = False
    attempts: int = 0
    error: str | None = None
    finish_reason: str | None = None  # "length": the reply was cut at max_tokens
    batch: str | None = None  # the provider batch that answered it (batch mode), at its price
    # where cost_usd's price came from: "config" (the model entry's prices), "litellm
    # <version>" (the installed litellm's bundled map), "reference" (a reference model
    # with no configured price costs nothing); None: no price (or no reply)
    price_source: str | None = None
    # the reasoning tokens the provider reports among output_tokens (None: it reports none)
    # and its reasoning text: kept in the transcript, never read as the answer
    reasoning_tokens: int | None = None
    reasoning: str | None = None

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"

    def to_json(self) -> dict:
        return asdict(self)


def provenance(cfg: ModelConfig) -> dict:
    """What every row says of how its calls were asked: the model string called
    (`model_id`, litellm's: entries of one model at different efforts share it, so the
    reasoning table pairs them), the reasoning setting (as `effort=high` or
    `budget_tokens=N`; null: none) and the seed the provider was asked for (null: none was
    sent; planaudit sends one only where an LLM's entry sets `seed`)."""
    r = cfg.reasoning
    return {"model_id": cfg.model,
            "reasoning": ",".join(f"{k}={v}" for k, v in sorted(r.items())) if r else None,
            "provider_seed": None if prefix(cfg.model) else cfg.seed}


def reasoning_tokens(calls: list[Call]) -> int | None:
    """An episode's reasoning tokens: the sum over the calls whose provider reported them;
    None when none did (not 0: a provider that does not say has not said "none")."""
    known = [c.reasoning_tokens for c in calls if c.reasoning_tokens is not None]
    return sum(known) if known else None


def total_cost(calls: list[Call]) -> float | None:
    """What an episode's calls cost; None when any call's price is unknown (a sum that
    counted an unpriced call as free would understate the bill)."""
    costs = [c.cost_usd for c in calls]
    return None if any(c is None for c in costs) else sum(costs)


# a cached reply written before calls recorded where their price came from
UNRECORDED = "unrecorded"


def price_source(calls: list[Call]) -> str | None:
    """Where the prices of an episode's answered calls came from (a row's `price_source`):
    their one source, or the sources joined by " + "; None when a call is unpriced (the
    row's cost is null) or no call was answered."""
    answered = [c for c in calls if c.error is None]
    if not answered or any(c.cost_usd is None for c in answered):
        return None
    return " + ".join(sorted({c.price_source or UNRECORDED for c in answered}))


@cache
def litellm_prices() -> str:
    """The price source of a price from litellm's map: the installed (pinned) version,
    whose bundled map planaudit.llm makes litellm load. Said otherwise when the map in
    memory is not that one (litellm imported before planaudit, with the variable unset)."""
    from litellm.litellm_core_utils import get_model_cost_map as loaded

    version = f"litellm {importlib.metadata.version('litellm')}"
    info = loaded.get_model_cost_map_source_info()
    if info.get("source") != "local":
        return f"{version}, {info.get('source')} map loaded {info.get('loaded_at')}"
    return version


TOOL_CHOICES = ("auto", "required", "omit")
EFFORTS = ("low", "medium", "high")
# one reply: (text, tool calls, prompt tokens, completion tokens, finish reason, what else the
# provider said: reasoning tokens and text)
Sent = tuple[str | None, list[dict], int, int, str | None, dict]
# what a call left for a batch says (batch mode's collect passes; never cached, never a row)
DEFERRED = "deferred to a batch"
# where a streamed call's text goes as it arrives (`Client.complete`'s `on_text`)
OnText = Callable[[str], Awaitable[None] | None]


async def _pass_on(on_text: OnText, text: str) -> None:
    """Hand `text` to `on_text`, awaited when it is a coroutine function's."""
    given = on_text(text)
    if inspect.isawaitable(given):
        await given


class Streamed:
    """`on_text` with a note of whether any text was passed on: a call whose text has been
    shown is not retried (a second reply would be shown after part of the first)."""

    def __init__(self, on_text: OnText):
        self.on_text, self.started = on_text, False

    async def __call__(self, text: str) -> None:
        if text:
            self.started = True
            await _pass_on(self.on_text, text)


def reasoning_kwargs(reasoning: dict | None) -> dict:
    """litellm's own parameters for a model entry's `reasoning`: `reasoning_effort` for an
    effort (OpenAI's o-series and GPT-5, Gemini, DeepSeek map it), `thinking` with a token
    budget (Anthropic's extended thinking, which litellm passes on as written)."""
    if not reasoning:
        return {}
    if "effort" in reasoning:
        if reasoning["effort"] not in EFFORTS:
            raise ValueError(f"reasoning.effort {reasoning['effort']!r}: use one of "
                             + ", ".join(EFFORTS))
        return {"reasoning_effort": reasoning["effort"]}
    return {"thinking": {"type": "enabled", "budget_tokens": int(reasoning["budget_tokens"])}}


async def in_pool(work: list, one: Callable[..., Awaitable], limit: int) -> list:
    """`one(item)` for every item, `limit` at a time, results in the work's order: a fixed
    pool of workers keeps every slot the model allows busy until the work is done."""
    queue: asyncio.Queue = asyncio.Queue()
    for pair in enumerate(work):
        queue.put_nowait(pair)
    results: list = [None] * len(work)

    async def worker() -> None:
        while not queue.empty():
            i, item = queue.get_nowait()
            results[i] = await one(item)

    await asyncio.gather(*(worker() for _ in range(min(limit, len(work)) or 1)))
    return results


def _retry_after(exc: Exception) -> float | None:
    """The server's Retry-After, in seconds, where the exception carries it."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    value = headers.get("retry-after") or headers.get("Retry-After")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


# Failures that no retry can mend, whatever type litellm gives them: the OpenAI client
# reports a missing key as a server error, which would otherwise be retried for minutes.
PERMANENT_MESSAGES = ("missing credentials", "api_key client option must be set",
                      "api key not valid", "invalid api key", "incorrect api key",
                      "llm provider not provided")


def context_exhausted(error: str | None) -> bool:
    """Whether a failed call's error is the model's context running out (litellm's
    ContextWindowExceededError: a bad request, never retried): the episode's outcome is
    then `context-exhausted`, the model's failure, not an unreachable model's `error`."""
    return error is not None and "ContextWindowExceededError" in error


class EmptyReply(Exception):
    """The provider answered 200 with no choice in the body: a glitch of the provider (or a
    proxy), not an answer of the model; retried like a server error, never cached."""


def _timed_out(exc: Exception) -> bool:
    import litellm

    return isinstance(exc, litellm.Timeout)


def _retryable(exc: Exception) -> bool:
    """Transient failures (rate limits, server errors, lost connections, time-outs, a body
    with no choice) are retried; authentication, missing credentials, unknown providers
    and bad requests are not: they would fail the same way every time, and each try may
    be billed."""
    if isinstance(exc, EmptyReply):
        return True
    if any(m in str(exc).lower() for m in PERMANENT_MESSAGES):
        return False
    import litellm

    transient = (litellm.RateLimitError, litellm.InternalServerError, litellm.APIConnectionError,
                 litellm.ServiceUnavailableError, litellm.BadGatewayError, litellm.Timeout)
    return isinstance(exc, transient)


def _fails_every_call(exc: Exception) -> bool:
    """A failure of the model, not of one request (no key, a refused key, no such model or
    provider): every later call would fail alike, so none is sent. A bad request (a prompt
    too long, say) fails only itself."""
    if any(m in str(exc).lower() for m in PERMANENT_MESSAGES):
        return True
    import litellm

    return isinstance(exc, litellm.AuthenticationError | litellm.NotFoundError)


def _read(resp, empty: str, zero_is_none: bool = False) -> Sent:
    """A litellm reply (whole, or built from a stream) as a `Sent`; EmptyReply (`empty`)
    when it holds no choice."""
    if resp is None or not getattr(resp, "choices", None) or getattr(
            resp.choices[0], "message", None) is None:
        raise EmptyReply(empty)
    choice = resp.choices[0]
    usage = getattr(resp, "usage", None)
    tool_calls = [tc.model_dump() if hasattr(tc, "model_dump") else dict(tc)
                  for tc in (getattr(choice.message, "tool_calls", None) or [])]
    details = getattr(usage, "completion_tokens_details", None)
    thought = getattr(details, "reasoning_tokens", None) if details is not None else None
    if zero_is_none and not thought:
        thought = None
    return (choice.message.content, tool_calls,
            int(getattr(usage, "prompt_tokens", 0) or 0),
            int(getattr(usage, "completion_tokens", 0) or 0),
            getattr(choice, "finish_reason", None),
            {"reasoning_tokens": None if thought is None else int(thought),
             "reasoning": getattr(choice.message, "reasoning_content", None) or None})


class Client:
    """Calls one configured model; `sleep` is injectable so tests need not wait."""

    def __init__(self, cfg: ModelConfig, cache: Cache,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 rng: random.Random | None = None):
        self.cfg = cfg
        self.cache = cache
        self.sleep = sleep
        self.rng = rng or random.Random(0)
        self.semaphore = asyncio.Semaphore(cfg.max_concurrency)
        self.waits: list[float] = []  # every backoff taken, for the record
        self.fatal: str | None = None  # a permanent failure: later calls fail without a request
        self.local = prefix(cfg.model)  # an in-process provider's name, or None
        # batch mode (llm/batch.py): while `deferred` is a dict, a request the cache cannot
        # answer is recorded there (key -> request) instead of sent, except the keys in
        # `unbatchable` (batched before without an answer), which are sent as usual
        self.deferred: dict[str, dict] | None = None
        self.unbatchable: frozenset[str] = frozenset()
        self.reference = self.local is not None
        if not self.reference and cfg.input_price is not None and cfg.output_price is not None:
            self._register_prices()

    def _register_prices(self) -> None:
        """Tell litellm the configured prices: its own per-call cost hook then finds the
        model at once instead of searching its map (that search cost ~20 ms a call)."""
        import litellm

        provider = self.cfg.model.split("/", 1)[0] if "/" in self.cfg.model else "openai"
        per_input = self.cfg.input_price / 1e6
        # cache prices named too: planaudit bills every input token at the configured price,
        # and without them litellm warns at every job's start about a model it does not know
        litellm.register_model({self.cfg.model: {
            "input_cost_per_token": per_input,
            "output_cost_per_token": self.cfg.output_price / 1e6,
            "cache_read_input_token_cost": per_input,
            "cache_creation_input_token_cost": per_input,
            "litellm_provider": provider, "mode": "chat"}})

    def cost(self, input_tokens: int, output_tokens: int) -> float | None:
        return self.priced(input_tokens, output_tokens)[0]

    def priced(self, input_tokens: int, output_tokens: int) -> tuple[float | None, str | None]:
        """(the call's cost, where its price came from: `Call.price_source`)."""
        if self.cfg.input_price is not None and self.cfg.output_price is not None:
            return (input_tokens * self.cfg.input_price
                    + output_tokens * self.cfg.output_price) / 1e6, "config"
        if self.reference:  # in process: what its config says, or nothing
            return 0.0, PRICE_SOURCES[self.local]
        import litellm

        try:
            prompt, completion = litellm.cost_per_token(
                model=self.cfg.model, prompt_tokens=input_tokens,
                completion_tokens=output_tokens)
        except Exception:  # no price in the config nor in litellm's map: unpriced, not free
            return None, None
        return prompt + completion, litellm_prices()

    def _backoff(self, attempt: int, exc: Exception) -> float:
        hinted = _retry_after(exc)
        if hinted is not None:
            return min(hinted, self.cfg.backoff_cap)
        base = min(self.cfg.backoff_base * 2 ** attempt, self.cfg.backoff_cap)
        return base * (0.5 + self.rng.random() / 2)  # jitter: spread retries apart

    async def complete(self, messages: list[dict], *, temperature: float = 0.0,
                       max_tokens: int = 4096, sample: int = 0, tools: list | None = None,
                       metadata: dict | None = None, on_text: OnText | None = None) -> Call:
        """One call. `metadata` (the task, the call's purpose, a reference model's
        fault rates) is part of the cache key, since for reference models it
        decides the reply.

        `on_text`: the reply's text as it arrives. A request the cache cannot answer is
        then streamed from litellm (`stream=True`), each piece of content passed on as it
        comes, and the same `Call` is built, cached and priced at the end; a cache hit or
        a reference model (in process) passes its whole text once. Streaming is not part
        of the cache key: a streamed and an unstreamed call share their entry."""
        request = {"model": self.cfg.model, "messages": messages, "tools": tools,
                   "temperature": temperature, "max_tokens": max_tokens, "sample": sample,
                   "metadata": metadata, "api_base": self.cfg.api_base}
        if tools and self.cfg.tool_choice != "auto":  # "auto" keys as before it was sent
            request["tool_choice"] = self.cfg.tool_choice
        if self.cfg.reasoning:  # absent, the key is what it was before reasoning was a factor
            request["reasoning"] = self.cfg.reasoning
        if self.cfg.seed is not None and not self.reference:
            request["seed"] = self.cfg.seed
        key = cache_key(self._keyed(request))
        hit = self.cache.get(key)
        if hit is None and key != (legacy := cache_key(request)):
            # an entry written while the task's folder was part of every key: found, and
            # filed under today's key too (nothing paid is lost to the change)
            hit = self.cache.get(legacy)
            if hit is not None:
                self.cache.put(key, hit)
        if hit is not None:
            if "price_source" not in hit and hit.get("cost_usd") is not None:
                hit = {**hit, "price_source": UNRECORDED}
            # a planner's seconds are its answer's measure, kept; a model's reply took none
            kept = hit.get("latency_s", 0.0) if self.local == "planner" else 0.0
            call = Call(**{**hit, "cache_hit": True, "latency_s": kept, "attempts": 0})
            if on_text is not None and call.content:
                await _pass_on(on_text, call.content)
            return call
        if self.deferred is not None and key not in self.unbatchable:
            self.deferred[key] = request
            return Call(None, attempts=0, error=DEFERRED)
        if self.fatal is not None:  # the same request would fail the same way: do not send it
            return Call(None, attempts=0, error=self.fatal)
        async with self.semaphore:
            call = await self._call(request, None if on_text is None else Streamed(on_text))
        if call.error is None:
            self.cache.put(key, call.to_json())
        return call

    def _keyed(self, request: dict) -> dict:
        """The request as its cache key sees it. A model behind an API never sees the
        task's folder (`task_dir`, under the experiment's results folder), so it stays
        out of the key, and experiments with results folders of their own share every
        reply; a reference model reads its answer from that folder, so it stays in. A
        classical planner reads nothing but the task's PDDL and its budget
        (`planner_key`): one answer serves the offline and the online regime."""
        meta = request.get("metadata")
        if self.local == "planner" and meta and "task_dir" in meta:
            return planner_key(request["model"], Path(meta["task_dir"]), meta.get("seconds"))
        if self.reference or not meta or "task_dir" not in meta:
            return request
        return {**request, "metadata": {k: v for k, v in meta.items() if k != "task_dir"}}

    def _api_key(self) -> str | None:
        """The key named by `api_key_env`; a placeholder for a server that needs none (the
        OpenAI client refuses to send without some key). None: litellm's own variables."""
        var = self.cfg.api_key_env
        if var is None:
            return None
        if var.lower() == NO_KEY:
            return "no-key-needed"
        return os.environ.get(var)

    def completion_kwargs(self, request: dict) -> dict:
        """What litellm is asked for one request (a batch sends the same body)."""
        kwargs = {"model": request["model"], "messages": request["messages"],
                  "temperature": request["temperature"], "max_tokens": request["max_tokens"],
                  "timeout": self.cfg.timeout, "max_retries": 0}
        if request["tools"]:
            kwargs["tools"] = request["tools"]
            choice = request.get("tool_choice", self.cfg.tool_choice)
            if choice not in TOOL_CHOICES:  # "none" would switch the tools off unseen
                raise ValueError(f"tool_choice {choice!r}: use one of {', '.join(TOOL_CHOICES)}")
            if choice != "omit":
                kwargs["tool_choice"] = choice
        if request["metadata"]:
            kwargs["metadata"] = request["metadata"]
        kwargs.update(reasoning_kwargs(request.get("reasoning")))
        if request.get("seed") is not None:
            kwargs["seed"] = request["seed"]
        if self.cfg.api_base:
            kwargs["api_base"] = self.cfg.api_base
        if key := self._api_key():
            kwargs["api_key"] = key
        return kwargs

    async def _litellm(self, request: dict) -> Sent:
        import litellm

        litellm.suppress_debug_info = True  # failures are recorded in the Call, not printed
        resp = await litellm.acompletion(**self.completion_kwargs(request))
        return _read(resp, "the provider's reply holds no choice")

    async def _streamed(self, request: dict, on_text: Streamed) -> Sent:
        """`_litellm`'s reply, streamed: each content delta passed to `on_text` as it
        arrives, the reply then built from the chunks by litellm's `stream_chunk_builder`
        and read as `_litellm` reads a whole one."""
        import litellm

        litellm.suppress_debug_info = True
        chunks = []
        stream = await litellm.acompletion(**self.completion_kwargs(request), stream=True,
                                           stream_options={"include_usage": True})
        async for chunk in stream:
            chunks.append(chunk)
            delta = getattr(chunk.choices[0], "delta", None) if chunk.choices else None
            if text := getattr(delta, "content", None):
                await on_text(text)
        # the usage is the server's final usage chunk (asked for by include_usage); a server
        # that sends none is counted by litellm itself: its stream wrapper (and the builder)
        # count the prompt and the text with litellm's token_counter, as a server would not
        resp = litellm.stream_chunk_builder(chunks, messages=request["messages"]) if chunks else None
        # litellm's chunk builder fills 0 where the server said nothing of reasoning: a 0 is
        # kept as "not reported" (None), as the unstreamed reply of such a server is read
        return _read(resp, "the provider's streamed reply holds no choice", zero_is_none=True)

    async def _reference(self, request: dict) -> Sent:
        variant = request["model"].split("/", 1)[1]
        content, tool_calls, tin, tout = handler(self.local)(
            variant, request["messages"], request["metadata"] or {})
        return content, tool_calls, tin, tout, "tool_calls" if tool_calls else "stop", {}

    async def _call(self, request: dict, on_text: Streamed | None = None) -> Call:
        if self.reference:
            send = self._reference
        elif on_text is None:
            send = self._litellm
        else:
            async def send(request: dict) -> Sent:
                return await self._streamed(request, on_text)
        error = None
        for attempt in range(self.cfg.max_retries + 1):
            start = time.perf_counter()
            try:
                content, tool_calls, tin, tout, finish, extra = await send(request)
            except Exception as exc:  # litellm maps every provider failure to its own types
                error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
                if on_text is not None and on_text.started:  # part of it was shown: no retry
                    return Call(None, attempts=attempt + 1,
                                error=f"not retried: failed after its text began to stream: {error}")
                timeout_kept = not self.reference and not self.cfg.retry_timeouts and _timed_out(exc)
                if timeout_kept:  # the server may still be generating it: do not queue another
                    error = (f"not retried: timed out after {self.cfg.timeout:g} s, and the server "
                             f"at {self.cfg.api_base} may still be generating it (raise the model's "
                             f"timeout, or set retry_timeouts: true): {error}")
                    return Call(None, attempts=attempt + 1, error=error)
                if self.reference or not _retryable(exc):  # a reference fails alike each try
                    error = f"not retried: {error}"
                    if not self.reference and _fails_every_call(exc):
                        self.fatal = error
                    return Call(None, attempts=attempt + 1, error=error)
                if attempt == self.cfg.max_retries:
                    return Call(None, attempts=attempt + 1, error=error)
                wait = self._backoff(attempt, exc)
                self.waits.append(wait)
                await self.sleep(wait)
                continue
            if self.reference and on_text is not None and content:
                await on_text(content)  # in process: its whole text at once
            cost, source = self.priced(tin, tout)
            return Call(content, tool_calls, tin, tout, cost, time.perf_counter() - start,
                        False, attempt + 1, finish_reason=finish, price_source=source, **extra)
        return Call(None, attempts=self.cfg.max_retries + 1, error=error)
