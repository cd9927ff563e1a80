"""A program that reports how its container runs: its user, what it may write, its privileges, where debugpy
came from. Exits with 3, so the exit code that reaches the agent is the program's."""

import os
import sys


def try_write(path):
    try:
        with open(path, "w") as out:
            out.write("x")
    except OSError as exc:
        return f"refused ({exc.strerror})"
    os.remove(path)
    return "written"


def status_fields(*names):
    with open("/proc/self/status") as status:
        fields = dict(line.split(":", 1) for line in status.read().splitlines() if ":" in line)
    return {name: fields[name].strip() for name in names}


def main():
    user = f"{os.getuid()}:{os.getgid()}"
    print(f"user: {user}")
    root_write = try_write("/written-by-the-target")  # report-here
    report = {
        "groups": ",".join(str(g) for g in sorted(os.getgroups())),
        "write /": root_write,
        "write /tmp": try_write("/tmp/written-by-the-target"),
        "cwd": os.getcwd(),
        "debugpy": sys.modules["debugpy"].__file__,
        "greeting": os.environ.get("GREETING"),
        **status_fields("NoNewPrivs", "Seccomp", "CapBnd", "CapEff"),
    }
    for key, value in report.items():
        print(f"{key}: {value}")
    return 3


if __name__ == "__main__":
    sys.exit(main())
