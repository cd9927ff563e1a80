"""The live view at /ui, in a real browser: Debian's chromium, headless, driven by chromium-driver.

A person watches what an agent does through the API: the agent's calls here are plain HTTP calls.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Relay, Sessions, error_of, line_of, ok, target

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the test extras")
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]

STEPS = target("ui_steps.py")
SECRET = "ghp_R2d2C3poR2d2C3poR2d2C3poR2d2C3po1234"
TOKEN = "ui-test-token-4f9c2a7e"
SCREENSHOT = Path(__file__).parents[2] / "docs" / "ui.png"
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
    browser: WebDriver, relay: Relay, sessions: Sessions
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
    SCREENSHOT.parent.mkdir(exist_ok=True)
    browser.save_screenshot(str(SCREENSHOT))  # the README shows it

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


def test_with_a_token_the_page_asks_for_it_and_keeps_it_out_of_every_url(browser: WebDriver, guarded: Relay) -> None:
    sid = Sessions(guarded.http).create(name="behind-a-token")
    browser.delete_all_cookies()
    browser.get(f"{guarded.url}/ui")
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
