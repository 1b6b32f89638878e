"""The console without a browser: escaping by construction, its pages on a keyless
loopback server, and what a change needs. (The browser drives it in
``test_console_browser.py``.)"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

from hindsight import Hindsight
from hindsight.api import create_app
from hindsight.console.markup import Html, bars, field, h, tag

ALICE = "user:alice"


@given(st.text())
def test_text_is_escaped_wherever_it_goes(value: str) -> None:
    inner = tag("p", value)[len("<p>") : -len("</p>")]
    assert "<" not in inner and ">" not in inner
    assert tag("a", "x", href=value).count('"') == 2  # no way out of the attribute
    assert "<script" not in bars(value, {value: 1.0}).lower()  # a chart's labels too
    assert h(Html("<b>")) == "<b>"  # markup made here stays markup


def test_a_fields_attributes_are_escaped_once() -> None:
    box = field("Also", "also", "a&b", placeholder='team "x"', required=True)
    assert '<input id="f-also" name="also" type="text" value="a&amp;b"' in box
    assert ' placeholder="team &quot;x&quot;" required>' in box  # not &amp;quot;


@pytest.fixture
def client(hs: Hindsight) -> Iterator[TestClient]:
    hs.retain(ALICE, "I live in Paris and I love jazz.", session_id="s1")
    hs.retain(ALICE, "<img src=x onerror=alert(1)> I moved to Berlin.", session_id="s2")
    with TestClient(create_app(hs, mcp=False), base_url="http://127.0.0.1") as http:
        yield http


def token(http: TestClient) -> str:
    page = http.get("/ui/").text
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    return found.group(1) if found else str(http.cookies.get("hindsight_csrf"))


@pytest.mark.embedded
@pytest.mark.parametrize(
    "path",
    [
        "/ui/",
        f"/ui/memories?owner={ALICE}",
        f"/ui/memories?owner={ALICE}&q=Berlin",
        f"/ui/recall?owner={ALICE}&q=where+does+she+live",
        f"/ui/sessions?owner={ALICE}",
        "/ui/review",
        "/ui/audit",
        f"/ui/forget?owner={ALICE}&session_id=s2",
        "/ui/llm",
        f"/ui/recall?owner={ALICE}&q=jazz&also=user:bob=0.5",
    ],
)
def test_every_page_answers_escaped_and_with_its_headers(client: TestClient, path: str) -> None:
    page = client.get(path)
    assert page.status_code == 200
    assert "<img src=x" not in page.text and "onerror=alert" not in page.text.replace(
        "onerror=alert(1)&gt;", ""
    )
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    assert page.headers["cache-control"] == "no-store"


@pytest.mark.embedded
def test_a_keyless_server_needs_no_sign_in_but_a_change_needs_its_token(
    client: TestClient, hs: Hindsight
) -> None:
    assert client.get("/ui/login", follow_redirects=False).status_code == 303
    memory = hs.list_memories(ALICE)[0]
    assert client.post("/ui/memory/pin", data={"id": memory.id}).status_code == 403
    assert not hs.get(memory.id).pinned
    done = client.post("/ui/memory/pin", data={"id": memory.id, "csrf": token(client)})
    assert done.status_code == 200 and "Pinned" in done.text
    assert hs.get(memory.id).pinned


@pytest.mark.embedded
def test_bad_input_is_said_and_changes_nothing(client: TestClient, hs: Hindsight) -> None:
    before = list(hs.export(ALICE))
    csrf = token(client)
    missing = client.get("/ui/memory?id=m_nope")
    assert missing.status_code == 404 and "m_nope" in missing.text
    empty = client.post(
        "/ui/memory/edit", data={"id": before[0]["id"], "content": " ", "csrf": csrf}
    )
    assert empty.status_code == 400 and "content is empty" in empty.text
    nothing = client.post("/ui/review/decide", data={"decision": "approve", "csrf": csrf})
    assert nothing.status_code == 400
    bad_time = client.get(f"/ui/forget?owner={ALICE}&since=soonish")
    assert bad_time.status_code == 400 and "since" in bad_time.text
    assert list(hs.export(ALICE)) == before


@pytest.mark.embedded
def test_the_forget_preview_deletes_nothing_and_the_confirmation_gives_a_receipt(
    client: TestClient, hs: Hindsight
) -> None:
    preview = client.get(f"/ui/forget?owner={ALICE}&session_id=s1")
    assert "Would forget" in preview.text and "Paris" in preview.text
    assert hs.list_memories(ALICE, session_id="s1")
    done = client.post(
        "/ui/forget", data={"owner": ALICE, "session_id": "s1", "csrf": token(client)}
    )
    assert done.status_code == 200 and "Keep the receipt" in done.text
    receipt = re.search(r"<code>(r_[^<]+)</code>", done.text)
    assert receipt is not None
    assert hs.list_memories(ALICE, session_id="s1") == []
    assert any(e.action == "forget" for e in hs.audit(ALICE))


@pytest.mark.embedded
def test_the_playground_searches_several_owners_by_weight(
    client: TestClient, hs: Hindsight
) -> None:
    hs.retain("shared:team", "The team plays jazz on Fridays.")
    page = client.get(f"/ui/recall?owner={ALICE}&q=jazz&also=shared:team=0.5")
    assert page.status_code == 200
    assert "of shared:team" in page.text and "owner weight 0.5" in page.text
    bad = client.get(f"/ui/recall?owner={ALICE}&q=jazz&also=shared:team=lots")
    assert bad.status_code == 400 and "is not a number" in bad.text
