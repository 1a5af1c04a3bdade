"""The `planaudit` command: a face that composes the subcommands each package contributes
(its `add_parser`), and holds no logic of its own.

Exit codes: 0 success (a valid plan, a checked certificate), 1 a negative verdict
(an invalid plan, a rejected certificate), 2 bad input, named by file and line.
Heavy imports (unified-planning, snakemake) happen inside the subcommands that
need them, so that `validate` starts fast.
"""

from __future__ import annotations

import argparse
import sys

from planaudit.commandline import EXIT_INPUT, EXIT_OK, InputError, config_arg
from planaudit.formal.sexpr import PDDLError


def build_parser() -> argparse.ArgumentParser:
    """Every package's subcommands, composed: each `add_parser` adds its own, and each
    regime of the registry its own (`planaudit <regime> shard`, ...)."""
    from planaudit import project, run
    from planaudit.analysis import commands as analysis
    from planaudit.compliance import commands as compliance
    from planaudit.curriculum.commands import add_show_parser
    from planaudit.formal import commands as formal
    from planaudit.interop import commands as interop
    from planaudit.planbench.cli_args import add_parser as add_planbench
    from planaudit.regime import regimes
    from planaudit.simulated import add_parsers as add_simulated
    from planaudit.study import commands as study
    from planaudit.suite import commands as suite

    p = argparse.ArgumentParser(prog="planaudit", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    formal.add_parser(sub)
    for regime in regimes().values():
        regime.add_parser(sub, config_arg)
    run.add_parser(sub)
    compliance.add_parser(sub)
    analysis.add_parser(sub)
    suite.add_parser(sub, suite.run)
    _, planbench = add_planbench(sub)
    add_show_parser(planbench, config_arg)
    interop.add_parser(sub)
    add_simulated(study.add_parser(sub))
    project.add_parser(sub)
    _finish_help(p)
    return p


EXAMPLES = {
    "validate": "planaudit validate domains/gripper/domain.pddl domains/gripper/problems/p01.pddl "
                "plan.txt --json",
    "solve": "planaudit solve domains/gripper/domain.pddl domains/gripper/problems/p03.pddl",
    "formalize judge": "planaudit formalize judge domains/blocksworld/domain.pddl "
                       "domains/blocksworld/problems/p02.pddl domain.pddl problem.pddl --json",
    "certify-check": "planaudit certify-check domain.pddl problem.pddl "
                     "results/suite/gripper/p09/certificate.json",
    "offline shard": "planaudit offline shard --model oracle --method direct --domain gripper "
               "--out rows.parquet --transcripts transcripts/",
    "online shard": "planaudit online shard --model oracle --method react --domain gripper "
              "--out rows.parquet --transcripts transcripts/",
    "episode": "planaudit episode --model flawed --method modulo --task gripper/p03",
    "check": "planaudit check --config config/paper.yaml",
    "estimate": "planaudit estimate --config config/paper.yaml",
    "collect": "planaudit collect results/episodes/*/*/*/*.parquet --out results/episodes.parquet",
    "tables": "planaudit tables --episodes results/episodes.parquet --out results/report",
    "power": "planaudit power --tasks 40 --comparisons 20 --difference 30 --correlation 0.5",
    "calibrate": "planaudit calibrate --tasks 40 --comparisons 20 --experiments 2000 --json",
    "figures": "planaudit figures --episodes results/episodes.parquet",
    "report": "planaudit report --episodes results/episodes.parquet",
    "suite": "planaudit suite new domains/mydomain    # or: planaudit suite show gripper/p03",
    "suite prepare": "planaudit suite prepare --domain gripper --task p03 --outdir /tmp/p03 --obfuscate",
    "suite truth": "planaudit suite truth --domain gripper --task p03 --outdir /tmp/p03",
    "suite summary": "planaudit suite summary results/suite/*/*/truth.json --out summary.csv",
    "suite new": "planaudit suite new domains/lights",
    "suite build": "planaudit suite build --domain gripper --suite-dir results/suite --obfuscate",
    "suite show": "planaudit suite show gripper/p03",
    "planbench show": "planaudit planbench show t6 gripper/p03",
    "formalize shard": "planaudit formalize shard --model oracle --method problem --domain "
                       "gripper --out 'rows/{domain}.parquet' --transcripts 'tr/{domain}'",
    "acpbench shard": "planaudit acpbench shard --model oracle --type land --out rows.parquet "
                      "--transcripts transcripts/",
    "acpbench show": "planaudit acpbench show land gripper/p03 --form bool",
    "planbench replay": "planaudit planbench replay ../shared/planbench/plan-bench/results/blocksworld/"
              "gpt-4_chat/task_1_plan_generation.json --json",
    "planbench repair": "planaudit planbench repair ../shared/planbench/plan-bench/results/blocksworld/"
              "gpt-4_chat/task_1_plan_generation.json --seed 0 --json",
    "study": "planaudit study serve --config config/study.yaml    "
             "# or: planaudit study status --config config/study.yaml",
    "study serve": "planaudit study serve --config config/study.yaml --port 8000",
    "study status": "planaudit study status --config config/study.yaml",
    "study estimate": "planaudit study estimate --config config/study-demo-assistant.yaml "
                      "--participants 100",
    "study export": "planaudit study export --config config/study.yaml --out results/study/pilot/export",
    "study analyze": "planaudit study analyze --records results/study/pilot/export "
               "--out results/study/pilot/analysis --alternative greater",
    "study plan": "planaudit study plan --rates 0.74 0.82 --power 0.8",
    "study bonus": "planaudit study bonus --config config/study.yaml --out bonuses.csv --dry-run",
    "study cohort": "planaudit study cohort --config config/study.yaml --counts config/study-demo.yaml "
              "--out cohort.yaml",
    "study simulate": "planaudit study simulate --cohort cohort.yaml --url http://127.0.0.1:8000/",
    "human shard": "planaudit human shard --records results/study/pilot/export "
             "--out results/episodes/human/people/pilot.parquet",
    "compliance score": "planaudit compliance score sequences.json --expected N,R,P,V --json",
    "acpbench": "planaudit acpbench gold ../shared/acpbench/dataset/app/dev.gen.json",
    "acpbench gold": "planaudit acpbench gold ../shared/acpbench/dataset/app/dev.gen.json --json",
    "export inspect": "planaudit export inspect --results results --out results/inspect",
    "export eee": "planaudit export eee --results results --out results/eee",
    "init": "planaudit init myrun && cd myrun && snakemake --cores 2",
    "curriculum shard": "planaudit curriculum shard --model oracle --test t1 --domain gripper "
                  "--out rows.parquet --transcripts transcripts/",
}


class _Help(argparse.RawDescriptionHelpFormatter):
    """Shows every option's default (argparse's own formatter skips options without help)."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if (action.option_strings and default not in (None, False, argparse.SUPPRESS, [])
                and "%(default)" not in text):
            text += " (default: %(default)s)"
        return text


def _finish_help(parser: argparse.ArgumentParser) -> None:
    """Every subcommand shows its defaults and an example."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for sub in action.choices.values():
            name = sub.prog.removeprefix("planaudit ")  # the whole path: "suite show"
            sub.formatter_class = _Help
            for a in sub._actions:
                if a.help is None and a.option_strings and a.default not in (None, False):
                    a.help = "(default: %(default)s)"
            if name in EXAMPLES and not sub.epilog:
                sub.epilog = "example:\n  " + EXAMPLES[name]
            _finish_help(sub)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (PDDLError, InputError) as e:
        print(f"planaudit: {e}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

