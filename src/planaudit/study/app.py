"""The study's web application (FastAPI on uvicorn, Jinja templates): a participant's path
from consent to the completion code, every page a plain HTML form that works without
script, and the researchers' view behind a token.

The server owns the page index (as oTree does): a participant is always sent to their
stored step; a post for a page they have not reached is refused and stores nothing; a
post for a page already done, or one whose idempotency key was seen, stores nothing and
goes on to the stored step. Every post is committed before its response leaves, so a
reload, a closed tab or a restarted server resumes where the records say."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import re
import secrets
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from urllib.parse import quote, urlencode

from fastapi import FastAPI, Request
from fastapi.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape
from starlette.concurrency import run_in_threadpool

from planaudit.study import coding
from planaudit.study.assistant import Assistants, BudgetSpent, prose, unanswered
from planaudit.study.materials import Material, Materials
from planaudit.study.settings import ADMIN_ENV, Study, instance_tag
from planaudit.study.store import (
    Edit,
    EnrolmentClosed,
    NotReached,
    Participant,
    Store,
    keyed_hash,
    now,
)
from planaudit.study.tlx import PAIRS, SCALES, read_tlx

PLATFORM_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
PSEUDONYM = re.compile(r"[0-9a-f]{1,64}")  # a keyed hash (store.keyed_hash)
MAX_BODY = 256 * 1024  # no page of the path posts more; a larger body is refused unread
WHAT = {"participant": "participant id", "study": "study id", "session": "session id"}
# every response: no framing, no referrer (a page's URL holds the session token), no
# inline script (the one script is a file of the server's); pages are never cached, so the
# Back button asks the server for the participant's page as it is now
HEADERS = {"Content-Security-Policy": "default-src 'self'; script-src 'self'; "
                                      "style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                                      "object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
           "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
           "X-Content-Type-Options": "nosniff"}
STATIC = Path(__file__).with_name("static")
COOKIE = "planaudit_session"  # which browser holds a session (the elsewhere page)


class BadInput(Exception):
    """A post that cannot be stored: the page is shown again with the reason."""


class StaleForm(Exception):
    """A phase-2 form of a plan that has changed since its page was shown (a second tab):
    its step numbers point at other steps now, so nothing of it is applied."""


def plan_version(plan: list[str]) -> str:
    """What a phase-2 form says of the plan it was shown with (`version`)."""
    return hashlib.sha256(json.dumps(plan).encode()).hexdigest()[:16]


class SecurityHeaders:
    """Adds HEADERS to every response, and `Cache-Control: no-store` to all but the
    server's static files; plain ASGI (no second task per request, as Starlette's
    BaseHTTPMiddleware would add under the entry burst)."""

    def __init__(self, app):
        self.app = app
        self.headers = [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()]

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cached = scope["path"].startswith("/static/")

        async def with_headers(message):
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *self.headers,
                                      *([] if cached else [(b"cache-control", b"no-store")])]
            await send(message)

        await self.app(scope, receive, with_headers)


# what a page's script counts (static/paradata.js); the judge sums them per participant
PARADATA = ("paste", "pasted_chars", "blur", "hidden", "hidden_ms", "first_key_ms", "open_ms")
STUDY_PAGE = re.compile(r"/s/[A-Za-z0-9._-]{1,200}/[a-z0-9]{1,20}")  # a participant's page


class BodyLimit:
    """Refuses a request body over `limit` bytes, counted as it arrives (a chunked body
    has no Content-Length to trust), before the application reads any of it."""

    BACK = "__BACK__"  # where a rendered page links back to, filled in per request

    def __init__(self, app, limit: int, page: str, bare: str):
        self.app, self.limit, self.page, self.bare = app, limit, page, bare.encode()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                # back to the participant's page (a study page's GET shows their step)
                path = scope.get("path", "")
                page = (self.page.replace(self.BACK, path).encode()
                        if STUDY_PAGE.fullmatch(path) else self.bare)
                await send({"type": "http.response.start", "status": 413,
                            "headers": [(b"content-type", b"text/html; charset=utf-8"),
                                        (b"content-length", str(len(page)).encode()),
                                        (b"connection", b"close")]})
                await send({"type": "http.response.body", "body": page})
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body, given = b"".join(chunks), False

        async def replay():
            nonlocal given
            if given:
                return await receive()
            given = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def pages(study: Study, arm: str) -> list[str]:
    """The steps of one arm's path, in order (the last one is the completion page)."""
    sug = study.arm(arm).suggestion is not None
    return ["consent", "instructions", "example", "phase1", "phase2",
            *(["suggestion"] if sug else []), "tlx", "done"]


def create_app(study: Study, materials: Materials, store: Store,
               assistants: Assistants | None = None) -> FastAPI:
    if assistants is None and any(a.assistant is not None for a in study.arms):
        assistants = Assistants(study)
    app = FastAPI(title=f"planaudit study {study.name}", docs_url=None, redoc_url=None,
                  openapi_url=None)
    templates = Jinja2Templates(directory=str(Path(__file__).with_name("templates")))
    secret = store.open_study(study.name)

    # the full action list of each task (the `list` picker), rendered once: it is most of
    # a phase-2 page; in the task's words (PlanBench's on a PlanBench instance)
    options = {k: Markup("".join(f'<option value="{escape(a)}">{escape(m.words(a))}</option>'
                                 for a in m.actions)) for k, m in materials.instances.items()
               } if study.picker == "list" else {}

    def step_html(m: Material, step: str) -> Markup:
        """A step as a page shows it: PlanBench's words on a PlanBench instance, else the
        action as the brief writes it, in code type."""
        if m.in_planbench_words:
            return Markup('<span class="step">{}</span>').format(m.words(step))
        return Markup("<code>{}</code>").format(step)

    templates.env.globals["step_html"] = step_html
    templates.env.globals["said"] = prose  # a reply's text, its proposal's block left out
    # the task as people read it (without the brief's "minimise" line unless asked for)
    templates.env.globals["task_text"] = lambda m: m.instance_text(
        study.instructions["minimise"])

    arms, instances = [a.name for a in study.arms], list(study.instances)  # as enrol takes them
    # the consent text's paragraphs as prose, however the file wraps its lines
    consent = [" ".join(para.split()) for para in study.consent.split("\n\n") if para.strip()]

    def token(pid: str) -> str:
        sig = hmac.new(secret.encode(), f"session:{pid}".encode(), "sha256").hexdigest()[:24]
        return f"{pid}.{sig}"

    def page(request: Request, name: str, status: int = 200, **ctx) -> HTMLResponse:
        return templates.TemplateResponse(request, f"{name}.html", {"study": study, **ctx},
                                          status_code=status)

    def problem(request: Request, status: int, title: str, text: str,
                back: str | None = None) -> HTMLResponse:
        return page(request, "problem", status, title=title, text=text, back=back)

    def signed(tok: str) -> str | None:
        """The participant id a session token carries, if this study signed it."""
        pid, _, sig = tok.partition(".")
        # as bytes: a token of non-ASCII characters is a forgery like any other, not a 500
        return pid if sig and hmac.compare_digest(_bytes(token(pid)), _bytes(tok)) else None

    def who(tok: str) -> Participant | None:
        pid = signed(tok)
        p = None if pid is None else store.find(pid)
        return p if p is not None and p.study == study.name else None

    too_large = {back: templates.get_template("problem.html").render(
        study=study, title="Too much text", back=back,
        text=f"This page cannot take more than {MAX_BODY // 1024} KB. Go back, shorten your "
             "answer and send it again.") for back in (BodyLimit.BACK, None)}
    app.add_middleware(BodyLimit, limit=MAX_BODY, page=too_large[BodyLimit.BACK],
                       bare=too_large[None])
    app.add_middleware(SecurityHeaders)  # outermost: the body limit's page gets them too
    scripts = {p.name: p.read_bytes() for p in STATIC.glob("*.js")}

    @app.get("/static/{name}")
    def _static(name: str) -> Response:
        if name not in scripts:
            return PlainTextResponse("no such file", status_code=404)
        return Response(scripts[name], media_type="text/javascript",
                        headers={"Cache-Control": "public, max-age=3600"})

    @app.get("/healthz")
    def _health() -> PlainTextResponse:
        return PlainTextResponse("ok")

    @app.get("/", response_class=HTMLResponse)
    async def _enter(request: Request):
        q = request.query_params
        platform = {k: q.get(name) for k, name in study.params.items()}
        if not platform["participant"]:
            return problem(request, 400, "This link is incomplete",
                           f"The link that brought you here lacks your participant id (the "
                           f"URL parameter {study.params['participant']}). Please open the study "
                           "again from the platform's page.")
        for what, value in platform.items():  # each as the participant id: stored, logged
            if value is not None and not PLATFORM_ID.match(value):
                return problem(request, 400, "This link is not valid",
                               f"The {WHAT[what]} in the link ({study.params[what]}) is not one "
                               "a platform gives. Please open the study again from the "
                               "platform's page.")
        wanted = study.platform["study_id"]
        if wanted is not None and platform["study"] != wanted:
            return problem(request, 403, "This link is for another study",
                           f"The study id in the link ({study.params['study']}) is not this "
                           "study's. Please open the study from its own page on the platform.")
        if study.platform["require_session"] and not platform["session"]:
            return problem(request, 400, "This link is incomplete",
                           f"The link that brought you here lacks your session id (the URL "
                           f"parameter {study.params['session']}). Please open the study again "
                           "from the platform's page.")
        pseudonym = keyed_hash(secret, platform["participant"])
        try:
            # queued for the store's enrolment thread, which enrols a burst's entries in a
            # few transactions; awaited here, so a waiting entry holds no worker thread
            p, _new = await asyncio.wrap_future(store.enrolling(
                study.name, pseudonym, platform, arms, instances, study.allocation, "consent",
                **study.enrolment))
        except EnrolmentClosed as e:
            return page(request, "closed", 403, full=e.full)
        if p.finished:
            return page(request, "finished", code=study.completion_code, redirect=_redirect(study))
        if not _new and p.step != "consent" and request.cookies.get(COOKIE) != token(p.id):
            # another browser holds this session: its answers are not shown here unasked
            return page(request, "elsewhere", 409, params=dict(request.query_params),
                        key=secrets.token_hex(16))
        return _into(p, request)

    @app.post("/here", response_class=HTMLResponse)
    async def _here(request: Request):
        """Continue in this browser a session begun in another (the elsewhere page's
        button): the same checks as the entry link, then this browser holds it."""
        form = await request.form()
        value = str(form.get(study.params["participant"]) or "")
        if not PLATFORM_ID.match(value):
            return problem(request, 400, "This link is not valid",
                           "The page you sent lacks your participant id. Please open the study "
                           "again from the platform's page.")
        p = await run_in_threadpool(store.find_pseudonym, study.name, keyed_hash(secret, value))
        if p is None:
            return problem(request, 404, "No study begun",
                           "No session of this study was begun with this participant id. "
                           "Please open the study from the platform's page.")
        return _into(p, request)

    def _into(p: Participant, request: Request) -> RedirectResponse:
        """To the participant's step, this browser marked as the one that holds the session."""
        r = RedirectResponse(f"/s/{token(p.id)}/{p.step}", status_code=303)
        r.set_cookie(COOKIE, token(p.id), httponly=True, samesite="lax",
                     secure=request.url.scheme == "https")
        return r

    @app.get("/s/{tok}/{name}", response_class=HTMLResponse)
    async def _show(request: Request, tok: str, name: str):
        shown = await run_in_threadpool(show, tok, name)  # one hand-off to a worker thread
        if shown is None:
            return _foreign(request)
        if isinstance(shown, str):
            return RedirectResponse(f"/s/{tok}/{shown}", status_code=303)
        return page(request, name, tok=tok, key=secrets.token_hex(16), **shown)

    def show(tok: str, name: str) -> dict | str | None:
        """A page's context; its participant's step when it is another page; None for a
        token not of this study."""
        pid = signed(tok)
        if pid is None:
            return None
        p, got = store.view(pid, name)
        if p is None or p.study != study.name:
            return None
        if name != p.step:
            return p.step
        return context(p, name, got)

    @app.post("/s/{tok}/{name}", response_class=HTMLResponse)
    async def _post(request: Request, tok: str, name: str):
        got = await received(request, tok, name)
        if isinstance(got, Response):
            return got
        p, key, data, order = got
        if name == "phase2" and data.get("op") == "ask":
            return await ask(request, p, tok, key, data, order)
        try:
            step = await run_in_threadpool(submit, p, name, key, data, order)
        except NotReached:
            return _not_reached(request, f"/s/{tok}/{p.step}")
        except StaleForm:
            return problem(request, 409, "This page was out of date",
                           "Your plan was changed in another tab or window after this page was "
                           "shown, so nothing was done: its step numbers no longer point at the "
                           "same steps. Here is your plan as it is now.",
                           back=f"/s/{tok}/{p.step}")
        except BadInput as e:
            ctx = await run_in_threadpool(context, p, name)
            ctx.update(error=str(e), typed=data)
            return page(request, name, 422, tok=tok, key=secrets.token_hex(16), **ctx)
        return RedirectResponse(f"/s/{tok}/{step}", status_code=303)

    async def received(request: Request, tok: str, name: str
                       ) -> Response | tuple[Participant, str, dict, list[str]]:
        """A post's participant, form key, fields and path, or the page that refuses it
        (a foreign token, no form key, no such page, a page done or not reached)."""
        p = await run_in_threadpool(who, tok)
        if p is None:
            return _foreign(request)
        form = await request.form()
        data = {k: form.get(k) for k in form}
        key = str(data.get("key") or "")
        if not re.fullmatch(r"[0-9a-f]{32}", key):
            return problem(request, 400, "This form is incomplete",
                           "The page you sent lacks its form key. Reload the page and send it again.",
                           back=f"/s/{tok}/{p.step}")
        order = pages(study, p.arm)
        if name not in order or name == order[-1]:
            return problem(request, 404, "No such page", "There is no such page in this study.",
                           back=f"/s/{tok}/{p.step}")
        if order.index(name) < order.index(p.step):  # a stale form (the back button): its
            return RedirectResponse(f"/s/{tok}/{p.step}", status_code=303)  # page is done
        if order.index(name) > order.index(p.step):
            return _not_reached(request, f"/s/{tok}/{p.step}")
        return p, key, data, order

    async def ask(request: Request, p: Participant, tok: str, key: str, data: dict,
                  order: list[str]) -> Response:
        """A message to the assistant: stored first (nothing said is lost to a failing
        provider), then answered through `llm/`, the reply stored with its proposal judged."""
        try:
            chat = await asking(p, key, data, order)
        except NotReached:
            return _not_reached(request, f"/s/{tok}/{p.step}")
        except BadInput as e:
            ctx = await run_in_threadpool(context, p, "phase2")
            ctx.update(error=str(e), typed=data)
            return page(request, "phase2", 422, tok=tok, key=secrets.token_hex(16), **ctx)
        if isinstance(chat, str):  # sent twice, or the page is done: the first post is answered
            return RedirectResponse(f"/s/{tok}/{chat}", status_code=303)
        await replying(p, key, order, chat)
        return RedirectResponse(f"/s/{tok}/phase2#chat", status_code=303)

    async def asking(p: Participant, key: str, data: dict, order: list[str]) -> list[dict] | str:
        """The participant's message stored (`asked`): the conversation to answer, or the
        participant's step when the post was stored before (or the page is done)."""
        arm, m = study.arm(p.arm), materials.instances[p.instance]
        stored = await run_in_threadpool(store.post, p.id, "phase2", order, key, "ask",
                                         edit=lambda got: asked(arm, m, data, got))
        if not stored[1]:
            return stored[0]
        return (await run_in_threadpool(store.answers, p.id)).get("phase2", {}).get("chat", [])

    async def replying(p: Participant, key: str, order: list[str], chat: list[dict],
                       on_text=None) -> dict:
        """The reply to `chat` through `llm/` (`on_text`: its text as it arrives), stored
        with its proposal judged, or with its error; its record."""
        arm, m = study.arm(p.arm), materials.instances[p.instance]
        assert assistants is not None
        try:
            reply = await assistants.answer(arm, m, p.pseudonym, chat, on_text=on_text)
        except BudgetSpent as e:  # checked when asked; a second tab may have spent it since
            reply = {"role": "assistant", "text": None, "error": f"budget: {e}",
                     "proposal": None, "unsolvable": False, "verdict": None}

        def answered(got: dict | None, after_submit: bool = False) -> Edit:
            said = {**reply, "after_submit": True} if after_submit else reply
            kept = dict(got or {})
            kept["chat"] = [*kept.get("chat", []), said]
            event = {k: v for k, v in said.items() if k != "role"}
            return Edit("reply", event, kept)

        # a reply that arrives after the participant submitted (another tab, or Submit
        # pressed while it streamed) is kept with its cost, marked: they never saw it
        await run_in_threadpool(store.post, p.id, "phase2", order, key[:28] + "repl", "reply",
                                edit=answered, late=lambda got: answered(got, True))
        return reply

    @app.post("/s/{tok}/phase2/ask")
    async def _ask_streamed(request: Request, tok: str):
        """The ask form posted by static/chat.js: the form post's checks and records, the
        reply's text sent as server-sent events as it arrives (`text`), then `done` with
        the page to show again, or `error` with what the page without script would say
        (`url` set when the reply was stored with its error). A post the form would not
        store (a foreign token, no key, a page not reached) gets the form post's page."""
        got = await received(request, tok, "phase2")
        if isinstance(got, Response):
            return got
        p, key, data, order = got
        again = f"/s/{tok}/phase2#chat"
        try:
            chat = await asking(p, key, data, order)
        except NotReached:
            return _not_reached(request, f"/s/{tok}/{p.step}")
        except BadInput as e:  # nothing stored: said, and the participant can send again
            return _events([("error", {"message": str(e), "url": None})], 422)
        if isinstance(chat, str):
            return _events([("done", {"url": f"/s/{tok}/{chat}"})])
        pieces: asyncio.Queue = asyncio.Queue()
        # the reply is answered and stored whether or not the page stays to read it: a task
        # of its own, which a closed connection does not cancel
        task = asyncio.create_task(replying(p, key, order, chat, on_text=pieces.put_nowait))
        replies.add(task)
        task.add_done_callback(replies.discard)
        task.add_done_callback(lambda _: pieces.put_nowait(None))

        async def stream():
            while (text := await pieces.get()) is not None:
                yield _event("text", text)
            reply = task.result()
            if reply.get("error") is not None:
                from planaudit.study.assistant import UNAVAILABLE

                yield _event("error", {"message": UNAVAILABLE, "url": again})
            else:
                yield _event("done", {"url": again})

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"X-Accel-Buffering": "no"})

    replies: set[asyncio.Task] = set()  # replies being answered (kept from the collector)

    def asked(arm, m: Material, data: dict, got: dict | None) -> Edit:
        """The participant's message appended to the stored conversation (inside the
        post's transaction), within the arm's budget."""
        from planaudit.study.assistant import budget

        a = arm.assistant
        if a is None:
            raise BadInput("This page has no assistant.")
        text = str(data.get("message") or "").replace("\r\n", "\n").strip()
        if not text:
            raise BadInput("Write a message to the assistant first.")
        if len(text) > a.message_chars:
            raise BadInput(f"Your message is {len(text)} characters long; the assistant takes at "
                           f"most {a.message_chars}. Please shorten it.")
        kept = dict(got or {})
        chat = list(kept.get("chat", []))
        t = now()
        if chat and chat[-1]["role"] == "user":
            sent = chat[-1].get("at")
            assert assistants is not None
            if sent is None or (t - datetime.fromisoformat(sent)).total_seconds() <= \
                    assistants.waits_at_most(arm):
                raise BadInput("The assistant is still answering your last message; reload "
                               "the page in a moment.")
            chat.append(unanswered(sent))  # it never will: the server stopped meanwhile
        used = budget(arm, chat)
        if used.turns_used >= a.turns:
            raise BadInput(f"You have used all {a.turns} messages to the assistant; you can "
                           "go on with your plan.")
        if used.tokens_used >= a.tokens:
            raise BadInput("The assistant's budget for you is used up; you can go on with "
                           "your plan.")
        plan = list(kept.get("plan", []))
        chat.append({"role": "user", "text": text, "plan": plan, "at": t.isoformat()})
        kept["chat"] = chat
        return Edit("ask", {"text": text, "turn": used.turns_used + 1, "plan": plan}, kept)

    @app.post("/s/{tok}/{name}/draft")
    async def _draft(request: Request, tok: str, name: str):
        p = await run_in_threadpool(who, tok)
        if p is None:
            return JSONResponse({"saved": False, "reason": "foreign session"}, status_code=403)
        form = await request.form()
        text = str(form.get("text") or "")
        if name != "phase1" or len(text) > study.text_chars:
            return JSONResponse({"saved": False}, status_code=422)
        saved = await run_in_threadpool(store.save_draft, p.id, name, {"text": text})
        return JSONResponse({"saved": saved})

    def _not_reached(request: Request, back: str) -> HTMLResponse:
        return problem(request, 409, "Not yet",
                       "You sent an answer for a page you have not reached yet; nothing was "
                       "stored. Please go on from the page you are on.", back=back)

    def _foreign(request: Request) -> HTMLResponse:
        return problem(request, 403, "This link is not yours or not valid",
                       "This page belongs to another session or another study, or its link was "
                       "changed. Please open the study again from the platform's page.")

    # -- pages -------------------------------------------------------------------------

    def context(p: Participant, name: str, got: dict[str, dict] | None = None) -> dict:
        """What page `name` shows `p`; `got`: their answers, read already."""
        if got is None:
            got = store.answers(p.id)
        m = materials.instances[p.instance]
        arm = study.arm(p.arm)
        sug = materials.suggestions.get(p.arm, {}).get(p.instance)
        order = pages(study, p.arm)
        # the body carries an opaque tag of the instance, never the arm (a participant who
        # reads the page's source must not learn their arm); the simulator asks /admin/whois
        ctx: dict = {"arm": arm, "material": m, "suggestion": sug,
                     "instance_tag": instance_tag(p.instance)}
        if name != order[-1]:  # the completion page is no step
            ctx.update(progress=order.index(name), steps=len(order) - 1)
        ctx["checks"] = study.checks_on(name)
        if name == "consent":
            ctx["consent"] = consent
        elif name in ("instructions", "example"):
            ctx["example"] = materials.example
            ctx["solution"] = materials.example_solution
        elif name == "phase1":
            ctx["text"] = ((got.get("phase1:draft") or {}).get("text")
                           or (got.get("phase1") or {}).get("text") or "")
        elif name == "phase2":
            plan = (got.get("phase2") or {}).get("plan", [])
            ctx["plan"] = plan
            ctx["version"] = plan_version(plan)
            ctx["phase1"] = (got.get("phase1") or {}).get("text", "")
            if study.picker == "list":
                ctx["options"] = options[p.instance]
            else:
                ctx["picker"] = m.picker
            if arm.feedback == "step" and plan:
                ctx["check"] = m.check(plan)
            if arm.show_state:
                ctx["state"] = m.state_after(plan)
            verdict = (got.get("phase2") or {}).get("verdict")
            if verdict is not None:
                ctx["verdict"] = verdict
            if arm.assistant is not None:
                from planaudit.study.assistant import UNAVAILABLE, budget

                chat = (got.get("phase2") or {}).get("chat", [])
                ctx.update(chat=chat, assistant=arm.assistant, budget=budget(arm, chat),
                           unavailable=UNAVAILABLE)
        elif name == "tlx":
            ctx["scales"] = SCALES
            ctx["pairs"] = PAIRS if study.tlx_pairwise else []
        elif name == "done":
            ctx["code"] = study.completion_code
            ctx["redirect"] = _redirect(study)
        return ctx

    def submit(p: Participant, name: str, key: str, data: dict, order: list[str]) -> str:
        m = materials.instances[p.instance]
        seen = paradata(data)
        kept = {"paradata": seen} if seen else None  # the submit event's data
        if name == "consent":
            if data.get("agree") != "yes":
                raise BadInput("To take part, choose \"I agree\". If you do not agree, close this page.")
            step, _ = store.post(p.id, name, order, key, "submit", answer={"agree": True,
                                 "consent_hash": study.consent_hash}, advance=True,
                                 consent_hash=study.consent_hash, data=kept)
            return step
        if name in ("instructions", "example"):
            said = attention(name, data)
            return store.post(p.id, name, order, key, "submit", advance=True, data=kept,
                              answer={"attention": said} if said else None)[0]
        if name == "phase1":
            # a form posts a line break as CRLF; the textarea's maxlength (and a draft) count one
            text = str(data.get("text") or "").replace("\r\n", "\n")
            if len(text) > study.text_chars:
                raise BadInput(f"Your plan is {len(text)} characters long; this page takes at "
                               f"most {study.text_chars}. Please shorten it.")
            if not text.strip():
                raise BadInput("Please write your plan in your own words before going on.")
            return store.post(p.id, name, order, key, "submit", answer={"text": text},
                              advance=True, data=kept)[0]
        if name == "phase2":
            return phase2(p, m, key, data, order, seen)
        if name == "suggestion":
            said = data.get("correct")
            if said not in ("yes", "no"):
                raise BadInput("Please say whether the suggested plan is correct.")
            return store.post(p.id, name, order, key, "submit", answer={"correct": said == "yes"},
                              advance=True, data=kept)[0]
        if name == "tlx":
            try:
                answer = read_tlx(data, study.tlx_pairwise)
            except ValueError as e:
                raise BadInput(str(e)) from None
            said = attention(name, data)
            if said:
                answer["attention"] = said
            return store.post(p.id, name, order, key, "submit", answer=answer, advance=True,
                              data=kept)[0]
        raise BadInput("This page takes no answer.")

    def paradata(data: dict) -> dict | None:
        """The page's integrity counts its script sent (`static/paradata.js`), kept with
        the post's event; anything else in the field (no script, a client of its own, a
        forgery) is dropped, never an error: paradata is never required."""
        raw = data.get("paradata")
        if not isinstance(raw, str) or len(raw) > 2000:
            return None
        try:
            got = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(got, dict):
            return None
        out = {}
        for k in PARADATA:
            v = got.get(k)
            if isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < 1e9:
                out[k] = int(v)
        return out or None

    def picked(m: Material, data: dict) -> str:
        """The grounded action an add names: `action` (the full list, or a client of its
        own), or `name` and `arg1`..`argN` (the default picker). Nothing picked, or a pick
        that is no action of this task, is said so in words."""
        if data.get("name") is not None:
            name = str(data["name"])
            row = next((r for r in m.picker if r["action"] == name), None)
            if row is None:
                raise BadInput("Choose one of the actions shown.")
            args = [str(data.get(f"arg{i}") or "") for i in range(1, len(row["slots"]) + 1)]
            if not all(args):
                raise BadInput(f"Choose every object of '{row['label']}' before adding it.")
            action = m.step_of(name, args)
            if action is None:
                raise BadInput("Those objects do not fit that action; choose them from its lists.")
            return action
        action = str(data.get("action") or "")
        if not action:
            raise BadInput("Choose an action first, then add it.")
        if action not in m.action_set:
            raise BadInput(f"'{action[:80]}' is not one of this task's actions; pick one "
                           "from the list.")
        return action

    def attention(name: str, data: dict) -> dict[str, str]:
        """The page's attention checks as answered (kept, right or wrong: a participant is
        never told; the export counts the failures); each must be answered."""
        said = {}
        for c in study.checks_on(name):
            choice = data.get(f"attention_{c.id}")
            if choice not in c.options:
                raise BadInput("Please answer every question on this page.")
            said[c.id] = choice
        return said

    def phase2(p: Participant, m: Material, key: str, data: dict, order: list[str],
               seen: dict | None = None) -> str:
        arm = study.arm(p.arm)
        op = data.get("op")
        shown = data.get("version")  # every page's form carries it; a client of its own may not

        def edit(stored: dict | None) -> Edit:  # inside the post's transaction
            plan = list((stored or {}).get("plan", []))
            if shown is not None and shown != plan_version(plan):
                raise StaleForm
            if op == "add":
                action = picked(m, data)
                if len(plan) >= study.plan_steps:
                    raise BadInput(f"A plan here has at most {study.plan_steps} steps.")
                plan.append(action)
                event = {"action": action}
            elif op == "undo":
                if not plan:
                    raise BadInput("There is no step to undo.")
                event = {"removed": plan.pop()}
            elif op in ("up", "down", "remove"):
                try:
                    i = int(str(data.get("index")))
                except ValueError:
                    raise BadInput("Pick a step of your plan.") from None
                if not 0 <= i < len(plan):
                    raise BadInput("Pick a step of your plan.")
                if op == "remove":
                    event = {"index": i, "removed": plan.pop(i)}
                else:
                    j = i - 1 if op == "up" else i + 1
                    if not 0 <= j < len(plan):
                        raise BadInput("That step cannot move further.")
                    plan[i], plan[j] = plan[j], plan[i]
                    event = {"from": i, "to": j}
            elif op == "adopt":  # the assistant's proposal taken as the plan, whole
                chat = (stored or {}).get("chat", [])
                try:
                    i = int(str(data.get("message")))
                except ValueError:
                    raise BadInput("Pick one of the assistant's plans.") from None
                if not 0 <= i < len(chat) or not chat[i].get("proposal"):
                    raise BadInput("Pick one of the assistant's plans.")
                steps = chat[i]["proposal"]
                bad = next((n for n, st in enumerate(steps, 1) if st not in m.action_set), None)
                if bad is not None:
                    raise BadInput(f"Step {bad} of that plan is not one of this task's actions, "
                                   "so it cannot be used as it is; add your steps yourself.")
                if len(steps) > study.plan_steps:
                    raise BadInput(f"A plan here has at most {study.plan_steps} steps.")
                plan = list(steps)
                event = {"message": i, "plan": plan}
            elif op == "unsolvable":  # a declaration, judged as a model's UNSOLVABLE is
                if data.get("sure") != "yes":
                    raise BadInput("To say that this task cannot be done, tick the box that "
                                   "says you are sure.")
                return Edit("submit", {"unsolvable": True, "plan": plan,
                                       "feedback_shown": arm.feedback},
                            {"plan": plan, "submitted": True, "unsolvable": True}, advance=True)
            elif op == "submit":
                if not plan:
                    raise BadInput("Your plan has no step yet: pick actions from the list.")
                check = m.check(plan)
                if arm.feedback == "submission" and not check.valid and data.get("confirm") != "yes":
                    # the verdict is shown with this plan until the plan changes
                    verdict = check.to_json()
                    return Edit("feedback", {"plan": plan, **verdict},
                                {"plan": plan, "verdict": verdict})
                return Edit("submit", {"plan": plan, "feedback_shown": arm.feedback},
                            {"plan": plan, "submitted": True}, advance=True)
            else:
                raise BadInput("Choose what to do with your plan.")
            if arm.feedback == "step":
                event["check"] = m.check(plan).to_json()
            return Edit(op, event, {"plan": plan})

        def edit_seen(stored: dict | None) -> Edit:  # the page's paradata with its event
            e = edit(stored)
            chat = (stored or {}).get("chat")
            answer = e.answer if chat is None or e.answer is None else {**e.answer, "chat": chat}
            return Edit(e.kind, e.data if not seen else {**(e.data or {}), "paradata": seen},
                        answer, e.advance)

        return store.post(p.id, "phase2", order, key, str(op), edit=edit_seen)[0]

    @app.get("/admin", response_class=HTMLResponse)
    async def _admin(request: Request):
        if not _admin_ok(request):
            return _denied(request)
        rows = await run_in_threadpool(store.status, study.name)
        return page(request, "admin", rows=rows, arms=[a.name for a in study.arms],
                    token=_admin_token(request))

    @app.get("/admin/records.jsonl")
    async def _records(request: Request):
        if not _admin_ok(request):
            return _denied(request)

        def dump() -> str:
            return "".join(json.dumps(r) + "\n" for r in store.records(study.name))

        return Response(await run_in_threadpool(dump), media_type="application/x-ndjson",
                        headers={"Content-Disposition":
                                 f'attachment; filename="{study.name}-records.jsonl"'})

    @app.get("/admin/whois")
    async def _whois(request: Request):
        """The arm and instance a platform id was given: for the researchers' own simulated
        participants, which must pick a script for their arm and may not read it in a page."""
        if not _admin_ok(request):
            return _denied(request)
        value = request.query_params.get("participant", "")
        if not PLATFORM_ID.match(value):
            return JSONResponse({"error": "participant: not a platform id"}, status_code=400)
        p = await run_in_threadpool(store.find_pseudonym, study.name, keyed_hash(secret, value))
        if p is None:
            return JSONResponse({"error": "no one entered with this platform id"},
                                status_code=404)
        return JSONResponse({"arm": p.arm, "instance": p.instance,
                             "instance_tag": instance_tag(p.instance), "step": p.step})

    # -- phase-1 texts coded by hand (study/coding.py) -----------------------------------
    # blind to arm: no page here names one, nor shows what depends on it (phase 2, a
    # suggestion); the token rides in the links only when it came in the URL

    def coding_list(coder: str) -> list[dict]:
        """Every phase-1 text with how many coders coded it, whether they agree, and what
        `coder` gave."""
        last = coding.latest(store.codings(study.name))
        out = []
        for pseudonym, instance, _text in store.phase1_texts(study.name):
            m = materials.instances.get(instance)
            if m is None:
                continue
            cats = {c: coding.category(r["kind"], r["value"], m)
                    for (who, c), r in last.items() if who == pseudonym}
            out.append({"pseudonym": pseudonym, "instance": instance, "coders": len(cats),
                        "agree": coding.agree(cats.values()), "mine": cats.get(coder)})
        return out

    def coding_page(pseudonym: str, coder: str) -> dict | None:
        """What the coding page of one text shows `coder`; None: no such text."""
        found = store.phase1_texts(study.name, pseudonym)
        if not found or found[0][1] not in materials.instances:
            return None
        _, instance, text = found[0]
        m = materials.instances[instance]
        reading, machine, steps = coding.automatic(text, m)
        mine = coding.latest(r for r in store.codings(study.name)
                             if r["pseudonym"] == pseudonym and r["coder"] == coder)
        got = mine.get((pseudonym, coder))
        return {"pseudonym": pseudonym, "instance": instance, "text": text, "material": m,
                "reading": reading, "machine": machine, "machine_steps": steps,
                "mine": got, "mine_category": None if got is None else
                coding.category(got["kind"], got["value"], m),
                "typed": "\n".join(got["value"]) if got and got["kind"] == "steps" else ""}

    def coder_of(request: Request, form: Mapping | None = None) -> str | None:
        name = str((form or {}).get("coder") or request.query_params.get("coder") or "")
        return name if coding.CODER.fullmatch(name) else None

    def bad_coder(request: Request) -> HTMLResponse:
        return problem(request, 400, "Which coder?",
                       "Give your coder name as coder=NAME in the page's address: 1 to 32 "
                       "letters, digits, '-' or '_'.", back=_coding_url(request, None))

    def _coding_url(request: Request, coder: str | None, pseudonym: str | None = None) -> str:
        q = {k: v for k, v in (("token", request.query_params.get("token")),
                               ("coder", coder)) if v}
        path = "/admin/coding" + (f"/{pseudonym}" if pseudonym else "")
        return path + ("?" + urlencode(q) if q else "")

    templates.env.globals["coding_url"] = _coding_url

    @app.get("/admin/coding", response_class=HTMLResponse)
    async def _coding(request: Request):
        if not _admin_ok(request):
            return _denied(request)
        coder = request.query_params.get("coder") or None  # none: the list asks for one
        if coder is not None and coder_of(request) is None:
            return bad_coder(request)
        texts = await run_in_threadpool(coding_list, coder or "")
        return page(request, "coding", texts=texts, coder=coder,
                    token=request.query_params.get("token", ""))

    @app.get("/admin/coding/{pseudonym}", response_class=HTMLResponse)
    async def _code(request: Request, pseudonym: str):
        if not _admin_ok(request):
            return _denied(request)
        coder = coder_of(request)
        if coder is None:
            return bad_coder(request)
        shown = (await run_in_threadpool(coding_page, pseudonym, coder)
                 if PSEUDONYM.fullmatch(pseudonym) else None)
        if shown is None:
            return _no_text(request, coder)
        return page(request, "code", coder=coder, categories=coding.CATEGORIES, **shown)

    @app.post("/admin/coding/{pseudonym}", response_class=HTMLResponse)
    async def _coded(request: Request, pseudonym: str):
        """A coding, stored as a new row (the last counts), then back to the list; a bad
        line is shown on the page again with the coder's text, and nothing stored."""
        if not _admin_ok(request):
            return _denied(request)
        form = await request.form()
        coder = coder_of(request, form)
        if coder is None:
            return bad_coder(request)
        shown = (await run_in_threadpool(coding_page, pseudonym, coder)
                 if PSEUDONYM.fullmatch(pseudonym) else None)
        if shown is None:
            return _no_text(request, coder)
        kind, typed = str(form.get("kind") or ""), str(form.get("steps") or "")
        try:
            value = coding.value_of(kind, typed, str(form.get("verdict") or ""),
                                    shown["material"])
        except coding.CodingError as e:
            return page(request, "code", 422, coder=coder, categories=coding.CATEGORIES,
                        **{**shown, "typed": typed}, error=str(e))
        await run_in_threadpool(store.code, study.name, pseudonym, coder, kind, value)
        return RedirectResponse(_coding_url(request, coder), status_code=303)

    def _no_text(request: Request, coder: str) -> HTMLResponse:
        return problem(request, 404, "No such text",
                       "No participant of this study sent a phase-1 text under this pseudonym.",
                       back=_coding_url(request, coder))

    def _admin_token(request: Request) -> str:
        auth = request.headers.get("authorization", "")
        return auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else \
            request.query_params.get("token", "")

    def _admin_ok(request: Request) -> bool:
        want = os.environ.get(ADMIN_ENV, "")
        return bool(want) and hmac.compare_digest(_bytes(want), _bytes(_admin_token(request)))

    def _denied(request: Request) -> HTMLResponse:
        if not os.environ.get(ADMIN_ENV):
            return problem(request, 403, "The researchers' view is off",
                           f"Set {ADMIN_ENV} in the server's environment to open it.")
        return problem(request, 403, "Not allowed", "This page needs the researchers' token.")

    return app


def _event(name: str, data) -> str:
    """One server-sent event; its data JSON (a text's newlines kept inside one line)."""
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"


def _events(events: list[tuple[str, object]], status: int = 200) -> Response:
    return Response("".join(_event(n, d) for n, d in events), status_code=status,
                    media_type="text/event-stream")


def _bytes(text: str) -> bytes:
    """A token as bytes to compare (whatever characters a request carried)."""
    return text.encode("utf-8", "surrogateescape")


def _redirect(study: Study) -> str | None:
    if not study.redirect:
        return None
    return study.redirect.replace("{code}", quote(study.completion_code))
