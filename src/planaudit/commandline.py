"""What every subcommand shares, below `cli.py` so that a package contributing its own
subcommands never imports the command line's face: the exit codes, the input error the face
prints, the `--config` option and reading it as Snakemake would. It imports nothing but
the config reader, so the semantics' own commands (`formal/commands.py`) can use it."""

from __future__ import annotations

EXIT_OK, EXIT_NEGATIVE, EXIT_INPUT = 0, 1, 2


class InputError(Exception):
    """Bad input outside PDDL (a records file, a config): the message names it."""


def config_arg(p) -> None:
    p.add_argument("--config", "--configfile", action="append", metavar="FILE",
                   help="laid over config/config.yaml as Snakemake's --configfile is "
                        "(repeatable; checked against workflow/schemas/config.schema.yaml)")


def read_config(args) -> dict:
    """The config as Snakemake would run it: config/config.yaml, then each --config."""
    from planaudit.config import ConfigError, load_config

    try:
        return load_config(*(args.config or []))
    except ConfigError as e:
        raise InputError(str(e)) from None
