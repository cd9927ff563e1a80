"""Prints lines made to be slow to redact: 30 lines of about 60 KB, each "token=" and a short hex value
over and over (every "token=" starts a value that runs to the end of the line), then a last line."""

import os

for _ in range(30):
    print("".join("token=" + os.urandom(4).hex() for _ in range(4285)), flush=True)
print("DONE-END", flush=True)
