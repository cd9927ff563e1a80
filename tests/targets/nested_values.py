"""Nested values: small ones to be shown whole, deep and long ones cut, one that holds itself, objects."""

import collections


class Cat:
    def __init__(self, name):
        self.name = name
        self.hunger = 3
        self.owner = {"name": "Ann"}

    def feed(self):
        self.hunger -= 1  # in-method


class Wide:
    def __init__(self):
        for i in range(14):
            setattr(self, f"a{i}", i)


Point = collections.namedtuple("Point", "x y")


class Shout:
    def __repr__(self):
        return "Shout(" + "a" * 5000 + ")"


def fail_long():
    raise ValueError("bad " + "y" * 3000)


cfg = {"db": {"host": "h", "port": 5432}}
point = Point(Point([1] * 50, {"k": "v" * 300}), 2)
shout = Shout()
deep = {"a": {"b": {"c": {"d": {"e": 1}}}}}
loop = [1]
loop.append(loop)
big = list(range(100))
pair = (7,)
wide = Wide()
cat = Cat("Tom")
cat.feed()
done = True  # values-here
fail_long()
