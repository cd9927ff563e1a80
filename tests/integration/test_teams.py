"""A relay a team shares: named credentials with roles, sessions with owners, shares, and fair limits,
through real requests to a relay started with a credentials file."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.conftest import Relay, error_of, line_of, ok, target, until
from tests.redis_server import Cluster

ALICE, BOB, VAL, ROOT, CAROL, DAVE = (
    f"{who}-token-0123456789" for who in ("alice", "bob", "val", "root", "carol", "dave")
)
BASIC = target("basic.py")
DEBUGRELAY = str(Path(sys.executable).parent / "debugrelay")

CREDENTIALS = f"""
[defaults]
max_sessions = 5
requests_per_minute = 6000

[[credentials]]
name = "alice"
token = "{ALICE}"
role = "agent"

[[credentials]]
name = "bob"
token = "{BOB}"
role = "agent"

[[credentials]]
name = "val"
token = "{VAL}"
role = "viewer"

[[credentials]]
name = "root"
token = "{ROOT}"
role = "admin"

[[credentials]]
name = "carol"
token = "{CAROL}"
role = "agent"
requests_per_minute = 60

[[credentials]]
name = "dave"
token = "{DAVE}"
role = "agent"
max_sessions = 1
"""


class Team:
    def __init__(self, relay: Relay, file: Path) -> None:
        self.relay, self.file = relay, file
        self.clients: dict[str, httpx.Client] = {}

    def __getitem__(self, token: str) -> httpx.Client:
        if token not in self.clients:
            self.clients[token] = httpx.Client(
                base_url=self.relay.url, timeout=60, headers={"Authorization": f"Bearer {token}"}
            )
        return self.clients[token]

    def close(self) -> None:
        for client in self.clients.values():
            client.close()


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    tmp = tmp_path_factory.mktemp("team")
    file = tmp / "credentials.toml"
    file.write_text(CREDENTIALS)
    os.chmod(file, 0o600)
    relay = Relay(
        tmp,
        env={"DEBUGRELAY_CREDENTIALS": str(file), "DEBUGRELAY_ALLOWED_ROOTS": str(tmp_path_factory.getbasetemp())},
    )
    t = Team(relay, file)
    try:
        yield t
    finally:
        try:
            for s in ok(t[ROOT].get("/sessions"))["sessions"]:  # what a failed test left
                t[ROOT].delete(f"/sessions/{s['session_id']}")
        finally:
            t.close()
            relay.stop()  # ends its targets and its warm pool


def in_force(team: Team) -> dict[str, dict[str, Any]]:
    """The credentials the relay accepts now, by name (as an admin reads them)."""
    return {c["name"]: c for c in ok(team[ROOT].get("/credentials"))["credentials"]}


def restore(team: Team, original: str) -> None:
    team.file.write_text(original)
    until(lambda: "bob" in in_force(team) and not in_force(team)["val"].get("expired"), "the original credentials")


def create(client: httpx.Client, **body: Any) -> str:
    sid: str = ok(client.post("/sessions", json=body), 201)["session_id"]
    return sid


def paused_at_add(client: httpx.Client, **body: Any) -> str:
    """A session of ``client``'s credential, its program paused at basic.py's ``add-body`` line."""
    sid = create(client, **body)
    line = {"source": {"path": BASIC}, "line": line_of(BASIC, "add-body")}
    ok(client.post(f"/sessions/{sid}/breakpoints", json=line))
    ok(client.post(f"/sessions/{sid}/launch", json={"script": BASIC}))
    assert ok(client.post(f"/sessions/{sid}/wait", json={"timeout": 30}))["status"] == "paused"
    return sid


def listed(client: httpx.Client) -> set[str]:
    return {s["session_id"] for s in ok(client.get("/sessions"))["sessions"]}


def test_with_credentials_every_request_needs_one_loopback_included(team: Team) -> None:
    with httpx.Client(base_url=team.relay.url) as stranger:
        error_of(stranger.get("/sessions"), 401, "unauthorized")
        assert stranger.get("/livez").status_code == 200  # the probes stay open
    error_of(team["not-a-known-token-at-all"].get("/sessions"), 401, "unauthorized")


def test_an_agent_sees_and_drives_only_its_own_sessions(team: Team) -> None:
    mine = create(team[ALICE], name="alice's")
    assert ok(team[ALICE].get(f"/sessions/{mine}"))["created_by"] == "alice"
    assert mine in listed(team[ALICE])
    assert mine not in listed(team[BOB])
    for response in (
        team[BOB].get(f"/sessions/{mine}/status"),
        team[BOB].post(f"/sessions/{mine}/breakpoints", json={"source": {"path": BASIC}, "line": 8}),
        team[BOB].delete(f"/sessions/{mine}"),
    ):
        err = error_of(response, 403, "forbidden")
        assert "alice" in err["message"] and err["details"]["owner"] == "alice"  # names the owner: no hidden 404
    assert ok(team[ALICE].get(f"/sessions/{mine}/breakpoints"))["breakpoints"] == []  # nothing changed
    assert mine in listed(team[ROOT])  # an admin sees every session


def test_a_viewer_reads_every_session_and_changes_nothing(team: Team) -> None:
    sid = paused_at_add(team[ALICE])

    assert sid in listed(team[VAL])
    assert ok(team[VAL].get(f"/sessions/{sid}/status"))["status"] == "paused"
    frame = ok(team[VAL].get(f"/sessions/{sid}/stacktrace"))["frames"][0]
    assert frame["line"] == line_of(BASIC, "add-body")
    for response in (
        team[VAL].post(f"/sessions/{sid}/evaluate", json={"expression": "a + b"}),
        team[VAL].post(f"/sessions/{sid}/continue"),
        team[VAL].post(f"/sessions/{sid}/breakpoints", json={"source": {"path": BASIC}, "line": 9}),
        team[VAL].delete(f"/sessions/{sid}"),
        team[VAL].post("/sessions", json={}),
        team[VAL].get(f"/sessions/{sid}/ping"),  # a heartbeat keeps it alive: a change
    ):
        err = error_of(response, 403, "forbidden")
        assert "viewer" in err["message"]
    assert ok(team[ALICE].get(f"/sessions/{sid}/status"))["status"] == "paused"  # still where it was
    assert len(ok(team[ALICE].get(f"/sessions/{sid}/breakpoints"))["breakpoints"]) == 1
    team[ALICE].delete(f"/sessions/{sid}")


def test_sharing_lets_another_agent_watch_and_drive_not_run_code_and_can_be_withdrawn(team: Team) -> None:
    sid = paused_at_add(team[ALICE])
    add_body = line_of(BASIC, "add-body")

    shared = ok(team[ALICE].post(f"/sessions/{sid}/share", json={"names": ["bob"]}))
    assert shared["shared_with"] == ["bob"]
    assert sid in listed(team[BOB])
    assert ok(team[BOB].get(f"/sessions/{sid}/stacktrace"))["frames"][0]["line"] == add_body
    ok(team[BOB].post(f"/sessions/{sid}/step-over"))  # drives it
    err = error_of(team[BOB].post(f"/sessions/{sid}/evaluate", json={"expression": "1 + 1"}), 403, "forbidden")
    assert err["details"]["owner"] == "alice" and err["details"]["shared"] is True
    error_of(team[BOB].post(f"/sessions/{sid}/share", json={"names": ["carol"]}), 403, "forbidden")
    assert ok(team[ALICE].post(f"/sessions/{sid}/evaluate", json={"expression": "1 + 1"}))["result"] == "2"
    assert ok(team[ROOT].post(f"/sessions/{sid}/evaluate", json={"expression": "2 + 2"}))["result"] == "4"

    ok(team[ALICE].post(f"/sessions/{sid}/unshare", json={"names": ["bob"]}))
    assert sid not in listed(team[BOB])
    error_of(team[BOB].get(f"/sessions/{sid}/stacktrace"), 403, "forbidden")

    ok(team[ALICE].post(f"/sessions/{sid}/share", json={"names": ["role:agent"]}))  # every agent
    assert sid in listed(team[BOB]) and sid in listed(team[CAROL])
    error_of(team[ALICE].post(f"/sessions/{sid}/share", json={"names": ["role:wizard"]}), 400)
    team[ALICE].delete(f"/sessions/{sid}")


def test_a_credentials_file_is_read_again_without_a_restart(team: Team) -> None:
    sid = create(team[BOB])
    original = team.file.read_text()
    try:
        # bob removed, a new viewer added, alice expired: each takes effect while the relay runs
        edited = original.replace(f'name = "bob"\ntoken = "{BOB}"', 'name = "eve"\ntoken = "eve-token-0123456789"')
        edited = edited.replace('name = "alice"\ntoken', 'name = "alice"\nexpires = 2001-01-01T00:00:00Z\ntoken')
        team.file.write_text(edited)
        until(lambda: "eve" in in_force(team), "the relay to read the file again")
        assert in_force(team)["alice"].get("expired") and "bob" not in in_force(team)
        error_of(team[BOB].get("/sessions"), 401, "unauthorized")
        error_of(team[ALICE].get("/sessions"), 401, "unauthorized")
        assert ok(team["eve-token-0123456789"].get("/sessions"))["total"] >= 0
        assert sid in listed(team[ROOT])  # bob's session is kept: an admin can still end it

        team.file.write_text("this is [not toml")  # a bad file keeps the last good set, and says why
        said = "last good credentials stay in force"
        problem = until(lambda: ok(team[ROOT].get("/credentials")).get("problem"), "the relay to say why")
        assert said in problem and "not TOML" in problem and said in team.relay.log.read_text()
        assert team["eve-token-0123456789"].get("/sessions").status_code == 200
    finally:
        restore(team, original)
        team[ROOT].delete(f"/sessions/{sid}")


def test_a_burst_from_one_credential_is_refused_while_another_is_served(team: Team) -> None:
    refused = None
    for _ in range(200):
        response = team[CAROL].get("/sessions")
        assert team[ALICE].get("/sessions").status_code == 200  # alice is served all along
        if response.status_code == 429:
            refused = response
            break
    assert refused is not None, "carol's burst was never limited"
    err = error_of(refused, 429, "rate_limited")
    assert err["details"]["limit"] == "requests_per_minute"
    assert int(refused.headers["Retry-After"]) >= 1


def test_a_credential_holds_at_most_its_sessions(team: Team) -> None:
    first = create(team[DAVE])
    err = error_of(team[DAVE].post("/sessions", json={}), 429, "too_many_sessions")
    assert err["details"]["limit"] == "max_sessions" and err["details"]["caller"] == "dave"
    assert create(team[ALICE])  # others still create theirs
    team[DAVE].delete(f"/sessions/{first}")
    team[DAVE].delete(f"/sessions/{create(team[DAVE])}")


@asynccontextmanager
async def mcp_agent(url: str, token: str) -> AsyncIterator[ClientSession]:
    """The MCP SDK's own client at the relay's /mcp, with ``token``'s credential."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with (
        http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def tool(session: ClientSession, name: str, **args: Any) -> tuple[bool, dict[str, Any]]:
    result = await session.call_tool(name, args)
    data: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]
    return bool(result.is_error), data


def test_mcp_follows_the_same_rules(team: Team) -> None:
    sid = paused_at_add(team[ALICE])
    bobs = create(team[BOB], name="bob's own")

    async def run() -> None:
        async with mcp_agent(team.relay.url, ALICE) as alice:
            failed, data = await tool(alice, "debug_evaluate", expression="a + b", session_id=sid)
            assert not failed and data["result"] == "3", data
            failed, data = await tool(alice, "debug_status", session_id=bobs)
            assert failed and data["error"]["code"] == "forbidden" and data["error"]["details"]["owner"] == "bob"
        async with mcp_agent(team.relay.url, BOB) as bob:
            failed, data = await tool(bob, "debug_status")  # the newest session bob may see: his own
            assert not failed and data["session_id"] == bobs, data
        async with mcp_agent(team.relay.url, VAL) as val:
            failed, data = await tool(val, "debug_status", session_id=sid)
            assert not failed and data["status"] == "paused"
            failed, data = await tool(val, "debug_evaluate", expression="a + b", session_id=sid)
            assert failed and data["error"]["code"] == "forbidden"
            failed, data = await tool(val, "debug_continue", session_id=sid)
            assert failed and data["error"]["code"] == "forbidden"

    asyncio.run(run())
    with httpx.Client(base_url=team.relay.url) as stranger:  # no credential: /mcp is closed too
        error_of(stranger.post("/mcp", json={}), 401, "unauthorized")
    assert ok(team[ALICE].get(f"/sessions/{sid}/status"))["status"] == "paused"
    for each, owner in ((sid, ALICE), (bobs, BOB)):
        team[owner].delete(f"/sessions/{each}")


@contextmanager
def signed_into_view(team: Team, token: str) -> Iterator[httpx.Client]:
    """A person's browser session on the live view, signed in with ``token`` (the cookie carries on)."""
    with httpx.Client(base_url=team.relay.url, timeout=60) as person:
        assert person.post("/ui/login", json={"token": token}).status_code == 204
        yield person


def test_the_live_view_shows_each_credential_what_it_may_see(team: Team) -> None:
    alices, bobs = create(team[ALICE], name="alice-view"), create(team[BOB], name="bob-view")
    with signed_into_view(team, BOB) as bob, signed_into_view(team, VAL) as val:
        page = bob.get("/ui").text
        assert bobs in page and alices not in page
        refused = bob.get(f"/ui/sessions/{alices}")
        assert refused.status_code == 403 and "alice" in refused.text and "alice-view" not in refused.text
        assert bob.get(f"/ui/sessions/{bobs}").status_code == 200
        listed_for_viewer = val.get("/ui").text
        assert alices in listed_for_viewer and bobs in listed_for_viewer
        ok(team[ALICE].patch(f"/sessions/{alices}", json={"name": "alice-view-renamed"}))
        page = val.get(f"/ui/sessions/{alices}")
        assert page.status_code == 200 and "<td class=who>alice</td>" in page.text  # the trail names who
        error_of(team[ALICE].post("/ui/login", json={"token": "nope-not-a-token"}), 401, "unauthorized")
    for sid, owner in ((alices, ALICE), (bobs, BOB)):
        team[owner].delete(f"/sessions/{sid}")


def test_a_removed_credential_signs_its_view_out(team: Team) -> None:
    original = team.file.read_text()
    with signed_into_view(team, VAL) as val:
        assert val.get("/ui").status_code == 200
        try:
            team.file.write_text(original.replace('role = "viewer"', 'role = "viewer"\nexpires = 2001-01-01'))
            until(lambda: in_force(team)["val"].get("expired"), "the relay to read the file again")
            assert val.get("/ui").status_code == 401  # asked to sign in again
        finally:
            restore(team, original)


def test_the_audit_trail_names_who_did_what_on_every_replica_and_across_a_restart(cluster: Cluster) -> None:
    file = cluster.tmp / "credentials.toml"
    file.write_text(CREDENTIALS)
    env = {"DEBUGRELAY_CREDENTIALS": str(file), "DEBUGRELAY_TOKEN": "the-operators-own-admin-token"}
    first, second = cluster.relay(**env), cluster.relay(**env)

    def as_(relay: Relay, token: str) -> httpx.Client:
        return httpx.Client(base_url=relay.url, timeout=60, headers={"Authorization": f"Bearer {token}"})

    with as_(first, ALICE) as alice, as_(second, ALICE) as alice_there, as_(second, BOB) as bob_there:
        sid = create(alice, name="audited")
        add_body = line_of(BASIC, "add-body")
        ok(alice.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": BASIC}, "line": add_body}))
        ok(alice.post(f"/sessions/{sid}/launch", json={"script": BASIC, "env": {"API_KEY": "hunter2-secret"}}))
        assert ok(alice.post(f"/sessions/{sid}/wait", json={"timeout": 30}))["status"] == "paused"
        # through the other replica: forwarded to the session's owner, still as alice, and bob still refused
        assert ok(alice_there.post(f"/sessions/{sid}/evaluate", json={"expression": "a + b"}))["result"] == "3"
        err = error_of(bob_there.post(f"/sessions/{sid}/evaluate", json={"expression": "open('x')"}), 403, "forbidden")
        assert err["details"]["owner"] == "alice"
        ok(alice.get(f"/sessions/{sid}/stacktrace"))  # a read: not audited

    def trail(relay: Relay) -> list[tuple[str | None, str, bool]]:
        page = ok(relay.http.get("/audit", params={"session_id": sid}))
        return [(e.get("who"), e["operation"], e.get("ok", True)) for e in reversed(page["entries"])]

    expected = [
        ("alice", "create_session", True),
        ("alice", "add_breakpoints", True),
        ("alice", "launch", True),
        ("alice", "wait", True),
        ("alice", "evaluate", True),
        ("bob", "evaluate", False),
    ]
    assert trail(first) == trail(second) == expected
    refused = ok(first.http.get("/audit", params={"who": "bob"}))["entries"][0]
    assert refused["call"].startswith("POST /sessions/") and "forbidden" in refused["result"]
    assert "hunter2" not in first.http.get("/audit").text
    with as_(first, ALICE) as alice:
        error_of(alice.get("/audit"), 403, "forbidden")  # admins only

    for relay in (first, second):
        relay.stop()
    assert trail(cluster.relay(**env)) == expected  # kept in the store: a restarted relay reads it


def test_the_cli_follows_the_same_rules(team: Team) -> None:
    def cli(token: str, *args: str) -> tuple[int, Any]:
        env = {**os.environ, "DEBUGRELAY_URL": team.relay.url, "DEBUGRELAY_TOKEN": token}
        done = subprocess.run([DEBUGRELAY, *args], env=env, capture_output=True, text=True, timeout=120, check=False)
        return done.returncode, json.loads(done.stdout if done.returncode == 0 else done.stderr)

    code, made = cli(ALICE, "create", "--name", "from-the-cli")
    sid = made["session_id"]
    assert code == 0 and ok(team[ROOT].get(f"/sessions/{sid}"))["created_by"] == "alice"
    code, refused = cli(BOB, "status", sid)
    assert code != 0 and refused["error"]["code"] == "forbidden" and refused["error"]["details"]["owner"] == "alice"
    code, shared = cli(ALICE, "share", sid, "bob")
    assert code == 0 and shared == {"session_id": sid, "shared_with": ["bob"]}
    code, status = cli(BOB, "status", sid)
    assert code == 0 and status["status"] == "created"
    code, refused = cli(VAL, "delete", sid)
    assert code != 0 and refused["error"]["code"] == "forbidden"
    code, withdrawn = cli(ALICE, "share", "--withdraw", sid, "bob")
    assert code == 0 and withdrawn["shared_with"] == []
    code, page = cli(ROOT, "audit", "--session", sid)
    assert code == 0 and [(e["who"], e["operation"]) for e in page["entries"]][:3] == [
        ("alice", "unshare"),
        ("val", "delete_session"),
        ("alice", "share"),
    ]
    code, refused = cli(ALICE, "audit")
    assert code != 0 and refused["error"]["code"] == "forbidden"
    team[ALICE].delete(f"/sessions/{sid}")


def test_a_shared_agent_cannot_run_its_code_through_a_breakpoint_or_read_the_owners_secrets(team: Team) -> None:
    sid = create(team[ALICE])
    ok(team[ALICE].post(f"/sessions/{sid}/share", json={"names": ["bob"]}))
    add_body = line_of(BASIC, "add-body")
    plain = ok(team[BOB].post(f"/sessions/{sid}/breakpoints", json={"source": {"path": BASIC}, "line": add_body}))
    assert plain  # a plain breakpoint is driving
    for body in ({"condition": "__import__('os').system('id')"}, {"log_message": "{__import__('os').getcwd()}"}):
        line = {"source": {"path": BASIC}, "line": add_body + 1, **body}
        err = error_of(team[BOB].post(f"/sessions/{sid}/breakpoints", json=line), 403, "forbidden")
        assert err["details"]["owner"] == "alice"
    bp = ok(team[ALICE].get(f"/sessions/{sid}/breakpoints"))["breakpoints"][0]["breakpoint_id"]
    patch = {"condition": "True"}
    error_of(team[BOB].patch(f"/sessions/{sid}/breakpoints/{bp}", json=patch), 403, "forbidden")
    ok(team[ALICE].patch(f"/sessions/{sid}/breakpoints/{bp}", json=patch))
    assert ok(team[BOB].get(f"/sessions/{sid}/export"))  # the configuration, secrets masked
    error_of(team[BOB].get(f"/sessions/{sid}/export", params={"reveal_env": "true"}), 403, "forbidden")

    ok(team[ALICE].post(f"/sessions/{sid}/launch", json={"script": BASIC}))
    assert ok(team[ALICE].post(f"/sessions/{sid}/wait", json={"timeout": 30}))["status"] == "paused"
    snapshot = ok(team[ALICE].post(f"/sessions/{sid}/snapshots"), 201)
    evidence = f"/evidence/{snapshot['snapshot_id']}"
    assert ok(team[BOB].get(evidence))["lines"]  # shared: bob reads it
    err = error_of(team[CAROL].get(evidence), 403, "forbidden")  # found by its id alone, still alice's
    assert err["details"]["owner"] == "alice"
    assert ok(team[VAL].get(evidence))["lines"]
    team[ALICE].delete(f"/sessions/{sid}")


def test_a_breakpoint_profile_carries_no_code_where_its_caller_may_not_run_code(team: Team) -> None:
    sid = create(team[ALICE])
    ok(team[ALICE].post(f"/sessions/{sid}/share", json={"names": ["bob"]}))
    add_body = line_of(BASIC, "add-body")
    probe = {"source": {"path": BASIC}, "line": add_body, "condition": "__import__('os').system('id') or True"}
    plain = {"source": {"path": BASIC}, "line": add_body + 1}
    # bob's own profile with a condition: bob drives alice's shared session, but runs no code in it
    ok(team[BOB].post("/breakpoint-profiles", json={"name": "bob-probe", "breakpoints": [probe]}), 201)
    err = error_of(team[BOB].post(f"/sessions/{sid}/breakpoint-profiles/bob-probe/apply"), 403, "forbidden")
    assert err["details"]["owner"] == "alice" and "run code" in err["message"]
    assert ok(team[ALICE].get(f"/sessions/{sid}/breakpoints"))["breakpoints"] == []
    ok(team[BOB].post("/breakpoint-profiles", json={"name": "bob-plain", "breakpoints": [plain]}), 201)
    assert ok(team[BOB].post(f"/sessions/{sid}/breakpoint-profiles/bob-plain/apply"))["breakpoints"]

    # alice's profile is alice's: another agent cannot rewrite what alice will apply (and run) later
    ok(team[ALICE].post("/breakpoint-profiles", json={"name": "alice-set", "breakpoints": [plain]}), 201)
    err = error_of(team[BOB].post("/breakpoint-profiles", json={"name": "alice-set", "breakpoints": [probe]}), 403)
    assert err["details"]["saved_by"] == "alice"
    kept = ok(team[BOB].get("/breakpoint-profiles/alice-set"))
    assert kept["saved_by"] == "alice" and "condition" not in kept["breakpoints"][0]
    ok(team[ALICE].post("/breakpoint-profiles", json={"name": "alice-set", "breakpoints": [probe]}), 201)
    assert ok(team[ROOT].post("/breakpoint-profiles", json={"name": "alice-set", "breakpoints": [plain]}), 201)[
        "replaced"
    ]

    # a profile saved from a session reads its breakpoints: only from a session the caller may read
    err = error_of(team[CAROL].post("/breakpoint-profiles", json={"name": "carol-copy", "session_id": sid}), 403)
    assert err["details"]["owner"] == "alice"
    error_of(team[CAROL].get("/breakpoint-profiles/carol-copy"), 404)
    ok(team[BOB].post("/breakpoint-profiles", json={"name": "bob-copy", "session_id": sid}), 201)
    team[ALICE].delete(f"/sessions/{sid}")


def test_an_identity_from_a_trusted_proxy_is_honoured_only_from_its_address(tmp_path: Path) -> None:
    file = tmp_path / "credentials.toml"
    file.write_text(
        CREDENTIALS
        + """
[proxy]
header = "X-Auth-Request-User"
trusted = ["127.0.0.1/32"]
default_role = "viewer"

[[credentials]]
name = "pat@example.com"
role = "agent"
"""
    )
    relay = Relay(tmp_path, env={"DEBUGRELAY_CREDENTIALS": str(file)})
    try:
        as_pat = {"X-Auth-Request-User": "pat@example.com"}
        with httpx.Client(base_url=relay.url, timeout=60) as proxy:
            sid = ok(proxy.post("/sessions", json={}, headers=as_pat), 201)["session_id"]
            assert ok(proxy.get(f"/sessions/{sid}", headers=as_pat))["created_by"] == "pat@example.com"
            someone = {"X-Auth-Request-User": "someone.else@example.com"}  # not in the file: the default role
            assert sid in {s["session_id"] for s in ok(proxy.get("/sessions", headers=someone))["sessions"]}
            error_of(proxy.post("/sessions", json={}, headers=someone), 403, "forbidden")
            error_of(proxy.get("/sessions", headers={"X-Auth-Request-User": "not a name!"}), 401, "unauthorized")
            error_of(proxy.get("/sessions"), 401, "unauthorized")
        elsewhere = httpx.HTTPTransport(local_address="127.0.0.2")  # not the proxy's address
        with httpx.Client(base_url=relay.url, timeout=60, transport=elsewhere) as stranger:
            error_of(stranger.get("/sessions", headers=as_pat), 401, "unauthorized")
            assert ok(stranger.get("/sessions", headers={"Authorization": f"Bearer {ALICE}"}))["total"] == 0
    finally:
        relay.stop()


def test_a_session_is_handed_over_knowingly_and_its_new_owner_runs_code_in_it(team: Team) -> None:
    sid = paused_at_add(team[ALICE], name="to be taken over")
    error_of(team[BOB].post(f"/sessions/{sid}/hand-over", json={"to": "bob"}), 403, "forbidden")  # not his to take

    given = ok(team[ALICE].post(f"/sessions/{sid}/hand-over", json={"to": "bob"}))
    assert given["created_by"] == "bob" and given["shared_with"] == ["alice"]
    assert ok(team[BOB].post(f"/sessions/{sid}/evaluate", json={"expression": "a + b"}))["result"] == "3"
    ok(team[ALICE].get(f"/sessions/{sid}/stacktrace"))  # the former owner still watches
    error_of(team[ALICE].post(f"/sessions/{sid}/evaluate", json={"expression": "1"}), 403, "forbidden")
    error_of(team[ALICE].post(f"/sessions/{sid}/hand-over", json={"to": "not a name"}), 400)
    trail = ok(team[ROOT].get("/audit", params={"session_id": sid}))["entries"]
    assert [(e["who"], e["operation"]) for e in trail[:2]] == [("alice", "evaluate"), ("bob", "evaluate")]
    assert ("alice", "hand_over") in [(e["who"], e["operation"]) for e in trail]
    team[BOB].delete(f"/sessions/{sid}")


def test_a_credentials_file_that_cannot_be_used_stops_the_relay_at_start_saying_why(tmp_path: Path) -> None:
    file = tmp_path / "credentials.toml"
    for text, why in (
        ("[[credentials]]\nname = 'x'\nrole = 'agent'\n", "give token or token_sha256"),
        (CREDENTIALS.replace('role = "viewer"', 'role = "wizard"'), "role must be one of admin, agent, viewer"),
        ("not [toml", "not TOML"),
        ("#" * (1024 * 1024 + 1), "larger than 1024 KiB"),
    ):
        file.write_text(text)
        env = {**os.environ, "DEBUGRELAY_CREDENTIALS": str(file), "DEBUGRELAY_STATE_DIR": str(tmp_path / "s")}
        done = subprocess.run(
            [DEBUGRELAY, "serve", "--port", "9"], env=env, capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode != 0 and why in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_credentials_file_alone_guards_a_relay_that_listens_beyond_loopback(tmp_path: Path) -> None:
    file = tmp_path / "credentials.toml"
    file.write_text(CREDENTIALS)
    relay = Relay(tmp_path, env={"DEBUGRELAY_CREDENTIALS": str(file)}, args=["--host", "0.0.0.0"])
    try:
        error_of(relay.http.get("/sessions"), 401, "unauthorized")
        assert relay.http.get("/sessions", headers={"Authorization": f"Bearer {VAL}"}).status_code == 200
    finally:
        relay.stop()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_only_an_admin_stops_a_teams_relay(tmp_path: Path) -> None:
    file = tmp_path / "credentials.toml"
    file.write_text(CREDENTIALS)
    relay = Relay(tmp_path, env={"DEBUGRELAY_CREDENTIALS": str(file)})
    try:
        for token, said in ((VAL, "viewer"), (ALICE, "only an admin")):
            err = error_of(relay.http.post("/shutdown", headers=bearer(token)), 403, "forbidden")
            assert said in err["message"] and err["hint"], err
        assert relay.proc.poll() is None and ok(relay.http.get("/health"))["status"] == "ok"  # still serving
        assert ok(relay.http.post("/shutdown", headers=bearer(ROOT)))["shutting_down"] is True
        assert relay.proc.wait(60) is not None  # a bound on the wait, not a timing
    finally:
        relay.stop()


def test_a_credentials_session_limit_holds_under_parallel_creates_on_two_replicas(cluster: Cluster) -> None:
    file = cluster.tmp / "credentials.toml"
    file.write_text(CREDENTIALS)
    env = {"DEBUGRELAY_CREDENTIALS": str(file), "DEBUGRELAY_TOKEN": "the-operators-own-admin-token"}
    relays = (cluster.relay(**env), cluster.relay(**env))

    async def burst(token: str, calls: list[tuple[str, str, dict[str, Any]]]) -> list[httpx.Response]:
        async with httpx.AsyncClient(timeout=180, headers=bearer(token)) as client:
            return await asyncio.gather(*(client.request(m, url, json=body) for m, url, body in calls))

    # dave may hold one session: 30 creates at once, half through each replica, make exactly one
    answers = asyncio.run(burst(DAVE, [("POST", f"{r.url}/sessions", {}) for _ in range(15) for r in relays]))
    assert sorted(a.status_code for a in answers) == [201] + [429] * 29, [a.text for a in answers]
    for refused in (a for a in answers if a.status_code == 429):
        assert error_of(refused, 429, "too_many_sessions")["details"]["caller"] == "dave"
    root = httpx.Client(base_url=relays[1].url, timeout=60, headers=bearer(ROOT))
    with root:
        held = [s for s in ok(root.get("/sessions"))["sessions"] if s.get("created_by") == "dave"]
        assert len(held) == 1
        # a clone is made by the session's own replica, as dave, the other forwarding it: within dave's limit
        clones = asyncio.run(
            burst(DAVE, [("POST", f"{r.url}/sessions/{held[0]['session_id']}/clone", {}) for r in relays])
        )
        assert [error_of(a, 429, "too_many_sessions")["details"]["caller"] for a in clones] == ["dave", "dave"]
        ok(root.delete(f"/sessions/{held[0]['session_id']}"))
        # a hand-over is a session more for its new owner: five of alice's at once to dave, one goes
        alices = [ok(root.post("/sessions", json={}), 201)["session_id"] for _ in range(5)]
        for sid in alices:
            ok(root.post(f"/sessions/{sid}/hand-over", json={"to": "alice"}))
        calls = [
            ("POST", f"{relays[i % 2].url}/sessions/{sid}/hand-over", {"to": "dave"}) for i, sid in enumerate(alices)
        ]
        answers = asyncio.run(burst(ALICE, calls))
        assert sorted(a.status_code for a in answers) == [200] + [429] * 4, [a.text for a in answers]
        owners = [ok(root.get(f"/sessions/{sid}"))["created_by"] for sid in alices]
        assert sorted(owners) == ["alice"] * 4 + ["dave"]


def test_a_hand_over_goes_to_a_credential_in_force_and_frees_no_slot(team: Team) -> None:
    sid = create(team[DAVE], name="dave's one")  # dave may hold one session
    for to, said in (("ghost", "no credential"), ("val", "viewer")):
        err = error_of(team[DAVE].post(f"/sessions/{sid}/hand-over", json={"to": to}), 400, "invalid_request")
        assert said in err["message"] and err["details"]["to"] == to and err["hint"], err
        detail = ok(team[DAVE].get(f"/sessions/{sid}"))
        assert detail["created_by"] == "dave" and detail.get("shared_with", []) == []  # nothing changed
    assert ok(team[DAVE].post(f"/sessions/{sid}/hand-over", json={"to": "alice"}))["created_by"] == "alice"
    # dave made it: it still counts against dave, or each hand-over would free a slot for one more
    err = error_of(team[DAVE].post("/sessions", json={}), 429, "too_many_sessions")
    assert err["details"]["caller"] == "dave"
    team[ALICE].delete(f"/sessions/{sid}")
    team[DAVE].delete(f"/sessions/{create(team[DAVE])}")  # ended: the slot is free again


def test_refusals_and_another_credentials_flood_never_flush_a_credentials_audit_entries(tmp_path: Path) -> None:
    file = tmp_path / "credentials.toml"
    file.write_text(CREDENTIALS.replace("max_sessions = 5", "max_sessions = 50"))
    kept = 200  # entries kept in all (10,000 by default); each credential's newest tenth whatever the others do
    relay = Relay(tmp_path, env={"DEBUGRELAY_CREDENTIALS": str(file), "DEBUGRELAY_AUDIT_ENTRIES": str(kept)})

    def audit(**params: Any) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = ok(
            relay.http.get("/audit", params={"limit": 1000, **params}, headers=bearer(ROOT))
        )["entries"]
        return entries

    with httpx.Client(base_url=relay.url, timeout=60) as http:
        try:
            sid = ok(http.post("/sessions", json={"name": "alice's"}, headers=bearer(ALICE)), 201)["session_id"]
            ok(http.patch(f"/sessions/{sid}", json={"name": "alice's own"}, headers=bearer(ALICE)))
            alices = [(e["operation"], e["session_id"]) for e in audit(who="alice")]
            assert alices == [("update_session", sid), ("create_session", sid)]

            refusals = kept + 100  # a viewer's refused calls, more than the trail holds
            for _ in range(refusals):
                error_of(http.post(f"/sessions/{sid}/continue", headers=bearer(VAL)), 403, "forbidden")
            assert [(e["operation"], e["session_id"]) for e in audit(who="alice")] == alices
            vals = audit(who="val")
            assert sum(e.get("count", 1) for e in vals) == refusals  # every refusal counted, few kept one by one
            assert len(vals) < refusals // 5 and all(not e.get("ok", True) for e in vals)  # not kept one by one
            summed = [e for e in vals if e.get("count", 1) > 1]
            assert summed and "forbidden" in summed[0]["result"] and "resume" in summed[0]["detail"]

            # bob's own calls, each a change: more than the trail holds, and alice's newest stay all the same
            bobs = ok(http.post("/sessions", json={}, headers=bearer(BOB)), 201)["session_id"]
            for n in range(kept + 50):
                ok(http.patch(f"/sessions/{bobs}", json={"name": f"bob's {n}"}, headers=bearer(BOB)))
            assert [(e["operation"], e["session_id"]) for e in audit(who="alice")] == alices
            assert len(audit(who="bob")) >= kept // 10
        finally:
            relay.stop()


def test_processes_lists_for_agents_only_what_they_may_attach_redacted(tmp_path: Path) -> None:
    workspace, elsewhere = tmp_path / "workspace", tmp_path / "another-project"
    file = tmp_path / "credentials.toml"
    file.write_text(CREDENTIALS)
    waits = "import sys\nsys.stdin.read()\n"  # runs until its stdin closes
    started = []
    for folder in (workspace, elsewhere):
        folder.mkdir()
        (folder / "serve.py").write_text(waits)
        args = ["--db-password=hunter2-db-secret", "--api-token", "tok-0123456789abcdef", "--port", "8080"]
        started.append(subprocess.Popen([sys.executable, "serve.py", *args], cwd=folder, stdin=subprocess.PIPE))
    mine, theirs = started
    env = {"DEBUGRELAY_CREDENTIALS": str(file), "DEBUGRELAY_WORKSPACE": str(workspace)}
    relay = Relay(tmp_path, env=env)
    try:
        err = error_of(relay.http.get("/processes", headers=bearer(VAL)), 403, "forbidden")
        assert "viewer" in err["message"]
        for token in (ALICE, ROOT):
            listed = {p["pid"]: p for p in ok(relay.http.get("/processes", headers=bearer(token)))["processes"]}
            assert mine.pid in listed and theirs.pid not in listed  # another project's process is not shown
            command = listed[mine.pid]["command"]
            assert "serve.py" in command and "--port 8080" in command, command
            assert "hunter2" not in command and "tok-0123456789abcdef" not in command, command
            assert "--db-password=[SECRET_" in command and "--api-token [SECRET_" in command, command
            assert relay.proc.pid not in listed  # nor the relay itself
    finally:
        relay.stop()
        for proc in started:
            proc.communicate(timeout=60)
