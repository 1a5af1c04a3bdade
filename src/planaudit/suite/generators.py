"""Seeded instance generators for difficulty sweeps: tasks of growing size on a domain, each
then prepared and proven like a suite task (`suite.sweep`, `suite/sweep.py`).

A result read as "fine until N steps, then collapse" needs tasks at every N. Each generator
writes a random solvable problem of one size for a built-in domain's own domain file, from
a generator seeded by (seed, domain, size, index), so a sweep is the same on every machine:

- blocksworld, size = blocks: random initial towers and random goal towers (every
  arrangement of blocks is reachable from every other: always solvable);
- gripper, size = balls: the balls scattered over two or three rooms, each to a random room;
- logistics, size = packages (cities grow with them, `cities = 2 + size // 3`): each city an
  airport and a second location with a truck, one airplane, each package from a random
  location to another;
- any domain that declares a family (the curriculum's `family.yaml`, `curriculum/families`):
  its member of that size.

Truth is not claimed here: the suite proves each task (solvable or not, its optimal length)
with the same two methods as every other task.
"""

from __future__ import annotations

import random
from collections.abc import Callable

GENERATORS: dict[str, Callable[[int, random.Random], str]] = {}
UNITS: dict[str, str] = {}  # what a generator's size counts


def generator(name: str, unit: str):
    """Register a generator of `name`'s tasks by size (counted in `unit`, at least one)."""
    def register(fn):
        def sized(size: int, rng: random.Random) -> str:
            if size < 1:
                raise ValueError(f"{name}: a sweep needs at least one of its {unit}")
            return fn(size, rng)
        GENERATORS[name], UNITS[name] = sized, unit
        return fn
    return register


def _problem(name: str, domain: str, objects: list[str], init: list[str], goal: list[str],
             cost: bool = False) -> str:
    body = "\n    ".join(init + (["(= (total-cost) 0)"] if cost else []))
    metric = "\n  (:metric minimize (total-cost))" if cost else ""
    return (f"(define (problem {name})\n  (:domain {domain})\n  (:objects\n    "
            + "\n    ".join(objects) + f")\n  (:init\n    {body})\n  (:goal (and\n    "
            + "\n    ".join(goal) + f")){metric})\n")


def _towers(blocks: list[str], rng: random.Random) -> list[list[str]]:
    """The blocks in a random order cut into random towers (bottom first)."""
    order = blocks[:]
    rng.shuffle(order)
    towers: list[list[str]] = []
    for b in order:
        if towers and rng.random() < 0.6:
            rng.choice(towers).append(b)
        else:
            towers.append([b])
    return towers


def _facts(towers: list[list[str]], clear: bool) -> list[str]:
    out = []
    for t in towers:
        out.append(f"(ontable {t[0]})")
        out += [f"(on {t[i + 1]} {t[i]})" for i in range(len(t) - 1)]
        if clear:
            out.append(f"(clear {t[-1]})")
    return out


@generator("blocksworld", "blocks")
def blocksworld(size: int, rng: random.Random) -> str:
    blocks = [f"b{i}" for i in range(1, size + 1)]
    init = ["(handempty)", *_facts(_towers(blocks, rng), clear=True)]
    goal = _facts(_towers(blocks, rng), clear=False)
    return _problem(f"blocksworld-{size}", "blocksworld", [" ".join(blocks) + " - block"],
                    init, goal)


def _carry(things: list[str], places: list[str], rng: random.Random, init: list[str]
           ) -> list[str]:
    """Each thing at a random place (appended to `init`), to another one: the goal."""
    goal = []
    for thing in things:
        start = rng.choice(places)
        init.append(f"(at {thing} {start})")
        goal.append(f"(at {thing} {rng.choice([p for p in places if p != start])})")
    return goal


@generator("gripper", "balls")
def gripper(size: int, rng: random.Random) -> str:
    rooms = ["rooma", "roomb"] + (["roomc"] if size > 4 else [])
    balls = [f"ball{i}" for i in range(1, size + 1)]
    init = [f"(at-robby {rng.choice(rooms)})", "(free left)", "(free right)"]
    goal = _carry(balls, rooms, rng, init)
    return _problem(f"gripper-{size}", "gripper",
                    [" ".join(rooms) + " - room", " ".join(balls) + " - ball",
                     "left right - gripper"], init, goal, cost=True)


@generator("logistics", "packages")
def logistics(size: int, rng: random.Random) -> str:
    n = 2 + size // 3
    cities = [f"city{i}" for i in range(1, n + 1)]
    airports = [f"ap{i}" for i in range(1, n + 1)]
    places = [f"l{i}" for i in range(1, n + 1)]
    trucks = [f"t{i}" for i in range(1, n + 1)]
    packages = [f"p{i}" for i in range(1, size + 1)]
    init = []
    for c, ap, loc, t in zip(cities, airports, places, trucks, strict=True):
        init += [f"(in-city {ap} {c})", f"(in-city {loc} {c})", f"(at {t} {rng.choice([ap, loc])})"]
    init.append(f"(at a1 {rng.choice(airports)})")
    goal = _carry(packages, airports + places, rng, init)
    return _problem(f"logistics-{size}", "logistics",
                    [" ".join(cities) + " - city", " ".join(airports) + " - airport",
                     " ".join(places) + " - location", " ".join(trucks) + " - truck",
                     "a1 - airplane", " ".join(packages) + " - package"], init, goal, cost=True)


def rng_for(seed: int, domain: str, size: int, index: int) -> random.Random:
    return random.Random(f"{seed}:{domain}:{size}:{index}")
