"""An imported module, for breakpoints and steps across files."""


def double(x):
    doubled = x * 2  # double-body
    return doubled
