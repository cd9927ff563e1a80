"""What the relay tells debugpy when it connects: its identity and the attach options it always sends."""

from __future__ import annotations

from typing import Any

ATTACH_ARGS: dict[str, Any] = {
    "redirectOutput": True,
    "showReturnValue": True,
    "variablePresentation": {"special": "hide", "function": "hide", "class": "group", "protected": "inline"},
}

INITIALIZE_ARGS: dict[str, Any] = {
    "clientID": "debugrelay",
    "clientName": "debugrelay",
    "adapterID": "debugpy",
    "linesStartAt1": True,
    "columnsStartAt1": True,
    "pathFormat": "path",
    "supportsVariableType": True,
    "supportsVariablePaging": True,
    "supportsRunInTerminalRequest": False,
}


def attach_args(
    path_mappings: list[dict[str, str]], *, just_my_code: bool, sub_process: bool = False
) -> dict[str, Any]:
    """The ``attach`` arguments for a target: the fixed options, the launch's choices, the path mappings."""
    return {**ATTACH_ARGS, "justMyCode": just_my_code, "subProcess": sub_process, "pathMappings": path_mappings}
