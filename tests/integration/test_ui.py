"""The live view at /ui, in a real browser: Debian's chromium, headless, driven by chromium-driver.

A person watches what an agent does through the API: the agent's calls here are plain HTTP calls.
"""

from __future__ import annotations

import html
import os
import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.chromium import other_site
from tests.conftest import Relay, Sessions, error_of, line_of, ok, target
from tests.conftest import until as plain_until
from tests.raw_http import client_from

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the test extras")
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]

STEPS = target("ui_steps.py")
SECRET = "ghp_R2d2C3poR2d2C3poR2d2C3poR2d2C3po1234"
TOKEN = "ui-test-token-4f9c2a7e"
# where the paused session's screenshot goes besides the test's own folder: `make screenshot` names
# docs/ui.png (the README shows it); a test run leaves the checkout as it was
SCREENSHOT = os.environ.get("DEBUGRELAY_TEST_SCREENSHOT")
CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
BOUND = 30  # seconds a page may take to show a change: a bound on failure, not a timing


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    if not (CHROMIUM and DRIVER):
        pytest.skip("chromium and chromium-driver are not installed (make system-deps installs them, as root)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=DRIVER))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Relay]:
    r = Relay(tmp_path_factory.mktemp("ui-token"), env={"DEBUGRELAY_TOKEN": TOKEN})
    yield r
    r.stop()


def until(driver: WebDriver, check: Any, what: str) -> Any:
    """``check`` holds within the bound; a part of the page replaced by a live update while it was read
    is read again (the page redraws on every change)."""
    waiting = WebDriverWait(driver, BOUND, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException))
    return waiting.until(check, message=f"the page never showed {what}")


def live(driver: WebDriver) -> None:
    """The page has its live connection and has shown the first update from it."""
    until(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-updates"), "a live update")


def current_line(driver: WebDriver) -> int | None:
    found = driver.find_elements(By.CSS_SELECTOR, "#source .ln.cur")
    return int(found[0].get_attribute("data-line") or 0) if found else None


def paused_at(sessions: Sessions, marker: str, name: str) -> str:
    sid = sessions.create(name=name)
    sessions.bp(sid, STEPS, line_of(STEPS, marker))
    sessions.launch(sid, STEPS, args=[])
    assert sessions.wait(sid)["status"] == "paused"
    return sid


def test_the_sessions_list_shows_a_paused_session_at_its_line(
    browser: WebDriver, relay: Relay, sessions: Sessions, tmp_path: Path
) -> None:
    sid = paused_at(sessions, "ui-start", "checkout-bug")
    line = line_of(STEPS, "ui-start")
    browser.get(f"{relay.url}/ui")
    live(browser)
    row = browser.find_element(By.XPATH, f"//tr[.//div[@class='sid'][text()='{sid}']]")
    text = row.text
    assert "checkout-bug" in text and "paused" in text
    assert f"ui_steps.py:{line}" in text and "in handle" in text
    assert "ui_steps.py" in row.find_element(By.CSS_SELECTOR, "td:nth-child(2)").text  # the program
    # a stop nobody has looked at yet is marked as new
    assert row.find_element(By.CSS_SELECTOR, ".unseen").is_displayed()

    row.find_element(By.LINK_TEXT, "checkout-bug").click()
    until(browser, lambda d: current_line(d) == line, f"the paused line {line}")
    live(browser)
    highlighted = browser.find_element(By.CSS_SELECTOR, "#source .ln.cur")
    assert "total = order_id * 2" in highlighted.text
    assert "bp" in (highlighted.get_attribute("class") or "")  # the breakpoint that stopped it is marked
    stack = browser.find_element(By.CSS_SELECTOR, "ol.stack li.top").text
    assert "handle" in stack and f"ui_steps.py:{line}" in stack
    locals_text = browser.find_element(By.ID, "locals").text
    assert "order_id" in locals_text and "21" in locals_text
    # expandable values open to their children
    config = "#locals details[data-name='config']"
    browser.find_element(By.CSS_SELECTOR, f"{config} summary").click()
    until(browser, lambda d: "db-2" in d.find_element(By.CSS_SELECTOR, f"{config} .children").text, "its children")
    trail = browser.find_element(By.CSS_SELECTOR, "table.trail").text
    assert "POST /sessions/…/wait" in trail and "paused at ui_steps.py" in trail  # the agent's trail
    assert "POST /sessions/…/launch" in trail
    shot = tmp_path / "ui.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 0
    if SCREENSHOT:
        kept = Path(__file__).parents[2] / SCREENSHOT  # relative to the checkout
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, kept)

    browser.get(f"{relay.url}/ui")  # looked at: no longer new
    live(browser)
    row = browser.find_element(By.XPATH, f"//tr[.//div[@class='sid'][text()='{sid}']]")
    assert not row.find_element(By.CSS_SELECTOR, ".unseen").is_displayed()


def test_stepping_through_the_api_moves_the_highlighted_line_without_a_reload(
    browser: WebDriver, relay: Relay, sessions: Sessions, api: httpx.Client
) -> None:
    sid = paused_at(sessions, "ui-start", "stepping")
    browser.get(f"{relay.url}/ui/sessions/{sid}")
    live(browser)
    assert current_line(browser) == line_of(STEPS, "ui-start")
    browser.execute_script("window.notReloaded = true")

    moved = ok(api.post(f"/sessions/{sid}/step-over"))
    assert moved["location"]["line"] == line_of(STEPS, "ui-next")
    until(browser, lambda d: current_line(d) == line_of(STEPS, "ui-next"), "the next line highlighted")
    ok(api.post(f"/sessions/{sid}/step-over"))
    until(browser, lambda d: current_line(d) == line_of(STEPS, "ui-print"), "the print line highlighted")
    assert browser.execute_script("return window.notReloaded") is True
    until(browser, lambda d: "step-over" in d.find_element(By.CSS_SELECTOR, "table.trail").text, "the trail")

    # output printed by the program appears as it comes
    ok(api.post(f"/sessions/{sid}/step-over"))
    until(browser, lambda d: "order 21 handled, total 45" in d.find_element(By.ID, "out").text, "the output")
    until(browser, lambda d: current_line(d) == line_of(STEPS, "ui-after"), "the line after the print")

    ok(api.post(f"/sessions/{sid}/continue"))
    until(browser, lambda d: "terminated" in d.find_element(By.CSS_SELECTOR, "#live .status").text, "the end")
    until(browser, lambda d: "result 45" in d.find_element(By.ID, "out").text, "the last output")
    assert browser.execute_script("return window.notReloaded") is True


def test_a_secret_in_a_local_shows_its_placeholder(browser: WebDriver, relay: Relay, sessions: Sessions) -> None:
    sid = paused_at(sessions, "ui-after", "secrets")
    browser.get(f"{relay.url}/ui/sessions/{sid}")
    live(browser)
    assert current_line(browser) == line_of(STEPS, "ui-after")
    token_row = browser.find_element(By.XPATH, "//div[@id='locals']//li[.//span[@class='name'][text()='api_token']]")
    assert "[SECRET_" in token_row.text
    assert SECRET not in browser.page_source
    assert SECRET not in browser.find_element(By.ID, "live").text


# -- function traces: a session's traced calls, and one call's lines beside its function's source --------------


ORDERS = target("tr_orders.py")


def traced_run(sessions: Sessions, api: httpx.Client, name: str, traces: dict[str, dict[str, Any]]) -> str:
    """A session of tr_orders.py with ``traces`` (function: options) set before the launch, run to its end."""
    sid = sessions.create(name=name)
    for function, options in traces.items():
        ok(api.post(f"/sessions/{sid}/traces", json={"function": f"{ORDERS}:{function}", **options}), 201)
    sessions.launch(sid, ORDERS)
    assert sessions.wait(sid, 60)["status"] == "terminated"
    return sid


def source_line(driver: WebDriver, line: int) -> Any:
    return driver.find_element(By.CSS_SELECTOR, f"#source .ln[data-line='{line}']")


def test_a_traced_program_lists_its_calls_and_a_call_shows_what_each_line_changed_beside_the_source(
    browser: WebDriver, relay: Relay, sessions: Sessions, api: httpx.Client
) -> None:
    sid = traced_run(sessions, api, "traced-orders", {"price": {"keep": 10_000}, "parse": {}})
    wrong = line_of(ORDERS, "tr-wrong")
    browser.get(f"{relay.url}/ui/sessions/{sid}")
    live(browser)
    price = browser.find_element(By.CSS_SELECTOR, "section.traces .trace[data-trace='t1']")
    assert "tr_orders.py:price" in price.text and "10000 kept · 10000 made · 0 dropped" in price.text
    rows = price.find_elements(By.CSS_SELECTOR, "table.calls tbody tr")
    assert len(rows) == 20 and "9980 older calls not shown" in price.text
    newest = rows[0].text  # newest first: the last order priced
    assert "qty=10000, unit=3" in newest and "→ 29999" in newest and "MainThread" in newest
    parse = browser.find_element(By.CSS_SELECTOR, "section.traces .trace[data-trace='t2']")
    assert "3 kept · 3 made · 0 dropped" in parse.text
    assert "raised ValueError: invalid literal for int() with base 10: 'x2'" in parse.text

    # a row opens its call: the lines it ran marked, the ones it did not dimmed (qty 10000 is not 7777)
    newest_link = "section.traces .trace[data-trace='t1'] tbody tr:first-child a"
    until(browser, lambda d: d.find_element(By.CSS_SELECTOR, newest_link).click() or True, "the newest call opened")
    until(browser, lambda d: d.find_elements(By.ID, "source"), "the call's page")
    assert "qty = 10000" in browser.find_element(By.ID, "args").text
    assert "returned 29999" in browser.find_element(By.ID, "result").text
    skipped = source_line(browser, wrong)
    assert "idle" in (skipped.get_attribute("class") or "") and "# tr-wrong" in skipped.text

    # the one wrong call of ten thousand, found as an agent finds it: its wrong line, and what it changed
    (found,) = ok(api.get(f"/sessions/{sid}/traces/calls", params={"function": "price", "match": "233309"}))["calls"]
    browser.get(f"{relay.url}/ui/sessions/{sid}/calls/{found['call_id']}")
    line = source_line(browser, wrong)
    assert "ran" in (line.get_attribute("class") or "").split()
    assert line.find_element(By.CSS_SELECTOR, ".chg").text == "total → 233310"
    assert "total → 23331" in source_line(browser, wrong - 2).find_element(By.CSS_SELECTOR, ".chg").text
    assert "qty = 7777" in browser.find_element(By.ID, "args").text
    assert "returned 233309" in browser.find_element(By.ID, "result").text
    assert "def price(qty, unit):" in source_line(browser, wrong - 3).text  # the function's whole source
    assert "none" in browser.find_element(By.ID, "parent").text
    browser.find_element(By.LINK_TEXT, "traced-orders").click()  # back to its session
    until(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "section.traces"), "the session's page")

    # the call that raised: the line it raised at
    (bad,) = ok(api.get(f"/sessions/{sid}/traces/calls", params={"outcome": "raised"}))["calls"]
    browser.get(f"{relay.url}/ui/sessions/{sid}/calls/{bad['call_id']}")
    raised = source_line(browser, line_of(ORDERS, "tr-parse"))
    assert "raised" in (raised.get_attribute("class") or "").split()
    assert "raised ValueError" in browser.find_element(By.ID, "result").text


def test_a_traced_call_page_answers_unknown_calls_with_a_404_page(relay: Relay, sessions: Sessions) -> None:
    sid = sessions.create(name="no-calls")
    for call_id, said in (("999.999", "no call '999.999' in this session's traces"), ("x", "is not a call id")):
        page = relay.http.get(f"/ui/sessions/{sid}/calls/{call_id}")
        assert page.status_code == 404 and f"No call '{call_id}'" in html.unescape(page.text)
        assert said in html.unescape(page.text) and f"href='/ui/sessions/{sid}'" in page.text
    marked = relay.http.get(f"/ui/sessions/{sid}/calls/<b>1.1")
    assert marked.status_code == 404 and "No call '&lt;b&gt;1.1'" in marked.text  # escaped, never markup
    missing = relay.http.get("/ui/sessions/sess_000000000000/calls/1.1")
    assert missing.status_code == 404 and "No session" in missing.text
    assert "section class=traces" not in relay.http.get(f"/ui/sessions/{sid}").text  # no traces: no section


def test_a_secret_argument_of_a_traced_call_shows_its_placeholder(
    browser: WebDriver, relay: Relay, sessions: Sessions, api: httpx.Client
) -> None:
    sid = sessions.create(name="traced-login")
    ok(api.post(f"/sessions/{sid}/traces", json={"function": f"{ORDERS}:login"}), 201)
    browser.get(f"{relay.url}/ui/sessions/{sid}")  # open before the program runs: its calls come live
    live(browser)
    assert "no calls yet" in browser.find_element(By.CSS_SELECTOR, "section.traces").text
    browser.execute_script("window.notReloaded = true")
    sessions.launch(sid, ORDERS)
    assert sessions.wait(sid, 60)["status"] == "terminated"
    calls = "section.traces table.calls tbody tr"
    text = until(browser, lambda d: d.find_element(By.CSS_SELECTOR, calls).text, "the traced call without a reload")
    assert browser.execute_script("return window.notReloaded") is True
    assert "user='ada'" in text and "password='[SECRET_" in text
    assert "hunter2-s3cret" not in browser.page_source
    browser.get(until(browser, lambda d: d.find_element(By.CSS_SELECTOR, f"{calls} a").get_attribute("href"), "a link"))
    until(browser, lambda d: d.find_elements(By.ID, "args"), "the call's page")
    assert "password = '[SECRET_" in browser.find_element(By.ID, "args").text
    assert "hunter2-s3cret" not in browser.page_source


def test_with_a_token_the_page_asks_for_it_and_keeps_it_out_of_every_url(browser: WebDriver, guarded: Relay) -> None:
    sid = Sessions(guarded.http).create(name="behind-a-token")
    browser.delete_all_cookies()
    open_sign_in(browser, f"{guarded.url}/ui")
    browser.find_element(By.ID, "token").send_keys("not-the-token")
    browser.find_element(By.CSS_SELECTOR, "#login button").click()
    until(browser, lambda d: d.find_element(By.ID, "login-error").is_displayed(), "that the token is wrong")
    assert sid not in browser.page_source

    box = browser.find_element(By.ID, "token")
    box.clear()
    box.send_keys(TOKEN)
    browser.find_element(By.CSS_SELECTOR, "#login button").click()
    until(browser, lambda d: sid in d.page_source, "the sessions behind the token")
    browser.get(f"{guarded.url}/ui/sessions/{sid}")  # asked once: the cookie carries on
    live(browser)

    visited = browser.execute_script("return performance.getEntries().map(e => e.name)")
    assert visited and all(TOKEN not in url for url in [browser.current_url, *visited])
    assert TOKEN not in browser.page_source
    assert browser.execute_script("return document.cookie") == ""  # HttpOnly: no script reads it
    (cookie,) = browser.get_cookies()
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/ui"
    assert TOKEN not in cookie["value"]

    # the cookie opens the view only: the API still wants the token
    with httpx.Client(base_url=guarded.url, cookies={cookie["name"]: cookie["value"]}) as plain:
        error_of(plain.get("/sessions"), 401, "unauthorized")
        assert plain.get("/ui").status_code == 200
    guarded.http.delete(f"/sessions/{sid}")


def test_the_view_refuses_what_it_must_without_a_500(guarded: Relay, relay: Relay) -> None:
    with httpx.Client(base_url=guarded.url) as stranger:
        page = stranger.get("/ui")
        assert page.status_code == 401 and "API token" in page.text  # asks, shows nothing
        call = stranger.get("/ui/sessions/sess_000000000000/calls/1.1")
        assert call.status_code == 401 and "API token" in call.text  # a call's page is behind the same guard
        error_of(stranger.get("/ui/events"), 401, "unauthorized")
        error_of(stranger.post("/ui/login", json={"token": "nope"}), 401, "unauthorized")
        error_of(stranger.post("/ui/login", content="token=x"), 415)  # a form post from another page
        error_of(stranger.post("/ui/login", json={"token": TOKEN}, headers={"Origin": "http://evil.example"}), 403)
    error_of(relay.http.get("/ui/static/secrets.txt"), 404)
    error_of(relay.http.get("/ui/sessions/sess_000000000000/events"), 404, "session_not_found")
    error_of(relay.http.get("/ui/sessions/sess_000000000000/children", params={"ref": "x"}), 400)
    page = relay.http.get("/ui")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert "default-src 'none'" in page.headers["content-security-policy"]


# -- the view's sign-in: a view session, not the token ----------------------------------------------


def open_sign_in(browser: WebDriver, url: str) -> None:
    """The sign-in page, once its script listens: a click before that would go unheard."""
    browser.get(url)
    until(browser, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"), "a page ready for input")


def sign_in(browser: WebDriver, url: str) -> None:
    open_sign_in(browser, f"{url}/ui")
    browser.find_element(By.ID, "token").send_keys(TOKEN)
    browser.find_element(By.CSS_SELECTOR, "#login button").click()
    until(browser, lambda d: d.find_elements(By.ID, "signout"), "the signed-in view")


def view_with(relay: Relay, name: str, value: str, path: str = "/ui") -> httpx.Response:
    """A request from outside the browser carrying a view cookie (what another local service could replay)."""
    with httpx.Client(base_url=relay.url, cookies={name: value}) as outsider:
        return outsider.get(path)


def test_another_local_site_sees_the_view_cookie_but_gets_a_view_only_session_that_sign_out_ends(
    browser: WebDriver, guarded: Relay, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    (site / "ui").mkdir(parents=True)
    (site / "ui" / "index.html").write_text("<!doctype html><title>another local app</title>")
    relay_by_name = f"http://localhost:{guarded.port}"  # the host name the other site shares
    browser.delete_all_cookies()
    sign_in(browser, relay_by_name)
    (cookie,) = browser.get_cookies()
    name, value = cookie["name"], cookie["value"]
    assert name == f"debugrelay_ui_{guarded.port}"  # two relays on one host keep their own
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/ui"
    assert "expiry" in cookie  # the browser drops it too, after the session's lifetime
    assert TOKEN not in value

    # cookies ignore ports: the browser hands it to another service on the same host name
    with other_site(site) as (port, seen):
        browser.get(f"http://localhost:{port}/ui/index.html")
        until(browser, lambda d: any(f"{name}={value}" in c for c in seen), "the other site receiving the cookie")
    # replayed, it opens the read-only view and nothing else
    assert view_with(guarded, name, value).status_code == 200
    with httpx.Client(base_url=guarded.url, cookies={name: value}) as outsider:
        error_of(outsider.get("/sessions"), 401, "unauthorized")
        error_of(outsider.post("/sessions", json={}), 401, "unauthorized")

    # "Sign out" ends the session on the relay: the copy is worth nothing any more, and a stream opened
    # with it ends (a read timeout bounds the wait if it did not)
    timeout = httpx.Timeout(60, read=BOUND)
    with (
        httpx.Client(base_url=guarded.url, cookies={name: value}, timeout=timeout) as outsider,
        outsider.stream("GET", "/ui/events") as stream,
    ):
        assert stream.status_code == 200
        browser.get(f"{relay_by_name}/ui")
        browser.find_element(By.ID, "signout").click()
        until(browser, lambda d: d.find_elements(By.ID, "token"), "the sign-in page after signing out")
        assert drained(stream)
    assert browser.get_cookies() == []
    refused = view_with(guarded, name, value)
    assert refused.status_code == 401 and "API token" in refused.text
    error_of(view_with(guarded, name, value, "/ui/events"), 401, "unauthorized")


def drained(stream: httpx.Response) -> bool:
    """Read a stream to its end; one the relay cut short (its view session ended) ends too."""
    try:
        for _ in stream.iter_raw():
            pass
    except httpx.RemoteProtocolError:
        pass
    return True


def test_each_sign_in_is_a_new_random_session_and_a_restart_ends_them_all(tmp_path: Path) -> None:
    first = Relay(tmp_path, env={"DEBUGRELAY_TOKEN": TOKEN})
    try:
        values = []
        for _ in range(2):
            with httpx.Client(base_url=first.url) as person:
                assert person.post("/ui/login", json={"token": TOKEN}).status_code == 204
                ((name, value),) = person.cookies.items()
                values.append(value)
                assert person.get("/ui").status_code == 200
        assert values[0] != values[1]  # not derived from the token
    finally:
        first.stop()
    second = Relay(tmp_path, env={"DEBUGRELAY_TOKEN": TOKEN})
    try:
        for value in values:
            assert view_with(second, name, value).status_code == 401
            assert view_with(second, f"debugrelay_ui_{second.port}", value).status_code == 401
    finally:
        second.stop()


def test_a_view_session_ends_after_its_lifetime(tmp_path: Path) -> None:
    short = Relay(tmp_path, env={"DEBUGRELAY_TOKEN": TOKEN, "DEBUGRELAY_UI_SESSION_MINUTES": "0.05"})  # 3 s
    try:
        with httpx.Client(base_url=short.url) as person:
            assert person.post("/ui/login", json={"token": TOKEN}).status_code == 204
            ((name, value),) = person.cookies.items()
        assert view_with(short, name, value).status_code == 200
        # being used does not stretch it: the lifetime counts from the sign-in
        plain_until(lambda: view_with(short, name, value).status_code == 401, "the view session to expire")
        error_of(view_with(short, name, value, "/ui/events"), 401, "unauthorized")
    finally:
        short.stop()


# -- event streams are capped, and a closed page gives its stream back ------------------------------


STREAMS, PER_CLIENT = 64, 16  # api.ui.STREAMS, api.ui.STREAMS_PER_CLIENT


@pytest.fixture
def streams_relay(tmp_path: Path) -> Iterator[Relay]:
    r = Relay(tmp_path)
    yield r
    r.stop()


def open_stream(stack: ExitStack, client: httpx.Client, path: str = "/ui/events") -> httpx.Response:
    return stack.enter_context(client.stream("GET", path))


def test_event_streams_are_capped_per_client_and_in_all(streams_relay: Relay) -> None:
    relay = streams_relay
    with ExitStack() as stack:
        clients = [stack.enter_context(client_from(relay.url, f"127.0.0.{n}")) for n in range(1, 6)]
        held = []
        for client in clients[: STREAMS // PER_CLIENT]:
            for _ in range(PER_CLIENT):
                stream = open_stream(stack, client)
                assert stream.status_code == 200
                held.append(stream)
        # a client over its share, then anyone over the relay's cap: 429, the page retries later
        over = try_stream(clients[0])
        err = error_of(over, 429, "too_many_streams")
        assert over.headers["retry-after"] == str(err["details"]["retry_after"])
        assert err["details"]["per_client"] == PER_CLIENT
        error_of(try_stream(clients[4]), 429, "too_many_streams")
        # the rest of the relay answers as usual meanwhile
        assert ok(relay.http.get("/health"))["status"] == "ok"
        assert relay.http.get("/ui").status_code == 200
        # a client that goes away gives its slot back
        held[0].close()
        plain_until(lambda: _opens(clients[4]), "the closed stream's slot to be free")


def try_stream(client: httpx.Client) -> httpx.Response:
    """Open a stream and leave at once: its answer (read in full when it is a refusal)."""
    with client.stream("GET", "/ui/events") as stream:
        if stream.status_code != 200:
            stream.read()
        return stream


def _opens(client: httpx.Client) -> bool:
    return try_stream(client).status_code == 200


def test_a_refused_page_backs_off_and_a_closed_tab_frees_its_stream(browser: WebDriver, streams_relay: Relay) -> None:
    relay = streams_relay
    with ExitStack() as stack:
        local = stack.enter_context(httpx.Client(base_url=relay.url, timeout=60))  # 127.0.0.1, like the browser
        held = [open_stream(stack, local) for _ in range(PER_CLIENT)]
        assert all(s.status_code == 200 for s in held)
        browser.get(f"{relay.url}/ui")
        until(browser, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-retries"), "a retry")
        assert browser.find_element(By.ID, "conn").text == "reconnecting…"
        held.pop().close()
        live(browser)  # it got in once a slot was free
        assert browser.find_element(By.ID, "conn").text == "live"
        error_of(try_stream(local), 429, "too_many_streams")  # the page holds the slot now

        browser.get("about:blank")  # the tab leaves: its stream ends
        plain_until(lambda: _opens(local), "the page's stream slot to be free")
