"""Unsolvability certificates: made by search, checked without it.

Two kinds, the cheaper tried first:

- `relaxed-reachability`: a set R of atoms that holds the initial state and is
  closed under every action with deletes ignored (an action whose positive
  preconditions lie in R adds only atoms of R), yet the goal cannot hold within
  R. A negative condition is taken as satisfiable unless its atom is initially
  true and no action ever deletes it; numeric conditions are always taken as
  satisfiable. So the argument over-approximates what any plan can reach.
- `reachable-states`: a set S of states that holds the initial state, is closed
  under every applicable action, and holds no goal state.

The checker grounds every action over every type-correct binding of objects;
it shares the semantics (`task.py`) with the search but not its grounding
shortcuts or its search. Certificates carry the SHA-256 of the files they speak
about, so one cannot be checked against another task.
"""

from __future__ import annotations

import hashlib
import json
from itertools import product
from pathlib import Path

from planaudit.formal.ground import Task
from planaudit.formal.syntax import parse
from planaudit.formal.task import Operator, State, atom_indices

RELAXED = "relaxed-reachability"
STATES = "reachable-states"


def dumps(cert: dict) -> str:
    """A certificate as JSON: the header and tables readable, each state one short line."""
    head = {k: v for k, v in cert.items() if k != "states"}
    text = json.dumps(head, indent=1)
    if "states" not in cert:
        return text + "\n"
    rows = ",\n".join(json.dumps(r, separators=(",", ":")) for r in cert["states"])
    return text[:-2] + ',\n "states": [\n' + rows + "\n ]\n}\n"


def sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def permanent_atoms(task: Task, ops) -> int:
    """Atoms true initially that no operator in `ops` ever deletes."""
    deletable = 0
    for op in ops:
        deletable |= op.delete
        for eff in op.conditional:
            deletable |= eff.delete
    return task.init[0] & ~deletable


def relaxed_applicable(op: Operator, reached: int, permanent: int) -> bool:
    if reached & op.pre_pos != op.pre_pos or op.pre_neg & permanent:
        return False
    return op.pre_rest is None or relaxed_possible(op.pre_rest, reached, permanent)


def relaxed_closure(task: Task) -> int:
    """The atoms reachable from the initial state when deletes are ignored."""
    ops = task.all_operators()
    permanent = permanent_atoms(task, every_operator(task))
    reached = task.init[0]
    changed = True
    while changed:
        changed = False
        for op in ops:
            if relaxed_applicable(op, reached, permanent):
                new = reached | op.add
                for eff in op.conditional:
                    new |= eff.add
                if new != reached:
                    reached, changed = new, True
    return reached


def relaxed_possible(f: tuple, reached: int, permanent: int) -> bool:
    """Whether `f` might hold in a state whose atoms lie within `reached` and
    include every `permanent` atom."""
    tag = f[0]
    if tag == "atom":
        return bool(reached >> f[1] & 1)
    if tag == "not" and f[1][0] == "atom":
        return not permanent >> f[1][1] & 1
    if tag == "and":
        return all(relaxed_possible(g, reached, permanent) for g in f[1])
    if tag == "or":
        return any(relaxed_possible(g, reached, permanent) for g in f[1])
    return tag != "false"  # other negations and numeric conditions: assumed satisfiable


def _atom_names(task: Task, bits: int) -> list[str]:
    return sorted(task.facts((bits, ()))) if bits else []


def make(task: Task, domain_path, problem_path, closed: set | None) -> dict | None:
    """A certificate of unsolvability for `task`, or None if neither kind is at hand."""
    header = {"domain_sha256": sha256(domain_path), "problem_sha256": sha256(problem_path)}
    reached = relaxed_closure(task)
    if not relaxed_possible(task.goal, reached, permanent_atoms(task, every_operator(task))):
        return {"kind": RELAXED, **header, "atoms": _atom_names(task, reached)}
    if closed is not None:
        return {"kind": STATES, **header, **_state_table(task, closed)}
    return None


def _state_table(task: Task, closed: set) -> dict:
    """States written compactly: an atom table and a fluent table, then each state
    as [indices of its true atoms, values of the fluents (null: undefined)]."""
    used = 0
    n_fluents = 0
    for bits, nums in closed:
        used |= bits
        n_fluents = max(n_fluents, len(nums))
    atoms = atom_indices(used)
    position = {a: i for i, a in enumerate(atoms)}
    names = [task.describe(("atom", a)) for a in atoms]
    fluents = [task.describe_expr(("fv", i)) for i in range(n_fluents)]
    rows = sorted(
        ([position[a] for a in atom_indices(bits)],
         [(None if v is None else (int(v) if float(v).is_integer() else v))
          for v in (*nums, *([None] * (n_fluents - len(nums))))])
        for bits, nums in closed)
    return {"atoms": names, "fluents": fluents, "states": rows}


def _states(task: Task, cert: dict) -> set[State]:
    atoms = [_parse_fact(task, text, 0, []) for text in cert.get("atoms", [])]
    fluents = []
    for text in cert.get("fluents", []):
        e = parse(text)
        if len(e) != 1 or not isinstance(e[0], list) or not e[0]:
            raise CertificateError(f"bad fluent {text!r}")
        fluents.append(task.fluent(e[0][0], tuple(e[0][1:])))
    out = set()
    for row in cert.get("states", []):
        try:
            idx, values = row
            bits = 0
            for i in idx:
                bits |= atoms[i]
            nums: list = []
            for f, v in zip(fluents, values, strict=True):
                nums.extend([None] * (f + 1 - len(nums)))
                nums[f] = None if v is None else float(v)
        except (TypeError, ValueError, IndexError) as e:
            raise CertificateError(f"bad state {row!r}: {e}") from None
        out.add(_normal((bits, tuple(nums))))
    return out


def _parse_fact(task: Task, text: str, state_bits: int, nums: list) -> int:
    expr = parse(text)
    if len(expr) != 1 or not isinstance(expr[0], list) or not expr[0]:
        raise CertificateError(f"bad fact {text!r}")
    e = expr[0]
    if e[0] == "=" and len(e) == 3 and isinstance(e[1], list):
        i = task.fluent(e[1][0], tuple(e[1][1:]))
        nums.extend([None] * (i + 1 - len(nums)))
        nums[i] = float(e[2])
        return state_bits
    if not all(isinstance(x, str) for x in e):
        raise CertificateError(f"bad fact {text!r}")
    if e[0] not in task.domain.predicates:
        raise CertificateError(f"unknown predicate in {text!r}")
    return state_bits | 1 << task.atom(e[0], tuple(e[1:]))


class CertificateError(ValueError):
    """The certificate does not prove what it claims; the message says why."""


def every_operator(task: Task):
    """Every ground action over every type-correct binding (no pruning at all)."""
    for schema in task.domain.actions.values():
        pools = [task.objects_of(ts) for _, ts in schema.params]
        for args in product(*pools):
            yield task.operator(schema.name, tuple(args))


def _normal(state: State) -> State:
    bits, nums = state
    nums = list(nums)
    while nums and nums[-1] is None:
        nums.pop()
    return (bits, tuple(nums))


def check(task: Task, domain_path, problem_path, cert: dict) -> None:
    """Raise CertificateError unless `cert` proves that `task` is unsolvable."""
    for key, path in (("domain_sha256", domain_path), ("problem_sha256", problem_path)):
        if cert.get(key) != sha256(path):
            raise CertificateError(f"{key} does not match {path}")
    kind = cert.get("kind")
    ops: list[Operator] = list(every_operator(task))
    if kind == RELAXED:
        reached = 0
        for text in cert.get("atoms", []):
            reached = _parse_fact(task, text, reached, [])
        if task.init[0] & ~reached:
            raise CertificateError("an initial atom is missing from the certificate")
        permanent = permanent_atoms(task, ops)
        for op in ops:
            if relaxed_applicable(op, reached, permanent):
                adds = op.add
                for eff in op.conditional:
                    adds |= eff.add
                if adds & ~reached:
                    missing = _atom_names(task, adds & ~reached)[0]
                    raise CertificateError(f"not closed: {op.name} adds {missing}")
        if relaxed_possible(task.goal, reached, permanent):
            raise CertificateError("the goal may hold within the certified atoms")
        return
    if kind == STATES:
        states = _states(task, cert)
        if _normal(task.init) not in states:
            raise CertificateError("the initial state is missing from the certificate")
        for s in states:
            if task.goal_holds(s):
                raise CertificateError(f"a certified state satisfies the goal: {sorted(task.facts(s))}")
            for op in ops:
                if op.applicable(s) and _normal(op.apply(s)) not in states:
                    raise CertificateError(f"not closed: {op.name} leads out of the set")
        return
    raise CertificateError(f"unknown certificate kind {kind!r}")
