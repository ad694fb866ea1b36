# SPDX-License-Identifier: MIT
"""Runs one ./brisk command: `python3 tools/brisk_command.py MODULE [ARGS...]`.

./brisk (a shell script) installs what the command needs, then hands over
here; MODULE is a module in tools/ with `main(argv) -> exit status`.
"""
import importlib
import sys


def main(argv):
    module = importlib.import_module(argv[0])
    return module.main(argv[1:])


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        print("\nbrisk: interrupted", file=sys.stderr)
        sys.exit(130)
