"""Every participant accounted for: a study's flow per arm, in CONSORT's spirit, and the
rate of valid plans by intention to treat beside the completers' rate.

A completers' rate hides attrition an arm causes: people told that their plan fails who
then stop leave the denominator, and the arm looks better for it. So every person who
entered is counted at every stage they reached, those excluded are named with their
reasons, and the valid rate is also given over everyone who consented (a person who did
not finish counts as not valid). The rows are the human regime's (`human/judge.py`): one
per participant, and one per person who entered but did not consent (no answer of theirs
is kept, only that they entered).
"""

from __future__ import annotations

import polars as pl

from planaudit.human import stats

# the stages a participant passes, in order (a suggestion page only in an arm showing one)
STAGES = ("consent", "instructions", "example", "phase1", "phase2", "suggestion", "tlx", "done")

FLOW = {"study": pl.String, "model": pl.String, "arm": pl.String, "entered": pl.Int64,
        "consented": pl.Int64, **{f"reached_{s}": pl.Int64 for s in STAGES[1:-1]},
        "submitted": pl.Int64, "finished": pl.Int64, "excluded": pl.Int64,
        "excluded_reasons": pl.String, "analysed": pl.Int64,
        "valid_completers": pl.Int64, "completers_share": pl.Float64,
        "completers_lo": pl.Float64, "completers_hi": pl.Float64,
        "valid_itt": pl.Int64, "itt_n": pl.Int64, "itt_share": pl.Float64,
        "itt_lo": pl.Float64, "itt_hi": pl.Float64}


def furthest(row: dict) -> int:
    """The index in STAGES of the furthest stage a participant reached."""
    if row.get("finished"):
        return len(STAGES) - 1
    step = row.get("stopped_at") or "consent"
    return STAGES.index(step) if step in STAGES else 0


def flow_table(rows: pl.DataFrame, alpha: float = 0.05) -> pl.DataFrame:
    """Per study, model and arm (in the config's order): entered, consented, how many
    reached each stage, submitted a phase-2 plan, finished, were excluded (with each
    reason and its count), and were analysed (finished, not excluded); the valid rate of
    the analysed (completers) and over every consenting participant not excluded
    (intention to treat: a non-finisher is not valid), each with a Wilson interval at
    1 - alpha."""
    from planaudit.human.analysis import studies

    out = []
    for (study, model), arms in studies(rows):
        for arm, g in arms:
            people = g.to_dicts()
            consented = [r for r in people if r.get("consented", True)]
            reached = [furthest(r) for r in consented]
            excluded = [r for r in consented if r.get("excluded")]
            reasons: dict[str, int] = {}
            for r in excluded:
                reasons[r["excluded"]] = reasons.get(r["excluded"], 0) + 1
            kept = [r for r in consented if not r.get("excluded")]
            analysed = [r for r in kept if r.get("finished")]
            completers = stats.rate(sum(_right(r) for r in analysed), len(analysed),
                                    alpha)
            itt = stats.rate(sum(bool(r.get("finished")) and _right(r) for r in kept),
                             len(kept), alpha)
            out.append({
                "study": study, "model": model, "arm": arm, "entered": len(people),
                "consented": len(consented),
                **{f"reached_{s}": sum(i >= k for i in reached)
                   for k, s in enumerate(STAGES) if 0 < k < len(STAGES) - 1},
                "submitted": sum(bool(r.get("submitted")) for r in consented),
                "finished": sum(bool(r.get("finished")) for r in consented),
                "excluded": len(excluded),
                "excluded_reasons": "; ".join(f"{why}: {n}" for why, n in sorted(reasons.items()))
                or None,
                "analysed": len(analysed), "valid_completers": completers.hits,
                "completers_share": completers.share, "completers_lo": completers.lo,
                "completers_hi": completers.hi, "valid_itt": itt.hits, "itt_n": itt.n,
                "itt_share": itt.share, "itt_lo": itt.lo, "itt_hi": itt.hi})
    return pl.DataFrame(out, schema=FLOW)


def _right(row: dict) -> bool:
    """Right as a model's answer is scored: a valid plan, or an unsolvable task detected."""
    return bool(row.get("success") or row.get("detected"))
