"""Plan settings: a workflow written into an online agent's system prompt as numbered
steps, with the phase order it expects. They live in `config/plan_settings.yaml` (not in
code), so a user adds one by adding a block there and naming it under
`online.plan_settings`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from planaudit.compliance.phases import LABELS

DEFAULT_FILE = Path("config/plan_settings.yaml")  # relative to the run folder, like the config
DEFAULT_REMIND_EVERY = 5


class SettingError(ValueError):
    """A plan setting that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class PlanSetting:
    name: str
    steps: tuple[str, ...] = ()
    order: str = ""  # expected phase letters; "" = no order (labels and graphs only)
    remind_every: int | None = None  # every k-th tool call the workflow is put before the observation

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
        return cls(data["name"], tuple(data.get("steps", ())), data.get("order", ""),
                   data.get("remind_every"))


NONE = PlanSetting("none")


def settings_file(config: dict) -> Path:
    return Path(config.get("online", {}).get("plan_settings_file", DEFAULT_FILE))


def load_settings(path: Path = DEFAULT_FILE) -> dict[str, PlanSetting]:
    """Every setting of the file, checked: steps a list of sentences, order letters of the
    phase labels, each at most once, remind_every a positive integer."""
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
        order = str(spec.get("order") or "")
        bad = [c for c in order if c not in LABELS]
        if bad or len(set(order)) != len(order):
            raise SettingError(f"{where}.order: {order!r}: letters of {''.join(LABELS)}, "
                               "each at most once")
        if order and not steps:
            raise SettingError(f"{where}: an order needs the workflow's steps")
        remind = spec.get("remind_every")
        if remind is not None and (not isinstance(remind, int) or remind < 1):
            raise SettingError(f"{where}.remind_every: a positive integer")
        out[str(name)] = PlanSetting(str(name), tuple(s.strip() for s in steps), order, remind)
    return out


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
