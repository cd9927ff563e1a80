"""Lines holding a generator expression, a list comprehension and comprehensions nested in one another,
each run once per call of ``main``, twice in all."""


def double(x):
    return x * 2


def main(items):
    total = sum(double(x) for x in items)  # genexpr
    squares = [x * x for x in items]  # listcomp
    table = {x: {y for y in items if y < x} for x in items}  # nested
    return total, squares, table


for run in range(2):
    print(run, main([1, 2, 3]))
