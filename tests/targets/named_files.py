"""Runs code compiled under the names of two files it does not own (argv[1] and argv[2]): its frames
then name those files, as any program may."""

import sys

marked, other = sys.argv[1], sys.argv[2]
space: dict[str, object] = {}
exec(compile("def boom(): raise ValueError('raised in code named after another file')\n", other, "exec"), space)
exec(compile("pass\nbreakpoint()\npass\nboom()\n", marked, "exec"), space)
