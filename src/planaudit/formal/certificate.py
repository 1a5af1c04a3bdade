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
- `expanded-states`: what A* leaves when it exhausts the space with a heuristic
  that prunes dead ends: the set S of states it expanded and the set D of states
  it pruned, each dead end with a relaxed-reachability proof (a set of atoms R
  as in the first kind, holding the dead end's atoms, closed under every action
  with deletes ignored, the goal impossible within it). S ∪ D holds the initial
  state, S holds no goal state, and every successor of a state of S lies in
  S ∪ D. Proofs are shared: one R serves every dead end whose atoms it holds,
  checked against the atoms that all of those keep forever. The checker needs
  neither the search nor its heuristic, only one pass over the actions per proof.

The checker grounds every action over every type-correct binding of objects;
it shares the semantics (`task.py`) with the search but not its grounding
shortcuts or its search. Certificates carry the SHA-256 of the files they speak
about, so one cannot be checked against another task.
"""

from __future__ import annotations

import hashlib
import json
from fractions import Fraction
from itertools import product
from pathlib import Path

from planaudit.formal import number
from planaudit.formal.ground import Task
from planaudit.formal.syntax import parse
from planaudit.formal.task import Operator, State, atom_indices

RELAXED = "relaxed-reachability"
STATES = "reachable-states"
EXPANDED = "expanded-states"
ROWS = ("states", "dead_ends", "proofs")  # the long lists, written one row a line


def dumps(cert: dict) -> str:
    """A certificate as JSON: the header and tables readable, each state one short line."""
    head = {k: v for k, v in cert.items() if k not in ROWS}
    text = json.dumps(head, indent=1)
    lists = [k for k in ROWS if k in cert]
    if not lists:
        return text + "\n"
    parts = []
    for key in lists:
        rows = ",\n".join(json.dumps(r, separators=(",", ":")) for r in cert[key])
        parts.append(f' "{key}": [\n' + rows + "\n ]")
    return text[:-2] + ",\n" + ",\n".join(parts) + "\n}\n"


def sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def deletable_atoms(ops) -> int:
    """Every atom some operator in `ops` may delete."""
    deletable = 0
    for op in ops:
        deletable |= op.delete
        for eff in op.conditional:
            deletable |= eff.delete
    return deletable


def permanent_atoms(task: Task, ops) -> int:
    """Atoms true initially that no operator in `ops` ever deletes."""
    return task.init[0] & ~deletable_atoms(ops)


def relaxed_applicable(op: Operator, reached: int, permanent: int) -> bool:
    if reached & op.pre_pos != op.pre_pos or op.pre_neg & permanent:
        return False
    return op.pre_rest is None or relaxed_possible(op.pre_rest, reached, permanent)


def relaxed_closure(task: Task, start: int | None = None, permanent: int | None = None,
                    ops=None) -> int:
    """The atoms reachable from the initial state (or from the atoms `start`, of which
    `permanent` are never deleted) when deletes are ignored."""
    ops = task.all_operators() if ops is None else ops
    if start is None:
        start, permanent = task.init[0], permanent_atoms(task, every_operator(task))
    reached = start
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


def make(task: Task, domain_path, problem_path, closed: set | None,
         dead_ends: set | None = None, max_states: int | None = None) -> dict | None:
    """A certificate of unsolvability for `task`, or None if no kind is at hand.

    `closed` is every reachable state (breadth-first search) or, with `dead_ends`, the
    states A* expanded; a certificate holds at most `max_states` of them (the checker
    tries every ground action on each)."""
    header = {"domain_sha256": sha256(domain_path), "problem_sha256": sha256(problem_path)}
    reached = relaxed_closure(task)
    if not relaxed_possible(task.goal, reached, permanent_atoms(task, every_operator(task))):
        return {"kind": RELAXED, **header, "atoms": _atom_names(task, reached)}
    if closed is None or (max_states is not None and len(closed) > max_states):
        return None
    if not dead_ends:
        return {"kind": STATES, **header, **_state_table(task, closed)}
    proofs = dead_end_proofs(task, dead_ends)
    if proofs is None:
        return None
    dead = [(d, j) for j, (_, members) in enumerate(proofs) for d in members]
    table = _state_table(task, closed, dead, [r for r, _ in proofs])
    return {"kind": EXPANDED, **header, **table}


def dead_end_proofs(task: Task, dead_ends: set) -> list[tuple[int, list[State]]] | None:
    """Relaxed-reachability proofs for `dead_ends`: (atoms R, the dead ends it serves).
    A dead end reuses a proof whose R holds its atoms when it keeps forever every atom
    that the proof's dead ends keep (the check then stays as strong); None if some dead
    end cannot be proven so."""
    ops = task.all_operators()
    deletable = deletable_atoms(every_operator(task))
    proofs: list[tuple[int, int, list[State]]] = []  # (R, permanent atoms, dead ends)
    # the largest first: the smaller dead ends then tend to fit in their proofs
    for d in sorted(dead_ends, key=lambda s: (-bin(s[0]).count("1"), s[0])):
        bits, keep = d[0], d[0] & ~deletable
        for r, perm, members in proofs:
            if bits & ~r == 0 and keep & perm == perm:
                members.append(d)
                break
        else:
            r = relaxed_closure(task, bits, keep, ops)
            if relaxed_possible(task.goal, r, keep):
                return None
            proofs.append((r, keep, [d]))
    return [(r, members) for r, _, members in proofs]


def _json_number(v):
    """A fluent value for JSON, exactly: an int when integral, a fraction "p/q" as text."""
    if v is None or (isinstance(v, float) and not v.is_integer()):
        return v
    if v == int(v):
        return int(v)
    return str(Fraction(v))


def _state_table(task: Task, closed: set, dead: list[tuple[State, int]] = (),
                 proofs: list[int] = ()) -> dict:
    """States written compactly: an atom table and a fluent table, then each state
    as [indices of its true atoms, values of the fluents (null: undefined)]; each dead
    end as such a row and the index of its proof, each proof as a list of atom indices."""
    used = 0
    n_fluents = 0
    for bits, nums in (*closed, *(d for d, _ in dead)):
        used |= bits
        n_fluents = max(n_fluents, len(nums))
    for r in proofs:
        used |= r
    atoms = atom_indices(used)
    position = {a: i for i, a in enumerate(atoms)}
    names = [task.describe(("atom", a)) for a in atoms]
    fluents = [task.describe_expr(("fv", i)) for i in range(n_fluents)]

    def row(state: State) -> list:
        bits, nums = state
        return [[position[a] for a in atom_indices(bits)],
                [_json_number(v) for v in (*nums, *([None] * (n_fluents - len(nums))))]]

    def order(state: State) -> tuple:  # exact values, undefined first: no int-to-text compare
        return (sorted(position[a] for a in atom_indices(state[0])),
                [(0, 0) if v is None else (1, v) for v in state[1]])

    out = {"atoms": names, "fluents": fluents,
           "states": [row(s) for s in sorted(closed, key=order)]}
    if proofs:
        out["dead_ends"] = [[*row(d), j] for d, j in sorted(dead, key=lambda e: order(e[0]))]
        out["proofs"] = [[position[a] for a in atom_indices(r)] for r in proofs]
    return out


class _Table:
    """The atom and fluent tables of a certificate, to read its rows back into states."""

    def __init__(self, task: Task, cert: dict):
        self.atoms = [_parse_fact(task, text, 0, []) for text in cert.get("atoms", [])]
        self.fluents = []
        for text in cert.get("fluents", []):
            e = parse(text)
            if len(e) != 1 or not isinstance(e[0], list) or not e[0]:
                raise CertificateError(f"bad fluent {text!r}")
            self.fluents.append(task.fluent(e[0][0], tuple(e[0][1:])))

    def bits(self, idx) -> int:
        bits = 0
        for i in idx:
            bits |= self.atoms[i]
        return bits

    def state(self, row) -> State:
        try:
            idx, values = row
            bits = self.bits(idx)
            nums: list = []
            for f, v in zip(self.fluents, values, strict=True):
                nums.extend([None] * (f + 1 - len(nums)))
                nums[f] = _read_number(v)
        except (TypeError, ValueError, IndexError, ZeroDivisionError) as e:
            raise CertificateError(f"bad state {row!r}: {e}") from None
        return _normal((bits, tuple(nums)))


def _read_number(v):
    if v is None or (isinstance(v, int | float) and not isinstance(v, bool)):
        return v
    if isinstance(v, str):
        return number.exact(Fraction(v))  # the search's own kind of rational
    raise ValueError(f"not a number: {v!r}")


def _states(task: Task, cert: dict) -> set[State]:
    table = _Table(task, cert)
    return {table.state(row) for row in cert.get("states", [])}


def _parse_fact(task: Task, text: str, state_bits: int, nums: list) -> int:
    expr = parse(text)
    if len(expr) != 1 or not isinstance(expr[0], list) or not expr[0]:
        raise CertificateError(f"bad fact {text!r}")
    e = expr[0]
    if e[0] == "=" and len(e) == 3 and isinstance(e[1], list):
        i = task.fluent(e[1][0], tuple(e[1][1:]))
        nums.extend([None] * (i + 1 - len(nums)))
        nums[i] = _fact_value(e[2], text)
        return state_bits
    if not all(isinstance(x, str) for x in e):
        raise CertificateError(f"bad fact {text!r}")
    if e[0] not in task.domain.predicates:
        raise CertificateError(f"unknown predicate in {text!r}")
    return state_bits | 1 << task.atom(e[0], tuple(e[1:]))


def _fact_value(v, text: str):
    """A fluent's value as `Task.facts` writes it, exactly: a decimal, or `(/ p q)`."""
    try:
        if isinstance(v, str):
            return number.parse(v)
        if isinstance(v, list) and len(v) == 3 and v[0] == "/" and all(
                isinstance(x, str) for x in v[1:]):
            q = number.divide(number.parse(v[1]), number.parse(v[2]))
            if q is not None:
                return q
    except ValueError:
        pass
    raise CertificateError(f"bad value in {text!r}")


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
        _check_relaxed(task, ops, reached, permanent_atoms(task, ops), "")
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
    if kind == EXPANDED:
        _check_expanded(task, ops, cert)
        return
    raise CertificateError(f"unknown certificate kind {kind!r}")


def _check_relaxed(task: Task, ops: list[Operator], reached: int, permanent: int,
                   what: str) -> None:
    """Raise unless `reached` is closed under every action with deletes ignored (atoms
    of `permanent` never false) and the goal cannot hold within it."""
    for op in ops:
        if relaxed_applicable(op, reached, permanent):
            adds = op.add
            for eff in op.conditional:
                adds |= eff.add
            if adds & ~reached:
                missing = _atom_names(task, adds & ~reached)[0]
                raise CertificateError(f"{what}not closed: {op.name} adds {missing}")
    if relaxed_possible(task.goal, reached, permanent):
        raise CertificateError(f"{what}the goal may hold within the certified atoms")


def _check_expanded(task: Task, ops: list[Operator], cert: dict) -> None:
    """The `expanded-states` kind (see the module docstring)."""
    table = _Table(task, cert)
    expanded = _states(task, cert)
    try:
        proofs = [table.bits(idx) for idx in cert.get("proofs", [])]
        dead: dict[State, int] = {}
        for row in cert.get("dead_ends", []):
            *state_row, j = row
            if not isinstance(j, int) or not 0 <= j < len(proofs):
                raise CertificateError(f"dead end {row!r} names no proof")
            dead[table.state(state_row)] = j
    except (TypeError, ValueError, IndexError) as e:
        raise CertificateError(f"bad dead end or proof: {e}") from None
    init = _normal(task.init)
    if init not in expanded and init not in dead:
        raise CertificateError("the initial state is missing from the certificate")
    for s in expanded:
        if task.goal_holds(s):
            raise CertificateError(f"a certified state satisfies the goal: {sorted(task.facts(s))}")
        for op in ops:
            if op.applicable(s):
                t = _normal(op.apply(s))
                if t not in expanded and t not in dead:
                    raise CertificateError(
                        f"not closed: {op.name} leads from an expanded state to one that is "
                        f"neither expanded nor a certified dead end: {sorted(task.facts(t))}")
    deletable = deletable_atoms(ops)
    permanent = [-1] * len(proofs)  # per proof: the atoms every one of its dead ends keeps
    for d, j in dead.items():
        if d[0] & ~proofs[j]:
            missing = _atom_names(task, d[0] & ~proofs[j])[0]
            raise CertificateError(f"dead end {sorted(task.facts(d))}: its atom {missing} "
                                   f"is missing from proof {j}")
        permanent[j] &= d[0] & ~deletable
    for j, r in enumerate(proofs):
        if permanent[j] != -1:  # a proof no dead end uses proves nothing and is skipped
            _check_relaxed(task, ops, r, permanent[j], f"proof {j}: ")
