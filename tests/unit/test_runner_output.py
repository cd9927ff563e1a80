"""What a stop's answer keeps of a pytest run's output: the test's own lines, not the runner's banner and its
plugins' start-up warnings (the output pages keep everything)."""

from __future__ import annotations

from debugrelay.models import OutputLine
from debugrelay.sessions import without_runner_noise

RUN = [
    ("stderr", "/venv/lib/python3.11/site-packages/pytest_asyncio/plugin.py:306: PytestDeprecationWarning: unset.\n"),
    ("stderr", "The event loop scope will default to the fixture scope.\n"),
    ("stderr", "\n"),
    ("stderr", "  warnings.warn(PytestDeprecationWarning(_DEFAULT_FIXTURE_LOOP_SCOPE_UNSET))\n"),
    ("stderr", "/app/shop/prices.py:3: DeprecationWarning: the program's own warning\n"),
    ("stderr", "  warnings.warn('old', DeprecationWarning)\n"),
    ("stdout", "============================= test session starts ==============================\n"),
    ("stdout", "platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0\n"),
    ("stdout", "rootdir: /app\n"),
    ("stdout", "plugins: asyncio-1.5.0, hypothesis-6.170.17\n"),
    ("stdout", "asyncio: mode=Mode.STRICT, debug=False\n"),
    ("stdout", "collected 1 item\n"),
    ("stdout", "\n"),
    ("stdout", "test_price.py pricing the cart\n"),
]


def lines(run: list[tuple[str, str]]) -> list[OutputLine]:
    return [OutputLine(type=kind, text=text, timestamp="") for kind, text in run]


def test_the_banner_and_the_plugins_warnings_are_left_out_the_programs_own_lines_stay() -> None:
    kept, cut = without_runner_noise(lines(RUN))
    assert cut
    assert [line.text for line in kept] == [
        "/app/shop/prices.py:3: DeprecationWarning: the program's own warning\n",
        "  warnings.warn('old', DeprecationWarning)\n",
        "test_price.py pricing the cart\n",
    ]


def test_output_without_a_banner_is_kept_whole() -> None:
    plain = lines([("stdout", "rootdir: is what this program prints\n"), ("stderr", "collected 3 items\n")])
    assert without_runner_noise(plain) == (plain, False)
