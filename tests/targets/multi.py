"""Uses a helper from another module; relative imports depend on the working directory."""

from pkg.helpers import double


def run():
    value = double(21)  # call-double
    print("value", value)
    return value


run()
