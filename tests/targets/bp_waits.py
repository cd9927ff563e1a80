"""Waits for a line on stdin, then runs the file named in argv[1] (which may not exist at start)."""

import runpy
import sys

path = sys.argv[1]
answer = input()  # wait-for-go
runpy.run_path(path)  # run-it
print("ran", path)
