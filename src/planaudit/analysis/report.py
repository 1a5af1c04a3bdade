"""The standalone report: one static `index.html` holding the design, every table and
every figure, readable offline (no script, no external stylesheet or font; figures by
relative path, so the report folder moves as one).

It renders what the earlier stages wrote to disk (the table csvs, the figure files)
and reads the episode rows only for the design (models, methods, tasks) and for why a
figure was not drawn; it computes no number of its own. Nothing in it depends on the
clock, so rebuilding from the same files gives the same page.
"""

from __future__ import annotations

import csv
import html
import json
import os
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

import polars as pl

import planaudit
from planaudit.analysis.figure_catalog import ACPBENCH_FIGURES, FIGURES, why_not
from planaudit.analysis.figure_catalog import CAPTIONS as FIGURE_CAPTIONS
from planaudit.analysis.outputs import SWEEP_FIGURES
from planaudit.analysis.rows import PLANNER_SUFFIX, REFERENCE_SUFFIX
from planaudit.analysis.tables import CELL_FORMATS, main_rows

TABLE_ORDER = ("main", "comparisons", "calibrator", "online_vs_offline", "compliance",
               "compliance_tests", "settings", "determinism", "pass_k", "reasoning", "disruption",
               "per_domain",
               "outcomes", "per_task", "power", "witness", "repair", "curriculum", "acpbench",
               "disguise")
TABLE_CAPTIONS = {
    "same_tasks": "The main table on the tasks people planned only (a study's instances, "
                  "under the same names): every model and method on exactly those tasks, "
                  "then people per arm (n_tasks counts participants), so people and models "
                  "are compared on the same instances. assistant_alone names the assistant "
                  "arms whose assistant a model's row is: the model alone (its own regime's "
                  "prompt, not the study's chat) beside the people it assisted.",
    "human": "People per study, model (people, or simulated participants: scripts, not "
             "people) and arm: valid plans (the formal core's verdict on the phase-2 plan) "
             "with 95% Wilson intervals, the optimal share of the valid ones, phase-1 texts "
             "readable, valid and agreeing with phase 2, time on task, raw NASA-TLX, and "
             "automation bias (of those shown a wrong suggestion: called it correct, "
             "submitted it verbatim). Finished participants only.",
    "human_instances": "People per study, model, arm and instance: valid plans of the finished "
                       "participants with 95% Wilson intervals, and whether the "
                       "suggestion that arm showed on that instance was itself valid (empty: no "
                       "suggestion). The human table pools the instances of an arm; an arm whose "
                       "suggestions differ in validity across instances is read here instance by "
                       "instance.",
    "human_sensitivity": "Is the human baseline human? Per study and arm, the valid rate of everyone "
                         "analysed beside the rate of those with no integrity signal: a paste, the window "
                         "losing focus or the page hidden on phase 1 or 2 (recorded by the pages' script, "
                         "never required), or a platform authenticity verdict other than authentic. Nobody "
                         "is excluded for a signal; people with nothing recorded (no script, no verdict) "
                         "stay among those without one. Each rate with its 95% Wilson interval.",
    "human_flow": "Every participant accounted for, per study and arm (CONSORT's spirit): "
                  "entered, consented (of those who never did, nothing is kept but the count), "
                  "reached each stage (or passed it), submitted a phase-2 plan, finished, "
                  "excluded (the study's exclusion list, each reason with its count) and analysed "
                  "(finished, not excluded). The valid rate of the completers beside the rate by "
                  "intention to treat: over every consenting participant not excluded, a non- "
                  "finisher counted as not valid; each with a 95% Wilson interval. An arm that "
                  "drives people away scores lower by intention to treat than among its "
                  "completers.",
    "human_tests": "The first arm of each study against each other arm, every alternative "
                   "(less: the first arm's value is the smaller): Fisher's exact and "
                   "Boschloo's tests on validity with Newcombe's interval on the difference; "
                   "Welch's t, Student's t and Mann–Whitney U on time on task and raw TLX, "
                   "with Hedges' g and the rank-biserial correlation and their intervals.",
    "acpbench": "ACPBench's atomic questions, laid out as its paper's tables: per form (bool "
                "yes/no, mcq multiple choice, gen generative) and question type (app "
                "applicable actions, val validation, prog progression, reach reachable atoms, "
                "areach reachable actions, just action justification, land landmarks, nexta "
                "the next action towards the goal; all types: the form's questions pooled) and "
                "model, the questions answered correctly of those that reached the model, their "
                "share and a 95% bootstrap interval over questions (seeded), pooled over "
                "domains. Every gold answer is proven by the formal core (on the state graph of "
                "a generated question's state; by exact search from an ACPBench item's PDDL), "
                "never taken from a model or a file. Reference models are calibrators "
                "with privileged access to the proven answers, not LLMs (the oracle must score "
                "100%). An unreadable answer counts as wrong and is counted apart, in the "
                "malformed outcome (not wrong-answer): a cell says how many there were. Error "
                "rows (the model could not be reached) are left out.",
    "calibrator": "The positive control (reference/responsive, a reference, not an LLM): per "
                  "method against its baseline, the true effect on the score (success or "
                  "detection), computed from the configured rates and the seeded faults on the "
                  "hidden model as VAL judges it (the witness, not the validator that decided the"
                  " outcomes; formal.validate only where VAL is not installed) (true_pp), beside "
                  "the measured one (measured_pp) with its 95% bootstrap interval over tasks "
                  "(lo_pp, hi_pp; covered: the interval holds the true effect); the family's "
                  "minimal detectable difference (mdd_pp); the correlation of the paired outcomes"
                  " measured on these episodes (correlation, the shared-difficulty parameter; "
                  "empty where a rate of 0 or 1 leaves it unmeasurable, and 1 is used) and the "
                  "power predicted with it for the true effect; the comparisons table's decision "
                  "(p_adj, significant); as_computed of episodes: the paired episodes that ended "
                  "as the computation says, where episodes counts the error episodes too "
                  "(errors): any episode not as computed, an error included, fails the control; "
                  "judged_by: what judged the plans in the computation of the true effects (val: "
                  "VAL, the witness; formal: formal.validate itself, where VAL is not installed, "
                  "so the control checks the pipeline but not the semantics).",
    "disguise": "Disguises (suite.disguise): per configuration, success on the solvable tasks "
                "posed both under their own names and under a disguise (deceptive: actions, "
                "predicates, functions and types renamed to unrelated words; randomized: to "
                "random strings), paired by task; b counts tasks solved only undisguised, c only "
                "disguised; exact McNemar, Holm-adjusted within each regime, reference models "
                "apart. The other tables count undisguised episodes only.",
    "main": "Per regime × model × method: success on solvable tasks, executability (every "
            "action applicable, among episodes that gave a plan), detection on unsolvable tasks "
            "and score on all tasks, with 95% bootstrap intervals over tasks (seeded), and mean "
            "tokens and cost per episode; cost per solved task (the whole cost over the tasks "
            "got right, with a 95% bootstrap interval over tasks; none where nothing was "
            "solved, never 0; inf: unbounded at that level). Classical planners "
            "(planner/...) are rows of their own, labelled, at the matched budget: each "
            "task's wall-clock budget is the entry's timeout, one LLM call's (120 s unless "
            "set). Error episodes are counted apart.",
    "comparisons": "Each method against its model's baseline in the same regime (direct offline, "
                   "react online): exact McNemar test on paired task scores; b counts tasks the "
                   "method got right and the baseline wrong, c the reverse; p adjusted by "
                   "Holm–Bonferroni within each regime, reference models apart.",
    "online_vs_offline": "Per model, each online architecture against each offline strategy of "
                         "the same model on the tasks both answered: rates over the paired tasks, "
                         "exact McNemar test, Holm-adjusted.",
    "formalize": "The formalizer regime per model × method (problem: the model writes the "
                 "problem file for the suite's domain file; domain-and-problem: both files; "
                 "feedback: either, told what a user's tools say of its files between rounds): "
                 "files that parse, that are well formed (declared names, types, arities), the "
                 "route's success on solvable tasks (the planner's plan on the model's files, "
                 "valid on the hidden model) and detection on unsolvable ones, and files "
                 "equivalent to the hidden model (the same action sequences allowed, the same "
                 "called plans), each hits/n (share) [95% bootstrap interval over tasks]; "
                 "undecided: past the equivalence bound; success_not_equivalent: the route "
                 "succeeded on files that differ from the hidden model. Error episodes apart.",
    "formalize_faults": "The positive control of the judge: per reference formalizer × method "
                        "and fault kind, the first answers seeded with it (expected, computed "
                        "from the seeded draw on the hidden files, apart from the judge) and "
                        "those the judge found unlike the hidden model (found); none: answers "
                        "seeded with no fault, found counting false alarms; repaired: final "
                        "answers equivalent after feedback; all_found: the control holds.",
    "formalize_vs_offline": "Planner or formalizer? Per model and disguise, each formalize "
                            "method against each offline strategy of the same model on the "
                            "tasks both answered under the same names: scores over the paired "
                            "tasks, b counting "
                            "tasks only the formalizer got right, c only the planner; exact "
                            "McNemar, Holm over the table, reference models apart.",
    "per_domain": "Success, executability, detection and score pooled per regime, model and "
                  "domain.",
    "outcomes": "How episodes end, per configuration: the count of every outcome.",
    "per_task": "The score of every task under every configuration (1: success or detected, "
                "0: any other outcome, empty: error).",
    "power": "The smallest difference, in percentage points, that an exact McNemar test on the "
             "tasks actually run can confirm after the Holm correction, and the discordant "
             "pairs it needs, per family of comparisons.",
    "witness": "VAL as a witness (offline.witness: val): per configuration, the final plans VAL "
               "also judged, how often it accepted or rejected a plan as planaudit did, and each "
               "disagreement under the documented departure from VAL that explains it "
               "(tolerance: VAL's 0.0001 tolerance in numeric comparisons; extra_argument: VAL "
               "ignores surplus action arguments; undefined_order: VAL's order-dependent handling "
               "of undefined values; equal_timestamps) or as unexplained, a bug to chase. "
               "val_no_verdict: VAL refused the domain or problem, crashed or timed out.",
    "repair": "Heuristic mode (offline.repair): LPG's plan repair seeded with each episode's "
              "extracted plan on solvable tasks (only the plans planaudit rejects, with "
              "only_invalid). plans: episodes in scope; skipped: LPG not run (a valid plan "
              "under only_invalid, no plan extracted, an unsolvable task, a domain that "
              "reads total-cost: the rows' repair_skipped); attempted: plans LPG was "
              "seeded with; repaired: a plan "
              "came back; valid_after_repair: planaudit accepts it (LPG is never trusted). "
              "repair_rate: valid repaired plans of those attempted; mean_distance: "
              "Levenshtein distance in actions between the model's plan and the valid "
              "repaired one as LPG returned it (as PlanBench measures it); "
              "mean_distance_reordered: the same after reordering LPG's plan towards the "
              "model's (never higher); distance_per_length: mean distance / mean repaired "
              "length; mean_seconds: LPG's wall time per attempt.",
    "curriculum": "The curriculum regime, laid out as PlanBench's Table 1: per test case (t1 "
                  "plan generation, t2 cost-optimal planning, t3 plan verification, t4 plan "
                  "reuse, t5 generalisation, t6 replanning, t7 plan execution reasoning, t8_1/2/3 "
                  "goal reformulation) and model, the cases answered correctly of those asked, "
                  "their share and a 95% bootstrap interval over cases (seeded), pooled over "
                  "domains. t3 is scored on the verdict; its rows (type) and (explanation) also "
                  "require the kind of error, and then the unmet facts or the failing step.",
    "compliance": "Plan compliance per model × architecture × plan setting (docs: how-to, plan "
                  "compliance): mean PPC (plan phases covered), POC (their first occurrences in "
                  "order), PPF (no out-of-plan phases), PC (geometric mean of the three) and the "
                  "share strictly compliant, with the trajectory graph's mean nodes, temporal edges "
                  "and loops; over all counted episodes, successes, and failures on solvable tasks. "
                  "Settings without an order (none) have graph measures only. Online configurations "
                  "under a setting appear elsewhere as architecture+setting.",
    "compliance_tests": "Does compliance go with success? Per model × architecture (settings with an "
                        "order pooled): two-sided Mann–Whitney U of PC on successes vs failures (solvable "
                        "tasks), and Pearson's r (two-sided p) of PC against nodes, temporal edges and "
                        "loops; empty where a side has no episode or a variable is constant.",
    "settings": "Does a setting change success? Success on solvable tasks under each plan setting "
                "against standard, paired by task (first repeat), exact McNemar (b: the setting "
                "succeeded and standard failed, c the reverse), Holm-adjusted within each family "
                "(reference models apart); the _deterministic columns repeat the test on the "
                "tasks whose outcome was the same in every repeat (online.epochs) of both "
                "settings.",
    "pass_k": "Repeats (the epochs of offline, online, formalize, curriculum and ACPBench; "
              "an ACPBench configuration is a question type in one form): per configuration "
              "run more than once, pass@k (at least one of k repeats right: 1 - C(n-c,k)/C(n,k)) and pass^k "
              "(all k repeats right, τ-bench's convention: C(c,k)/C(n,k)), each estimated "
              "without bias from a task's n counted repeats of which c were right (success, "
              "or detection on an unsolvable task), averaged over tasks, with a 95% bootstrap "
              "interval that resamples tasks, not repeats. short: tasks with fewer than k "
              "repeats, left out and never extrapolated. Every other table counts the first "
              "repeat only.",
    "reasoning": "Reasoning as a factor: per regime × model (its model_id, the string called) × "
                 "method run by two or more entries that differ in their reasoning setting (none, "
                 "effort=low, medium, high, or budget_tokens=N, in that order), each setting's "
                 "score (success, or detection on an unsolvable task) with a 95% bootstrap "
                 "interval over tasks, mean reasoning and output tokens per task (reasoning: null "
                 "where no provider reported it), cost per solved task, and the pair with the next "
                 "lower setting on the tasks both answered (versus): b, tasks this setting got "
                 "right and the lower one wrong; c, the reverse; exact McNemar, Holm within each "
                 "regime (reference models apart).",
    "disruption": "Tools that fail (online.disruption: explicit, an error and nothing "
                  "changed; silent, success reported and nothing changed; misleading, the next "
                  "state query holds one wrong fact): per model × architecture × kind, the faults "
                  "injected, those withheld because the goal could not be proven reachable from "
                  "the state they would leave (no injection makes a task unsolvable), the "
                  "injections the agent followed with a state query (resensed), the episodes "
                  "hit by at least one and of those the ones that still reached the goal "
                  "(recovered), and success on solvable tasks. The reference oracle re-senses "
                  "after every act and should recover from every injection; the flawed one "
                  "never senses.",
    "determinism": "Repeats (online.epochs): per model × architecture × setting, the tasks whose "
                   "outcome was the same in every repeat (the deterministic subset), and success on "
                   "solvable tasks on that subset and over all repeats.",
}
BADGE = '<span class="badge">reference model, not an LLM</span>'
PLANNER_BADGE = '<span class="badge">classical planner, not an LLM</span>'

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
       margin: 2em auto; max-width: 78em; padding: 0 1.5em; color: #111; line-height: 1.45; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 2px solid #333; padding-bottom: 0.15em;
     margin-top: 2.2em; } h3 { margin: 1.6em 0 0.3em; }
nav a { margin-right: 1em; } .caption, figcaption { color: #333; max-width: 60em; }
.scroll { overflow: auto; max-height: 40em; max-width: 100%; width: fit-content;
          border: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.86em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left;
         white-space: nowrap; }
th { background: #eee; position: sticky; top: 0; white-space: normal; vertical-align: bottom;
     max-width: 11em; }
td:first-child, th:first-child { position: sticky; left: 0; z-index: 1;
                                 box-shadow: inset -1px 0 #ccc; }
td:first-child { background: #fff; } th:first-child { z-index: 2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.reference td { background: #f3f3f3; }
.badge { display: inline-block; border: 1px solid #222; border-radius: 0.3em; padding: 0 0.35em;
         margin-left: 0.4em; font-size: 0.8em; font-weight: 600; background: #fff;
         white-space: nowrap; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; height: auto;
                                          border: 1px solid #ddd; }
.note { border-left: 4px solid #888; padding: 0.3em 0.8em; background: #f6f6f6; }
dl.design dt { font-weight: 600; } dl.design dd { margin: 0 0 0.6em 1.2em; }
code { font-size: 0.92em; }
"""


def esc(text) -> str:
    return html.escape(str(text), quote=True)


def code_version(where: Path | None = None) -> dict[str, str | None]:
    """planaudit's version and, when the code sits in a git checkout, its commit (with a
    mark for uncommitted changes); None where git or the checkout is absent."""
    where = where or Path(planaudit.__file__).resolve().parent
    info: dict[str, str | None] = {"version": planaudit.__version__, "commit": None}
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True,
                              text=True, timeout=10)
        if head.returncode == 0:
            dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--"], cwd=where,
                                   capture_output=True, timeout=10).returncode == 1
            info["commit"] = head.stdout.strip() + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return info


# -- tables ---------------------------------------------------------------------------


def table_files(folder: Path) -> list[Path]:
    """The table csvs in the fixed order, then any other csv there, by name."""
    known = [folder / f"{name}.csv" for name in TABLE_ORDER if (folder / f"{name}.csv").is_file()]
    extra = sorted(p for p in folder.glob("*.csv") if p.stem not in TABLE_ORDER)
    return known + extra


def _cell(value: str, column: str, references: set[str]) -> tuple[str, bool]:
    """A csv cell as html, and whether it is numeric (right-aligned)."""
    if value == "":
        return "–", True
    if value in ("true", "false"):
        return ("yes" if value == "true" else "no"), False
    try:
        number = float(value)
    except ValueError:
        return _labelled(value, column, references), False
    if value.lstrip("-").isdigit():
        return esc(value), True
    return esc(CELL_FORMATS.get(column, "{:.3f}").format(number)), True


def _labelled(text: str, column: str, references: set[str]) -> str:
    """Text with the reference (or planner) label turned into a badge; a bare reference model
    name in a model column gets the badge too, whatever the table module calls it."""
    if REFERENCE_SUFFIX in text:
        return BADGE.join(esc(part) for part in text.split(REFERENCE_SUFFIX))
    if PLANNER_SUFFIX in text:
        return PLANNER_BADGE.join(esc(part) for part in text.split(PLANNER_SUFFIX))
    if column == "model" and text in references:
        return esc(text) + BADGE
    return esc(text)


# the most rows and columns a table shows inline: past them a page of 10^6 episodes would
# run to tens of MB (a row per configuration, a column per configuration in per_task) and
# no browser renders it; the page then shows the first ones and links to the whole csv
MAX_ROWS = 500
MAX_COLUMNS = 100


def render_table(path: Path, references: set[str], out: Path | None = None) -> str:
    """The csv as an html table, at most MAX_ROWS rows and MAX_COLUMNS columns; a larger
    one shows its first rows and columns and says where the whole table is (`out`: the
    page, for a relative link)."""
    rows: list[list[str]] = []
    n_rows = 0
    with path.open(newline="") as fh:
        for row in csv.reader(fh):
            n_rows += 1
            if len(rows) <= MAX_ROWS:
                rows.append(row)
    if not rows:
        return '<p class="note">Empty file.</p>'
    n_rows -= 1  # the header
    n_columns = len(rows[0])
    rows = [row[:MAX_COLUMNS] for row in rows[:MAX_ROWS + 1]]
    header, body = rows[0], rows[1:]
    cut = ""
    if n_rows > MAX_ROWS or n_columns > MAX_COLUMNS:
        href = esc(_rel(path, out)) if out is not None else esc(path.name)
        cut = (f'<p class="note">Showing the first {len(body):,} of {n_rows:,} rows and '
               f"{len(header):,} of {n_columns:,} columns; the whole table is "
               f'<a href="{href}">{esc(path.name)}</a>.</p>')
    ref_col = header.index("reference") if "reference" in header else None
    out = ['<div class="scroll"><table>', "<thead><tr>"]
    # headers may break after _ and / only (a wide table stays readable at 1,400 px)
    out += ["<th>" + re.sub(r"([_/])", r"\1<wbr>", _labelled(h, "header", references)) + "</th>"
            for h in header]
    out.append("</tr></thead><tbody>")
    for row in body:
        is_ref = (ref_col is not None and row[ref_col] == "true") or any(
            REFERENCE_SUFFIX in v for v in row)
        out.append('<tr class="reference">' if is_ref else "<tr>")
        for value, column in zip(row, header, strict=False):
            text, numeric = _cell(value, column, references)
            out.append(f'<td class="num">{text}</td>' if numeric else f"<td>{text}</td>")
        out.append("</tr>")
    out.append("</tbody></table></div>")
    if cut:
        out.append(cut)
    if not body:
        out.append('<p class="note">No rows: the episodes run do not support this table.</p>')
    return "".join(out)


# -- design ---------------------------------------------------------------------------


def _seeds(node, path: str = "") -> Iterable[tuple[str, object]]:
    """Every `seed` in the config, with where it sits (suite.seed, models[flawed].seed)."""
    if isinstance(node, dict):
        for key, value in node.items():
            where = f"{path}.{key}" if path else str(key)
            if key in ("seed", "seeds") and not isinstance(value, dict | list):
                yield where, value
            else:
                yield from _seeds(value, where)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            name = item.get("name", i) if isinstance(item, dict) else i
            yield from _seeds(item, f"{path}[{name}]")


def reference_models(frame: pl.DataFrame, config: dict) -> set[str]:
    names = {m["name"] for m in config.get("models", [])
             if str(m.get("model", "")).startswith("reference/")}
    if "reference" in frame.columns:
        names |= set(frame.filter(pl.col("reference"))["model"].unique().to_list())
    return names


def design_html(frame: pl.DataFrame, config: dict, references: set[str]) -> str:
    out = ['<h2 id="design">Design</h2>']
    n_err = frame.filter(pl.col("outcome") == "error").height if frame.height else 0
    regimes = (frame.group_by("regime", maintain_order=True).len().iter_rows()
               if frame.height else [])
    n_ctx = frame.filter(pl.col("outcome") == "context-exhausted").height if frame.height else 0
    out.append(f"<p>{frame.height} episodes ("
               + (", ".join(f"{n} {esc(r)}" for r, n in regimes) or "none")
               + f"); {n_err} ended in <code>error</code> (the model could not be reached) and are "
                 f"counted apart; {n_ctx} ended in <code>context-exhausted</code> (a prompt past "
                 "the model's context) and count as failures in every rate.</p>")

    out.append("<h3>Models</h3>")
    ran = set(frame["model"].unique().to_list()) if frame.height else set()
    models = list(config.get("models", []))
    models += [{"name": m, "model": "(not in the config)"} for m in sorted(ran)
               if m not in {e["name"] for e in models}]
    out.append('<div class="scroll"><table><thead><tr><th>name</th><th>litellm model</th>'
               "<th>tier</th><th>family</th><th>episodes</th></tr></thead><tbody>")
    for m in models:
        ref = m["name"] in references
        n = frame.filter(pl.col("model") == m["name"]).height if frame.height else 0
        out.append(f'<tr{" class=reference" if ref else ""}><td>{esc(m["name"])}'
                   f'{BADGE if ref else ""}</td><td><code>{esc(m.get("model", ""))}</code></td>'
                   f'<td>{esc(m.get("tier", ""))}</td><td>{esc(m.get("family", ""))}</td>'
                   f'<td class="num">{n}</td></tr>')
    out.append("</tbody></table></div>")

    out.append("<h3>Methods</h3><dl class=design>")
    for regime, kind in (("offline", "strategies"), ("online", "architectures")):
        configured = list((config.get(regime) or {}).get("methods", []))
        run = (frame.filter(pl.col("regime") == regime)["method"].unique(maintain_order=True)
               .to_list() if frame.height else [])
        listed = ", ".join(esc(m) for m in configured) or "none"
        extra = [m for m in run if m not in configured]
        idle = [m for m in configured if m not in run]
        notes = []
        if extra:
            notes.append("episodes also of " + ", ".join(esc(m) for m in extra))
        if idle:
            notes.append("no episodes yet of " + ", ".join(esc(m) for m in idle))
        out.append(f"<dt>{regime} {kind}</dt><dd>{listed}"
                   + (f" ({'; '.join(notes)})" if notes else "") + "</dd>")
    budget = (config.get("online") or {}).get("budget")
    if budget is not None:
        out.append(f"<dt>online step budget</dt><dd>{esc(budget)} per episode</dd>")
    out.append("</dl>")

    out.append("<h3>Tasks</h3>")
    if frame.height:
        tasks = (frame.select("domain", "task", "solvable").unique()
                 .group_by("domain").agg(tasks=pl.len(), solvable=pl.col("solvable").sum())
                 .sort("domain"))
        out.append('<div class="scroll"><table><thead><tr><th>domain</th><th>tasks</th>'
                   "<th>solvable</th><th>unsolvable</th></tr></thead><tbody>")
        for d, n, s in tasks.iter_rows():
            out.append(f'<tr><td>{esc(d)}</td><td class="num">{n}</td><td class="num">{s}</td>'
                       f'<td class="num">{n - s}</td></tr>')
        total, solv = int(tasks["tasks"].sum()), int(tasks["solvable"].sum())
        out.append(f'<tr><td><b>all</b></td><td class="num"><b>{total}</b></td>'
                   f'<td class="num"><b>{solv}</b></td><td class="num"><b>{total - solv}</b></td>'
                   "</tr></tbody></table></div>")
    else:
        out.append('<p class="note">No episodes yet.</p>')
    suite = config.get("suite") or {}
    if suite:
        out.append(f"<p>Suite: {esc(suite.get('source', 'builtin'))} from "
                   f"<code>{esc(suite.get('root', ''))}</code>; obfuscated domains: "
                   f"{esc(', '.join(suite.get('obfuscate', [])) or 'none')}.</p>")
    out.append(certificate_sentence(Path(config.get("results", "results")) / "suite"
                                    / "summary.csv"))
    out.append(curriculum_skips_sentence(config))
    out.append(acpbench_past_bound_sentence(config))

    out.append("<h3>Seeds</h3><dl class=design>")
    seeds = list(_seeds(config))
    analysis = config.get("analysis") or {}
    if "seed" not in analysis:
        seeds.append(("analysis.seed (bootstrap; default)", 0))
    for where, value in seeds:
        out.append(f"<dt><code>{esc(where)}</code></dt><dd>{esc(value)}</dd>")
    out.append("</dl>")

    out.append("<h3>Code version</h3><dl class=design>")
    version = code_version()
    out.append(f"<dt>planaudit</dt><dd>{esc(version['version'])}</dd>")
    out.append("<dt>git commit</dt><dd>"
               + (f"<code>{esc(version['commit'])}</code>" if version["commit"]
                  else "not available (not a git checkout, or git absent)") + "</dd>")
    if frame.height and "code_version" in frame.columns:
        rows = ", ".join(esc(v) for v in frame["code_version"].unique().sort().to_list())
        out.append(f"<dt>code version recorded in the rows</dt><dd>{rows}</dd>")
    if frame.height and "config_hash" in frame.columns:
        out.append(f"<dt>distinct shard configurations (config_hash)</dt>"
                   f"<dd>{frame['config_hash'].n_unique()}</dd>")
    out.append("</dl>")
    return "".join(out)


def certificate_sentence(summary: Path) -> str:
    """How the suite's unsolvable tasks are certified (`planaudit suite summary`'s csv),
    naming every one kept without a certificate (`audit: warn`: two agreeing proofs, or
    one, `single-proof`, where the other method stopped at its limit)."""
    if not summary.is_file():
        return ""
    with summary.open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r.get("solvable") == "False"]
    if not rows:
        return ""
    kinds: dict[str, int] = {}
    for r in rows:
        kinds[r.get("certificate") or "missing"] = kinds.get(r.get("certificate") or "missing", 0) + 1
    made = ", ".join(f"{n} {esc(k)}" for k, n in sorted(kinds.items()) if k != "missing")
    text = f"<p>Unsolvable tasks: {len(rows)}; certificates checked: {made or 'none'}."
    missing = [r for r in rows if (r.get("certificate") or "missing") == "missing"]
    if missing:
        def proof(r: dict) -> str:  # single-proof: one method proved it, the other stopped
            alone = "single-proof" in (r.get("audit") or "").split("+")
            return (f"proven by {esc(r.get('methods_agreeing') or 'none')}"
                    + (" alone: <code>single-proof</code>" if alone else ""))

        named = ", ".join(f"{esc(r['domain'])}/{esc(r['task'])} ({proof(r)})" for r in missing)
        text += (f" <b>Without a certificate</b> (past the certificate limit, kept under "
                 f"<code>audit: warn</code> on two agreeing proofs, or on one where the other "
                 f"method stopped at its limit): {named}.")
    return text + "</p>"


def curriculum_skips_sentence(config: dict) -> str:
    """The curriculum's test cases the plan left out on a domain they cannot be generated
    on, and why: the rule the workflow applied when it was built, read from the same
    sources (`curriculum.regime.planned_skips`), so the tables' domains are explained."""
    if not ((config.get("curriculum") or {}).get("tests") and config.get("suite")):
        return ""
    from planaudit.curriculum.regime import planned_skips

    try:
        skipped = planned_skips(config)
    except (OSError, ValueError):  # the suite's sources are not here: nothing to say
        return ""
    if not skipped:
        return ""
    named = "; ".join(f"{esc(t)} on {esc(d)} ({esc(why)})" for (t, d), why in skipped.items())
    return f"<p>Curriculum test cases not run (the plan left them out): {named}.</p>"


def acpbench_past_bound_sentence(config: dict) -> str:
    """The ACPBench questions not asked because proving their gold answer ran past its
    memory or time bound (`acpbench.gold_bound`), each task or item named: what each job
    wrote beside its rows (`<type>.not_posed.json`), so a reader knows which questions
    the rates leave out and why."""
    if not (config.get("acpbench") or {}).get("types"):
        return ""
    folder = Path(config.get("results", "results")) / "episodes" / "acpbench"
    past: dict[tuple[str, str], int] = {}
    for path in sorted(folder.glob("*/*.not_posed.json")):
        try:
            records = json.loads(path.read_text())
        except (OSError, ValueError):
            continue  # a job killed before it wrote the file: its rows are not there either
        for r in records:
            if r.get("past_bound"):
                key = (f"{r['domain']} {r['type']} {r['form']}", r["reason"])
                past[key] = past.get(key, 0) + int(r.get("questions", 0))
    if not past:
        return ""
    named = "; ".join(f"{esc(where)}: {n} ({esc(why)})" for (where, why), n in past.items())
    return (f"<p>ACPBench questions not asked, their gold past its bound (counted over every "
            f"model's jobs): {sum(past.values())} in all: {named}.</p>")


def power_sentences(folder: Path) -> str:
    """The power table in words: what the design actually run can confirm."""
    path = folder / "power.csv"
    if not path.is_file():
        return ""
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    items = []
    for r in rows:
        who = "reference models" if r.get("reference") == "true" else "the models under test"
        where = f"{esc(r.get('table', ''))} ({esc(r.get('regime', ''))}), {who}"
        if r.get("min_difference_pp"):
            items.append(f"<li>{where}: with {esc(r.get('n_tasks'))} tasks and "
                         f"{esc(r.get('comparisons'))} comparisons, the smallest difference that "
                         f"can be confirmed is <b>{float(r['min_difference_pp']):.1f} percentage "
                         f"points</b> ({esc(r.get('discordant_pairs'))} discordant pairs, all one "
                         "way); smaller differences cannot be told from chance.</li>")
        else:
            items.append(f"<li>{where}: {esc(r.get('n_tasks'))} tasks are too few for any "
                         f"difference to survive {esc(r.get('comparisons'))} comparisons.</li>")
    return ("<h3>Power of this design</h3><ul>" + "".join(items) + "</ul>") if items else ""


def calibrator_sentences(folder: Path) -> str:
    """The positive control in words: whether effects above the design's floor were found
    and effects below it were not, and whether the measured effects hold the true ones."""
    from planaudit.analysis.responsive import CALIBRATOR, sentences

    path = folder / "calibrator.csv"
    if not path.is_file():
        return ""
    table = pl.read_csv(path, schema_overrides=CALIBRATOR)
    items = "".join(f"<li>{esc(s)}</li>" for s in sentences(table))
    return ("<h3>Positive control</h3><p>reference/responsive is a calibrator, not an LLM: each "
            "method's mechanism corrects its seeded faults at configured rates, so every "
            "method's true effect is known (the calibrator table).</p><ul>" + items + "</ul>"
            ) if items else ""


def witness_sentence(folder: Path) -> str:
    """The witness table in one line: every disagreement with VAL, by class, and a warning
    when one is unexplained."""
    path = folder / "witness.csv"
    if not path.is_file():
        return ""
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    if not rows:
        return ""

    def total(column: str) -> int:
        return sum(int(r.get(column) or 0) for r in rows)

    classes = [c for c in ("tolerance", "extra_argument", "undefined_order", "equal_timestamps",
                           "unexplained") if total(c)]
    why = "; ".join(f"{total(c)} {c.replace('_', ' ')}" for c in classes)
    text = (f"<h3>VAL as a witness</h3><p>VAL also judged {total('val_judged')} of "
            f"{total('plans')} final plans: it agreed with planaudit on {total('agree')} and "
            f"disagreed on <b>{total('disagree')}</b>" + (f" ({esc(why)})" if why else "") + ".")
    if total("unexplained"):
        text += (" <b>An unexplained disagreement is a bug in planaudit or in VAL</b>: see the "
                 "witness table and the rows' val_detail.")
    if total("val_no_verdict"):
        text += f" VAL gave no verdict on {total('val_no_verdict')} (see val_detail)."
    return text + "</p>"


def replies_sentence(frame: pl.DataFrame) -> str:
    """What the reader must know before reading rates and costs: replies cut at max_tokens
    (their outcomes stand as the contract read them) and models with no known price."""
    parts = []
    if "truncated" in frame.columns and (cut := frame.filter(pl.col("truncated").fill_null(False))).height:
        by = ", ".join(f"{m} {n}" for m, n in cut.group_by("model").len().sort("model").iter_rows())
        parts.append(f"<b>{cut.height}</b> of {frame.height} episodes were decided by a reply "
                     f"cut at max_tokens ({esc(by)}): each is judged as written (a cut plan is "
                     "usually malformed or ends short), and the main table counts them apart in "
                     "its truncated column. Raise max_tokens before reading them as the model's "
                     "failures.")
    unpriced = frame.filter(pl.col("cost_usd").is_null() & (pl.col("outcome") != "error"))
    if unpriced.height:
        names = ", ".join(sorted(set(unpriced["model"])))
        parts.append(f"No price is known for {esc(names)}: their cost is shown as – "
                     "(unpriced, not free); give input_price and output_price in the config.")
    return ("<h3>Replies and prices</h3><p>" + " ".join(parts) + "</p>") if parts else ""


# -- figures --------------------------------------------------------------------------


def figures_html(frame: pl.DataFrame, figures: Path, out: Path) -> str:
    parts = ['<h2 id="figures">Figures</h2>']
    # the sweep's figure where the figures stage drew it (a config with suite.sweep)
    drawn = tuple(n for n in SWEEP_FIGURES if (figures / f"{n}.png").is_file())
    for name in FIGURES + ACPBENCH_FIGURES + drawn:
        png, svg = figures / f"{name}.png", figures / f"{name}.svg"
        title = name.replace("_", " ")
        reason = why_not(name, frame)
        parts.append(f'<figure id="figure-{name}">')
        if reason:
            parts.append(f'<p class="note">Figure <b>{esc(title)}</b> not drawn: {esc(reason)}.</p>')
        elif not png.is_file():
            parts.append(f'<p class="note">Figure <b>{esc(title)}</b>: {esc(png)} is missing '
                         "(run <code>planaudit figures</code>).</p>")
        else:
            src = Path(os.path.relpath(png, out.parent)).as_posix()
            parts.append(f'<img src="{esc(src)}" alt="{esc(title)}: {esc(FIGURE_CAPTIONS[name])}">')
        caption = esc(FIGURE_CAPTIONS[name])
        if not reason and svg.is_file():
            link = Path(os.path.relpath(svg, out.parent)).as_posix()
            caption += f' (<a href="{esc(link)}">svg</a>)'
        parts.append(f"<figcaption><b>{esc(title.capitalize())}.</b> {caption}</figcaption></figure>")
    return "".join(parts)


# -- the page -------------------------------------------------------------------------


def build(frame: pl.DataFrame, config: dict, tables: Path, figures: Path, out: Path) -> Path:
    """Write the standalone report to `out` and return it. The design section and the
    notes on replies read the offline and online rows (`tables.main_rows`), as the tables
    they describe do; each figure's note reads its own regimes' rows."""
    references = reference_models(frame, config)
    rows = main_rows(frame)
    files = table_files(tables)
    nav = ['<a href="#design">Design</a>', '<a href="#tables">Tables</a>',
           '<a href="#figures">Figures</a>']
    body = [f"<header><h1>planaudit report</h1><p>LLM planners and agents judged against hidden "
            f"PDDL models. Reference models (oracle, flawed, responsive) are calibrators with privileged "
            f"access to the hidden model, not LLMs; every row of theirs carries {BADGE}.</p>"
            f"<nav>{' '.join(nav)}</nav></header>",
            design_html(rows, config, references), power_sentences(tables),
            calibrator_sentences(tables), witness_sentence(tables), replies_sentence(rows),
            '<h2 id="tables">Tables</h2>']
    if not files:
        body.append(f'<p class="note">No table csv in {esc(tables)} (run <code>planaudit '
                    "tables</code>).</p>")
    for path in files:
        name = path.stem
        others = [f'<a href="{esc(_rel(path.with_suffix(ext), out))}">{kind}</a>'
                  for ext, kind in ((".md", "Markdown"), (".tex", "LaTeX"))
                  if path.with_suffix(ext).is_file()]
        also = f" Also as {' and '.join(others)}." if others else ""
        body.append(f'<section id="table-{esc(name)}"><h3>{esc(name.replace("_", " "))}</h3>'
                    f'<p class="caption">{esc(TABLE_CAPTIONS.get(name, ""))}{also}</p>'
                    f"{render_table(path, references, out)}</section>")
    body.append(figures_html(frame, figures, out))
    sections = regime_sections(frame, config, tables, figures, out)
    body += sections
    for text in sections:  # each section's heading in the header's links
        m = re.match(r'\s*<h2 id="([^"]+)">([^<]+)</h2>', text)
        if m:
            body[0] = body[0].replace("</nav>", f' <a href="#{m.group(1)}">{m.group(2)}</a></nav>')
    page = ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<link rel="icon" href="data:,">'
            f"<title>planaudit report</title><style>{STYLE}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    # atomically: a reader (or a crash) never sees half a page, and a failed build leaves
    # no page that mixes old and new
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(page, encoding="utf-8")
    os.replace(tmp, out)
    return out


def regime_sections(frame: pl.DataFrame, config: dict, tables: Path, figures: Path,
                    out: Path) -> list[str]:
    """The sections regimes write themselves (`Regime.report`: people's), in the
    registry's order; a regime without rows writes none."""
    from planaudit.regime import regimes

    found = []
    for regime in regimes().values():
        if regime.report is not None:
            text = regime.report(frame, config, tables, figures, out)
            if text:
                found.append(text)
    return found


def _rel(path: Path, out: Path) -> str:
    return Path(os.path.relpath(path, out.parent)).as_posix()
