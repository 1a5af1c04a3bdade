"""A PlanBench root: its configs (the natural-language encoding of a domain) and
the PDDL domain and instance files they point to, loaded through `formal/`.

A root is laid out as PlanBench lays it out: `configs/<name>.yaml` and
`instances/<instance_dir>/<instances_template>`. Configs are read once and
tasks parsed once per instance file (replay scores thousands of responses over
a few hundred instances).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path

import yaml

from planaudit.formal import PDDLError, Task, load_task
from planaudit.formal.load import domain_at

Atom = tuple[str, tuple[str, ...]]

# keys a config needs before anything renders with it
REQUIRED = ("domain_file", "instance_dir", "instances_template", "actions", "predicates",
            "encoded_objects")


class MaterialError(Exception):
    """PlanBench material that cannot be used; the message names the file and field."""


@dataclass(eq=False)
class Config:
    """One `configs/<name>.yaml` of a root."""

    name: str
    root: Path
    path: Path
    data: dict = field(repr=False)

    @property
    def instances_dir(self) -> Path:
        return self.root / "instances"

    @property
    def domain_path(self) -> Path:
        return self.instances_dir / self.data["domain_file"]

    def instance_path(self, instance: int | str, generalized: bool = False) -> Path:
        key = "generalized_instance_dir" if generalized else "instance_dir"
        folder = self.data.get(key)
        if folder is None:
            raise MaterialError(f"{self.path}: no '{key}'")
        return self.instances_dir / folder / self.data["instances_template"].format(instance)

    def instance_ids(self, generalized: bool = False) -> list[int]:
        """The ids of the instance files present, in numeric order."""
        folder = self.instances_dir / self.data["generalized_instance_dir" if generalized
                                               else "instance_dir"]
        pattern = re.compile(re.escape(self.data["instances_template"]).replace(r"\{\}", r"(\d+)"))
        if not folder.is_dir():
            return []
        ids = [int(m.group(1)) for p in folder.iterdir() if (m := pattern.fullmatch(p.name))]
        return sorted(ids)

    @cached_property
    def actions(self) -> dict[str, str]:
        """Action name -> phrase template, in the domain file's order (what the readers use)."""
        templates = {k.lower(): v for k, v in self.data["actions"].items()}
        order = list(domain_at(self.domain_path).actions)
        missing = [a for a in order if a not in templates]
        if missing:
            raise MaterialError(f"{self.path}: field 'actions' has no template for {', '.join(missing)}")
        return {a: templates[a] for a in order}

    @cached_property
    def predicates(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.data["predicates"].items()}

    @cached_property
    def objects(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self.data["encoded_objects"].items()}

    def object_text(self, obj: str) -> str:
        """An object's name in the config's language (blocks by letter, logistics-style
        names by their letter prefix and digits, obfuscated 'o1' -> 'object_1')."""
        enc = self.objects
        if obj in enc:
            return enc[obj]
        if "obfuscated" in self.name or "obfuscated" in str(self.data.get("domain_name", "")):
            return obj.replace("o", "object_")
        for prefix in sorted(enc, key=len, reverse=True):
            if obj.startswith(prefix) and "{}" in enc[prefix]:
                digits = re.findall(r"\d", obj[len(prefix):])
                return enc[prefix].format(*digits) if enc[prefix].count("{}") > 1 else \
                    enc[prefix].format("".join(digits) if enc[prefix].count("{}") == 1 else "")
        raise MaterialError(f"{self.path}: field 'encoded_objects' has no name for object '{obj}'")

    def fact_text(self, atom: Atom) -> str | None:
        """A fact in the config's words; None for a predicate the config leaves silent
        (an empty template, as logistics' type predicates)."""
        pred, args = atom
        template = self.predicates.get(pred)
        if template is None:
            raise MaterialError(f"{self.path}: field 'predicates' has no template for '{pred}'")
        if not template:
            return None
        return template.format(*(self.object_text(a) for a in args))

    def action_text(self, action: str, args: tuple[str, ...]) -> str:
        template = self.actions.get(action)
        if template is None:
            raise MaterialError(f"{self.path}: field 'actions' has no template for '{action}'")
        return template.format(*(self.object_text(a) for a in args))

    def intro(self, kind: str = "domain_intro") -> str:
        text = self.data.get(kind)
        if text is None:
            raise MaterialError(f"{self.path}: no '{kind}'")
        return text

    def task(self, instance: int | str, generalized: bool = False) -> Task:
        """The instance's task, parsed once per file."""
        path = self.instance_path(instance, generalized)
        if not path.is_file():
            raise MaterialError(f"{self.path}: instance {instance}: no file {path}")
        return _task(str(self.domain_path), str(path))


@lru_cache(maxsize=4096)
def _task(domain: str, problem: str) -> Task:
    return load_task(domain, problem)


@lru_cache(maxsize=256)
def _config(root: str, name: str) -> Config:
    path = Path(root) / "configs" / f"{name}.yaml"
    if not path.is_file():
        raise MaterialError(f"{path}: no such config")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise MaterialError(f"{path}: not YAML: {e}") from None
    if not isinstance(data, dict):
        raise MaterialError(f"{path}: not a mapping")
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise MaterialError(f"{path}: missing field(s) {', '.join(missing)}")
    return Config(name, Path(root), path, data)


def load_config(root: Path | str, name: str) -> Config:
    """A root's config by name, read once; MaterialError names what is missing."""
    return _config(str(Path(root).resolve()), name)


def config_names(root: Path | str) -> list[str]:
    return sorted(p.stem for p in (Path(root) / "configs").glob("*.yaml"))


def check_config(root: Path | str, name: str) -> str | None:
    """Why a config cannot load (None if it loads): its domain file and first instance
    parse through `formal/`, and its templates cover what they render."""
    try:
        cfg = load_config(root, name)
        if not cfg.domain_path.is_file():
            return f"no domain file {cfg.domain_path}"
        ids = cfg.instance_ids()
        if not ids:
            return f"no instance files under {cfg.instances_dir / cfg.data['instance_dir']}"
        task = cfg.task(ids[0])
        _ = cfg.actions
        for atom in task.problem.init_atoms:
            cfg.fact_text(atom)
    except (MaterialError, PDDLError, OSError, KeyError, IndexError) as e:
        return str(e)
    return None
