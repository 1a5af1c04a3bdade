"""Heuristic mode on a PlanBench results file (t1 or t2): LPG repairs every recorded plan.

PlanBench's heuristic mode hands each plan a model wrote to LPG's plan repair and
reports how far the repaired plan lies from it. Here each response is read with the
replay's default dialect for the file (the reading PlanBench most likely scored it
by), the steps that ground in the instance are handed to LPG (`formal.repair`: the
binary with `-input_plan`, `-seed`), and planaudit judges the plan that comes back
on the instance's own problem file, as PlanBench validates t1 and t2. The distance is
measured to LPG's plan as LPG returned it, as PlanBench measured it; the distance to
the same actions in the seed's order (where that order stays valid) is reported beside
it. Empty responses
are left out, as in the replay; a response the dialect cannot read is an empty seed
(LPG then plans from scratch).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from statistics import mean

from planaudit.formal import validate
from planaudit.formal.repair import levenshtein, repair
from planaudit.planbench.dialects import READERS, Unreadable
from planaudit.planbench.material import MaterialError
from planaudit.planbench.replay import Context, ResultsError, dialects_for, load_results, recorded_text

TESTS = ("t1", "t2")


def _one(ctx: Context, inst: dict, dialect: str, seed: int, timeout: float) -> dict | None:
    iid = inst.get("instance_id")
    text = recorded_text(inst, dialect, ctx.res)
    if text is None or not text.strip():
        return None
    try:
        steps = READERS[dialect](ctx.cfg, text)
    except Unreadable:
        steps = []
    task = ctx.cfg.task(iid)
    seed_valid = validate(task, steps).valid
    r = repair(task, ctx.cfg.domain_path, ctx.cfg.instance_path(iid), steps, seed=seed,
               timeout=timeout)
    row = {"instance_id": iid, "seed_length": len(steps), "seed_valid": seed_valid,
           "status": r.status, "repaired": r.repaired, "seconds": r.seconds,
           "dropped": len(r.dropped), "detail": r.detail, "valid": None, "distance": None,
           "distance_reordered": None, "length": None}
    if r.repaired:
        row.update(valid=validate(task, r.steps).valid, distance=levenshtein(steps, r.steps),
                   distance_reordered=levenshtein(steps, r.reordered), length=len(r.steps))
    return row


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return round(mean(values), 4) if values else None


def repair_file(path, root=None, seed: int = 0, timeout: float = 10.0, jobs: int = 1,
                dialect: str | None = None) -> dict:
    """The summary `planaudit planbench repair --json` prints, and the per-instance rows
    (`rows`). Distances and lengths are over the repaired plans planaudit finds valid.
    `distance` is to LPG's plan as LPG returned it (PlanBench's measure);
    `distance_reordered` to the same actions put back in the seed's order where that
    order stays valid (never larger: the difference is LPG's scheduling)."""
    res = load_results(path, root)
    if res.test not in TESTS:
        raise ResultsError(f"{res.path}: heuristic mode repairs plans of t1 or t2, not {res.test}")
    try:
        ctx = Context(res)
    except MaterialError as e:
        raise ResultsError(f"{res.path}: {e}") from None
    dialect = dialect or dialects_for(res)[0]
    insts = [i for i in res.instances if isinstance(i, dict) and "instance_id" in i]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        rows = [r for r in pool.map(lambda i: _one(ctx, i, dialect, seed, timeout), insts)
                if r is not None]
    good = [r for r in rows if r["valid"]]
    seeds_ok = [r for r in rows if r["seed_valid"]]
    return {
        "file": str(res.path), "task": res.test, "domain": res.config, "model": res.model,
        "dialect": dialect, "seed": seed,
        "instances": len(rows),
        "repaired": sum(r["repaired"] for r in rows),
        "valid_after_repair": len(good),
        "valid_seeds": len(seeds_ok),
        "valid_seeds_unchanged": sum(r["distance"] == 0 for r in seeds_ok),
        "valid_seeds_unchanged_reordered": sum(r["distance_reordered"] == 0 for r in seeds_ok),
        "mean_distance": _mean(r["distance"] for r in good),
        "mean_distance_reordered": _mean(r["distance_reordered"] for r in good),
        "mean_repaired_length": _mean(r["length"] for r in good),
        "mean_seconds": _mean(r["seconds"] for r in rows if r["status"] != "skipped"),
        "statuses": {s: sum(r["status"] == s for r in rows) for s in sorted({r["status"] for r in rows})},
        "dropped_steps": sum(r["dropped"] for r in rows),
        "rows": rows,
    }


SUMMARY_KEYS = ("instances", "repaired", "valid_after_repair", "valid_seeds",
                "valid_seeds_unchanged", "valid_seeds_unchanged_reordered", "mean_distance",
                "mean_distance_reordered", "mean_repaired_length", "mean_seconds")
