"""The console's changes (POST): each one library call made as the signed-in caller,
then the page that says what happened (a redirect to it, or a receipt)."""

from __future__ import annotations

import json
from collections.abc import Callable

from starlette.responses import RedirectResponse, Response

from hindsight import views
from hindsight.console.call import Call, safe_next, sign_in_cookie
from hindsight.console.forget import FORGET_FILTERS, forget_args, forgetting
from hindsight.console.markup import Html, definitions, join, link, tag, url
from hindsight.console.widgets import problem
from hindsight.errors import AuthenticationError, PermissionDeniedError, ValidationError
from hindsight.models import ForgetReceipt, RetainResult


async def sign_in(call: Call) -> Response:
    data = await call.form()
    key = (data.get("key") or [""])[0].strip()
    nxt = safe_next((data.get("next") or ["/ui/"])[0])
    keyring = call.request.app.state.keyring
    if keyring is None:
        return RedirectResponse("/ui/", status_code=303)
    try:
        keyring.authenticate(key)
    except AuthenticationError as exc:
        return call.html(
            "Sign in", join([problem(exc), tag("p", link("Try again", "/ui/login"))]), status=401
        )
    response = RedirectResponse(nxt, status_code=303)
    sign_in_cookie(response, call.request, key)
    return response


async def sign_out(call: Call) -> Response:
    response = RedirectResponse("/ui/login", status_code=303)
    sign_in_cookie(response, call.request, None)
    return response


async def _post_id(call: Call) -> tuple[str, dict[str, list[str]]]:
    data = await call.form()
    memory_id = (data.get("id") or [""])[0]
    if not memory_id:
        raise ValidationError("no memory id was sent")
    return memory_id, data


def _back(memory_id: str, done: str) -> Response:
    return RedirectResponse(url("/ui/memory", id=memory_id, done=done), status_code=303)


async def edit(call: Call) -> Response:
    memory_id, data = await _post_id(call)
    await call.run(call.hs.update, memory_id, content=(data.get("content") or [""])[0])
    return _back(memory_id, "Saved: the new content is re-embedded.")


async def pin(call: Call) -> Response:
    memory_id, _ = await _post_id(call)
    await call.run(call.hs.pin, memory_id)
    return _back(memory_id, "Pinned: it neither decays nor is archived.")


async def unpin(call: Call) -> Response:
    memory_id, _ = await _post_id(call)
    await call.run(call.hs.unpin, memory_id)
    return _back(memory_id, "Unpinned.")


async def feedback(call: Call) -> Response:
    memory_id, data = await _post_id(call)
    useful = (data.get("useful") or [""])[0] == "yes"
    m = await call.run(call.hs.feedback, memory_id, useful)
    return _back(memory_id, f"Thanks: its confidence is now {m.confidence:.2f}.")


async def forget_one(call: Call) -> Response:
    memory_id, _ = await _post_id(call)
    receipt = await call.run(call.hs.forget, memory_id)
    return call.html("Forgotten", _receipt(receipt), notice="Forgotten. Keep the receipt.")


def _receipt(r: ForgetReceipt) -> Html:
    return join(
        [
            definitions(
                [
                    ("receipt", tag("code", r.id)),
                    ("at", r.at),
                    ("criteria", json.dumps(views.receipt(r)["criteria"], default=str)),
                    ("deleted", len(r.deleted_ids)),
                    ("derived, deleted with them", len(r.derived_ids)),
                    ("made current again", len(r.restored_ids)),
                ]
            ),
            tag(
                "details",
                tag("summary", "Ids"),
                tag("pre", "\n".join([*r.deleted_ids, *r.derived_ids])),
            ),
        ]
    )


async def _session_action(
    call: Call, fn: Callable[[str, str], RetainResult], done: str
) -> Response:
    data = await call.form()
    owner, sid = (data.get("owner") or [""])[0], (data.get("sid") or [""])[0]
    result = await call.run(fn, owner, sid)
    note = f"{done}: {len(result.episodes)} turn(s) kept, {len(result.created)} memories made."
    return RedirectResponse(url("/ui/sessions", owner=owner, done=note), status_code=303)


async def consolidate(call: Call) -> Response:
    return await _session_action(call, call.hs.consolidate, "Moved")


async def close(call: Call) -> Response:
    return await _session_action(call, call.hs.close_session, "Closed")


async def decide(call: Call) -> Response:
    data = await call.form()
    ids = data.get("id") or []
    decision = (data.get("decision") or [""])[0]
    if decision not in ("approve", "reject") or not ids:
        raise ValidationError("choose memories, then approve or reject")
    fn = call.hs.approve if decision == "approve" else call.hs.reject
    for n, memory_id in enumerate(ids):
        try:
            await call.run(fn, memory_id)
        except PermissionDeniedError as exc:
            # the caller reads it (an id it may not read is unknown: a 404 as ever) but may
            # not decide on it: no reviewer, its writer, or a rejection without admin
            body = join([problem(exc), tag("p", f"Decided before it: {n}.")])
            return call.html("Not allowed", body, active="Review", status=403)
    done = f"{'Approved' if decision == 'approve' else 'Rejected'} {len(ids)}."
    return RedirectResponse(url("/ui/review", done=done), status_code=303)


async def forget_many(call: Call) -> Response:
    data = await call.form()
    args = forget_args({k: (data.get(k) or [""])[0] for k in FORGET_FILTERS})
    owner = args.pop("owner")
    if not owner:
        raise ValidationError("choose an owner")
    receipt = await call.run(forgetting(call, owner, args, dry_run=False))
    return call.html(
        "Forgotten", _receipt(receipt), active="Forget", notice="Forgotten. Keep the receipt."
    )


async def retry_jobs(call: Call) -> Response:
    data = await call.form()
    owner = (data.get("owner") or [""])[0] or None
    count = await call.run(call.hs.retry_jobs, owner)
    return RedirectResponse(
        url("/ui/llm", owner=owner, done=f"Queued {count} job(s) again."), status_code=303
    )
