"""Descriptions from PDDL alone: a domain without `nl.yaml` (or a config asking for
`suite.description: generic`, or a disguised task) gets its brief rendered from the
parsed model in a generic style, in the manner of PlanBench's generic domains ("To
perform X action, the following facts need to be true: ...", in our own words).

Every predicate and function gets a mechanical template that names all its arguments
in order, so the instance brief passes the same coverage audit as template briefs
(`brief.audit`); the domain brief lists every action with its parameters (and their
types), its preconditions (negative and numeric ones included), its effects (numeric
updates in words) and its cost. Nothing but the model's own names is used, so a
disguised model's description carries only disguised names.
"""

from __future__ import annotations

from planaudit.formal.ground import COST_FUNCTION
from planaudit.formal.syntax import Domain, Problem
from planaudit.suite.brief import PREAMBLE, Renderer, Templates, _cost, audit, instance_brief

SOURCE = "generic"


def _args(n: int) -> str:
    names = [f"{{{i}}}" for i in range(n)]
    return names[0] if n == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def predicate_template(name: str, arity: int) -> str:
    if arity == 0:
        return f"the fact {name} holds"
    if arity == 1:
        return f"{{0}} is {name}"
    return f"the relation {name} holds for {_args(arity)}, in this order"


def function_template(name: str, arity: int) -> str:
    if arity == 0:
        return f"the quantity {name}"
    return f"the quantity {name} of {_args(arity)}"


def templates(domain: Domain) -> Templates:
    """Templates for every name of `domain`, from its PDDL alone."""
    types = {t: f"objects of type {t}" for t in domain.types}
    types.setdefault("object", "objects")
    return Templates(
        SOURCE,
        f"A world given only by its rules (the domain {domain.name}): the facts that can hold "
        "of its objects, the quantities it measures, and the actions that change them.",
        types,
        {p: predicate_template(p, len(ps)) for p, ps in domain.predicates.items()},
        {f: function_template(f, len(ps)) for f, ps in domain.functions.items()},
        {a: "" for a in domain.actions},
    )


def domain_brief(domain: Domain, t: Templates) -> str:
    r = Renderer(t)
    lines = [t.world, "", "Object types:"]
    for ty in sorted(set(domain.types) | {"object"}):
        if ty == "object" and domain.types:
            continue
        parent = domain.types.get(ty, "object")
        lines.append(f"- {ty}" + (f", a kind of {parent}" if parent != "object" else ""))
    has_cost = COST_FUNCTION in domain.functions
    lines += ["", "I can do the following actions. Write each as (name argument1 argument2 ...), "
              "with the arguments in the order the action lists them."]
    for act in domain.actions.values():
        params = ", ".join(f"{p} ({' or '.join(ts)})" for p, ts in act.params)
        sig = " ".join((act.name, *(p for p, _ in act.params)))
        lines += ["", f"({sig})", f"  The action {act.name} takes "
                  + (f"the objects {params}." if act.params else "no objects.")]
        pre = r.literals(act.precondition)
        if pre:
            lines.append(f"  To perform the {act.name} action, the following facts need to be "
                         "true:")
            lines += [f"  - {s}" for s in pre]
        else:
            lines.append(f"  The {act.name} action can always be performed.")
        effects = [e for e in act.effects
                   if not (e[0] == "assign" and e[2] == (COST_FUNCTION, ()))]
        adds = [r.atom(e[1], e[2]) for e in effects if e[0] == "add"]
        dels = [r.atom(e[1], e[2]) for e in effects if e[0] == "del"]
        other = [r.effect(e) for e in effects if e[0] not in ("add", "del")]
        if adds:
            lines.append(f"  Once the {act.name} action is performed, the following facts "
                         "will be true:")
            lines += [f"  - {s}" for s in adds]
        if dels:
            lines.append(f"  Once the {act.name} action is performed, the following facts "
                         "will be false:")
            lines += [f"  - {s}" for s in dels]
        if other:
            lines.append(f"  Performing the {act.name} action also changes:")
            lines += [f"  - {s}" for s in other]
        if not effects:
            lines.append(f"  The {act.name} action changes nothing.")
        if has_cost:
            cost = _cost(act.effects)
            lines.append(f"  It costs {r.expr(cost) if cost is not None else 0}.")
    return "\n".join(lines)


def render(domain: Domain, problem: Problem) -> dict:
    """The brief record of one task described from its PDDL alone, audited for coverage
    exactly as a template brief is."""
    t = templates(domain)
    instance = instance_brief(domain, problem, t)
    facts = audit(domain, problem, t, instance)
    return {"preamble": PREAMBLE, "domain": domain_brief(domain, t), "instance": instance,
            "facts_covered": facts, "source": SOURCE}
