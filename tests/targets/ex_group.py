"""An ExceptionGroup with a nested group, raised uncaught."""


def validate(rows):
    errors = []
    for i, row in enumerate(rows):
        if row < 0:
            errors.append(ValueError(f"row {i} is negative"))
    errors.append(ExceptionGroup("schema", [KeyError("name"), TypeError("age must be int")]))
    raise ExceptionGroup("validation failed", errors)  # group


validate([1, -2, -3])
