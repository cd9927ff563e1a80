"""What a debug target's child processes do about the debugger, and how the keeper hears of them.

Every Python process of the program (the program itself, a spawned or forked child, a Python started by
``subprocess``) says its pid to its keeper as it starts, one datagram, so the relay can list the processes
the debugger does not follow. A forked child inherits the parent's tracer, hooked to a debugger whose
threads did not survive the fork: the first breakpoint it reaches waits for ever for a client that will
never answer, and a ``Pool.map`` never returns. Unless child debugging is on (debugpy then attaches the
child on its own), a forked child forgets the debugger at once and runs as it would without one.
"""

import os
import sys

CHILDREN_ENV = "DEBUGRELAY_CHILDREN"  # "debug": debugpy follows children; anything else: they run plain
SOCKET_ENV = "DEBUGRELAY_CHILDREN_SOCKET"  # the keeper's: "@name" of an abstract datagram socket


def announce():
    """Say this process's pid to the keeper (never blocks, never fails the program)."""
    where = os.environ.get(SOCKET_ENV, "")
    if not where.startswith("@"):
        return
    try:
        import socket

        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            sock.setblocking(False)
            sock.sendto(str(os.getpid()).encode(), "\0" + where[1:])
        finally:
            sock.close()
    except Exception:
        pass


def forget_debugger():
    """Drop every trace hook the parent's debugger left in this (forked) process."""
    try:
        import threading

        threading.settrace(None)
    except Exception:
        pass
    tracing = sys.modules.get("pydevd_tracing")
    holder = getattr(tracing, "TracingFunctionHolder", None)
    original = getattr(holder, "_original_tracing", None)  # pydevd wraps sys.settrace to warn about it
    (original or sys.settrace)(None)
    if tracing is not None:
        try:
            tracing.restore_sys_set_trace_func()
        except Exception:
            pass
    frame = sys._getframe()
    while frame is not None:
        frame.f_trace = None
        frame = frame.f_back
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None and monitoring.get_tool(monitoring.DEBUGGER_ID) == "pydevd":
        tool = monitoring.DEBUGGER_ID
        monitoring.set_events(tool, 0)
        for name in dir(monitoring.events):
            event = getattr(monitoring.events, name)
            if isinstance(event, int) and event and not event & (event - 1):
                try:
                    monitoring.register_callback(tool, event, None)
                except ValueError:
                    pass


def _after_fork_in_child():
    if os.environ.get(CHILDREN_ENV) != "debug":
        try:
            forget_debugger()
        except Exception as exc:  # a hook never keeps the program from running
            print("debugrelay: the forked child keeps its parent's tracer: %r" % (exc,), file=sys.stderr)
    announce()


def install():
    announce()
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)
