"""Batch mode: a job's independent calls sent as one provider batch, at the batch price.

A job whose model has `batch: true` runs in waves (`in_waves`). In a wave the job runs
with its client collecting: a call the cache cannot answer is recorded (its cache key and
its request) instead of sent, and ends its episode as an error no row keeps. The wave's
requests go to the provider as one batch (a JSONL file, `custom_id` = the cache key,
uploaded; a batch made of it), polled until it ends; each answer is written into the
reply cache under its key, priced at the batch rate. The next wave runs the job again:
the answered calls are cache hits, and a multi-call strategy's next call is the next
wave's request. A wave with nothing to send is the job itself, every call answered from
the cache, so rows, transcripts and the rest of the pipeline are as without batches.

What was submitted is on disk before anything waits for it: a record per batch in
`<cache>/batches/` (its requests' keys and the uploaded file's id, then the batch's id,
each written atomically before the next step). A rerun finds the record of any request it
would send and polls that batch instead; a record with a file but no batch id (killed
while the batch was being made) is matched to the provider's batch made from that file
before a new one is made. Two jobs running at once and asking the same requests (jobs
of one model share the cache) divide them by claims (`llm/claims.py`): a job claims a
request's key before it uploads it, and a job that finds a key claimed by a running job
waits for the answer, taking the claim over if that job is gone. So no request is
submitted twice.

A request a batch did not answer (it expired, failed, or sent the line back as an error)
goes into one more batch; after ROUNDS batches without an answer it is sent as an
ordinary call, at the ordinary price. Every answer collected stays in the cache.

Batches go through litellm's batch functions (`acreate_file`, `acreate_batch`,
`aretrieve_batch`, `alist_batches`, `afile_content`) for the providers of
`preflight.BATCH_PROVIDERS` (the config check refuses the others).
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from planaudit import atomic
from planaudit.llm.claims import Claims
from planaudit.llm.client import Call, Client, _retryable

ROUNDS = 2  # batches a request goes into before it is sent as an ordinary call
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
BODY_FIELDS = ("messages", "temperature", "max_tokens", "tools", "tool_choice")
RECENT = 100  # batches listed when looking for one made from a recorded file
T = TypeVar("T")


@dataclass(frozen=True)
class Batching:
    """A model entry's batch settings: `batch_rate`, what a batch call costs as a fraction
    of an ordinary one (OpenAI and Anthropic charge half); `batch_poll`, seconds between
    looks at a batch in progress."""

    rate: float = 0.5
    poll: float = 60.0

    @classmethod
    def of(cls, entry: dict) -> Batching | None:
        """None when the entry does not ask for batches."""
        if not entry.get("batch"):
            return None
        return cls(float(entry.get("batch_rate", cls.rate)),
                   float(entry.get("batch_poll", cls.poll)))


class BatchFailed(RuntimeError):
    """A batch could not be uploaded, made, polled or read after its retries; what was
    submitted is kept in its record, so the rerun polls it."""


def _transient(exc: Exception) -> bool:
    """A failure worth another try: as a call's, or the OpenAI client's own kinds of it
    (litellm's batch functions pass those on unmapped)."""
    import openai

    return _retryable(exc) or isinstance(exc, openai.RateLimitError | openai.InternalServerError
                                         | openai.APIConnectionError)


def _reason(line: dict) -> str:
    """Why a line of a batch's output or error file holds no answer."""
    error = line.get("error") or ((line.get("response") or {}).get("body") or {}).get("error")
    status = (line.get("response") or {}).get("status_code")
    message = error.get("message") if isinstance(error, dict) else error
    return f"{status or 'no response'}: {message or 'no answer'}"


class Batches:
    """One model's batches: submitted, resumed, polled and collected into the cache."""

    def __init__(self, client: Client, batching: Batching,
                 log: Callable[[str], None] | None = None):
        import litellm

        self.client, self.batching = client, batching
        self.folder = client.cache.root / "batches"
        self.claims = Claims(self.folder)
        self.log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
        cfg = client.cfg
        self.name, self.provider, _, _ = litellm.get_llm_provider(cfg.model, api_base=cfg.api_base)
        # no retry inside the OpenAI client: a retried POST /batches whose first answer was
        # lost would make a second batch; planaudit's own retry looks for the first one
        self.where: dict = {"custom_llm_provider": self.provider, "timeout": cfg.timeout,
                            "max_retries": 0}
        if cfg.api_base:
            self.where["api_base"] = cfg.api_base
        if key := client._api_key():
            self.where["api_key"] = key

    def _records(self) -> list[tuple[Path, dict]]:
        return [(p, json.loads(p.read_text())) for p in sorted(self.folder.glob("*.json"))]

    def exhausted(self) -> frozenset[str]:
        """The keys that went into ROUNDS batches without an answer."""
        tries = Counter(k for _, r in self._records() if "outcome" in r
                        for k in set(r["keys"]) - set(r["answered"]))
        return frozenset(k for k, n in tries.items() if n >= ROUNDS)

    async def _retrying(self, what: str, once: Callable[[], Awaitable[T]]) -> T:
        """A step of the batch API, retried as a call is (transient failures only)."""
        import litellm

        litellm.suppress_debug_info = True
        attempt = 0
        while True:
            try:
                return await once()
            except Exception as exc:
                if attempt == self.client.cfg.max_retries or not _transient(exc):
                    raise BatchFailed(f"batch mode: {what}: {type(exc).__name__}: "
                                      f"{' '.join(str(exc).split())[:300]}") from None
                await self.client.sleep(self.client._backoff(attempt, exc))
                attempt += 1

    async def settle(self, wave: dict[str, dict]) -> None:
        """Every request of `wave` (key -> request) answered into the cache, or batched
        once more without an answer. Open batches holding any of them are polled (made by
        this job, an earlier one, or another job running now); the rest are claimed
        (`llm/claims.py`) and go into one new batch; a request another live job has claimed
        is waited for (its answer lands in the cache, or its batch's record appears and is
        polled here too), and taken over if that job ends without submitting it."""
        ended_before = {p for p, r in self._records() if "outcome" in r}
        left = set(wave)
        told: set[str] = set()  # owners and records already named in the log
        while True:
            records = self._records()
            ended = {k for p, r in records if "outcome" in r and p not in ended_before
                     for k in r["keys"]}
            left = {k for k in left if k not in ended and self.client.cache.get(k) is None}
            if not left:
                return
            open_ = [(p, r) for p, r in records
                     if "outcome" not in r and not left.isdisjoint(r["keys"])]
            held: dict[str, str] = {}
            for path, record in open_:
                if "batch" in record:
                    if str(path) not in told:
                        told.add(str(path))
                        self.log(f"batch {record['batch']}: already submitted, polled "
                                 f"(recorded in {path})")
                    continue
                # a record without its batch id: the job making it, if it still runs, makes
                # it; else (killed while making it) this job does
                _, others = self.claims.claim(record["keys"])
                held.update(others)
                if not others:
                    await self._submitted(path, record, told)
            covered = {k for _, r in open_ for k in r["keys"]}
            mine, others = self.claims.claim(k for k in wave if k in left and k not in covered)
            held.update(others)
            if mine:
                path, record = await self._upload(mine, wave)
                await self._submitted(path, record, told)
                open_.append((path, record))
            for owner in sorted(set(held.values()) - told):
                told.add(owner)
                self.log(f"batch mode: {sum(o == owner for o in held.values())} requests "
                         f"claimed by job {owner} (running): waiting for its batch, not "
                         f"submitting them again (claims in {self.claims.folder})")
            pollable = [(p, r) for p, r in open_ if "batch" in r]
            if pollable:
                await self._wait(pollable)
                self.claims.release(k for _, r in pollable for k in r["keys"])
            else:  # every request left is being uploaded by another job
                await self.client.sleep(self.batching.poll)

    async def _submitted(self, path: Path, record: dict, told: set[str]) -> None:
        """The batch of an uploaded record made, its id kept in the record."""
        record["batch"] = await self._submit(record["file"])
        atomic.write_text(path, json.dumps(record))
        told.add(str(path))
        self.log(f"batch {record['batch']}: {len(record['keys'])} requests submitted "
                 f"(recorded in {path})")

    async def _upload(self, keys: list[str], wave: dict[str, dict]) -> tuple[Path, dict]:
        lines = []
        for key in keys:
            kwargs = self.client.completion_kwargs(wave[key])
            body = {"model": self.name, **{f: kwargs[f] for f in BODY_FIELDS if f in kwargs}}
            lines.append({"custom_id": key, "method": "POST", "url": "/v1/chat/completions",
                          "body": body})
        digest = hashlib.sha256("".join(keys).encode()).hexdigest()[:12]
        # named by when it was made (to the microsecond: the records sort in order)
        now = time.time()
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}"
        path = self.folder / f"{stamp}-{digest}.json"
        data = "".join(json.dumps(line) + "\n" for line in lines).encode()
        import litellm

        uploaded = await self._retrying("uploading the requests", lambda: litellm.acreate_file(
            file=(f"{path.stem}.jsonl", data, "application/jsonl"), purpose="batch",
            **self.where))
        record = {"model": self.client.cfg.model, "api_base": self.client.cfg.api_base,
                  "keys": keys, "file": uploaded.id}
        atomic.write_text(path, json.dumps(record))  # before the batch exists
        return path, record

    async def _submit(self, file_id: str) -> str:
        """The batch made of `file_id`: one the provider already holds (made by a job
        killed before it kept the id, or by a try whose answer was lost), else a new one."""
        import litellm

        async def once() -> str:
            listed = await litellm.alist_batches(limit=RECENT, **self.where)
            for batch in listed.data:  # the OpenAI client's page of Batch objects
                if batch.input_file_id == file_id:
                    return batch.id
            made = await litellm.acreate_batch(
                completion_window="24h", endpoint="/v1/chat/completions", input_file_id=file_id,
                **self.where)
            return made.id

        return await self._retrying("making the batch", once)

    async def _wait(self, open_: list[tuple[Path, dict]]) -> None:
        import litellm

        pending = {r["batch"]: (p, r) for p, r in open_}
        seen: dict[str, str] = {}
        while pending:
            for bid in list(pending):
                batch = await self._retrying(f"polling {bid}", lambda b=bid: litellm.aretrieve_batch(
                    batch_id=b, **self.where))
                if seen.get(bid) != batch.status:
                    seen[bid] = batch.status
                    self.log(f"batch {bid}: {batch.status}")
                if batch.status in ENDED:
                    await self._collect(*pending.pop(bid), batch)
            if pending:
                await self.client.sleep(self.batching.poll)

    async def _lines(self, file_id: str | None) -> list[dict]:
        if not file_id:
            return []
        import litellm

        content = await self._retrying(f"reading {file_id}", lambda: litellm.afile_content(
            file_id=file_id, **self.where))
        return [json.loads(x) for x in content.content.decode().splitlines() if x.strip()]

    async def _collect(self, path: Path, record: dict, batch) -> None:
        """Every answer into the cache, then the record closed with what was not answered."""
        mine = set(record["keys"])
        answered, failed = [], {}
        for line in await self._lines(batch.output_file_id):
            key, response = line.get("custom_id"), line.get("response") or {}
            body = response.get("body") or {}
            if key not in mine:
                continue
            if response.get("status_code") == 200 and body.get("choices"):
                self.client.cache.put(key, self._call(body, batch.id).to_json())
                answered.append(key)
            else:
                failed[key] = _reason(line)
        for line in await self._lines(batch.error_file_id):
            if line.get("custom_id") in mine:
                failed[line["custom_id"]] = _reason(line)
        for key in mine - set(answered) - set(failed):
            failed[key] = f"the batch ended {batch.status} without it"
        record.update(outcome=batch.status, answered=answered, failed=failed)
        atomic.write_text(path, json.dumps(record))
        self.log(f"batch {batch.id}: {batch.status}: {len(answered)} answered, "
                 f"{len(failed)} not")

    def _call(self, body: dict, batch_id: str) -> Call:
        choice = body["choices"][0]
        message = choice.get("message") or {}
        usage = body.get("usage") or {}
        tin, tout = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        thought = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens")
        cost, source = self.client.priced(tin, tout)
        return Call(message.get("content"), message.get("tool_calls") or [], tin, tout,
                    None if cost is None else cost * self.batching.rate, 0.0, False, 1,
                    finish_reason=choice.get("finish_reason"), batch=batch_id,
                    price_source=source, reasoning_tokens=None if thought is None else int(thought),
                    reasoning=message.get("reasoning_content") or None)


async def in_waves(client: Client, batching: Batching | None,
                   job: Callable[[], Awaitable[T]]) -> T:
    """`job()` (a whole shard: every episode), its calls sent in batches when `batching`
    is set: run collecting, batch what it asked for, run again, until a run asks for
    nothing the cache has not answered; that run's result is the job's. A reference
    model, answered in process, runs once."""
    if batching is None or client.reference:
        return await job()
    batches = Batches(client, batching)
    wave = 0
    try:
        while True:
            client.unbatchable = batches.exhausted()
            client.deferred = {}
            result = await job()
            asked, client.deferred = client.deferred, None
            if not asked:
                return result
            wave += 1
            batches.log(f"batch mode: wave {wave}: {len(asked)} requests the cache cannot answer")
            await batches.settle(asked)
    finally:
        client.deferred = None
        batches.claims.close()
