"""Debug Adapter Protocol: framing, messages and an async client."""

from ._bodies import (
    BreakpointsBody,
    CompletionsBody,
    EvaluateBody,
    ExitedEvent,
    OutputEvent,
    ScopesBody,
    SetVariableBody,
    Source,
    StackFrame,
    StackTraceBody,
    StoppedEvent,
    ThreadEvent,
    ThreadsBody,
    as_body,
    plain_exception_type,
    plain_frame_name,
)
from ._client import DapClient, EventListener
from ._framing import MAX_BODY, FramingError, frame, read_frame
from ._handshake import ATTACH_ARGS, INITIALIZE_ARGS, attach_args
from ._keeper import KEEPER_FILE, SECRET_ENV, keeper_command, new_secret
from ._messages import Event, Request, Response, decode_message, encode_message

__all__ = [
    "ATTACH_ARGS",
    "INITIALIZE_ARGS",
    "KEEPER_FILE",
    "MAX_BODY",
    "SECRET_ENV",
    "BreakpointsBody",
    "CompletionsBody",
    "DapClient",
    "EvaluateBody",
    "Event",
    "EventListener",
    "ExitedEvent",
    "FramingError",
    "OutputEvent",
    "Request",
    "Response",
    "ScopesBody",
    "SetVariableBody",
    "Source",
    "StackFrame",
    "StackTraceBody",
    "StoppedEvent",
    "ThreadEvent",
    "ThreadsBody",
    "as_body",
    "attach_args",
    "decode_message",
    "encode_message",
    "frame",
    "keeper_command",
    "new_secret",
    "plain_exception_type",
    "plain_frame_name",
    "read_frame",
]
