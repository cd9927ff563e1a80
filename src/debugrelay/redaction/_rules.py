"""What counts as a secret: the rule table, the validators, and the names that say "secret".

A rule finds a candidate with a regex; a validator (Luhn, SSA rules, address shape) keeps only real
ones, so that memory addresses, hashes, uuids, timestamps, ports and ids in debugger output survive.
Rules are cheap to skip: each names the substrings (``triggers``) one of which must be in the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

PLACEHOLDER = re.compile(r"\[[A-Z][A-Z0-9_]*_\d+\]")

# Values that are never secret, whatever their name says (compared lowercased, quotes stripped).
_TRIVIAL = frozenset(
    {"", "none", "null", "nil", "true", "false", "undefined", "str", "int", "bytes", "bool", "dict", "list", "any"}
    | {"optional", "bearer", "basic", "***", "...", "<redacted>", "redacted", "*"}
)


@dataclass(frozen=True)
class Rule:
    """A secret shape: ``regex`` finds it; the group named ``s`` (or ``s2``, ``s3``) is the secret,
    else the whole match; ``valid`` checks a candidate (the secret, the text, the secret's start)."""

    name: str
    prefix: str
    regex: re.Pattern[str]
    triggers: tuple[str, ...] = ()  # one of these must be in the text (lowercased when ``lower``)
    lower: bool = False
    valid: Callable[[str, str, int], bool] | None = None
    gate: re.Pattern[str] | None = None  # a cheap search that must find something first
    finder: Callable[[str], Iterator[tuple[int, int]]] | None = None  # spans, instead of ``regex``
    custom: bool = field(default=False, compare=False)

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Where candidate secrets are: the ``s`` group's span (or ``s2``, ``s3``), else the match's."""
        if self.finder is not None:
            yield from self.finder(text)
            return
        groups = [g for g in ("s", "s2", "s3") if g in self.regex.groupindex]
        for m in self.regex.finditer(text):
            group = next((g for g in groups if m.group(g) is not None), 0)
            yield m.span(group)

    def applies(self, text: str, lowered: str) -> bool:
        if self.gate is not None:
            return self.gate.search(text) is not None
        if not self.triggers:
            return True
        hay = lowered if self.lower else text
        for trigger in self.triggers:  # noqa: SIM110 - a loop, not any(): it runs for every string of every answer
            if trigger in hay:
                return True
        return False


def luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card_issuer(d: str) -> bool:
    """A prefix and length an issuer uses (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay)."""
    n = len(d)
    if d[0] == "4":
        return n in (13, 16, 19)
    two, four = int(d[:2]), int(d[:4])
    if 51 <= two <= 55 or 2221 <= four <= 2720:
        return n == 16
    if two in (34, 37):
        return n == 15
    if d.startswith(("6011", "65")) or 644 <= int(d[:3]) <= 649:
        return 16 <= n <= 19
    if 3528 <= four <= 3589:
        return 16 <= n <= 19
    if two in (36, 38, 39) or 300 <= int(d[:3]) <= 305:
        return 14 <= n <= 19
    return d.startswith("62") and 16 <= n <= 19


# Words just before a number that make it a technical value, not a card (ids, clocks, sizes, hashes).
_TECHNICAL = re.compile(
    r"(?i)(?:\b|_)(?:id|ids|pid|tid|seq|nonce|ts|time|timestamp|epoch|ns|us|ms|offset|size|count|len|hash|"
    r"addr|address|port|line|frame|ref|reference|checksum|crc|inode)\b\W{0,3}$"
)


def _starts_apart(text: str, start: int, joiners: str) -> bool:
    """Whether the candidate at ``start`` begins a token: not preceded by a word character or a joiner."""
    return start == 0 or not (text[start - 1].isalnum() or text[start - 1] in joiners)


def _valid_card(secret: str, text: str, start: int) -> bool:
    if not _starts_apart(text, start, "_.+-"):
        return False
    digits = secret.replace(" ", "").replace("-", "")
    if not 13 <= len(digits) <= 19 or len(set(digits)) < 2:
        return False
    if not (_card_issuer(digits) and luhn(digits)):
        return False
    return not _TECHNICAL.search(text[max(0, start - 24) : start])


def _valid_ssn(secret: str, text: str, start: int) -> bool:
    """SSA rules: area not 000, 666 or 9xx; group not 00; serial not 0000."""
    if not _starts_apart(text, start, "_-"):
        return False
    area, group, serial = secret.split("-")
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


_FILE_SUFFIXES = frozenset(
    {"py", "pyc", "js", "ts", "txt", "json", "log", "png", "jpg", "gif", "svg", "css", "html", "md", "yaml", "yml"}
    | {"toml", "cfg", "ini", "so", "whl", "gz", "zip", "tar", "lock", "pem", "sock", "tmp", "bak"}
)


def _valid_email(secret: str, _text: str, _start: int) -> bool:
    local, _, domain = secret.rpartition("@")
    labels = domain.lower().split(".")
    if local.startswith(".") or local.endswith(".") or ".." in local or len(local) > 64:
        return False
    if any(not label or label.startswith("-") or label.endswith("-") for label in labels):
        return False
    tld = labels[-1]
    return tld.isalpha() and 2 <= len(tld) <= 24 and tld not in _FILE_SUFFIXES


_LOCAL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")
_DOMAIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)+\b")


def _emails(text: str) -> Iterator[tuple[int, int]]:
    """From each '@': the local part is the run of its characters just before (1 to 64 of them, not
    joined to a longer word), the domain is matched after. Every step is bounded, whatever the text."""
    at = text.find("@")
    while at != -1:
        start, floor = at, max(0, at - 64)
        while start > floor and text[start - 1] in _LOCAL_CHARS:
            start -= 1
        joined = start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.+%-")
        if start < at and not joined:
            domain = _DOMAIN.match(text, at + 1)
            if domain is not None:
                yield start, domain.end()
        at = text.find("@", at + 1)


# a bare value's characters; it runs on through placeholders of known secrets hidden inside it
# (``token=pre-[SECRET_1]-post``: the whole value is one secret)
_BARE = r"(?:[^\s,;&}\])'\"(\[<>]|\[[A-Z][A-Z0-9_]*_\d+\])"
_VALUE = rf"(?:'(?P<s>[^'\n]*)'|\"(?P<s2>[^\"\n]*)\"|(?P<s3>{_BARE}+)(?![\w(\[]|\.\w))"
# The same, for the finder: the bare value's run taken whole (possessive, so a run that fails is never
# retried shorter); what may follow it is checked by the finder (``_CALLED``).
_BARE_VALUE = rf"(?:'(?P<s>[^'\n]*)'|\"(?P<s2>[^\"\n]*)\"|(?P<s3>{_BARE}++))"
_CALLED = ("(", "[")  # a bare value followed by these is code (a call, an index), not a literal
_ASSIGNED_WORDS = (
    "password", "passwd", "passphrase", "pwd", "secret", "token", "apikey", "key", "authorization", "cookie",
    "credentials", "credential",
)  # fmt: skip
_ASSIGNED_TAIL = re.compile(rf"['\"]?\s*[:=]\s*(?!=){_BARE_VALUE}")
_BEARER_TAIL = re.compile(r"\s+(?P<s>[A-Za-z0-9._~+/-]{8,}=*)")
_KEY_QUALIFIER = re.compile(r"(?:api|access|private|secret|signing|encryption|master)[_-]?\Z")


def _key_qualified(lowered: str, word: str, at: int) -> bool:
    """'key' counts only as api_key, access_key, private_key, ...; the other words as they are."""
    return word != "key" or _KEY_QUALIFIER.search(lowered, max(0, at - 12), at) is not None


def _after_words(
    text: str,
    words: tuple[str, ...],
    tail: re.Pattern[str],
    accept: Callable[[str, str, int], bool] | None = None,
) -> Iterator[tuple[int, int]]:
    """Secrets that follow one of ``words`` (any case): each found with ``str.find``, the rest matched there.

    Linear in the text: a word inside the bare value of an earlier one (``token=token=...``) would match
    the same run to the same end, so it is not tried again."""
    lowered = text.lower()
    found: list[tuple[int, str]] = []
    for word in words:
        at = lowered.find(word)
        while at != -1:
            found.append((at, word))
            at = lowered.find(word, at + len(word))
    found.sort()
    spans: set[tuple[int, int]] = set()
    reach = -1  # the end of the last bare value matched
    for at, word in found:
        end = at + len(word)
        if end + 1 < reach:
            continue
        if end < len(text) and (lowered[end].isalnum() or lowered[end] == "_"):
            continue  # a longer word: tokens, tokenizer, password_valid
        if accept is not None and not accept(lowered, word, at):
            continue
        m = tail.match(text, end)
        if m is None:
            continue
        group = next((g for g in ("s", "s2", "s3") if g in tail.groupindex and m.group(g) is not None), 0)
        if group == "s3":
            reach = m.end()
            if text.startswith(_CALLED, reach):
                continue
        spans.add(m.span(group))
    yield from sorted(spans)


_PEM_BEGIN = re.compile(r"-----BEGIN[A-Z ]{0,20} PRIVATE KEY-----")
_PEM_END = re.compile(r"-----END[A-Z ]{0,20} PRIVATE KEY-----")
_PEM_BODY = re.compile(r"[A-Za-z0-9+/=\s\\]*")


def _private_keys(text: str) -> Iterator[tuple[int, int]]:
    """Each BEGIN line to its END line, or (cut short) to the end of the base64 after it. The END found
    is kept for the next BEGIN: a text of BEGIN lines alone is searched once, not once per line."""
    pos = 0
    end: re.Match[str] | None = None
    searched = False  # once none is found, none is after any later BEGIN either
    while (begin := _PEM_BEGIN.search(text, pos)) is not None:
        if not searched or (end is not None and end.start() < begin.end()):
            end = _PEM_END.search(text, begin.end())
            searched = True
        if end is not None:
            yield begin.start(), end.end()
            pos = end.end()
        else:
            body = _PEM_BODY.match(text, begin.end())
            pos = body.end() if body is not None and body.end() > begin.end() else begin.end()
            yield begin.start(), pos


_JWT_HEAD = re.compile(r"\beyJ[A-Za-z0-9_-]*")
_JWT_REST = re.compile(r"\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{6,}")


def _jwts(text: str) -> Iterator[tuple[int, int]]:
    """A header segment taken whole, then the rest matched after it: each segment is read once or
    twice, never once per 'eyJ' inside it (``eyJ-eyJ-...``)."""
    for head in _JWT_HEAD.finditer(text):
        if head.end() - head.start() >= 11:
            rest = _JWT_REST.match(text, head.end())
            if rest is not None:
                yield head.start(), rest.end()


# a command-line option and its value as the next word (``--db-password hunter2``, ``-api-token "x y"``);
# ``--name=value`` is the assignment rule's. Tried only where a dash starts a word: linear in the text.
_FLAG = re.compile(
    r"(?:^|(?<=[\s\"']))--?(?P<name>[A-Za-z][A-Za-z0-9_.-]{0,63})[ \t]+"
    r"(?:'(?P<s>[^'\n]*)'|\"(?P<s2>[^\"\n]*)\"|(?P<s3>[^\s'\"-][^\s'\"]*))"
)


def _flags(text: str) -> Iterator[tuple[int, int]]:
    """The values of options whose name says secret (its last word, as for variables: ``--api-token``,
    ``--db-password``, not ``--max-tokens``)."""
    for m in _FLAG.finditer(text):
        if secret_name(m.group("name")):
            group = next(g for g in ("s", "s2", "s3") if m.group(g) is not None)
            yield m.span(group)


def _has_digit_or_long(secret: str, _text: str, _start: int) -> bool:
    return len(secret) >= 16 or any(c.isdigit() for c in secret)


def _valid_assigned(secret: str, _text: str, _start: int) -> bool:
    v = secret.strip()
    if v.lower() in _TRIVIAL or PLACEHOLDER.fullmatch(v) or len(v) < 3:
        return False
    return not (v.isdigit() and len(v) < 4)


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


_SECRET_WORDS = (  # for reading: the rule's finder looks for these words and what follows them
    r"password|passwd|passphrase|pwd|secret|token|apikey|(?:api|access|private|secret|signing|encryption|master)[_-]?key|"
    r"authorization|cookie|credentials?"
)

BUILTIN_RULES: tuple[Rule, ...] = (
    Rule(
        "private_key",
        "SECRET",
        _rx(
            r"-----BEGIN[A-Z ]{0,20} PRIVATE KEY-----(?:[\s\S]*?-----END[A-Z ]{0,20} PRIVATE KEY-----"
            r"|[A-Za-z0-9+/=\s\\]*)"
        ),
        ("PRIVATE KEY",),
        finder=_private_keys,
    ),
    Rule(
        "jwt",
        "SECRET",
        _rx(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{6,}"),
        ("eyJ",),
        finder=_jwts,
    ),
    Rule(
        "aws_access_key",
        "SECRET",
        _rx(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"),
        ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"),
    ),
    Rule(
        "github_token",
        "SECRET",
        _rx(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    Rule(
        "gitlab_token",
        "SECRET",
        _rx(r"\bgl(?:pat|dt|ptt|rt)-[A-Za-z0-9_-]{20,}"),
        ("glpat-", "gldt-", "glptt-", "glrt-"),
    ),
    Rule("slack_token", "SECRET", _rx(r"\bxox[abposre]-[A-Za-z0-9-]{10,}"), ("xox",)),
    Rule(
        "slack_webhook",
        "SECRET",
        _rx(r"https://hooks\.slack\.com/services/(?P<s>T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+)"),
        ("hooks.slack.com",),
    ),
    Rule(
        "stripe_key",
        "SECRET",
        _rx(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b|\bwhsec_[A-Za-z0-9]{24,}\b"),
        ("_live_", "_test_", "whsec_"),
    ),
    Rule("google_api_key", "SECRET", _rx(r"\bAIza[0-9A-Za-z_-]{35}\b"), ("AIza",)),
    Rule("openai_key", "SECRET", _rx(r"\bsk-(?:proj-|ant-[a-z0-9]+-)?[A-Za-z0-9_-]{20,}"), ("sk-",)),
    Rule(
        "url_password",
        "SECRET",
        _rx(r"://[^\s:/@'\"]+:(?P<s>[^\s@/'\"]+)@"),
        ("://",),
        valid=_valid_assigned,
    ),
    Rule(
        "bearer",
        "SECRET",
        _rx(r"(?i:\b(?:bearer|basic)\s+)(?P<s>[A-Za-z0-9._~+/-]{8,}=*)"),
        ("bearer", "basic"),
        lower=True,
        valid=_has_digit_or_long,
        finder=lambda text: _after_words(text, ("bearer", "basic"), _BEARER_TAIL),
    ),
    Rule(
        "secret_assignment",
        "SECRET",
        _rx(rf"(?i)(?:{_SECRET_WORDS})['\"]?\s*[:=]\s*(?!=){_VALUE}"),
        ("pass", "pwd", "secret", "token", "key", "authorization", "cookie", "credential"),
        lower=True,
        valid=_valid_assigned,
        # found from each word with str.find, then the rest matched there: one case-insensitive
        # alternation tried at every position cost 0.37 ms per KiB of ordinary output
        finder=lambda text: _after_words(text, _ASSIGNED_WORDS, _ASSIGNED_TAIL, _key_qualified),
    ),
    Rule(
        "secret_option",
        "SECRET",
        _FLAG,
        ("pass", "pwd", "secret", "token", "key", "auth", "cookie", "credential"),
        lower=True,
        valid=_valid_assigned,
        finder=_flags,
    ),
    Rule(
        "card",
        "CARD",
        # only where a number starts: inside a run of 64 K digits every position would be tried (55 ms,
        # against 2 ms; ordinary output costs the same); the validator checks the character before too
        _rx(
            r"(?<![\w.+-])(?:\d{4}[ -]?\d{4}[ -]?\d{4}[ -]?\d{1,7}(?![\w-]|\.\d)"
            r"|\d{4}[ -]?\d{6}[ -]?\d{4,5}(?![\w-]|\.\d))"
        ),
        valid=_valid_card,
    ),
    Rule(
        "email",
        "EMAIL",
        # found from each '@' outwards (see _emails): a regex scanning every start of a word is quadratic
        _rx(r"(?<![\w.+%-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)+\b"),
        ("@",),
        valid=_valid_email,
        finder=_emails,
    ),
    Rule("national_id", "ID", _rx(r"\d{3}-\d{2}-\d{4}(?![\w-])"), ("-",), valid=_valid_ssn),
)

# -- names that say "secret" -------------------------------------------------------------------------

_SECRET_LAST = frozenset(
    {"password", "passwd", "pwd", "passphrase", "secret", "token", "apikey", "authorization", "auth", "cookie"}
    | {"cookies", "credential", "credentials", "privatekey", "secretkey", "accesskey", "passcode"}
)
_KEY_QUALIFIERS = frozenset({"api", "private", "secret", "access", "signing", "encryption", "master", "client"})
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_LAST_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)[^A-Za-z0-9_]*$")


def secret_name(name: str | None) -> bool:
    """Whether a variable, key or attribute called ``name`` holds a secret: its last word says so
    (``db_password``, ``authToken``, ``'X-Api-Key'``), not merely contains one (``max_tokens``)."""
    if not name:
        return False
    words = [w.lower() for w in _WORDS.findall(name)]
    if not words:
        return False
    last = words[-1]
    if last in _SECRET_LAST:
        return True
    return bool(last == "key" and len(words) > 1 and words[-2] in _KEY_QUALIFIERS)


def expression_name(expression: str | None) -> str | None:
    """The name an expression's value goes by: its last identifier or key (``os.environ['API_KEY']``)."""
    if not expression:
        return None
    found = _LAST_NAME.search(expression.strip())
    return found.group(1) if found else None


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def secret_expression(expression: str | None) -> bool:
    """Whether an expression touches something whose name says secret (``password.upper()``,
    ``os.environ['API_KEY']``): its value, and the quoted values of its errors, are hidden whole."""
    return bool(expression) and any(secret_name(word) for word in _IDENTIFIER.findall(expression or ""))


def trivial(value: str) -> bool:
    return value.strip().lower() in _TRIVIAL
