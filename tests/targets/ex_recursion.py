"""Deep recursion: the exception is raised 300 calls down."""


def walk(node, depth):
    if depth == 0:
        raise LookupError(f"no leaf under {node}")  # bottom
    return walk(node + 1, depth - 1)


walk(0, 300)
