"""Lines of every kind, for breakpoint validation.

The docstring spans lines."""

import functools  # imports


def deco(fn):
    @functools.wraps(fn)
    def inner(*args):
        return fn(*args)

    return inner


@deco  # decorator-line
def decorated(x):  # def-line
    """A docstring
    on two lines."""  # docstring-end
    y = x + 1  # first-body-line
    if y > 1:
        z = 1  # if-body
        y += 1
    else:  # bare-else
        z = 2  # else-body
        y -= 1
    # a comment  # comment-line
    total = (  # open-bracket
        z + y
    )  # closing-bracket
    return int(total)  # return-line


class Shape:
    """A class."""

    def area(self):
        return 4  # area-body


def only_docstring():
    """Nothing else."""  # only-docstring


if __name__ == "__main__":
    decorated(1)  # call-decorated
    Shape().area()
# trailing comment  # last-comment
