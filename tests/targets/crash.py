"""Raises an uncaught ValueError from a function."""


def parse(text):
    return int(text)  # raise-here


def main():
    values = ["1", "2", "x"]
    return [parse(v) for v in values]


main()
