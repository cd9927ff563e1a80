"""Prints a database URL with the password in $SPLIT_SECRET (the relay's rules find it), then the password
three characters a line, and composed encodings of it, each on a line of its own; then a last line."""

import base64
import os

secret = os.environ["SPLIT_SECRET"]
print(f"db=postgresql://svc:{secret}@db.internal:5432/app")
for i in range(0, len(secret), 3):
    print(secret[i : i + 3])
print("upper-b64", base64.b64encode(secret.upper().encode()).decode())
print("reversed-b64", base64.b64encode(secret[::-1].encode()).decode())
print("reversed-hex", secret[::-1].encode().hex())
print("x-escaped", "".join(f"\\x{b:02x}" for b in secret.encode()))
print("u-escaped", "".join(f"\\u{ord(c):04x}" for c in secret))
print("DONE-END")
