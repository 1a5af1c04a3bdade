"""The curriculum's subcommands: `planaudit curriculum shard` (the workflow's job) and
`planaudit planbench show` (one generated prompt with its ground truth)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path


def _input_error(message: str):
    from planaudit.commandline import InputError

    return InputError(message)


def cmd_curriculum_shard(args) -> int:
    from planaudit.commandline import read_config
    from planaudit.curriculum.shard import CurriculumShardFailed, run_curriculum_shard
    from planaudit.curriculum.world import CurriculumError
    from planaudit.experiment import ConfigError, Experiment
    from planaudit.llm.batch import BatchFailed

    experiment = Experiment.from_dict(json.loads(args.spec) if args.spec else read_config(args))
    try:
        entry = experiment.model(args.model)
        entry.require()
        frames = run_curriculum_shard(experiment, entry, args.test, args.domain,
                                      Path(args.suite), args.out, args.transcripts)
    except (ConfigError, CurriculumError, FileNotFoundError, ValueError) as e:
        raise _input_error(str(e)) from None
    except (CurriculumShardFailed, BatchFailed) as e:
        print(f"planaudit: {e}", file=sys.stderr)
        return 1
    for domain, frame in frames.items():
        right = int(frame["success"].sum()) if frame.height else 0
        print(f"curriculum/{args.model}/{args.test}/{domain}: {right}/{frame.height} correct",
              file=sys.stderr)
    return 0


def _suite_domain(config: dict, domain: str, results: Path) -> Path:
    """The prepared suite folder with every task of `domain` prepared and proven
    (`planaudit.suite.world.prepared_domain`, which ACPBench's `show` calls too)."""
    from planaudit.suite.world import prepared_domain

    return prepared_domain(config, domain, results)


def cmd_planbench_show(args) -> int:
    from planaudit.commandline import read_config
    from planaudit.curriculum.shard import domain_key, planbench, settings
    from planaudit.curriculum.world import CurriculumError
    from planaudit.planbench.cases import TESTS

    if args.test not in TESTS:
        raise _input_error(f"no test case '{args.test}' (have: {', '.join(TESTS)})")
    if "/" not in args.case:
        raise _input_error(f"'{args.case}': name a case as DOMAIN/INSTANCE (gripper/p03, "
                           "blocksworld/12)")
    domain, instance = args.case.split("/", 1)
    config = read_config(args)
    section = config.get("curriculum") or {}
    cfg = settings(section, args.test)
    shots = cfg["shots"] if args.shots is None else args.shots
    seed = cfg["seed"] if args.seed is None else args.seed
    pb = [e for e in section.get("domains") or [] if isinstance(e, dict)
          and domain in (e["config"], domain_key(e))]
    try:
        if args.root or pb:
            root = args.root or pb[0]["root"]
            config_name = domain if args.root else pb[0]["config"]
            gen = planbench()
            number = int("".join(c for c in instance if c.isdigit()) or 0)
            def digits(name) -> str:
                return re.sub(r"\D", "", str(name)).lstrip("0")

            found = [c for c in gen.cases(root, config_name, args.test, number, seed=seed,
                                          shots=shots)
                     if str(c.instance) == instance or digits(c.instance) == digits(instance)]
            if not found:
                raise CurriculumError(f"{root} {config_name}: no instance '{instance}'")
            case, answer = found[-1], gen.oracle_answer(found[-1])
        else:
            from planaudit.curriculum.generate import cases
            from planaudit.curriculum.score import oracle_answer

            results = Path(config.get("results", "results"))
            suite_dir = _suite_domain(config, domain, results)
            case = cases(suite_dir, domain, args.test, 1, seed, shots, only=instance)[0]
            answer = oracle_answer(case)
    except (CurriculumError, ValueError, FileNotFoundError) as e:
        raise _input_error(str(e)) from None
    print(f"== {case.test} {case.source} {case.domain}/{case.instance} (seed {seed}, "
          f"shots {shots}) ==\n")
    print(case.prompt)
    print("\n== ground truth ==")
    truth = {k: v for k, v in case.truth.items() if k != "problem" or args.pddl}
    print(json.dumps(truth, indent=1))
    print("\n== an answer that scores full marks ==")
    print(answer)
    return 0


def add_curriculum_parser(sub, config_arg) -> None:
    c = sub.add_parser("curriculum", help="the curriculum regime (PlanBench's test cases)")
    csub = c.add_subparsers(dest="curriculum_command", required=True)
    sh = csub.add_parser("shard", help="run one model x test case over the curriculum's domains")
    config_arg(sh)
    sh.add_argument("--spec", help="the config slice as JSON (the workflow passes this)")
    sh.add_argument("--model", required=True, help="a model's name in the config's models")
    sh.add_argument("--test", required=True,
                    help="the test case: t1, t2, t3, t4, t5, t6, t7, t8_1, t8_2, t8_3")
    sh.add_argument("--domain", required=True, action="append",
                    help="a suite domain, or planbench-<config> for a PlanBench entry "
                         "(repeatable)")
    sh.add_argument("--suite", default="results/suite", help="the prepared suite folder")
    sh.add_argument("--out", required=True, help="each domain's Parquet file ({domain})")
    sh.add_argument("--transcripts", required=True, help="folder for <instance>.jsonl ({domain})")
    sh.set_defaults(func=cmd_curriculum_shard)


def add_show_parser(planbench_sub, config_arg) -> None:
    """`planbench show`, added to the `planbench` group (which PlanBench replay shares)."""
    s = planbench_sub.add_parser("show", help="one generated test-case prompt with its truth")
    config_arg(s)
    s.add_argument("test", help="the test case: t1, t2, t3, t4, t5, t6, t7, t8_1, t8_2, t8_3")
    s.add_argument("case", help="DOMAIN/INSTANCE: a suite task (gripper/p03) or, for a "
                                "PlanBench config in curriculum.domains, its instance "
                                "(blocksworld/12)")
    s.add_argument("--root", help="a PlanBench root (DOMAIN is then its config name)")
    s.add_argument("--seed", type=int, help="default: the config's curriculum seed")
    s.add_argument("--shots", type=int, help="default: the config's curriculum shots")
    s.add_argument("--pddl", action="store_true", help="print the case's hidden problem too")
    s.set_defaults(func=cmd_planbench_show)
