"""Plan settings: a workflow written into an online agent's system prompt as numbered
steps, with the phase order it expects. They live in `config/plan_settings.yaml` (not in
code), so a user adds one by adding a block there and naming it under
`online.plan_settings`."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import yaml

from planaudit.compliance.phases import LABELS, LEGACY, LETTER, order_names, order_text

DEFAULT_FILE = Path("config/plan_settings.yaml")  # relative to the run folder, like the config
DEFAULT_REMIND_EVERY = 5


class SettingError(ValueError):
    """A plan setting that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class PlanSetting:
    name: str
    steps: tuple[str, ...] = ()
    order: str = ""  # expected phase names joined by commas; "" = no order (labels, graphs)
    remind_every: int | None = None  # every k-th tool call the workflow is put before the observation

    @property
    def phases(self) -> list[str]:
        return order_names(self.order)

    @property
    def call_order(self) -> str:
        """The order as a call's metadata carries it: the one-letter labels it had before
        the rename, so that calls under a setting keep their cache keys (a reference agent
        reads it to follow the workflow)."""
        return "".join(LETTER[p] for p in self.phases)

    def workflow(self) -> str:
        """The numbered steps as the system prompt carries them ('' for no workflow)."""
        if not self.steps:
            return ""
        return ("Follow this workflow:\n"
                + "\n".join(f"{i}. {s}" for i, s in enumerate(self.steps, 1)))

    def to_json(self) -> dict:
        out = {"name": self.name, "steps": list(self.steps), "order": self.order}
        if self.remind_every:
            out["remind_every"] = self.remind_every
        return out

    @classmethod
    def from_json(cls, data: dict | None) -> PlanSetting:
        if not data:
            return NONE
        return cls(data["name"], tuple(data.get("steps", ())),
                   order_text(order_names(data.get("order", ""))), data.get("remind_every"))


NONE = PlanSetting("none")


def settings_file(config: dict) -> Path:
    return Path(config.get("online", {}).get("plan_settings_file", DEFAULT_FILE))


def load_settings(path: Path = DEFAULT_FILE) -> dict[str, PlanSetting]:
    """Every setting of the file, checked: steps a list of sentences, order a list of phase
    names (or one string of them separated by commas), each at most once, remind_every a
    positive integer. Parsed once per version of the file: the workflow asks for it in
    every online job's params, some 30 ms of YAML each time, which made `snakemake -n` of
    100 models spend most of its time here."""
    try:
        stat = Path(path).stat()
    except FileNotFoundError:
        raise SettingError(f"{path}: no such plan settings file") from None
    return dict(_load_settings(str(path), str(Path(path).resolve()), stat.st_mtime_ns,
                               stat.st_size))


@functools.lru_cache(maxsize=16)
def _load_settings(path: str, where: str, mtime_ns: int, size: int) -> dict[str, PlanSetting]:
    """`load_settings` of one version of the file (`where` it is, its modification time and
    size; `path` as given, for the messages)."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except FileNotFoundError:
        raise SettingError(f"{path}: no such plan settings file") from None
    except yaml.YAMLError as e:
        raise SettingError(f"{path}: not YAML: {e}") from None
    if not isinstance(data, dict):
        raise SettingError(f"{path}: a mapping of setting name -> {{steps, order}}")
    out = {}
    for name, spec in data.items():
        where = f"{path}: {name}"
        if not isinstance(spec, dict):
            raise SettingError(f"{where}: a mapping with steps and order")
        unknown = set(spec) - {"steps", "order", "remind_every"}
        if unknown:
            raise SettingError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} "
                               "(known: steps, order, remind_every)")
        steps = spec.get("steps") or []
        if not isinstance(steps, list) or not all(isinstance(s, str) and s.strip() for s in steps):
            raise SettingError(f"{where}.steps: a list of sentences")
        order = _order(spec.get("order"), f"{where}.order")
        if order and not steps:
            raise SettingError(f"{where}: an order needs the workflow's steps")
        remind = spec.get("remind_every")
        if remind is not None and (not isinstance(remind, int) or remind < 1):
            raise SettingError(f"{where}.remind_every: a positive integer")
        out[str(name)] = PlanSetting(str(name), tuple(s.strip() for s in steps), order, remind)
    return out


def _order(raw, where: str) -> str:
    """A settings file's order as names joined by commas; a one-letter order of before the
    rename is refused with its translation, since the letters read as the paper's."""
    if raw is None or raw == "" or raw == []:
        return ""
    if isinstance(raw, str) and "," not in raw and raw.strip() and all(c in LEGACY for c in raw.strip()):
        names = [LEGACY[c] for c in raw.strip()]
        raise SettingError(f"{where}: {raw!r}: the one-letter phase labels were renamed; write "
                           f"[{', '.join(names)}]")
    if not isinstance(raw, (str, list)) or not all(isinstance(p, str) for p in raw):
        raise SettingError(f"{where}: a list of phase names ({', '.join(LABELS)})")
    names = order_names(raw)
    bad = [p for p in names if p not in LABELS]
    if bad or len(set(names)) != len(names):
        raise SettingError(f"{where}: {raw!r}: phase names of {', '.join(LABELS)}, each at most "
                           "once" + (f" ({bad[0]!r} is none)" if bad else ""))
    return order_text(names)


def resolve(config: dict, name: str) -> PlanSetting:
    """The setting `name` of the config's settings file, with the config's reminder period
    (online.remind_every) applied to a setting that reminds."""
    if name == "none":
        return NONE
    section = config.get("online", {})
    inline = (section.get("setting_defs") or {}).get(name)
    if inline is not None:  # the workflow passes the definition itself (a shard's spec)
        return PlanSetting.from_json({**inline, "name": name})
    path = settings_file(config)
    known = load_settings(path)
    if name not in known:
        raise SettingError(f"{path}: no plan setting named {name!r} "
                           f"(have: {', '.join(known)})")
    s = known[name]
    every = config.get("online", {}).get("remind_every")
    if s.remind_every and every:
        s = PlanSetting(s.name, s.steps, s.order, int(every))
    return s
