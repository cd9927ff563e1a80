"""COUNT short-lived Python children, one after another, each started by subprocess.run.

python bench/short_children.py [COUNT]
"""

import subprocess
import sys

count = int(sys.argv[1]) if len(sys.argv) > 1 else 20
for _ in range(count):
    subprocess.run([sys.executable, "-c", "pass"], check=True)
print("children", count, flush=True)
