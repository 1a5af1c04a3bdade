"""The report's figures by name: their captions, their configurations, and whether the
rows can support each. Kept apart from the drawing code so that the report step,
which only needs names and reasons, does not import matplotlib."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from planaudit.analysis.outputs import ACPBENCH_FIGURES, FIGURES  # noqa: F401  (re-exported)
from planaudit.analysis.rows import OK as COUNTED
from planaudit.analysis.tables import acpbench_rows, main_rows

CAPTIONS = {
    "acpbench": "ACPBench's atomic questions, one panel per model: the share of questions "
                "answered correctly per question type (app applicable actions, val "
                "validation, prog progression, reach reachable atoms, areach reachable "
                "actions, just action justification, land landmarks, nexta the next action "
                "towards the goal; all types pooled in the last row) and form (bool yes/no, "
                "mcq multiple choice, gen generative), with its 95% bootstrap interval over "
                "questions (seeded) and the number counted; darker is more accurate, hatched "
                "cells have no counted "
                "question. Every gold answer is proven by the formal core on the state graph; "
                "an unreadable answer counts as wrong; error rows are left out. Reference "
                "models are calibrators with privileged access to the answers, not LLMs.",
    "calibrator": "The positive control, reference/responsive (a reference, not an LLM): per "
                  "method, the measured effect on the score against the baseline (circle: "
                  "filled when the comparisons table finds it significant after Holm) with its "
                  "95% bootstrap interval over tasks, and the true effect computed from the "
                  "configured rates and seeded faults on the hidden model as VAL, the witness, "
                  "judges it (gray bar). The dashed line is the family's minimal detectable "
                  "difference; each label gives the power predicted for the true effect with "
                  "the correlation of the paired outcomes measured on the episodes (the "
                  "calibrator table's correlation column).",
    "outcomes": "How episodes end, per configuration (regime · model · method): the share of "
                "each outcome, and the mean cost per episode beside it. Errors (the model could "
                "not be reached) are shown but never counted as model failures.",
    "success_cost": "Score (success on solvable tasks or detection on unsolvable ones, over all "
                    "tasks) against cost per solved task (the whole cost over the tasks got "
                    "right) with its 95% bootstrap interval over tasks, one point per "
                    "configuration; a configuration that solved nothing has no cost per solved "
                    "task and is named, not drawn. The dashed line joins the Pareto front of "
                    "the LLM configurations (highest score for the cost); reference models "
                    "(calibrators) and classical planners (no model call, cost 0) stay off the "
                    "front unless no LLM was run.",
    "sweep": "Difficulty sweep (suite.sweep): success on the sweep's solvable tasks, mean cost "
             "per episode and mean reasoning tokens against each task's proven optimal plan "
             "length, one line per configuration (the mean over the tasks of each length); "
             "classical planners dashed, reference models dotted. Where the line falls is "
             "where the configuration collapses.",
    "per_task": "Per-task score under every configuration: the share of counted episodes that "
                "succeeded (solvable tasks) or detected unsolvability (tasks marked ✕). "
                "Hatched cells have no counted episode.",
    "sensing": "Sensing against acting in the online regime: mean epistemic tool calls (read the "
               "task, query the state) against mean ontic ones (execute an action) per "
               "configuration, and the distribution of each episode's sensing ratio, "
               "epistemic / (epistemic + ontic). Without online episodes the figure only "
               "states so.",
    "online_offline": "Online against offline, per model: success on solvable tasks of every "
                      "offline strategy (light, hatched /) and online architecture (dark, "
                      "dotted); the dashed line marks the model's best offline strategy. Drawn "
                      "for the models run in both regimes; without one the figure only states so.",
    "phase_flow": "Phase flow of online trajectories (docs: how-to, plan compliance), one panel per "
                  "model · architecture · plan setting: each column is a step, its blocks the "
                  "share of episodes in each phase (read, reread, sense, plan, replan, act, "
                  "verify, summary; black: the episode has ended), bands "
                  "the flow between consecutive phases over the first ten transitions. Hatched "
                  "bands flow into a phase the setting's workflow does not prescribe "
                  "(out-of-plan); a setting without a workflow (none) marks none.",
}

# `planaudit calibrate`'s figure (results/calibration/), drawn from its result, not from rows
CALIBRATION_FIGURES = ("power",)
CALIBRATION_CAPTIONS = {
    "power": "Calibration of the statistics: the share of simulated experiments in which a "
             "method truly better than its baseline by the given difference is confirmed "
             "(exact McNemar, Holm over the family, in its favour), with 95% Clopper–Pearson "
             "intervals, against the power predicted for the same outcome model (line). The "
             "dotted line marks the smallest difference the family can confirm at all (all "
             "discordant pairs one way); the family-wise false-positive rate of the null "
             "experiments is given in the title.",
}


class NotDrawable(Exception):
    """The rows cannot support this figure; the message says why."""


@dataclass(frozen=True)
class Config:
    regime: str
    model: str
    method: str
    reference: bool

    @property
    def planner(self) -> bool:
        """A classical planner's configuration (the method only planner/... models run)."""
        return self.method == "planner"

    @property
    def model_label(self) -> str:
        if self.reference:
            return f"{self.model} (reference)"
        return f"{self.model} (planner)" if self.planner else self.model

    @property
    def label(self) -> str:
        return f"{self.regime} · {self.model_label} · {self.method}"


def configurations(frame: pl.DataFrame) -> list[Config]:
    """Configurations in a fixed order: offline before online, then models and methods in
    the order the rows first name them (collect sorts rows, so reruns agree)."""
    seen: dict[tuple[str, str, str], bool] = {}
    for regime, model, method, ref in frame.select("regime", "model", "method",
                                                    "reference").iter_rows():
        seen.setdefault((regime, model, method), bool(ref))
    models = list(dict.fromkeys(m for _, m, _ in seen))
    methods = list(dict.fromkeys(m for _, _, m in seen))
    regimes = {"offline": 0, "online": 1}
    keys = sorted(seen, key=lambda k: (regimes.get(k[0], 2), k[0], models.index(k[1]),
                                       methods.index(k[2])))
    return [Config(*k, seen[k]) for k in keys]


def in_both_regimes(configs: Sequence[Config]) -> list[str]:
    return [m for m in dict.fromkeys(c.model for c in configs)
            if {c.regime for c in configs if c.model == m} >= {"offline", "online"}]


SENSING_COLUMNS = ("n_epistemic", "n_ontic", "sensing_ratio")


def why_not(name: str, frame: pl.DataFrame) -> str | None:
    """Why the rows cannot support figure `name`, or None when they can. Each figure reads
    its own regimes: the ACPBench figures the ACPBench rows, the others the offline and
    online rows."""
    if frame.is_empty():
        return "no episode rows"
    if name in ACPBENCH_FIGURES:
        acp = acpbench_rows(frame)
        if acp.is_empty():
            return "no ACPBench episodes in these rows"
        if acp.filter(COUNTED).is_empty():
            return "no counted ACPBench question (every one is an error)"
        return None
    frame = main_rows(frame)
    if frame.is_empty():
        return "no offline or online episodes in these rows"
    if name == "success_cost" and frame.filter(COUNTED).is_empty():
        return "no counted episode (every episode is an error)"
    if name == "sensing":
        if frame.filter(pl.col("regime") == "online").is_empty():
            return "no online episodes in these rows"
        missing = [c for c in SENSING_COLUMNS if c not in frame.columns]
        if missing:
            return f"the online rows lack {', '.join(missing)}"
    if name == "phase_flow":
        missing = [c for c in ("plan_setting", "plan_order", "phases") if c not in frame.columns]
        if missing:
            return f"the rows lack {', '.join(missing)} (no phase labels)"
        online = frame.filter((pl.col("regime") == "online") & pl.col("phases").is_not_null())
        if online.is_empty():
            return "no online episodes with phase labels in these rows"
    if name == "calibrator" and ("calibration_expected" not in frame.columns or frame.filter(
            pl.col("calibration_expected").is_not_null()).is_empty()):
        return "no reference/responsive episodes (the positive control is not in the config)"
    if name == "online_offline" and not in_both_regimes(configurations(frame)):
        return "no model has both offline and online episodes"
    return None


