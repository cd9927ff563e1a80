"""A callback called from inside the standard library: its stop has library frames above the program's."""

import json


class Money:
    def __init__(self, cents: int) -> None:
        self.cents = cents


def encode(obj: Money) -> float:
    return obj.cents / 100  # encode-body


print(json.dumps({"total": Money(1250)}, default=encode))
