"""A recursion with no base case: the commonest infinite loop an agent meets."""


def depth(node, n):
    return depth(node, n + 1)  # recurse


depth("root", 0)  # first-call
