"""Start-up hook put on a debug target's PYTHONPATH by debugrelay.

Sets TCP_NODELAY on every TCP socket the debuggee and its debugpy adapter open: stock debugpy
answers each DAP request in ~44 ms because of Nagle/delayed-ACK stalls, ~1.5 ms with this.
Then runs any other ``sitecustomize`` further down the path, so a target's own one still works.
"""

import socket as _socket
import sys as _sys


def _nodelay(sock):
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
