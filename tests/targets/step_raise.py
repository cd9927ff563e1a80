"""A function left by an exception its caller catches: for steps that say which exception passed."""


def parse(text):
    value = int(text)  # leaves-by-exception
    return value


def main():
    try:
        parse("x")
    except ValueError as exc:  # caught
        print("bad input:", exc)
    return parse("7")  # normal-return


main()
