"""`planaudit study simulate`: a cohort file (`planaudit.simulated.cohort`) played against a
running study server, every participant a fresh window of one headless Chromium
(Playwright's async API on the system's browser), clicking through the real pages.

Participant k (1..the number of scripts) enters at
`URL?<participant>=SIMULATED-<k:04d>-<6 hex>&<study>=SIMULATED&<session>=...`: the
`SIMULATED-` prefix marks a simulated participant in the ledger (the export tells them
from people by it). On the consent page it asks the researchers' view which arm the
server assigned it (`/admin/whois`, with the researchers' token from
$PLANAUDIT_STUDY_ADMIN_TOKEN: no page names an arm, so that no person can read theirs in
the source), reads the instance's tag (`<body data-instance>`), takes the first unused
script that admits the arm, and does what it says: the consent box, the
instructions and the example, the phase-1 text typed into the box, the phase-2 plan
built from the page's action list with its add, undo, up, down and remove buttons and
submitted (where the arm tells the verdict on submission and the plan is wrong, the plan
is then submitted as it is), the suggestion question, NASA-TLX, and the completion page,
with the script's faults (a reload, an abandon, a form sent twice at once with the same
idempotency key). After every phase-2 edit the shown plan must be the one the script has
built so far, and after a reload the page must be the one the participant had reached.

On an arm with an assistant beside phase 2, a script's conversation is held before its
edits: each message typed into the chat's box and sent, the reply awaited where it
appears in the conversation (`#messages`), whether the page is sent as a form and
comes back, or a script streams the reply into it; an accepted reply's plan taken with
its "Use this plan as mine" button (the plan shown must then be the one proposed, and
the script's edits apply on top of it); a rejected reply left alone. A message is sent
once even under submit_twice (an accept is sent twice, as an edit is). A script with a
conversation on an arm whose phase 2 has no chat is an error of the run.

A participant the page surprises (a server that does not answer, a page not the expected
one, an error shown) is reported with the page's name, and the others go on. The run's
summary (JSON on stdout, and in --out): entered, finished, abandoned, errors, per arm, and
per participant their arm, instance, script and how they ended. The exit code is 0 only
when every participant ran a script as written (a scripted abandon included) and every
script ran; a participant for whose arm no script was left abandons on the consent page
and makes it 1."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import secrets
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from planaudit.commandline import EXIT_NEGATIVE, EXIT_OK, InputError
from planaudit.simulated import CHROMIUM_ENV, DEFAULT_CHROMIUM, WAIT_MS
from planaudit.simulated.cohort import (
    TLX_PAIRS,
    Cohort,
    Script,
    Turn,
    apply_edits,
    load_cohort,
)
from planaudit.study.settings import ADMIN_ENV, SIMULATED_PREFIX
from planaudit.study.tlx import KEYS as TLX_KEYS

# as the browser tests launch it: no sandbox (containers), no network of its own
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
_STEP = re.compile(r"^/s/[^/]+/([a-z0-9]+)$")
# the button that takes an assistant's plan ("Use this plan as mine", named for its message)
_ADOPT = re.compile(r"^Use (this plan as mine|the assistant's plan\b)")
HEADINGS = {"consent": "Before you start", "instructions": "How this study works",
            "example": "A worked example", "phase1": "Your plan, in your own words",
            "phase2": "Build your plan from the actions", "suggestion": "About the suggested plan",
            "tlx": "How demanding was the task?", "done": "Thank you: you have finished"}
NEXT = {"consent": ("instructions",), "instructions": ("example",), "example": ("phase1",),
        "phase1": ("phase2",), "phase2": ("suggestion", "tlx"), "suggestion": ("tlx",),
        "tlx": ("done",)}


class Surprise(Exception):
    """The page is not what the script expects: the participant stops, named by page."""

    def __init__(self, page: str, message: str):
        super().__init__(message)
        self.page = page


@dataclass
class Outcome:
    """How one simulated participant ended."""

    k: int
    platform_id: str
    status: str = "error"  # finished, abandoned, error
    arm: str | None = None
    instance: str | None = None  # the key, when the tag matched one the cohort names
    instance_tag: str | None = None
    script: str | None = None
    page: str | None = None  # where an abandoned or failed participant stopped
    scripted: bool = False  # ran as the script says (a scripted abandon included)
    faults: list[str] = field(default_factory=list)  # the faults played
    error: str | None = None
    code: str | None = None  # the completion code shown
    chat: list[str] = field(default_factory=list)  # the conversation held: "ask",
    # "accept N", "reject N" (N: the assistant's reply, from 1)


@dataclass
class Summary:
    cohort: str
    url: str
    label: str | None
    entered: int = 0
    finished: int = 0
    abandoned: int = 0
    errors: int = 0
    arms: dict[str, dict[str, int]] = field(default_factory=dict)
    participants: list[Outcome] = field(default_factory=list)
    problems: list[dict] = field(default_factory=list)  # participant, script, page, error
    unused_scripts: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (not self.unused_scripts and bool(self.participants)
                and all(o.scripted for o in self.participants))

    def to_json(self) -> dict:
        out = asdict(self)
        out["ok"] = self.ok
        return out


def chromium_path(given: str | None = None) -> str:
    return given or os.environ.get(CHROMIUM_ENV) or DEFAULT_CHROMIUM


def entry_url(url: str, params: dict[str, str], pid: str, session: str) -> str:
    """`url` with the platform's ids in the study's URL parameters."""
    parts = urlsplit(url)
    query = [*parse_qsl(parts.query), (params["participant"], pid),
             (params["study"], "SIMULATED"), (params["session"], session)]
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", urlencode(query), ""))


def page_name(url: str) -> str | None:
    """The study page a URL shows (`/s/<token>/<page>`), or None."""
    m = _STEP.match(urlsplit(url).path)
    return m.group(1) if m else None


class Run:
    """One cohort against one server."""

    def __init__(self, cohort: Cohort, url: str, concurrency: int, timeout_ms: int,
                 progress=sys.stderr, admin_token: str = ""):
        self.cohort, self.url, self.timeout = cohort, url, timeout_ms
        self.admin_token = admin_token
        self.concurrency = max(1, concurrency)
        self.used: set[int] = set()
        self.summary = Summary(str(cohort.path), url, cohort.label)
        self.progress = progress

    def take(self, arm: str) -> Script | None:
        """The first unused script admitting `arm` (no await inside: one at a time)."""
        for i, s in enumerate(self.cohort.participants):
            if i not in self.used and s.admits(arm):
                self.used.add(i)
                return s
        return None

    async def run(self, browser) -> Summary:
        gate = asyncio.Semaphore(self.concurrency)
        n = len(self.cohort.participants)

        async def one(k: int) -> None:
            async with gate:
                out = await self.participant(browser, k)
            self.record(out, n)

        await asyncio.gather(*(one(k) for k in range(1, n + 1)))
        s = self.summary
        s.participants.sort(key=lambda o: o.k)
        s.unused_scripts = [sc.id for i, sc in enumerate(self.cohort.participants)
                            if i not in self.used]
        return s

    def record(self, out: Outcome, n: int) -> None:
        s = self.summary
        s.participants.append(out)
        if out.arm is not None:
            s.entered += 1
            a = s.arms.setdefault(out.arm, {"entered": 0, "finished": 0, "abandoned": 0,
                                            "errors": 0})
            a["entered"] += 1
            a[{"finished": "finished", "abandoned": "abandoned"}.get(out.status, "errors")] += 1
        if out.status == "finished":
            s.finished += 1
        elif out.status == "abandoned":
            s.abandoned += 1
        else:
            s.errors += 1
        if out.error is not None:
            s.problems.append({"participant": out.platform_id, "script": out.script,
                               "page": out.page, "error": out.error})
        how = {"finished": "finished", "abandoned": f"abandoned at {out.page}",
               "error": f"ERROR at {out.page}: {out.error}"}[out.status]
        if out.status == "abandoned" and not out.scripted:
            how += f" ({out.error})"
        print(f"[{len(s.participants)}/{n}] {out.platform_id} {out.arm or '-'} "
              f"{out.script or '-'}: {how} (finished {s.finished}, abandoned {s.abandoned}, "
              f"errors {s.errors})", file=self.progress, flush=True)

    async def participant(self, browser, k: int) -> Outcome:
        pid = f"{SIMULATED_PREFIX}{k:04d}-{secrets.token_hex(3)}"
        out = Outcome(k, pid, page="entry")
        ctx = await browser.new_context(viewport={"width": 1000, "height": 800})
        ctx.set_default_timeout(self.timeout)
        ctx.set_default_navigation_timeout(self.timeout)
        try:
            page = await ctx.new_page()
            await self.walk(page, out)
        except Surprise as e:
            out.status, out.page, out.error = "error", e.page, str(e)
        except Exception as e:  # a server that does not answer, a page that never came
            out.status, out.error = "error", f"{type(e).__name__}: {_first_line(e)}"
        finally:
            try:
                await ctx.close()
            except Exception:
                pass
        return out

    async def whois(self, page, platform_id: str) -> str:
        """The arm the server gave `platform_id`, from the researchers' view."""
        parts = urlsplit(self.url)
        r = await page.context.request.get(
            urlunsplit((parts.scheme, parts.netloc, "/admin/whois", "", "")),
            params={"participant": platform_id},
            headers={"Authorization": f"Bearer {self.admin_token}"})
        if r.status != 200:
            raise Surprise("consent", f"the researchers' view does not say the arm "
                                      f"(/admin/whois: {r.status} {(await r.text())[:200]})")
        return (await r.json())["arm"]

    async def walk(self, page, out: Outcome) -> None:
        c = self.cohort
        url = entry_url(self.url, c.params, out.platform_id,
                        f"{SIMULATED_PREFIX}SESSION-{out.platform_id.removeprefix(SIMULATED_PREFIX)}")
        response = await page.goto(url)
        name = page_name(page.url)
        if name != "consent":
            raise Surprise("entry", f"the entry link led to {await _describe(page, response)}, "
                                    "not the consent page")
        out.arm = await self.whois(page, out.platform_id)
        out.instance_tag = await page.locator("body").get_attribute("data-instance") or None
        out.page = "consent"
        script = self.take(out.arm)
        if script is None:
            out.status = "abandoned"
            out.error = f"no script left for arm '{out.arm}'"
            return
        out.script = script.id
        out.instance = c.resolve(out.instance_tag or "")
        try:  # what depends on the instance, known before the first click
            text = script.text_for(out.instance) if script.reaches("phase1") else ""
            edits = script.edits_for(out.instance) if script.reaches("phase2") else ()
        except LookupError as e:
            raise Surprise("consent", f"script {script.id}: {e} (tag {out.instance_tag})") from None
        while name != "done":
            out.page = name
            if script.fault("reload", name):
                await self.reload(page, name)
                out.faults.append(f"reload:{name}")
            if script.fault("abandon", name):
                out.faults.append(f"abandon:{name}")
                out.status, out.page, out.scripted = "abandoned", name, True
                return
            twice = script.fault("submit_twice", name) is not None
            if twice:
                out.faults.append(f"submit_twice:{name}")
            await self.expect(page, name)
            if name in ("instructions", "example", "tlx"):
                await self.attention(page, script, name)
            if name == "consent":
                await page.get_by_label("I agree to take part").check()
                await self.send(page, _button(page, "Continue"), twice, name)
            elif name == "instructions":
                await self.send(page, _button(page, "I have read this: show me the example"),
                                twice, name)
            elif name == "example":
                await self.send(page, _button(page, "Go to my task"), twice, name)
            elif name == "phase1":
                await page.locator("#text").fill(text)
                await self.send(page, _button(page, "Save and go on"), twice, name)
            elif name == "phase2":
                await self.phase2(page, script, edits, twice, out)
            elif name == "suggestion":
                if script.suggestion_correct is None:
                    raise Surprise(name, f"script {script.id} gives no suggestion_correct, and "
                                         f"arm '{out.arm}' shows a suggestion")
                label = ("Yes, it is correct" if script.suggestion_correct
                         else "No, it is not correct")
                await page.get_by_label(label).check()
                await self.send(page, _button(page, "Save and go on"), twice, name)
            elif name == "tlx":
                await self.tlx(page, script)
                await self.send(page, _button(page, "Finish"), twice, name)
            else:
                raise Surprise(name, f"no such page in a participant's path: {name}")
            now = page_name(page.url)
            if now not in NEXT[name]:
                raise Surprise(name, f"after {name} the server showed "
                                     f"{await _describe(page)}, not {' or '.join(NEXT[name])}")
            name = now
        await self.expect(page, "done")
        out.code = (await page.locator("#code").inner_text()).strip()
        out.status, out.page, out.scripted = "finished", None, True

    async def attention(self, page, script: Script, name: str) -> None:
        """Answer the page's attention checks: the script's choice by the check's id, else
        as the question instructs (the one option it quotes, as a reader would)."""
        for box in await page.locator("fieldset.attention").all():
            check = (await box.get_attribute("id") or "").removeprefix("attention-")
            question = await box.locator("legend").inner_text()
            options = [o.strip() for o in await box.locator("label").all_inner_texts()]
            choice = script.attention.get(check)
            if choice is None:
                quoted = [o for o in options if f'"{o}"' in question or f"'{o}'" in question
                          or f"“{o}”" in question]
                if len(quoted) != 1:
                    raise Surprise(name, f"attention check {check}: the question quotes no single "
                                         f"option, and script {script.id} gives no answer")
                choice = quoted[0]
            if choice not in options:
                raise Surprise(name, f"attention check {check}: '{choice}' is not one of "
                                     f"{', '.join(options)}")
            await box.get_by_label(choice, exact=True).check()

    async def expect(self, page, name: str) -> None:
        """The page is `name`'s, whole, with no error shown."""
        h1 = (await page.locator("h1").first.inner_text()).strip()
        if h1 != HEADINGS[name]:
            raise Surprise(name, f"expected the {name} page, found {await _describe(page)}")
        errors = await page.locator("p.error").all_inner_texts()
        if errors:
            raise Surprise(name, f"the page says: {errors[0].strip()}")

    async def reload(self, page, name: str) -> None:
        await page.reload()
        if page_name(page.url) != name:
            raise Surprise(name, f"after a reload the server showed {await _describe(page)}: "
                                 "the participant's step was lost")

    async def send(self, page, button, twice: bool, name: str) -> None:
        """Click `button` (its form's post, then the page the server sends on to); with
        `twice`, the same form (the same idempotency key) posted a second time at once,
        as a double click sends it, which the server must ignore."""
        if await button.count() != 1:
            raise Surprise(name, f"the page has no single button {button}")
        if not twice:
            async with page.expect_navigation():
                await button.click()
            return
        action, form = await button.evaluate(
            # the action attribute, not the property (a control named "action" shadows it)
            "b => [new URL(b.form.getAttribute('action') || location.href, location.href).href,"
            " Object.fromEntries(new FormData(b.form, b))]")

        async def click() -> None:
            async with page.expect_navigation():
                await button.click()

        async def again():
            return await page.request.post(action, form=form, max_redirects=0)

        _, dup = await asyncio.gather(click(), again())
        if dup.status != 303:
            raise Surprise(name, f"the duplicate post was answered {dup.status}, not with the "
                                 "participant's step (303)")

    async def phase2(self, page, script: Script, edits, twice: bool, out: Outcome) -> None:
        name = "phase2"
        accepted: list[str] = []
        if script.conversation:
            accepted = await self.converse(page, script, twice, out)
        try:
            apply_edits(edits, accepted)
        except IndexError as e:
            raise Surprise(name, f"script {script.id}: its edits do not fit the accepted plan of "
                                 f"{len(accepted)} step(s): {e}") from None
        full_list = await page.locator("#action").count() > 0  # the `list` picker
        listed = set(await page.locator("#action option").evaluate_all(
            "os => os.map(o => o.value)")) if full_list else set()
        reloads = {f.after for f in script.faults if f.kind == "reload" and f.page == name
                   and f.after is not None}
        for i, e in enumerate(edits, 1):
            if e.op == "add" and full_list:
                if e.action not in listed:
                    raise Surprise(name, f"edit {i}: {e.action} is not one of the page's actions")
                await page.locator("#action").select_option(e.action)
                button = _button(page, "Add this step")
            elif e.op == "add":  # the action's line, then each of its objects in order
                button = await self.pick(page, e.action, i)
            elif e.op == "undo":
                button = page.locator("#undo")
            else:
                button = _button(page, f"{e.op} step {e.step}")
            await self.send(page, button, twice, name)
            await self.expect(page, name)
            await self.plan_shown(page, apply_edits(edits[:i], accepted), f"after edit {i}")
            if i in reloads:
                await self.reload(page, name)
                out.faults.append(f"reload:phase2@{i}")
                await self.expect(page, name)
                await self.plan_shown(page, apply_edits(edits[:i], accepted),
                                      f"after the reload at edit {i}")
        if script.declares:  # "this task cannot be done", its box ticked
            await page.locator("#cannot input[name=sure]").check()
            await self.send(page, page.locator("#cannot button[type=submit]"), twice, name)
            return
        await self.send(page, page.locator("#submit"), twice, name)
        if page_name(page.url) == name and await page.locator("#verdict").count():
            # the arm tells the verdict on submission: the script's plan is submitted as it is
            await self.send(page, page.locator("#submit"), False, name)

    async def converse(self, page, script: Script, twice: bool, out: Outcome) -> list[str]:
        """Hold the script's conversation; the plan accepted last (empty: none)."""
        name = "phase2"
        if await page.locator("#chat").count() == 0:
            raise Surprise(name, f"script {script.id} holds a conversation with the assistant, "
                                 f"and arm '{out.arm}' has no assistant beside phase 2")
        replies = page.locator("#messages > li.assistant")
        accepted: list[str] = []
        for t in script.conversation:
            if t.op == "ask":
                n = await replies.count()
                form = page.locator("form#ask")
                if await form.count() != 1:
                    raise Surprise(name, f"script {script.id}: the chat takes no message "
                                         f"{sum(c == 'ask' for c in out.chat) + 1} (the "
                                         "assistant's budget is spent)")
                await form.locator("textarea[name=message]").fill(t.text or "")
                await form.get_by_role("button", name="Send").click()
                # the reply where it appears: the page sent back, or streamed into this one
                await replies.nth(n).wait_for(state="attached")
                await self.settled(page)
                await self.expect(page, name)
                out.chat.append("ask")
                continue
            k, li = await self.reply(page, script, t)
            if t.op == "accept":
                steps = await self.proposed(li)
                button = li.get_by_role("button", name=_ADOPT)
                await self.send(page, button, twice, name)
                await self.expect(page, name)
                await self.plan_shown(page, steps, f"after accepting the assistant's reply {k}")
                accepted = steps
            out.chat.append(f"{t.op} {k}" if k else f"{t.op} none")
        return accepted

    async def settled(self, page) -> None:
        """The page at rest after a reply: loaded, and no reply still streaming (a script
        that streams marks the conversation `aria-busy` while it does)."""
        await page.wait_for_load_state("load")
        await page.locator('#messages[aria-busy="true"]').wait_for(state="detached")
        await page.locator("form#ask, #ask-spent").first.wait_for(state="attached")

    async def reply(self, page, script: Script, t: Turn):
        """The assistant's reply a turn names: its number (from 1) and its element."""
        replies = page.locator("#messages > li.assistant")
        n = await replies.count()
        if t.reply is not None:
            if t.reply > n:
                raise Surprise("phase2", f"script {script.id}: {t.op} {t.reply}, and the "
                                         f"assistant has given {n} reply(ies)")
            li = replies.nth(t.reply - 1)
            if t.op == "accept" and await li.locator(".proposal").count() == 0:
                raise Surprise("phase2", f"script {script.id}: accept {t.reply}, and that reply "
                                         "proposes no plan (or the assistant was unavailable)")
            return t.reply, li
        for k in range(n, 0, -1):
            if await replies.nth(k - 1).locator(".proposal").count():
                return k, replies.nth(k - 1)
        if t.op == "reject":  # nothing proposed (a model that wrote no plan): nothing to refuse
            return 0, None
        raise Surprise("phase2", f"script {script.id}: {t.op} last, and none of the assistant's "
                                 f"{n} reply(ies) proposes a plan")

    async def proposed(self, li) -> list[str]:
        """The plan a reply proposes, as the page shows it."""
        steps = li.locator(".proposal ol.plan > li")
        codes = [t.strip() for t in await steps.locator("code").all_inner_texts()]
        return codes or [t.strip() for t in await steps.all_inner_texts()]

    async def pick(self, page, action: str, i: int):
        """Fill the picker's line of `action` ("(unstack c a)") with its objects; its button."""
        words = action.strip("()").split()
        form = page.locator(f'form.pick[data-action="{words[0]}"]')
        if await form.count() != 1:
            raise Surprise("phase2", f"edit {i}: {action} is not one of the page's actions "
                                     f"(the picker has no line for {words[0]})")
        for k, obj in enumerate(words[1:], 1):
            box = form.locator(f'select[name="arg{k}"]')
            if await box.locator(f'option[value="{obj}"]').count() != 1:
                raise Surprise("phase2", f"edit {i}: {action} is not one of the page's actions "
                                         f"({obj} is not a choice for object {k} of {words[0]})")
            await box.select_option(obj)
        return form.locator("button")

    async def plan_shown(self, page, plan: list[str], when: str) -> None:
        shown = [t.strip() for t in await page.locator("#plan > li > code").all_inner_texts()]
        if not shown and plan:  # steps in PlanBench's words: their number is checked
            shown = plan[: await page.locator("#plan > li > span.step").count()]
        if shown != plan:
            raise Surprise("phase2", f"{when} the page shows the plan {shown}, not {plan}")

    async def tlx(self, page, script: Script) -> None:
        for key, v in zip(TLX_KEYS, script.tlx or (), strict=True):
            await page.locator(f"#scale-{key} input[value='{v}']").check()
        if await page.locator("table.tlx").count():
            picks = script.tlx_pairs if script.tlx_pairs is not None else [a for a, _ in TLX_PAIRS]
            for (a, b), pick in zip(TLX_PAIRS, picks, strict=False):
                await page.locator(f"input[name=pair_{a}_{b}][value={pick}]").check()


def _button(page, name: str):
    return page.get_by_role("button", name=name, exact=True)


async def _describe(page, response=None) -> str:
    """What a page is, for an error: its study page, status and heading."""
    try:
        h1 = await page.locator("h1").first.inner_text(timeout=2000)
    except Exception:
        h1 = None
    status = f" ({response.status})" if response is not None else ""
    where = page_name(page.url) or urlsplit(page.url).path
    return f"'{h1.strip()}' at {where}{status}" if h1 else f"{where}{status}"


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [""])[0]


async def simulate(cohort: Cohort, url: str, concurrency: int = 4, chromium: str | None = None,
                   out: str | Path | None = None, timeout_ms: int = WAIT_MS,
                   progress=sys.stderr, admin_token: str | None = None) -> Summary:
    """Play `cohort` against the study at `url`; the summary (also written to `out`).
    `admin_token`: the server's researchers' token (default $PLANAUDIT_STUDY_ADMIN_TOKEN)."""
    from playwright.async_api import async_playwright

    run = Run(cohort, url, concurrency, timeout_ms, progress, admin_token_of(admin_token))
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path(chromium),
                                           args=CHROMIUM_ARGS, headless=True)
        try:
            summary = await run.run(browser)
        finally:
            await browser.close()
    if out is not None:
        from planaudit import atomic

        atomic.write_text(out, json.dumps(summary.to_json(), indent=1) + "\n")
    return summary


def simulate_sync(cohort: Cohort, url: str, concurrency: int = 4, chromium: str | None = None,
                  out: str | Path | None = None, timeout_ms: int = WAIT_MS,
                  progress=sys.stderr, admin_token: str | None = None) -> Summary:
    """`simulate`, for a caller with no event loop."""
    return asyncio.run(simulate(cohort, url, concurrency, chromium, out, timeout_ms, progress,
                                admin_token))


def admin_token_of(given: str | None) -> str:
    """The researchers' token the simulator asks the arms with; none is an input error,
    raised before any participant enters."""
    token = given if given is not None else os.environ.get(ADMIN_ENV, "")
    if not token:
        raise InputError(f"${ADMIN_ENV} is not set: simulated participants learn their arm "
                         "from the researchers' view (/admin/whois), since no page names "
                         "it; set it to the token the server was started with")
    return token


def main(args: argparse.Namespace) -> int:
    from planaudit.config import ConfigError

    try:
        cohort = load_cohort(args.cohort)
    except ConfigError as e:
        raise InputError(str(e)) from None
    if args.concurrency < 1:
        raise InputError(f"--concurrency {args.concurrency}: at least 1")
    admin_token_of(None)
    browser = chromium_path(args.chromium)
    if not Path(browser).is_file():
        raise InputError(f"{browser}: no Chromium there (--chromium PATH or ${CHROMIUM_ENV})")
    summary = simulate_sync(cohort, args.url, args.concurrency, browser, args.out,
                            int(args.timeout * 1000))
    print(json.dumps(summary.to_json(), indent=1))
    return EXIT_OK if summary.ok else EXIT_NEGATIVE

