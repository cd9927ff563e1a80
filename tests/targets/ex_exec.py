"""Code without a source file: a function compiled from a string and run with exec."""

GENERATED = """
def compute(x):
    y = x * 2
    return 100 // (y - y)

compute(21)
"""

exec(compile(GENERATED, "<generated>", "exec"))  # exec-line
