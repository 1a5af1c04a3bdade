"""A shard: one regime × model × method × domain, all its tasks in one process.

Importing litellm costs seconds, so a shard runs every task of a domain in one
process, concurrently up to the model's limit (the client's semaphore). Each
episode's transcript is written as it finishes; the rows go to one Parquet file
at the end. The cache makes a rerun after a crash free: finished calls are
answered from disk.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import polars as pl

from planaudit.experiment import (
    method_params,
    model_config,
    model_entry,
    reference_meta,
    shard_hash,
)
from planaudit.llm.cache import Cache
from planaudit.llm.client import Client

REGIMES = ("offline", "online")


class ShardFailed(RuntimeError):
    """Every episode of a shard ended in `error`: the model was never reached. The job
    fails (its transcripts stay) instead of handing on a shard with nothing to measure."""


def require_witness(params: dict) -> None:
    """Before the first call: the witness the config asks for can run here (else
    WitnessUnavailable, saying how to install it)."""
    if params.get("witness") == "val":
        from planaudit.formal.witness import val_binary

        val_binary()


def episode_runner(regime: str, entry: dict):
    """The regime's `run_episode`, with the model's tool protocol where it matters."""
    if regime == "offline":
        from planaudit.offline.run import run_episode

        return run_episode
    if regime == "online":
        from functools import partial

        from planaudit.online.run import run_episode

        return partial(run_episode, protocol=entry.get("tool_protocol", "native"))
    raise ValueError(f"no regime named {regime!r} ({', '.join(REGIMES)})")


async def _run(config: dict, regime: str, model: str, method: str, folders: list[Path],
               domain: str, transcripts: Path, cache_dir: str) -> list[dict]:
    entry = model_entry(config, model)
    params = method_params(config, regime, method)
    client = Client(model_config(entry), Cache(cache_dir))
    digest = shard_hash(entry, method, params)
    run_episode = episode_runner(regime, entry)
    transcripts.mkdir(parents=True, exist_ok=True)
    done = 0

    async def one(folder: Path) -> dict:
        nonlocal done
        row, transcript = await run_episode(
            client, method, params, folder, task_name=f"{domain}/{folder.name}",
            config_hash=digest, reference_meta=reference_meta(entry), tier=entry.get("tier", ""))
        with (transcripts / f"{folder.name}.jsonl").open("w") as fh:
            for step in transcript:
                fh.write(json.dumps(step) + "\n")
            fh.write(json.dumps({"row": row}) + "\n")
        done += 1
        why = f" ({row['error']})" if row.get("error") else ""
        print(f"{regime}/{model}/{method}/{domain}: {done}/{len(folders)} {folder.name} "
              f"{row['outcome']}{why}", file=sys.stderr, flush=True)
        return row

    # a fixed pool of workers, one episode each at a time: every slot the model allows
    # stays busy until the queue is empty (50 waiters on one semaphore left slots idle)
    queue: asyncio.Queue[tuple[int, Path]] = asyncio.Queue()
    for item in enumerate(folders):
        queue.put_nowait(item)
    rows: list[dict | None] = [None] * len(folders)

    async def worker() -> None:
        while not queue.empty():
            i, folder = queue.get_nowait()
            rows[i] = await one(folder)

    await asyncio.gather(*(worker() for _ in range(min(client.cfg.max_concurrency, len(folders)))))
    return rows


def run_shard(config: dict, regime: str, model: str, method: str, domain: str, suite_dir: Path,
              out: Path, transcripts: Path) -> pl.DataFrame:
    folders = sorted(p.parent for p in (suite_dir / domain).glob("*/truth.json"))
    if not folders:
        raise FileNotFoundError(f"{suite_dir / domain}: no prepared tasks (run the suite rules)")
    require_witness(method_params(config, regime, method))
    cache_dir = config.get("cache", ".cache/planaudit")
    rows = asyncio.run(_run(config, regime, model, method, folders, domain, transcripts,
                            cache_dir))
    if all(r["outcome"] == "error" for r in rows):
        reasons = sorted({r["error"] or "unknown" for r in rows})
        raise ShardFailed(f"{regime}/{model}/{method}/{domain}: all {len(rows)} episodes ended in "
                          f"error: {'; '.join(reasons[:3])}")
    frame = pl.DataFrame(rows, infer_schema_length=None)
    out.parent.mkdir(parents=True, exist_ok=True)
    frame.write_parquet(out)
    return frame
