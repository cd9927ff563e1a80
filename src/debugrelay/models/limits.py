"""Bounds on what a client may send: declared on the request Structs, so the OpenAPI document shows them.

A value over a bound is refused (400) before anything changes; the message names the bound.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

MAX_NAME = 200  # session names
MAX_JSON_DEPTH = 64  # arrays and objects nested in one request body (a deeper body is refused before it is decoded)
MAX_EXPRESSION = 16_384  # characters of an expression, condition, log message, watch or completion text
MAX_PATH = 4_096  # characters of a file path
MAX_FUNCTION = 512  # characters of a function name
MAX_TIMEOUT_MINUTES = 24 * 60  # a session's idle timeout
MAX_INPUT = 1 << 20  # characters sent to a target's stdin at once
MAX_BREAKPOINTS_PER_REQUEST = 1_000
MAX_BREAKPOINTS_PER_SESSION = 5_000
MAX_WATCHES = 100  # watch expressions per session
MAX_WAITS_PER_SESSION = 16  # long-polls (wait, resume with wait) open at once on one session
MAX_WAITS = 1_024  # ... and on the whole relay (each holds a connection)
# a launch: what a command line and an environment can hold (Linux takes 128 KiB per string at most)
MAX_ARG = 32_768  # characters of one argument, environment value or stdin input given at launch
MAX_ARGS = 1_024  # arguments, environment variables, stdin inputs
MAX_PATHS = 64  # entries of pythonpath, mounts and path mappings
MAX_MODULE = 512  # characters of a module name
MAX_TEST = 8_192  # characters of a test id (pytest ids carry their parameters)
MAX_IMAGE = 512  # characters of an image reference

Name = Annotated[str, msgspec.Meta(max_length=MAX_NAME)]
SessionIdFilter = Annotated[str, msgspec.Meta(max_length=64)]
CredentialName = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")]
MAX_SHARES = 50  # names and roles a session is shared with
# a credential's name, or every credential of a role
Sharee = Annotated[str, msgspec.Meta(pattern=r"^(role:(admin|agent|viewer)|[A-Za-z0-9][A-Za-z0-9_.@-]{0,63})$")]
Sharees = Annotated[list[Sharee], msgspec.Meta(min_length=1, max_length=MAX_SHARES)]
Expression = Annotated[str, msgspec.Meta(max_length=MAX_EXPRESSION)]
SourcePath = Annotated[str, msgspec.Meta(max_length=MAX_PATH)]
FunctionName = Annotated[str, msgspec.Meta(max_length=MAX_FUNCTION)]
TimeoutMinutes = Annotated[float, msgspec.Meta(gt=0, le=MAX_TIMEOUT_MINUTES)]
InputText = Annotated[str, msgspec.Meta(max_length=MAX_INPUT)]
Host = Annotated[str, msgspec.Meta(max_length=255)]
Arg = Annotated[str, msgspec.Meta(max_length=MAX_ARG)]
EnvName = Annotated[str, msgspec.Meta(min_length=1, max_length=256, pattern=r"^[^=\x00]+$")]
# dotted names: what `python -m` can run (identifiers are not only ASCII, so no narrower class than this)
ModuleName = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_MODULE, pattern=r"^[^\s.]+(\.[^\s.]+)*$")]
TestId = Annotated[str, msgspec.Meta(max_length=MAX_TEST)]
ImageRef = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_IMAGE)]
MemorySize = Annotated[str, msgspec.Meta(max_length=32)]
Port = Annotated[int, msgspec.Meta(ge=1, le=65535)]
Pid = Annotated[int, msgspec.Meta(ge=1, le=1 << 22)]  # Linux PID_MAX_LIMIT
# a dotted class name, as exception breakpoints take it (ASCII, like the check in the breakpoints package)
EXCEPTION_TYPE = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$"
ExceptionType = Annotated[str, msgspec.Meta(pattern=EXCEPTION_TYPE)]
ExceptionFilter = Literal["raised", "uncaught", "userUnhandled"]
# Kubernetes object names: DNS-1123 subdomain (pods) and label (namespaces)
PodName = Annotated[str, msgspec.Meta(max_length=253, pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")]
NamespaceName = Annotated[str, msgspec.Meta(max_length=63, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")]

# Pages, waits and reads: the bounds of the operations' parameters (each interface words them its way)
MAX_PAGE = 1000  # items of one page (variables, frames, capture rows, evidence lines)
OUTPUT_PAGE_MAX = 10_000  # output entries of one page
MAX_WAIT = 300.0  # seconds one call may wait for the next stop
MAX_FRAMES_SHOWN = 200  # frames of an autopsy
MAX_INNER = 50  # depth of an autopsy's inner exception chain
# a variable path: names joined by dots, [index] or ['key']; a name is anything but blanks, dots and brackets
# (identifiers need not be ASCII; a name that is not there is a 404, not a parse error)
PATH_NAME, PATH_INDEX = r"[^\s.\[\]]+", r"\[[^\]]+\]"
PATH_PATTERN = rf"^(?:\s*(?:\.?\s*{PATH_NAME}|{PATH_INDEX}))+\s*$"

Start = Annotated[int, msgspec.Meta(ge=0, description="Index of the first item (0-based)")]
Count = Annotated[int, msgspec.Meta(ge=1, le=MAX_PAGE, description=f"Items per page, 1-{MAX_PAGE}")]
FrameIndex = Annotated[int, msgspec.Meta(ge=0, description="Frame index, 0 = top")]
Line = Annotated[int, msgspec.Meta(ge=1, description="1-based line")]
Seconds = Annotated[float, msgspec.Meta(ge=0, le=MAX_WAIT, description=f"Seconds, 0-{MAX_WAIT:g}")]
OutputLimit = Annotated[int, msgspec.Meta(ge=1, le=OUTPUT_PAGE_MAX, description=f"Lines per page, 1-{OUTPUT_PAGE_MAX}")]
ProcessId = Annotated[int, msgspec.Meta(ge=1, le=1 << 22, description="A process id of the session's program")]
Frames = Annotated[int, msgspec.Meta(ge=1, le=MAX_FRAMES_SHOWN, description=f"Frames shown, 1-{MAX_FRAMES_SHOWN}")]
FramesWithVariables = Annotated[
    int, msgspec.Meta(ge=0, le=MAX_FRAMES_SHOWN, description="Frames whose variables are shown")
]
InnerDepth = Annotated[int, msgspec.Meta(ge=0, le=MAX_INNER, description="Depth of the inner exception chain")]
ScopeName = Annotated[Literal["locals", "arguments", "globals", "all"], msgspec.Meta(description="Which variables")]
VariablePath = Annotated[
    str,
    msgspec.Meta(
        min_length=1,
        max_length=MAX_EXPRESSION,
        pattern=PATH_PATTERN,
        description="A variable's path: names, dots, [index] or ['key'], e.g. self.items[0]['k']",
    ),
]
Details = Annotated[bool, msgspec.Meta(description="Answer a stop with its source line, locals and watch values.")]
Grep = Annotated[
    str,
    msgspec.Meta(
        description="Lines matching this RE2 regular expression (linear time; no backreferences or lookarounds)"
    ),
]
EvidenceId = Annotated[str, msgspec.Meta(pattern=r"^ev-[0-9a-f]{12}$")]
ResumeCommand = Literal["continue", "step-over", "step-into", "step-out"]


MESSAGE_CHARS = 1000  # of an exception's message in a stop, an autopsy, a snapshot


def cut_message(text: str) -> str:
    """An exception's message within MESSAGE_CHARS, the rest counted; a message cut once is kept as it is."""
    if len(text) <= MESSAGE_CHARS + 32:
        return text
    return f"{text[:MESSAGE_CHARS]}<cut: {len(text) - MESSAGE_CHARS} more chars>"
