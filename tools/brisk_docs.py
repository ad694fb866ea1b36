# SPDX-License-Identifier: MIT
"""`brisk docs`: regenerate the example output in README.md.

Builds libbrisk (build/), compiles the programs of docs/examples with -g, runs
each example with `./brisk run` and today's library, and rewrites every block
between the README's markers

    <!-- ./brisk docs: NAME -->
    ...
    <!-- end of ./brisk docs output -->

with the commands and what they printed, so line numbers and stack traces are
always those of the current sources. Each stack trace is cut after its last
frame in docs/examples (the rest is libc's start-up code).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
from collections import namedtuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
BUILD = os.path.join(ROOT, "build")
EXAMPLES = os.path.join(ROOT, "docs", "examples")
WORK = "/tmp/brisk-examples"  # where the examples run: their output names it
MARKER = re.compile(r"(<!-- \./brisk docs: (\w+) -->\n)(.*?)(<!-- end of \./brisk docs output -->)",
                    re.DOTALL)
FRAME = re.compile(r"^(brisk:)?(\s+)#\d+ 0x[0-9a-f]+ ")

# NAME: the program to run, `brisk run` switches, its expected exit status, and
# a shell command to show afterwards.
Example = namedtuple("Example", "program switches status then")
RECIPES = {
    "profile": Example("example", ["--profile"], 0, "head -16 example.brisk-profile.txt"),
    "check": Example("bad", ["--check"], 86, None),
    "leaks": Example("leak", ["--leaks"], 0, None),
    "stats": Example("example", ["--stats"], 0, None),
}


class DocsError(Exception):
    pass


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise DocsError(f"{' '.join(command)} failed:\n{(result.stdout + result.stderr)[-3000:]}")
    return result


def build():
    """Builds libbrisk and the example programs; returns the library's path."""
    print("brisk docs: building libbrisk (build/) and docs/examples ...", flush=True)
    run(["cmake", "-S", ROOT, "-B", BUILD, "-DCMAKE_BUILD_TYPE=Release"])
    run(["cmake", "--build", BUILD, "--target", "brisk"])
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    for source in sorted(os.listdir(EXAMPLES)):
        if source.endswith(".c"):
            # from the root, with the root mapped to ".": frames read ./docs/examples/x.c:5
            run(["cc", "-g", "-O0", "-pthread", "-w", f"-fdebug-prefix-map={ROOT}=.",
                 os.path.join("docs", "examples", source), "-o",
                 os.path.join(WORK, source[:-2])], cwd=ROOT)
    return os.path.join(BUILD, "libbrisk.so")


def cut_stacks(lines):
    """Drops the frames after the last one in docs/examples from each stack."""
    out, stack = [], []

    def flush():
        last = max((i for i, line in enumerate(stack) if "docs/examples/" in line), default=None)
        if last is None or last == len(stack) - 1:
            out.extend(stack)
        else:
            out.extend(stack[:last + 1])
            match = FRAME.match(stack[last])
            out.append(f"{match.group(1) or ''}{match.group(2)}...")
        stack.clear()

    for line in lines:
        if FRAME.match(line):
            stack.append(line)
        else:
            flush()
            out.append(line)
    flush()
    return out


def transcript(name, library):
    example = RECIPES[name]
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRISK_")}
    shown = ["./brisk", "run", *example.switches, "--", f"./{example.program}"]
    command = [sys.executable, os.path.join(ROOT, "tools", "brisk_command.py"), "brisk_run",
               "--lib", library, *example.switches, "--", f"./{example.program}"]
    result = subprocess.run(command, cwd=WORK, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=120)
    if result.returncode != example.status:
        raise DocsError(f"example {name}: exit status {result.returncode}, expected "
                        f"{example.status}:\n{result.stdout[-3000:]}")
    lines = [f"$ {' '.join(shown)}", *cut_stacks(result.stdout.splitlines())]
    if example.then:
        then = subprocess.run(example.then, shell=True, cwd=WORK, capture_output=True, text=True)
        lines += [f"$ {example.then}", *cut_stacks(then.stdout.splitlines())]
    return "```\n" + "\n".join(lines).rstrip() + "\n```\n"


def main(argv):
    parser = argparse.ArgumentParser(prog="brisk docs",
                                     description="Regenerate the example output in README.md.")
    parser.parse_args(argv)
    with open(README) as f:
        text = f.read()
    names = [m.group(2) for m in MARKER.finditer(text)]
    unknown = [n for n in names if n not in RECIPES]
    if unknown:
        print(f"brisk docs: README.md names unknown examples: {', '.join(unknown)} "
              f"(known: {', '.join(RECIPES)})", file=sys.stderr)
        return 1
    if not names:
        print("brisk docs: README.md has no example markers", file=sys.stderr)
        return 1
    try:
        library = build()
        outputs = {name: transcript(name, library) for name in dict.fromkeys(names)}
    except (DocsError, subprocess.TimeoutExpired) as error:
        print(f"brisk docs: {error}", file=sys.stderr)
        return 1
    text = MARKER.sub(lambda m: m.group(1) + outputs[m.group(2)] + m.group(4), text)
    with open(README, "w") as f:
        f.write(text)
    print(f"brisk docs: README.md: regenerated {', '.join(names)} (examples ran in {WORK})")
    return 0
