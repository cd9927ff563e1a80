"""Start-up hook put on a debug target's PYTHONPATH by debugrelay.

Sets TCP_NODELAY on every TCP socket debugpy opens in the debuggee and its adapter: stock debugpy
answers each DAP request in ~44 ms because of Nagle/delayed-ACK stalls, ~1.5 ms with this. The
program's own sockets are left as it makes them.
Then runs any other ``sitecustomize`` further down the path, so a target's own one still works.
Prints the program's own tracebacks and pauses at a RecursionError that overflowed the debugger's
tracer (``_debugrelay_uncaught``); values keep no marks that read as Python (``_debugrelay_repr``);
each variable carries what the relay would otherwise ask a second time (``_debugrelay_vars``).
Calls of the functions the relay traces are recorded (``_debugrelay_trace``). A file's breakpoints
change at once for the program's threads (``_debugrelay_pydevd``).
In a test run (``DEBUGRELAY_TEST_STOPS``), hooks pytest and
unittest so a failing test pauses.
"""

import os as _os
import socket as _socket
import sys as _sys

_DEBUGGER = (_os.sep + "debugpy" + _os.sep, "pydevd")


def _nodelay(sock):
    """TCP_NODELAY on ``sock`` when the debugger connects or accepts it (past the socket module's frames)."""
    frame = _sys._getframe(2)
    while frame is not None and frame.f_code.co_filename == _socket.__file__:
        frame = frame.f_back
    if frame is None or not any(part in frame.f_code.co_filename for part in _DEBUGGER):
        return
    try:
        if sock.family in (_socket.AF_INET, _socket.AF_INET6) and sock.type == _socket.SOCK_STREAM:
            sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
    except OSError:
        pass


_connect = _socket.socket.connect
_accept = _socket.socket.accept


def _patched_connect(self, address):
    _nodelay(self)
    return _connect(self, address)


def _patched_accept(self):
    conn, address = _accept(self)
    _nodelay(conn)
    return conn, address


_socket.socket.connect = _patched_connect
_socket.socket.accept = _patched_accept


def _nudge_handler():
    """A Python handler for SIGWINCH (ignored by default), so the relay can pause a program whose
    every thread is blocked in C (a deadlock): the signal runs Python in the main thread, where debugpy's
    pending pause takes hold. A program's own SIGWINCH handler is left alone."""
    try:
        import signal

        if signal.getsignal(signal.SIGWINCH) == signal.SIG_DFL:
            signal.signal(signal.SIGWINCH, _debugrelay_nudge)
    except (AttributeError, ValueError, OSError):
        pass


def _debugrelay_nudge(signum, frame):
    return None


_nudge_handler()


def _chain():
    import importlib
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    saved = list(_sys.path)
    me = _sys.modules.pop("sitecustomize", None)
    try:
        _sys.path[:] = [p for p in _sys.path if os.path.abspath(p or ".") != here]
        importlib.import_module("sitecustomize")
    except ImportError:
        pass
    finally:
        _sys.path[:] = saved
        if me is not None:
            _sys.modules["sitecustomize"] = me


_chain()

try:
    import _debugrelay_trace

    _debugrelay_trace.install()  # before debugpy is imported: its tracer then runs inside ours (<= 3.11)
except Exception as _exc:  # a hook never keeps the program from running
    print(f"debugrelay: frame traces not installed: {_exc!r}", file=_sys.stderr)

try:
    import _debugrelay_children

    _debugrelay_children.install()
except Exception as _exc:  # a hook never keeps the program from running
    print(f"debugrelay: child-process hook not installed: {_exc!r}", file=_sys.stderr)

try:
    import _debugrelay_repr
    import _debugrelay_uncaught
    import _debugrelay_vars

    _debugrelay_uncaught.install()
    _debugrelay_repr.install()
    _debugrelay_vars.install()
except Exception as _exc:  # a hook never keeps the program from running
    print(f"debugrelay: uncaught-exception hook not installed: {_exc!r}", file=_sys.stderr)

try:
    import _debugrelay_bp
    import _debugrelay_pydevd

    _debugrelay_bp.install()
    _debugrelay_pydevd.install()
except Exception as _exc:  # a hook never keeps the program from running
    print(f"debugrelay: breakpoint checks not installed: {_exc!r}", file=_sys.stderr)

if __import__("os").environ.get("DEBUGRELAY_TEST_STOPS"):
    import _debugrelay_tests

    _debugrelay_tests.install()
