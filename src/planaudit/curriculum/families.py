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
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from planaudit.curriculum.world import CurriculumError
from planaudit.formal.ground import Task
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


def member(domain_name: str, domain: Domain, size: int, seed: int) -> Member:
    """Member `size` (1, 2, ...) of the domain's family, its pattern plan validated."""
    if domain_name not in GENERATORS:
        raise CurriculumError(f"t5: no instance family for domain '{domain_name}' (have: "
                              f"{', '.join(GENERATORS)}); add one to curriculum/families.py")
    rng = random.Random(f"{seed}:{domain_name}:{size}")
    text, plan = GENERATORS[domain_name](size, rng)
    problem = parse_problem(text, domain, f"<{domain_name} family member {size}>")
    from planaudit.formal.plan import parse_plan

    verdict = validate(Task(domain, problem), parse_plan("\n".join(plan)))
    if not verdict.valid:
        raise CurriculumError(f"t5: the {domain_name} family's plan for member {size} is not "
                              f"valid: {verdict.failure.detail if verdict.failure else ''}")
    return Member(size, text, plan)
