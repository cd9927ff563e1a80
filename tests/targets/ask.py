"""Reads two answers from stdin."""

name = input("name? ")
colour = input("colour? ")
print(f"got {name} {colour}")
