"""Scoring phase sequences recorded elsewhere, in the paper's released layout:
`[{"instance_id": ..., "resolution_status": ..., "languatory": ["L_navigate_3", "P_1", ...]}]`.

Each item is a phase and its run length (`L_navigate_3`: `L_navigate` three times); an
actual phase counts for an expected one when equal to it or prefixed by it plus `_`
(`L_navigate` counts for `L`). Out-of-plan types are the distinct phase names left over.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from planaudit.compliance.metrics import prefixed, score
from planaudit.compliance.phases import decode

FIELDS = ("instance_id", "resolution_status", "languatory")
_PHASE = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*$")


class SequenceError(ValueError):
    """Input that cannot be scored; the message names the file, the item and the field."""


def parse_expected(text: str) -> list[str]:
    phases = [p.strip() for p in (text or "").split(",")]
    if not phases or any(not p for p in phases):
        raise SequenceError(f"--expected {text!r}: phases separated by commas, such as N,R,P,V")
    if bad := [p for p in phases if not _PHASE.match(p)]:
        raise SequenceError(f"--expected {text!r}: {bad[0]!r} is not a phase name")
    if len(set(phases)) != len(phases):
        raise SequenceError(f"--expected {text!r}: a phase is named twice")
    return phases


def read_sequences(path: Path) -> list[dict]:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise SequenceError(f"{path}: no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise SequenceError(f"{path}: not JSON ({e})") from None
    if not isinstance(data, list):
        raise SequenceError(f"{path}: a JSON list of {{{', '.join(FIELDS)}}} objects")
    out = []
    for i, item in enumerate(data):
        where = f"{path}: item {i}"
        if not isinstance(item, dict):
            raise SequenceError(f"{where}: an object with {', '.join(FIELDS)}")
        for f in FIELDS:
            if f not in item:
                raise SequenceError(f"{where}: missing field {f!r}")
        seq = item["languatory"]
        if not isinstance(seq, list) or not all(isinstance(p, str) for p in seq):
            raise SequenceError(f"{where}: field 'languatory' must be a list of strings")
        try:
            phases = decode(seq)
        except ValueError as e:
            raise SequenceError(f"{where}: field 'languatory': {e}") from None
        out.append({"instance_id": item["instance_id"],
                    "resolution_status": str(item["resolution_status"]), "phases": phases})
    return out


def score_sequences(items: list[dict], expected: list[str]) -> dict:
    """Per-sequence metrics and their means per resolution status."""
    sequences = []
    for it in items:
        c = score(it["phases"], expected, prefixed)
        sequences.append({"instance_id": it["instance_id"],
                          "resolution_status": it["resolution_status"], "ppc": c.ppc,
                          "poc": c.poc, "ppf": c.ppf, "pc": c.pc, "strict": c.strict})
    means: dict[str, dict] = {}
    for status in dict.fromkeys(s["resolution_status"] for s in sequences):
        group = [s for s in sequences if s["resolution_status"] == status]
        means[status] = {"n": len(group), **{k: sum(s[k] for s in group) / len(group)
                                             for k in ("ppc", "poc", "ppf", "pc")}}
    return {"sequences": sequences, "means": means}


def render(result: dict) -> str:
    lines = [f"{'instance_id':<24} {'status':<12} {'PPC':>6} {'POC':>6} {'PPF':>6} {'PC':>6} strict"]
    for s in result["sequences"]:
        lines.append(f"{str(s['instance_id'])[:24]:<24} {s['resolution_status'][:12]:<12} "
                     f"{s['ppc']:6.3f} {s['poc']:6.3f} {s['ppf']:6.3f} {s['pc']:6.3f} "
                     f"{'yes' if s['strict'] else 'no'}")
    lines.append("")
    lines.append(f"{'mean by status':<24} {'n':<12} {'PPC':>6} {'POC':>6} {'PPF':>6} {'PC':>6}")
    for status, m in result["means"].items():
        lines.append(f"{status[:24]:<24} {m['n']:<12} {m['ppc']:6.3f} {m['poc']:6.3f} "
                     f"{m['ppf']:6.3f} {m['pc']:6.3f}")
    return "\n".join(lines)
