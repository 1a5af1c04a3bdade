"""The key a reference model's seeded draws start from, one place for every answer kind.

A draw is fixed by the model's seed, the task (whatever its disguise, for the callers that
pass it bare) and the call's sample; a repeat of a regime whose epochs are not samples
(offline, formalize: `epoch` in the metadata from the second repeat on) draws afresh, so
that pass^k of a reference model is a real control, while the first repeat keeps the draws
it always had.
"""

from __future__ import annotations


def draw_key(meta: dict, task: str | None = None) -> str:
    key = f"{meta.get('seed', 0)}:{meta.get('task') if task is None else task}:" \
          f"{meta.get('sample', 0)}"
    return key + (f":e{meta['epoch']}" if meta.get("epoch") else "")
