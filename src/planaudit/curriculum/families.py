"""Families of instances for t5 (generalisation): member n is larger than member n-1,
and every member's optimal plan follows one pattern, `head + unit * n + tail` in
action names.

Each built-in domain has one small generator: it writes member n's PDDL problem
(object names shuffled by the seed, so two seeds give different members) and the
plan the pattern predicts. The pattern plan is ground truth only after `formal/`
has validated it on the member (`member()` does, every time); that it is optimal
is checked by breadth-first search in the tests for the small members.

- blocksworld: n+1 blocks on the table; goal one tower, block i on block i+1.
  unit (pick-up, stack).
- gripper: 2n balls in room A, to room B, two grippers. head (pick, pick, move,
  drop, drop); unit (move, pick, pick, move, drop, drop), n-1 times.
- logistics: one truck, package i from location i to location i+1 of one city.
  unit (load-truck, drive-truck, unload-truck).
- hospital: n recovered patients in the only beds, n waiting patients.
  unit (discharge, clean, admit).
- loadbalancing: n buckets, n switched-off servers of capacity 1.
  unit (power-on, start-service, assign-bucket).

A domain of one's own declares its family beside its domain.pddl, in `family.yaml`
(read by `declared`), so that t5 runs on it without editing planaudit: the member's
objects, initial facts, goal facts and pattern plan as PDDL lines, a line repeated
over a range with a trailing `for i in 1..n` (bounds: a number, `n`, `n+1`, `n-1`),
`{i}`, `{n}`, `{i+1}` put in as whole numbers. A domain with `total-cost` gets its
`(= (total-cost) 0)` and metric, as the built-in members do. Its members are the same
for every seed (an obfuscated domain's names still change with it). The pattern plan
is validated on every member, as a built-in family's is.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

from planaudit.curriculum.world import CurriculumError
from planaudit.formal.ground import Task
from planaudit.formal.sexpr import PDDLError
from planaudit.formal.syntax import Domain, parse_problem
from planaudit.formal.validate import validate


@dataclass(frozen=True)
class Member:
    size: int
    problem_pddl: str
    plan: list[str]


@dataclass(frozen=True)
class Family:
    head: tuple[str, ...]
    unit: tuple[str, ...]
    tail: tuple[str, ...]
    start: int  # the head already does the first unit's work: unit repeats size - start times

    def names(self, size: int) -> list[str]:
        return [*self.head, *(self.unit * (size - self.start)), *self.tail]


def _names(prefix: str, n: int, rng: random.Random) -> list[str]:
    """n distinct object names, their numbering shuffled by the seed."""
    nums = list(range(1, n + 1))
    rng.shuffle(nums)
    return [f"{prefix}{k}" for k in nums]


COST = "(= (total-cost) 0)"
METRIC = "(:metric minimize (total-cost))"


def _problem(name: str, domain: str, objects: str, init: list[str], goal: list[str],
             metric: bool) -> str:
    return (f"(define (problem {name}) (:domain {domain})\n  (:objects {objects})\n"
            f"  (:init {' '.join(init + ([COST] if metric else []))})\n"
            f"  (:goal (and {' '.join(goal)}))" + (f"\n  {METRIC}" if metric else "") + ")\n")


def blocksworld(n: int, rng: random.Random) -> tuple[str, list[str]]:
    b = _names("b", n + 1, rng)
    init = ["(handempty)"] + [f"(ontable {x}) (clear {x})" for x in b]
    goal = [f"(on {b[i]} {b[i + 1]})" for i in range(n)]
    plan = []
    for i in range(n - 1, -1, -1):
        plan += [f"(pick-up {b[i]})", f"(stack {b[i]} {b[i + 1]})"]
    return _problem(f"tower-{n}", "blocksworld", " ".join(b) + " - block", init, goal,
                    False), plan


def gripper(n: int, rng: random.Random) -> tuple[str, list[str]]:
    balls = _names("ball", 2 * n, rng)
    a, b = "rooma", "roomb"
    init = [f"(at-robby {a})", "(free left)", "(free right)"] + [f"(at {x} {a})" for x in balls]
    goal = [f"(at {x} {b})" for x in balls]
    plan = []
    for k in range(n):
        x, y = balls[2 * k], balls[2 * k + 1]
        if k:
            plan.append(f"(move {b} {a})")
        plan += [f"(pick {x} {a} left)", f"(pick {y} {a} right)", f"(move {a} {b})",
                 f"(drop {x} {b} left)", f"(drop {y} {b} right)"]
    objects = f"{a} {b} - room {' '.join(balls)} - ball left right - gripper"
    return _problem(f"carry-{n}", "gripper", objects, init, goal, True), plan


def logistics(n: int, rng: random.Random) -> tuple[str, list[str]]:
    locs = _names("loc", n + 1, rng)
    pkgs = _names("pkg", n, rng)
    init = ["(at truck1 " + locs[0] + ")"] + [f"(in-city {x} city1)" for x in locs]
    init += [f"(at {p} {locs[i]})" for i, p in enumerate(pkgs)]
    goal = [f"(at {p} {locs[i + 1]})" for i, p in enumerate(pkgs)]
    plan = []
    for i, p in enumerate(pkgs):
        plan += [f"(load-truck {p} truck1 {locs[i]})",
                 f"(drive-truck truck1 {locs[i]} {locs[i + 1]} city1)",
                 f"(unload-truck {p} truck1 {locs[i + 1]})"]
    objects = (f"city1 - city {' '.join(locs)} - location truck1 - truck "
               f"{' '.join(pkgs)} - package")
    return _problem(f"relay-{n}", "logistics", objects, init, goal, True), plan


def hospital(n: int, rng: random.Random) -> tuple[str, list[str]]:
    old, new, beds = _names("pold", n, rng), _names("pnew", n, rng), _names("bed", n, rng)
    init = []
    for i in range(n):
        init += [f"(in-ward {beds[i]} medicine)", f"(in-bed {old[i]} {beds[i]})",
                 f"(admitted {old[i]})", f"(recovered {old[i]})", f"(waiting {new[i]})",
                 f"(suits medicine {new[i]})", f"(suits medicine {old[i]})"]
    goal = [f"(discharged {p})" for p in old] + [f"(admitted {p})" for p in new]
    plan = []
    for i in range(n):
        plan += [f"(discharge {old[i]} {beds[i]})", f"(clean {beds[i]})",
                 f"(admit {new[i]} {beds[i]} medicine)"]
    objects = (f"medicine - ward {' '.join(beds)} - bed {' '.join(old)} {' '.join(new)} "
               "- patient")
    return _problem(f"turnover-{n}", "hospital", objects, init, goal, True), plan


def loadbalancing(n: int, rng: random.Random) -> tuple[str, list[str]]:
    servers, buckets = _names("srv", n, rng), _names("bkt", n, rng)
    init = []
    for s in servers:
        init += [f"(in-region {s} eu)", f"(supports {s} web)", f"(= (capacity {s}) 1)",
                 f"(= (load {s}) 0)", f"(= (services {s}) 0)", f"(= (users web {s}) 0)"]
    init += [f"(allowed {b} eu) (needs {b} web)" for b in buckets]
    goal = [f"(served {b})" for b in buckets]
    plan = []
    for s, b in zip(servers, buckets, strict=True):
        plan += [f"(power-on {s})", f"(start-service web {s})",
                 f"(assign-bucket {b} {s} eu web)"]
    objects = (f"eu - region web - service {' '.join(servers)} - server "
               f"{' '.join(buckets)} - bucket")
    return _problem(f"spread-{n}", "loadbalancing", objects, init, goal, True), plan


GENERATORS = {"blocksworld": blocksworld, "gripper": gripper, "logistics": logistics,
              "hospital": hospital, "loadbalancing": loadbalancing}
FAMILIES = {
    "blocksworld": Family((), ("pick-up", "stack"), (), 0),
    "gripper": Family(("pick", "pick", "move", "drop", "drop"),
                      ("move", "pick", "pick", "move", "drop", "drop"), (), 1),
    "logistics": Family((), ("load-truck", "drive-truck", "unload-truck"), (), 0),
    "hospital": Family((), ("discharge", "clean", "admit"), (), 0),
    "loadbalancing": Family((), ("power-on", "start-service", "assign-bucket"), (), 0),
}


FAMILY_FILE = "family.yaml"  # beside a domain's domain.pddl: its t5 family, declared
_LOOP = re.compile(r"^(?P<body>.*?)\s+for\s+(?P<var>[a-z])\s+in\s+(?P<lo>\S+)\.\.(?P<hi>\S+)\s*$")
_TERM = re.compile(r"^(?:(?P<num>\d+)|(?P<var>[a-z])(?:(?P<sign>[+-])(?P<k>\d+))?)$")
_SLOT = re.compile(r"\{([^{}]*)\}")
SECTIONS = ("objects", "init", "goal", "plan")


@dataclass(frozen=True)
class Declared:
    """A family declared in a domain folder's family.yaml: PDDL lines per section."""

    path: Path
    lines: dict[str, tuple[str, ...]]
    unit: tuple[str, ...]

    def expand(self, section: str, n: int) -> list[str]:
        out: list[str] = []
        for k, line in enumerate(self.lines[section]):
            out += _expand(line, n, f"{self.path}: {section}[{k}]")
        return out


def _value(term: str, env: dict[str, int], where: str) -> int:
    m = _TERM.match(term.replace(" ", ""))
    if not m or (m["var"] and m["var"] not in env):
        raise CurriculumError(f"{where}: '{term}' is not a number, {' or '.join(env)}, or "
                              "one of them plus or minus a number")
    if m["num"]:
        return int(m["num"])
    k = int(m["k"] or 0)
    return env[m["var"]] + (k if m["sign"] != "-" else -k)


def _fill(text: str, env: dict[str, int], where: str) -> str:
    return _SLOT.sub(lambda m: str(_value(m[1], env, where)), text)


def _expand(line: str, n: int, where: str) -> list[str]:
    """One declared line for member n: itself, or once per value of its range."""
    loop = _LOOP.match(line)
    if not loop:
        return [_fill(line, {"n": n}, where)]
    env = {"n": n}
    lo, hi = _value(loop["lo"], env, where), _value(loop["hi"], env, where)
    return [_fill(loop["body"], {"n": n, loop["var"]: v}, where) for v in range(lo, hi + 1)]


def declared(folder: Path | None) -> Declared | None:
    """The family declared in `folder`/family.yaml (None without one); a malformed file is
    an error naming it and the field."""
    if folder is None or not (Path(folder) / FAMILY_FILE).is_file():
        return None
    import yaml

    path = Path(folder) / FAMILY_FILE
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise CurriculumError(f"{path}: not YAML: {e}") from None
    if not isinstance(data, dict):
        raise CurriculumError(f"{path}: needs the sections {', '.join(SECTIONS)}")
    unknown = sorted(set(data) - {*SECTIONS, "unit"})
    if unknown:
        raise CurriculumError(f"{path}: unknown field(s) {', '.join(unknown)} (have: "
                              f"{', '.join(SECTIONS)}, unit)")
    lines = {}
    for section in SECTIONS:
        got = data.get(section)
        if section != "init" and not got:
            raise CurriculumError(f"{path}: {section}: missing (a list of PDDL lines)")
        got = got or []
        if not isinstance(got, list) or not all(isinstance(x, str) for x in got):
            raise CurriculumError(f"{path}: {section}: must be a list of PDDL lines (text)")
        lines[section] = tuple(got)
    unit = data.get("unit") or []
    if not isinstance(unit, list) or not all(isinstance(x, str) for x in unit):
        raise CurriculumError(f"{path}: unit: must be a list of action names")
    found = Declared(path, lines, tuple(unit))
    for section in SECTIONS:  # every slot and range reads for a first member
        found.expand(section, 1)
    return found


def has_family(domain_name: str, folder: Path | None) -> bool:
    """Whether t5 can draw members for the domain: declared beside it, or built in."""
    return declared(folder) is not None or domain_name in GENERATORS


def unit_of(domain_name: str, folder: Path | None) -> list[str]:
    """The actions one more member adds (the truth records them; empty if undeclared)."""
    found = declared(folder)
    if found is not None:
        return list(found.unit)
    return list(FAMILIES[domain_name].unit)


def _declared_member(found: Declared, domain: Domain, n: int) -> tuple[str, list[str]]:
    from planaudit.formal.ground import COST_FUNCTION

    steps = [f"({s.strip()})" for line in found.expand("plan", n)
             for s in re.findall(r"\(([^()]*)\)", line)]
    text = _problem(f"{domain.name}-family-{n}", domain.name, " ".join(found.expand("objects", n)),
                    found.expand("init", n), found.expand("goal", n),
                    COST_FUNCTION in domain.functions)
    return text, steps


def member(domain_name: str, domain: Domain, size: int, seed: int,
           folder: Path | None = None) -> Member:
    """Member `size` (1, 2, ...) of the domain's family (declared in `folder`/family.yaml,
    or built in), its pattern plan validated."""
    found = declared(folder)
    if found is None and domain_name not in GENERATORS:
        where = f"{folder}/{FAMILY_FILE}" if folder else f"<domain folder>/{FAMILY_FILE}"
        raise CurriculumError(f"t5: no instance family for domain '{domain_name}' (built in: "
                              f"{', '.join(GENERATORS)}); declare one in {where} (docs: "
                              "the curriculum, explained)")
    if found is not None:
        text, plan = _declared_member(found, domain, size)
        origin = str(found.path)
    else:
        rng = random.Random(f"{seed}:{domain_name}:{size}")
        text, plan = GENERATORS[domain_name](size, rng)
        origin = f"<{domain_name} family member {size}>"
    try:
        problem = parse_problem(text, domain, origin)
    except PDDLError as e:
        raise CurriculumError(f"{origin}: member {size} is not a problem of the domain: "
                              f"{e}") from None
    from planaudit.formal.plan import parse_plan

    verdict = validate(Task(domain, problem), parse_plan("\n".join(plan)))
    if not verdict.valid:
        raise CurriculumError(f"t5: the {domain_name} family's plan for member {size} is not "
                              f"valid ({origin}): "
                              f"{verdict.failure.detail if verdict.failure else ''}")
    return Member(size, text, plan)


def sweep_problem(domain_name: str, folder: Path, size: int, seed: int) -> str:
    """Member `size` of the family of the domain in `folder` as a problem file: a difficulty
    sweep's task on a domain without a generator of its own (`suite/sweep.py`)."""
    from planaudit.formal.load import domain_at

    return member(domain_name, domain_at(folder / "domain.pddl"), size, seed, folder).problem_pddl
