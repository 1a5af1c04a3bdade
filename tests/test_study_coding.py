"""Phase-1 texts coded by hand (`/admin/coding`, study/coding.py) against a real
`planaudit study serve` on SQLite: eight participants write their plans in their own
words, two coders code every text over HTTP with scripted codes (agreements and
disagreements, steps and verdicts, one recoding) and a third codes two; a steps coding
with a bad line is refused (422 naming the line) and stores nothing; the pages need the
researchers' token and name no arm. The export's `codings.csv` holds each coder's last
coding, and `coding.json` Cohen's kappa of the pair with most texts in common, equal to
statsmodels' computed here from the same codes and to (po - pe) / (1 - pe) by hand, with
exactly the scripted disagreements and the automatic reading against each coder."""

from __future__ import annotations

import csv
import json
import re
import subprocess
from pathlib import Path

import httpx
import numpy as np
import polars as pl
import pytest
from markupsafe import escape
from sqlalchemy import create_engine, func, select
from statsmodels.stats.inter_rater import cohens_kappa, to_table

from planaudit.study import coding
from planaudit.study.store import Store, codings, keyed_hash
from tests.study_server import ADMIN_TOKEN, PLANAUDIT, ROOT, Server, study_config
from tests.test_study_server import Person

AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
ANN, BOB, CY = "ann", "bob", "cy-3"
# what eight participants wrote on phase 1: steps in words, actions, prose, a mix
TEXTS = [
    "unstack c from a\nput c down\npick up b\nstack b on c\npick up a\nstack a on b",
    "(unstack c a)\n(put-down c)",
    "I would think about it carefully and then do it.",
    "First take c off a and put it on the table.\nThen build the tower from the bottom.",
    "1. unstack a from b\n2. put down a\n3. unstack b from c",
    "Honestly no idea.",
    "pick up b\nstack b on c\nmove the others somehow",
    "Move C onto B, then A onto C.",
]
# (ann, bob) per text: ("steps", valid | invalid | none) or ("verdict", category); text 6:
# ann first codes invalid steps, then recodes; the third coder codes texts 0 and 3
SCRIPT = [
    (("steps", "valid"), ("verdict", "valid")),
    (("verdict", "invalid"), ("steps", "invalid")),
    (("verdict", "not a plan"), ("steps", "none")),
    (("steps", "valid"), ("verdict", "invalid")),  # disagree
    (("verdict", "valid"), ("verdict", "valid")),
    (("verdict", "invalid"), ("verdict", "not a plan")),  # disagree
    (("steps", "valid"), ("steps", "valid")),  # ann's last coding, after a recoding
    (("verdict", "not a plan"), ("verdict", "not a plan")),
]
FIRST = {6: ("steps", "invalid")}  # ann's earlier coding of text 6, superseded
THIRD = {0: ("verdict", "valid"), 3: ("verdict", "invalid")}
CATEGORY = {"valid": "valid", "invalid": "invalid", "none": "not a plan"}


def category(code: tuple[str, str]) -> str:
    kind, what = code
    return CATEGORY[what] if kind == "steps" else what


@pytest.fixture(scope="module")
def coded(tmp_path_factory):
    """The study walked, coded and exported: what each step returned."""
    tmp = tmp_path_factory.mktemp("coding")
    cfg = study_config(tmp)
    out = subprocess.run([PLANAUDIT, "study", "serve", "--config", str(cfg), "--check"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    db = f"sqlite:///{tmp}/coding.sqlite"
    server = Server(cfg, db)
    got: dict = {"url": server.url, "db": db}
    try:
        people = []
        for i, text in enumerate(TEXTS):
            p = Person(server.url, f"coded-{i}").walk("phase1")
            assert p.post({"text": text}).status_code == 303
            people.append(p)
        store = Store(db)
        try:
            secret = store.open_study("teststudy")
        finally:
            store.close()
        got["pseudonyms"] = ps = [keyed_hash(secret, p.pid) for p in people]
        got["instances"] = inst = [httpx.get(f"{server.url}/admin/whois", headers=AUTH, params={
            "participant": p.pid}).json()["instance"] for p in people]
        folders = {k: tmp / "study" / "suite" / k for k in set(inst)}
        plans = {k: json.loads((f / "truth.json").read_text())["plan"] for k, f in folders.items()}
        got["brief"] = json.loads((folders[inst[3]] / "brief.json").read_text())
        assert all(len(plan) > 1 for plan in plans.values())

        def code(coder: str, n: int, what: tuple[str, str], **over) -> httpx.Response:
            kind, value = what
            steps = {"valid": plans[inst[n]], "invalid": plans[inst[n]][:1], "none": []}
            form = ({"kind": "steps", "steps": "\n".join(steps[value])} if kind == "steps"
                    else {"kind": "verdict", "verdict": value})
            return httpx.post(f"{server.url}/admin/coding/{ps[n]}", data={**form, **over},
                              params={"token": ADMIN_TOKEN, "coder": coder})

        got["unauthorised"] = [
            httpx.get(f"{server.url}/admin/coding", params={"coder": ANN}).status_code,
            httpx.get(f"{server.url}/admin/coding", params={"token": "wrong"}).status_code,
            httpx.get(f"{server.url}/admin/coding/{ps[0]}", params={"coder": ANN}).status_code,
            httpx.post(f"{server.url}/admin/coding/{ps[0]}", params={"coder": ANN},
                       data={"kind": "verdict", "verdict": "valid"}).status_code,
            httpx.post(f"{server.url}/admin/coding/{ps[0]}", headers={
                "Authorization": "Bearer wrong"}, params={"coder": ANN},
                data={"kind": "verdict", "verdict": "valid"}).status_code]
        bad = "\n".join([plans[inst[0]][0], "(fly c a)", plans[inst[0]][1]])
        got["bad_line"] = httpx.post(f"{server.url}/admin/coding/{ps[0]}",
                                     params={"token": ADMIN_TOKEN, "coder": ANN},
                                     data={"kind": "steps", "steps": bad})
        got["bad_object"] = httpx.post(f"{server.url}/admin/coding/{ps[0]}", params={
            "token": ADMIN_TOKEN, "coder": ANN}, data={"kind": "steps", "steps": "(pick-up zz)"})
        got["bad_verdict"] = code(ANN, 0, ("verdict", "maybe"))
        got["bad_coder"] = httpx.get(f"{server.url}/admin/coding/{ps[0]}",
                                     params={"token": ADMIN_TOKEN, "coder": "no one!"})
        got["no_text"] = httpx.get(f"{server.url}/admin/coding/{'0' * 32}",
                                   params={"token": ADMIN_TOKEN, "coder": ANN})
        got["stored_after_refusals"] = count(db)
        got["no_coder"] = httpx.get(f"{server.url}/admin/coding", headers=AUTH)
        got["page"] = httpx.get(f"{server.url}/admin/coding/{ps[3]}",
                                params={"token": ADMIN_TOKEN, "coder": ANN})
        replies = []
        for n, (a, b) in enumerate(SCRIPT):
            if n in FIRST:
                replies.append(code(ANN, n, FIRST[n]))
                got["before_recode"] = list_page(server.url, ANN)
            replies += [code(ANN, n, a), code(BOB, n, b)]
        replies += [code(CY, n, c) for n, c in THIRD.items()]
        got["replies"] = replies
        got["list"] = list_page(server.url, ANN)
        got["list_html"] = httpx.get(f"{server.url}/admin/coding", headers=AUTH,
                                     params={"coder": ANN}).text
        got["recoded_page"] = httpx.get(f"{server.url}/admin/coding/{ps[6]}",
                                        params={"token": ADMIN_TOKEN, "coder": ANN}).text
        got["plans"] = {n: plans[inst[n]] for n in range(len(TEXTS))}
    finally:
        server.stop()
    got["stored"] = count(db)
    export = tmp / "export"
    out = subprocess.run([PLANAUDIT, "study", "export", "--config", str(cfg), "--db", db,
                          "--out", str(export)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    got["export"], got["stderr"] = export, out.stderr
    return got


def count(db: str) -> int:
    engine = create_engine(db)
    try:
        with engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(codings)).scalar()
    finally:
        engine.dispose()


ROW = re.compile(r'<tr data-pseudonym="([0-9a-f]+)"><td><code>[0-9a-f]+</code></td><td>([^<]+)</td>'
                 r'<td class="coders">(\d+)</td>\s*<td class="agree">([^<]+)</td>\s*'
                 r'<td class="mine">([^<]*)</td>')


def list_page(url: str, coder: str) -> dict[str, tuple[str, int, str, str]]:
    """The list page as (instance, coders, agree, this coder's category) per pseudonym."""
    r = httpx.get(f"{url}/admin/coding", params={"token": ADMIN_TOKEN, "coder": coder})
    assert r.status_code == 200, r.text
    return {p: (i, int(n), a, m) for p, i, n, a, m in ROW.findall(r.text)}


def last_codes() -> dict[str, list[str]]:
    """Each coder's categories by text index, as scripted."""
    return {ANN: [category(a) for a, _ in SCRIPT], BOB: [category(b) for _, b in SCRIPT],
            CY: [category(THIRD[n]) if n in THIRD else None for n in range(len(SCRIPT))]}


def test_the_pages_need_the_token_and_refuse_bad_codings(coded):
    assert coded["unauthorised"] == [403] * 5
    bad = coded["bad_line"]
    assert bad.status_code == 422
    assert "line 2: &#39;(fly c a)&#39; is not an action of this task" in bad.text
    assert "no action named" in bad.text
    assert "(fly c a)\n" in bad.text  # the coder's text kept in the form
    assert coded["bad_object"].status_code == 422 and "line 1:" in coded["bad_object"].text
    assert coded["bad_verdict"].status_code == 422 and "verdict: choose one of" in \
        coded["bad_verdict"].text
    assert coded["bad_coder"].status_code == 400
    assert coded["no_coder"].status_code == 200 and 'id="who"' in coded["no_coder"].text
    assert coded["no_text"].status_code == 404
    assert coded["stored_after_refusals"] == 0


def test_the_coding_page_shows_text_task_and_reading_and_names_no_arm(coded):
    page = coded["page"]
    assert page.status_code == 200
    html = page.text
    assert "First take c off a and put it on the table." in html
    task = [ln for ln in coded["brief"]["instance"].splitlines()
            if ln.strip() and not ln.startswith("Minimise")]
    assert len(task) > 5 and all(str(escape(ln)) in html for ln in task)
    assert "The automatic reading" in html and 'id="lines"' in html
    assert 'name="kind" value="steps"' in html and 'name="kind" value="verdict"' in html
    for words in ("unassisted", "suggested", "data-arm", "phase 2", "phase2"):
        assert words not in html and words not in coded["list_html"]
    # the recoded text shows the coder's last steps again in the form
    assert "\n".join(coded["plans"][6]) in coded["recoded_page"]


def test_each_post_stored_and_the_list_says_who_coded_and_whether_they_agree(coded):
    n = len(SCRIPT) * 2 + len(FIRST) + len(THIRD)
    assert [r.status_code for r in coded["replies"]] == [303] * n
    assert all(r.headers["location"].startswith("/admin/coding?") for r in coded["replies"])
    assert coded["stored"] == n  # every coding kept, the recoding as a row of its own
    codes, ps = last_codes(), coded["pseudonyms"]
    assert coded["list"] == {
        p: (coded["instances"][i], 2 + (i in THIRD),
            "yes" if len({c[i] for c in codes.values() if c[i]}) == 1 else "no", codes[ANN][i])
        for i, p in enumerate(ps)}
    assert coded["before_recode"][ps[6]][1:] == (1, "-", "invalid")


def test_codings_csv_holds_each_coders_last_coding(coded):
    with (coded["export"] / "codings.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["pseudonym", "coder", "kind", "value", "category", "at"]
    ps = coded["pseudonyms"]
    want = set()
    for coder, script in ((ANN, [a for a, _ in SCRIPT]), (BOB, [b for _, b in SCRIPT]),
                          (CY, [THIRD.get(n) for n in range(len(SCRIPT))])):
        for n, code in enumerate(script):
            if code is None:
                continue
            kind, what = code
            steps = {"valid": coded["plans"][n], "invalid": coded["plans"][n][:1], "none": []}
            value = steps[what] if kind == "steps" else what
            want.add((ps[n], coder, kind, json.dumps(value), category(code)))
    assert {(r["pseudonym"], r["coder"], r["kind"], r["value"], r["category"]) for r in rows} \
        == want
    assert len(rows) == len(want) and all(r["at"] for r in rows)


def test_kappa_equals_statsmodels_and_the_textbook_formula(coded):
    got = json.loads((coded["export"] / "coding.json").read_text())
    codes = last_codes()
    a, b = codes[ANN], codes[BOB]
    assert got["pair"] == [ANN, BOB] and got["texts"] == len(a) == 8
    assert got["coders"] == {ANN: 8, BOB: 8, CY: 2}
    # statsmodels, on a table it builds itself from the same codes
    index = {c: i for i, c in enumerate(coding.CATEGORIES)}
    table, _ = to_table(np.array([[index[x], index[y]] for x, y in zip(a, b, strict=True)]),
                        bins=len(index))
    assert got["kappa"] == pytest.approx(cohens_kappa(table).kappa, abs=1e-12)
    # by hand: po the share agreed on, pe the chance agreement from the marginals
    n = len(a)
    po = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pe = sum(a.count(c) * b.count(c) for c in coding.CATEGORIES) / n**2
    assert got["observed_agreement"] == pytest.approx(po) == 0.75
    assert got["chance_agreement"] == pytest.approx(pe)
    assert got["kappa"] == pytest.approx((po - pe) / (1 - pe), abs=1e-12)
    assert got["kappa"] == pytest.approx(13 / 21)  # (0.75 - 22/64) / (1 - 22/64)
    ps = coded["pseudonyms"]
    assert got["disagreements"] == [
        {"pseudonym": ps[i], "instance": coded["instances"][i], "codes": {ANN: a[i], BOB: b[i]}}
        for i in sorted((3, 5), key=lambda i: ps[i])]
    assert "kappa" in coded["stderr"] and "2 disagreement(s)" in coded["stderr"]


def test_the_automatic_reading_against_each_coder(coded):
    got = json.loads((coded["export"] / "coding.json").read_text())["automatic"]
    rows = pl.read_parquet(coded["export"] / "rows.parquet")
    outcome = dict(zip(rows["participant"], rows["text_outcome"], strict=True))
    machine = [coding.from_outcome(outcome[p]) for p in coded["pseudonyms"]]
    assert set(machine) > {"not a plan"}  # the reading found plans too
    for coder, codes in last_codes().items():
        pairs = [(m, c) for m, c in zip(machine, codes, strict=True) if c is not None]
        assert got[coder]["texts"] == len(pairs)
        assert got[coder]["observed_agreement"] == pytest.approx(
            sum(m == c for m, c in pairs) / len(pairs))
        assert len(got[coder]["disagreements"]) == sum(m != c for m, c in pairs)


def test_kappa_is_undefined_with_one_category_and_needs_two_coders():
    one = coding.kappa([("valid", "valid")] * 4)
    assert one["kappa"] is None and "only one category" in one["kappa_reason"]
    assert one["observed_agreement"] == 1.0
    assert coding.kappa([])["kappa"] is None
    alone = coding.summary({"ann": {"p1": "valid"}}, {"p1": "invalid"})
    assert alone["pair"] is None and alone["kappa"] is None and alone["disagreements"] == []
    assert alone["automatic"]["ann"]["observed_agreement"] == 0.0
    assert coding.from_outcome("success") == "valid"
    assert coding.from_outcome("goal-not-reached") == "invalid"
    assert coding.from_outcome("malformed") == "not a plan"


def test_docs_name_the_coding_page():
    text = (Path(ROOT) / "docs" / "howto" / "study.md").read_text()
    assert "Coding phase-1 texts by hand" in text and "/admin/coding" in text
