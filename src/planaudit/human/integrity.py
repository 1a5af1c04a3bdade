"""Is a human baseline human? A participant with a chatbot in another tab is a model
baseline. The study pages' script records pastes, focus losses and hidden pages
(`study/static/paradata.js`), and the platform may give its own authenticity verdict; no
signal proves help, so nobody is excluded for one. Instead each arm's valid rate is given
twice: over everyone analysed, and over those with no such signal (the rule is
`judge._integrity`'s `integrity_signal`: a paste, a focus loss or a hidden page on phase 1
or 2, or a verdict other than authentic). When the two differ, the reader knows how much
the result rests on people who may have had help."""

from __future__ import annotations

import polars as pl

from planaudit.human import stats

RULE = ("a paste, the window losing focus or the page hidden on phase 1 or 2 (recorded by "
        "the pages' script), or a platform authenticity verdict other than authentic")

SENSITIVITY = {"study": pl.String, "model": pl.String, "arm": pl.String,
               "analysed": pl.Int64, "valid": pl.Int64, "share": pl.Float64,
               "lo": pl.Float64, "hi": pl.Float64, "with_signal": pl.Int64,
               "unrecorded": pl.Int64, "clean": pl.Int64, "clean_valid": pl.Int64,
               "clean_share": pl.Float64, "clean_lo": pl.Float64, "clean_hi": pl.Float64}


def sensitivity_table(rows: pl.DataFrame, alpha: float = 0.05) -> pl.DataFrame:
    """Per study, model and arm: the valid rate of everyone analysed, the number with an
    integrity signal, the number with nothing recorded (no script ran and no verdict given:
    kept among the clean, since nothing was seen), and the valid rate of those with no
    signal; each rate with its Wilson interval at 1 - alpha."""
    from planaudit.human.analysis import counted, right_flags, studies

    out = []
    for (study, model), arms in studies(rows):
        for arm, g in arms:
            done = counted(g)
            right = right_flags(done)
            signal = (done["integrity_signal"].to_list() if "integrity_signal" in done.columns
                      else [None] * done.height)
            clean = [r for r, s in zip(right, signal, strict=True) if not s]
            everyone = stats.rate(sum(right), len(right), alpha)
            kept = stats.rate(sum(clean), len(clean), alpha)
            out.append({"study": study, "model": model, "arm": arm,
                        "analysed": len(right), "valid": sum(right), "share": everyone.share,
                        "lo": everyone.lo, "hi": everyone.hi,
                        "with_signal": sum(bool(s) for s in signal),
                        "unrecorded": sum(s is None for s in signal),
                        "clean": len(clean), "clean_valid": sum(clean),
                        "clean_share": kept.share, "clean_lo": kept.lo, "clean_hi": kept.hi})
    return pl.DataFrame(out, schema=SENSITIVITY)
