"""NASA-TLX as the study asks it and reads it back: six subscales rated on 21 marks
(0-100 in steps of 5; performance runs from "perfect" to "failure"), the 15 pairwise
comparisons optional; raw TLX (the mean) and weighted TLX (each subscale's wins as its
weight, over 15). No maintained Python package implements it, so it is written here."""

from __future__ import annotations

from itertools import combinations

# (key, name, question, low end, high end)
SCALES = (
    ("mental", "Mental demand", "How mentally demanding was the task?", "Very low", "Very high"),
    ("physical", "Physical demand", "How physically demanding was the task?", "Very low", "Very high"),
    ("temporal", "Temporal demand", "How hurried or rushed was the pace of the task?",
     "Very low", "Very high"),
    ("performance", "Performance",
     "How successful were you in accomplishing what you were asked to do?", "Perfect", "Failure"),
    ("effort", "Effort", "How hard did you have to work to accomplish your level of performance?",
     "Very low", "Very high"),
    ("frustration", "Frustration",
     "How insecure, discouraged, irritated, stressed and annoyed were you?", "Very low", "Very high"),
)
KEYS = tuple(s[0] for s in SCALES)
NAMES = {s[0]: s[1] for s in SCALES}
PAIRS = tuple(combinations(KEYS, 2))  # the 15 comparisons
MARKS = tuple(range(0, 101, 5))  # the 21 marks


def read_tlx(form: dict, pairwise: bool) -> dict:
    """The six ratings (and any comparisons answered) from a posted form; ValueError
    names what is missing or out of the scale."""
    ratings = {}
    for key in KEYS:
        raw = form.get(key)
        if raw in (None, ""):
            raise ValueError(f"Please rate {NAMES[key].lower()}.")
        try:
            v = int(str(raw))
        except ValueError:
            raise ValueError(f"{NAMES[key]}: choose one of the marks on the scale.") from None
        if v not in MARKS:
            raise ValueError(f"{NAMES[key]}: choose one of the marks on the scale (0 to 100 "
                             "in steps of 5).")
        ratings[key] = v
    out: dict = {"ratings": ratings, "raw": raw_tlx(ratings)}
    if pairwise:
        chosen = {}
        for a, b in PAIRS:
            pick = form.get(f"pair_{a}_{b}")
            if pick in (None, ""):
                continue
            if pick not in (a, b):
                raise ValueError(f"The comparison of {NAMES[a].lower()} and {NAMES[b].lower()} "
                                 "takes one of the two.")
            chosen[f"{a}/{b}"] = pick
        out["pairs"] = chosen
        if len(chosen) == len(PAIRS):
            out["weighted"] = weighted_tlx(ratings, chosen)
    return out


def raw_tlx(ratings: dict[str, int]) -> float:
    return sum(ratings[k] for k in KEYS) / len(KEYS)


def weighted_tlx(ratings: dict[str, int], chosen: dict[str, str]) -> float:
    """Σ rating × wins / 15, over all 15 comparisons answered."""
    wins = dict.fromkeys(KEYS, 0)
    for pick in chosen.values():
        wins[pick] += 1
    return sum(ratings[k] * wins[k] for k in KEYS) / len(PAIRS)
