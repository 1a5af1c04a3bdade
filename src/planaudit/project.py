"""`planaudit init DIR`: a new run folder, so that the workflow runs without a checkout.

The folder holds what a user owns and edits (the experiment's config, the plan settings,
the domains the config's `suite.root: domains` names, the Snakemake profiles) and a short
Snakefile that uses the installed package's workflow as a Snakemake module. That Snakefile
names no path of this machine: it finds the workflow through `planaudit.paths` when
Snakemake reads it, so the folder follows the planaudit installed where `snakemake` runs.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from planaudit import __version__
from planaudit.commandline import EXIT_OK, InputError
from planaudit.paths import DEFAULT_CONFIG, DOMAINS, PLAN_SETTINGS, PROFILES

SNAKEFILE = f'''\
# A planaudit run folder, written by `planaudit init` (planaudit {__version__}).
# The workflow is the installed planaudit package's, used as a Snakemake module: its
# Snakefile is found through planaudit.paths when Snakemake reads this file, so this
# folder runs the planaudit installed where `snakemake` runs. Yours to edit here:
#   config/config.yaml          the experiment (the default: reference models, no keys)
#   config/plan_settings.yaml   the workflows prescribed to online agents
#   domains/                    the built-in domains (suite.root); add your own beside them
#   profiles/local, profiles/slurm   Snakemake profiles
# Results go to results/, the reply cache to .cache/planaudit (config: results, cache).
#
#   snakemake --cores 2                                the experiment of config/config.yaml
#   snakemake --cores 2 --configfile config/my.yaml    another one, laid over it
#   snakemake --profile profiles/slurm                 on a SLURM cluster
from planaudit.paths import SNAKEFILE as PLANAUDIT_WORKFLOW


configfile: "config/config.yaml"


module planaudit:
    snakefile:
        str(PLANAUDIT_WORKFLOW)
    config:
        config


use rule * from planaudit
'''

# The packaged profiles, under the names they take in a run folder. The local one is not
# `profiles/default`: Snakemake loads a folder's profiles/default on every run (its
# workflow profile), on top of `--profile profiles/slurm` too.
PROFILE_NAMES = {"default": "local", "slurm": "slurm"}


def _write(dst: Path, text: str, written: list[Path]) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(text)
    written.append(dst)


def _copy_file(src: Path, dst: Path, written: list[Path]) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    written.append(dst)


def _copy_tree(src: Path, dst: Path, written: list[Path]) -> None:
    for f in sorted(src.rglob("*")):
        if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc":
            _copy_file(f, dst / f.relative_to(src), written)


def init(folder: Path, force: bool = False) -> list[Path]:
    """Write a run folder; the files written, in order. A folder that exists and is not
    empty is refused (InputError) unless `force`, which writes planaudit's files into it
    (replacing those of the same names) and removes nothing."""
    if folder.exists() and not folder.is_dir():
        raise InputError(f"{folder}: exists and is not a folder")
    if folder.is_dir() and any(folder.iterdir()) and not force:
        raise InputError(f"{folder}: exists and is not empty (--force writes planaudit's files "
                         "into it, replacing those of the same names and removing nothing)")
    written: list[Path] = []
    _write(folder / "Snakefile", SNAKEFILE, written)
    _copy_file(DEFAULT_CONFIG, folder / "config" / "config.yaml", written)
    _copy_file(PLAN_SETTINGS, folder / "config" / "plan_settings.yaml", written)
    _copy_tree(DOMAINS, folder / "domains", written)
    for packaged, name in PROFILE_NAMES.items():
        src = PROFILES / packaged / "config.yaml"
        # the comments name the repository's path; here the profile is profiles/<name>
        text = src.read_text().replace(f"workflow/profiles/{packaged}", f"profiles/{name}")
        _write(folder / "profiles" / name / "config.yaml", text, written)
    return written


def cmd_init(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    written = init(folder, args.force)
    domains = sorted({p.relative_to(folder).parts[1] for p in written
                      if p.relative_to(folder).parts[0] == "domains"})
    for p in written:
        if p.relative_to(folder).parts[0] != "domains":
            print(f"wrote {p}")
    print(f"wrote {folder / 'domains'}/ ({len(domains)} built-in domains: {', '.join(domains)})")
    print(f"next: cd {folder} && snakemake --cores 2    # the default experiment (reference models, "
          "no keys)")
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("init", help="write a run folder: a Snakefile using the installed workflow, "
                                    "the default config, the built-in domains, the profiles")
    p.add_argument("folder", metavar="DIR", help="the folder to write (made if missing; refused if "
                                                 "it exists and is not empty)")
    p.add_argument("--force", action="store_true",
                   help="write into a folder that is not empty: planaudit's files replace those of "
                        "the same names, nothing else is removed")
    p.set_defaults(func=cmd_init)
