"""Redaction rules on their own: what is hidden, what survives, and how placeholders go back in."""

from __future__ import annotations

import base64
import json
import logging
import pprint
import re
from pathlib import Path
from urllib.parse import quote

import msgspec
import pytest

from debugrelay.config import load_settings
from debugrelay.models import Variable, VariablesPage
from debugrelay.redaction import PLACEHOLDER, PatternsError, Placeholders, RedactingFilter, Redactor, load_patterns

CORPUS = (Path(__file__).parent.parent / "data" / "redaction_corpus.txt").read_text(encoding="utf-8")

# Every secret planted in the corpus, by the placeholder prefix it must become.
PLANTED = {
    "SECRET": [
        "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",  # private key block
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",  # JWT
        "AKIAIOSFODNN7EXAMPLE",  # AWS access key id
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",  # AWS secret, by its name
        "ghp_R2d2C3poR2d2C3poR2d2C3poR2d2C3po1234",  # GitHub
        "glpat-xY7zQ9wE3rT5yU1iO0pA",  # GitLab
        "xoxb-2048-1024-ZmFrZXNsYWNrdG9rZW4",  # Slack token
        "T0AAAAAAA/B0BBBBBBB/abcdefghijklmnopqrstuvwx",  # Slack webhook
        "sk_live_51HaBcDeFgHiJkLmNoPqRsTu",  # Stripe
        "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",  # Google API key
        "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34",  # OpenAI-style key
        "Tr0ub4dor&3",  # password in a URL
        "ya29.a0AfH6SMBx3kP9qLwZ7yT2",  # bearer header
        "hunter2!x",  # password= in a log line
        "tok_8f3kd93kdl20sk",  # token="..."
        "cs_9d8f7g6h5j4k3l2",  # "client_secret": "..."
        "3f9a8b7c6d5e4f3a2b1c",  # a cookie
    ],
    "CARD": ["4111 1111 1111 1111", "5500-0000-0000-0004", "378282246310005", "4012888888881881"],
    "EMAIL": ["ada.lovelace@example.org", "grace.hopper@navy.mil"],
    "ID": ["123-45-6789"],
}
# Look-alikes that must come back exactly as they were.
SURVIVE = [
    "0x7f3a2c1b4e50",  # a memory address
    "550e8400-e29b-41d4-a716-446655440000",  # a uuid
    "2024-03-14T15:09:26.535897+00:00",  # a timestamp
    "1710428966535897000",  # an epoch in ns
    "port = 8080",
    "e83c5163316f89bfbde7d9ab23ca2e25604af290",  # a git commit
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "d41d8cd98f00b204e9800998ecf8427e",  # an md5
    "'555-0100'",
    "'1.8.22'",
    "'@functools.lru_cache'",
    "'static/icon@2x.png'",
    "order_id = 4111111111111112",  # fails Luhn
    "invoice_number = 1234567812345678",  # no issuer starts with 1
    "3.4111111111111111",  # a float
    "'2024-01-15-0930'",
    "'10.0.12.7'",
    "max_tokens = 4096",
    "token_count = 17",
    "password_valid = True",
    "api_key = None",
    "'000-12-3456'",  # area 000: never issued
    "'987-65-4321'",  # area 9xx: never issued
    "'94105-1234'",
    "'Ada Lovelace'",
    "https://api.stripe.com:443",
    '"secret_version": 2',
    "order 4111111111111112 (retry 3 of 5)",
]


def fresh() -> tuple[Redactor, Placeholders]:
    return Redactor(), Placeholders()


def test_every_planted_secret_is_replaced_by_a_placeholder_of_its_kind() -> None:
    redactor, table = fresh()
    out = redactor.text(CORPUS, table, "output")
    for prefix, secrets in PLANTED.items():
        for secret in secrets:
            assert secret not in out, secret
            entry = next(e for e in table.by_placeholder.values() if secret in e.value)
            assert entry.placeholder.startswith(f"[{prefix}_"), (secret, entry.placeholder)
            assert entry.placeholder in out


def test_look_alikes_survive_untouched() -> None:
    redactor, table = fresh()
    out = redactor.text(CORPUS, table, "output")
    for text in SURVIVE:
        assert text in out, text


def test_ordinary_debugger_output_has_no_false_positives() -> None:
    """Reprs of stdlib modules (addresses, functions, paths, constants): 150 KB, only real emails hidden."""
    import asyncio
    import collections
    import datetime
    import http.client
    import json
    import string
    import sys

    redactor, table = fresh()
    ordinary = "\n".join(pprint.pformat(vars(m)) for m in (datetime, json, collections, asyncio, http.client, string))
    ordinary += repr(sorted(sys.modules))
    out = redactor.text(ordinary, table, "variables")
    assert {e.rule for e in table.by_placeholder.values()} <= {"email"}  # authors' addresses in docstrings
    assert len(out) <= len(ordinary)


def test_the_same_value_always_gets_the_same_placeholder() -> None:
    redactor, table = fresh()
    first = redactor.text("a@corp.io called with ghp_R2d2C3poR2d2C3poR2d2C3poR2d2C3po1234", table, "evaluate")
    again = redactor.text("ghp_R2d2C3poR2d2C3poR2d2C3poR2d2C3po1234 again, and b@corp.io, a@corp.io", table, "output")
    assert first == "[EMAIL_1] called with [SECRET_1]"
    assert again == "[SECRET_1] again, and [EMAIL_2], [EMAIL_1]"
    # a table read back (a relay restart) goes on numbering where it stopped
    reread = Placeholders(list(table.by_placeholder.values()))
    assert redactor.text("c@corp.io a@corp.io", reread, "output") == "[EMAIL_3] [EMAIL_1]"


def test_a_secret_seen_once_is_hidden_wherever_it_appears_again() -> None:
    redactor, table = fresh()
    assert redactor.named("'correct horse'", table, "variables") == "'[SECRET_1]'"
    assert redactor.text("logged in with correct horse today", table, "output") == ("logged in with [SECRET_1] today")


def test_a_known_secret_across_lines_is_one_placeholder_where_it_starts_and_line_ends_stay() -> None:
    redactor, table = fresh()
    assert redactor.named("'Tr0ub4dor3x'", table, "variables") == "'[SECRET_1]'"
    lines = ["ok\n", "Tr0\n", "ub4\n", "dor\n", "3x done\n"]
    assert redactor.stream(lines, table, "output") == ["ok\n", "[SECRET_1]\n", "\n", "\n", " done\n"]
    # the secret began on a page before: the first line of this one holds its placeholder
    assert redactor.stream(["dor\n", "3x\n"], table, "output", before="Tr0\nub4\n") == ["[SECRET_1]\n", "\n"]
    # it goes on after the page: its first part is hidden already
    assert redactor.stream(["a\n", "Tr0\n"], table, "output", after="ub4\ndor\n3x\n") == ["a\n", "[SECRET_1]\n"]
    assert redactor.stream(["Tr0\n", "ub4\n"], table, "output") == ["Tr0\n", "ub4\n"]  # pieces alone are no secret


def test_values_whose_name_says_secret_are_hidden_and_others_are_not() -> None:
    redactor, table = fresh()
    page = VariablesPage(
        variables=[
            Variable(name="db_password", value="'pa55'", type="str"),
            Variable(name="authToken", value="'abc.def'", type="str"),
            Variable(name="max_tokens", value="4096", type="int"),
            Variable(name="tokenizer", value="'whitespace'", type="str"),
            Variable(name="api_key", value="None", type="NoneType"),
            Variable(
                name="settings",
                value="{'secret_key': 'dj-xyz', 'debug': True}",
                type="dict",
                children=[
                    Variable(name="'secret_key'", value="'dj-xyz'", type="str"),
                    Variable(name="'debug'", value="True", type="bool"),
                ],
            ),
        ],
        total=6,
        has_more=False,
    )
    out = redactor.walk(page, table, "variables")
    values = {v.name: v.value for v in out.variables}
    assert values == {
        "db_password": "'[SECRET_1]'",
        "authToken": "'[SECRET_2]'",
        "max_tokens": "4096",
        "tokenizer": "'whitespace'",
        "api_key": "None",
        "settings": "{'secret_key': '[SECRET_3]', 'debug': True}",
    }
    assert [c.value for c in out.variables[5].children] == ["'[SECRET_3]'", "True"]
    assert page.variables[0].value == "'pa55'"  # the answer is a copy: session state is never changed


def test_an_evaluate_result_is_named_by_its_expression() -> None:
    redactor, table = fresh()
    answer = {"result": "'s3cr3t-value'", "type": "str"}
    assert redactor.walk(answer, table, "evaluate", secret=True)["result"] == "'[SECRET_1]'"
    watch = {"expression": "os.environ['API_KEY']", "result": "'k-123456'"}
    assert redactor.walk(watch, table, "watches")["result"] == "'[SECRET_2]'"


def test_placeholders_go_back_in_as_text_or_as_a_literal() -> None:
    redactor, table = fresh()
    redactor.text("password=hunter2!x", table, "output")
    put = redactor.substitute
    assert put("password == '[SECRET_1]'", table) == "password == 'hunter2!x'"
    assert put("password == [SECRET_1]", table) == "password == 'hunter2!x'"
    assert put("f'pw={[SECRET_1]}'", table) == "f'pw={hunter2!x}'"  # inside the literal: its text
    assert put("x == [SECRET_9]", table) == "x == [SECRET_9]"  # unknown: left as it is
    assert put("pw [SECRET_1] is {pw == [SECRET_1]}", table, "log_message") == "pw hunter2!x is {pw == 'hunter2!x'}"
    assert put("[SECRET_1]\n", table, "text") == "hunter2!x\n"
    assert put("[SECRET_1]", Placeholders(), "text") == "[SECRET_1]"  # another session's table


def test_custom_patterns_are_loaded_and_used(tmp_path: Path) -> None:
    path = tmp_path / "patterns.toml"
    path.write_text('[[pattern]]\nname = "internal_id"\nregex = \'ID-\\d{8}-[A-Z]{3}\'\nprefix = "INTERNAL_ID"\n')
    redactor, table = Redactor(load_patterns(str(path))), Placeholders()
    assert redactor.text("customer ID-20240314-ABC paid", table, "output") == "customer [INTERNAL_ID_1] paid"


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("[[pattern]]\nname = 'x'\n", "'regex' must be a non-empty string"),
        ("[[pattern]]\nname = 'x'\nregex = '(unclosed'\n", "the regex does not compile"),
        ("[[pattern]]\nname = 'x'\nregex = 'a*'\n", "matches the empty string"),
        ("[[pattern]]\nname = 'x'\nregex = 'ab'\nprefix = 'lower'\n", "'prefix' must be uppercase"),
        ("[[pattern]]\nname = 'email'\nregex = 'ab'\n", "the name 'email' is taken"),
        ("[[pattern]]\nname = 'x'\nregex = 'ab'\ncolour = 'red'\n", "unknown key(s) ['colour']"),
        ("pattern = [", "not valid TOML"),
    ],
)
def test_a_bad_patterns_file_is_refused_saying_where_and_why(tmp_path: Path, content: str, says: str) -> None:
    path = tmp_path / "patterns.toml"
    path.write_text(content)
    with pytest.raises(PatternsError, match=re.escape(says)) as caught:
        load_patterns(str(path))
    assert str(path) in str(caught.value)


def test_a_missing_patterns_file_is_refused() -> None:
    with pytest.raises(PatternsError, match="cannot read the file"):
        load_patterns("/nonexistent/patterns.toml")


@pytest.mark.parametrize(("word", "on"), [("off", False), ("false", False), ("no", False), ("on", True), ("1", True)])
def test_redaction_is_switched_by_a_word(monkeypatch: pytest.MonkeyPatch, word: str, on: bool) -> None:
    monkeypatch.setenv("DEBUGRELAY_REDACTION", word)
    settings = load_settings()
    assert settings.redaction is on
    assert msgspec.to_builtins(settings.public())["redaction"] is on


def test_the_relays_log_lines_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("debugrelay.test_redaction")
    flt = RedactingFilter(Redactor())
    caplog.handler.addFilter(flt)
    try:
        with caplog.at_level(logging.INFO):
            logger.info("target said: %s", "Authorization: Bearer ya29.a0AfH6SMBx3kP9qLwZ7yT2")
    finally:
        caplog.handler.removeFilter(flt)
    assert "ya29" not in caplog.text
    assert PLACEHOLDER.search(caplog.text)


# -- time linear in the text, bounded per answer ------------------------------------------------------


class CountingPattern:
    """A compiled pattern that counts its ``match`` calls and the characters each could read."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.groupindex = pattern, pattern.groupindex
        self.calls = self.reach = 0

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        self.calls += 1
        self.reach += len(text) - pos
        return self.pattern.match(text, pos)


def test_a_value_after_a_secret_word_is_read_once_however_often_the_word_comes_back() -> None:
    """``token=token=token=...``: each 'token' starts a value running to the end of the line; trying
    each one read the line once per word (seconds for 64 KB). Now the run is read once."""
    from debugrelay.redaction._rules import _ASSIGNED_TAIL, _ASSIGNED_WORDS, _after_words, _key_qualified

    tail = CountingPattern(_ASSIGNED_TAIL)
    text = "token=" * 10_000
    spans = list(_after_words(text, _ASSIGNED_WORDS, tail, _key_qualified))  # type: ignore[arg-type]
    assert spans == [(6, len(text))]
    assert tail.calls <= 2 and tail.reach <= 2 * len(text)
    # a quoted value is not a run: the words after it are all tried, and all found
    assert list(_after_words("token='a1b2c3' token='d4e5f6'", _ASSIGNED_WORDS, _ASSIGNED_TAIL)) == [(7, 13), (22, 28)]
    # a bare value followed by a call is code, not a secret, however long
    assert list(_after_words("token=" + "atoken=" * 1000 + "(", _ASSIGNED_WORDS, _ASSIGNED_TAIL)) == []


PEM = "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----"


@pytest.mark.parametrize(
    ("crafted", "found"),
    [
        ("token=" * 2000, ["token=" * 1999]),
        ("password:" * 2000, ["password:" * 1999]),
        ("-----BEGIN RSA PRIVATE KEY-----" * 500, ["-----BEGIN RSA PRIVATE KEY-----"] * 500),
        (PEM + " x", [PEM]),
        ("eyJ-" * 3000, []),
        ("@" * 5000, []),
        ("a@" * 3000, []),
        ("1" * 20_000, []),
        ("x bearer " * 2000 + "bearer abcdefgh12345", ["abcdefgh12345"]),
        ("--password " * 2000 + "--password hunter2x", ["hunter2x"]),
        ("-" * 20_000 + " --api-token\t'a b c'", ["a b c"]),
    ],
)
def test_crafted_runs_of_what_the_rules_look_for_find_what_they_should(crafted: str, found: list[str]) -> None:
    redactor, table = fresh()
    out = redactor.text(crafted, table, "output")
    assert {e.value for e in table.entries()} == set(found)
    assert all(value not in out for value in found)


def test_the_finders_find_what_the_rules_regexes_say_in_the_corpus() -> None:
    """The private key, JWT and email rules read the text their own way (each step bounded); on the
    corpus they find exactly what their regular expressions describe."""
    from debugrelay.redaction import BUILTIN_RULES

    for rule in BUILTIN_RULES:
        if rule.name in ("private_key", "jwt", "email", "card"):
            described = {m.span() for m in rule.regex.finditer(CORPUS)}
            assert set(rule.spans(CORPUS)) == described, rule.name


def test_an_answer_is_redacted_up_to_its_budget_and_cut_with_a_marker_past_it() -> None:
    from debugrelay.redaction import Budget

    redactor, table = fresh()
    line = "password=hunter2!x and some words " * 10
    answer = {"outputs": [line] * 100}
    out = redactor.walk(answer, table, "output", budget=Budget(1000))
    texts = out["outputs"]
    assert texts[0] == line.replace("hunter2!x", "[SECRET_1]")
    assert all("hunter2" not in t for t in texts)
    cut = texts[2]
    assert "<cut:" in cut and "more chars" in cut and "smaller page" in cut
    assert all(t.startswith("<cut:") for t in texts[3:])  # the rest: nothing but the marker
    assert len("".join(texts)) < 100 * 120


# -- encodings of a known secret -------------------------------------------------------------------


SEEN = "hunter2-horse-battery"


@pytest.mark.parametrize(
    "encoded",
    [
        base64.b64encode(SEEN.encode()).decode(),
        base64.b64encode(SEEN.encode()).decode().rstrip("="),
        base64.urlsafe_b64encode(b"x" + SEEN.encode() + b"?").decode(),
        base64.b64encode(b"password=" + SEEN.encode() + b"\n").decode(),
        base64.b64encode(b"xy" + SEEN.encode()).decode(),
        SEEN.encode().hex(),
        SEEN.encode().hex(" ").upper(),
        (b"pw=" + SEEN.encode()).hex(),
        SEEN[::-1],
        SEEN.upper(),
        SEEN.upper()[::-1],
        SEEN.title(),
        " ".join(SEEN),
        "-".join(SEEN),
        repr(list(SEEN)),
        repr([ord(c) for c in SEEN]),
        repr(list(SEEN.encode())),
        quote("login " + SEEN + "&next=/", safe=""),
        json.dumps({"pw": SEEN}),
    ],
)
def test_a_known_secret_is_hidden_in_a_common_encoding(encoded: str) -> None:
    redactor, table = fresh()
    redactor.text(f"password={SEEN}", table, "output")
    out = redactor.text(f"value = {encoded} (end)", table, "output")
    assert "[SECRET_1]" in out, out
    assert out.startswith("value = ") and out.endswith(" (end)")


def test_encodings_of_non_ascii_secrets_and_escapes_are_hidden() -> None:
    redactor, table = fresh()
    secret = "pässwörd-Ω-2024"
    redactor.named(repr(secret), table, "variables")
    for encoded in (ascii(secret), json.dumps(secret), repr(secret.encode()), quote(secret), secret.encode().hex()):
        out = redactor.text(f"sent {encoded}!", table, "output")
        assert "[SECRET_1]" in out, (encoded, out)


def test_known_secrets_do_not_hide_ordinary_text() -> None:
    """A table that knows every secret of the corpus leaves ordinary debugger output as it was
    (letters glued to a known value, short values, numbers that merely contain its ords)."""
    import asyncio
    import collections
    import datetime

    redactor, table = fresh()
    redactor.text(CORPUS, table, "output")
    redactor.named("'secret'", table, "variables")  # a short, plain word as a password
    ordinary = "\n".join(pprint.pformat(vars(m)) for m in (datetime, collections, asyncio))
    before = len(table)
    out = redactor.text(ordinary, table, "variables")
    new = table.entries()[before:]
    assert {e.rule for e in new} <= {"email"}
    assert all(e.placeholder in out for e in new)
    assert out.count("[") - out.count("[EMAIL_") == ordinary.count("[") - sum(ordinary.count(e.value) for e in new)


def test_a_value_known_in_two_cases_keeps_its_own_placeholder_for_each() -> None:
    redactor, table = fresh()
    assert redactor.named("'hunter2-horse-battery'", table, "variables") == "'[SECRET_1]'"
    assert redactor.named("'HUNTER2-HORSE-BATTERY'", table, "evaluate") == "'[SECRET_2]'"
    out = redactor.text("'hunter2-horse-battery' 'HUNTER2-HORSE-BATTERY' 'Hunter2-Horse-Battery'", table, "output")
    assert out == "'[SECRET_1]' '[SECRET_2]' '[SECRET_1]'"


def test_a_known_secret_inside_a_longer_value_hides_the_whole_value() -> None:
    redactor, table = fresh()
    redactor.text("password = 'Zq8vT2mKx9LpR4wN'", table, "output")  # known from then on
    out = redactor.text(
        "token=prefix-Zq8vT2mKx9LpR4wN-suffixvalue99 api_key: ab12cd34-Zq8vT2mKx9LpR4wN "
        "secret='pre-Zq8vT2mKx9LpR4wN-post' {'Authorization': 'Bearer Zq8vT2mKx9LpR4wN'}",
        table,
        "output",
    )
    # no part of a value around the known secret shows (it used to: token=prefix-[SECRET_1]-suffixvalue99)
    for part in ("prefix", "suffixvalue99", "ab12cd34", "pre-", "-post"):
        assert part not in out, out
    assert "'Bearer [SECRET_1]'" in out  # a word beside the secret is not one: the known placeholder stays
    token = re.search(r"token=(\[SECRET_\d+\])", out)
    assert token is not None, out
    assert redactor.substitute(token.group(1), table, "text") == "prefix-Zq8vT2mKx9LpR4wN-suffixvalue99"


def test_an_option_whose_name_says_secret_hides_its_value_in_a_command_line() -> None:
    redactor, table = fresh()
    line = (
        "python serve.py --db-password hunter2-db --api-token 'tok 0123' -client-secret=s3cr3t-v "
        "--max-tokens 500 --port 8080 --key abc --auth basic --password --verbose"
    )
    out = redactor.text(line, table, "output")
    assert {e.value for e in table.entries()} == {"hunter2-db", "tok 0123", "s3cr3t-v"}
    assert "--max-tokens 500 --port 8080 --key abc --auth basic --password --verbose" in out
