"""Objects worth inspecting: nesting, a cycle, a huge list, a long string, a failing __repr__."""


class Node:
    def __init__(self, value, parent=None):
        self.value = value
        self.parent = parent
        self.children = []


class BadRepr:
    def __repr__(self):
        raise RuntimeError("repr exploded")


def build():
    root = Node("root")
    child = Node("child", parent=root)
    root.children.append(child)
    root.self_ref = root
    big = list(range(100_000))
    text = "x" * 10_000
    nested = {"a": {"b": {"c": [1, 2, 3]}}, "n": 7}
    bad = BadRepr()
    count = 255
    return root, child, big, text, nested, bad, count  # inspect-here


if __name__ == "__main__":
    build()
