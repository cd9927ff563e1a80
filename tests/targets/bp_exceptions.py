"""Raises (and catches) exceptions of several types, for exception breakpoints by type."""


class AppError(Exception):
    pass


class RetryableError(AppError):
    pass


class MissingKey(KeyError):
    pass


def fail(kind):
    if kind == "value":
        raise ValueError("not a key error")  # raise-value
    if kind == "missing":
        raise MissingKey("a subclass of KeyError")  # raise-missing
    if kind == "key":
        raise KeyError("plain")  # raise-key
    if kind == "retry":
        raise RetryableError("a subclass of AppError")  # raise-retry


def attempt(kind):
    try:
        fail(kind)
    except Exception as exc:
        return type(exc).__name__
    return None


for kind in ("value", "missing", "key", "retry"):
    attempt(kind)
print("handled all")
