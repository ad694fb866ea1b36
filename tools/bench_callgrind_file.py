# SPDX-License-Identifier: MIT
"""Reads a callgrind output file (valgrind --tool=callgrind, events Ir) into
the call edges between functions: for each (caller, callee) pair, how many
calls and their inclusive instruction count.

The format (valgrind's docs, "Callgrind Format Specification") names
objects and functions once and refers to them by number afterwards:
`ob=(3) /lib/libc.so.6` then `ob=(3)`; `fn=`/`cfn=` share one table of names
and `ob=`/`cob=` another. A `calls=N ...` line is followed by one cost line
whose cost is the inclusive cost of those N calls; every other cost line is
the current function's own cost.
"""
import re
from dataclasses import dataclass, field

_NAMED = re.compile(r"^(ob|cob|fn|cfn)=\((\d+)\)(?: (.*))?$")


@dataclass
class Profile:
    total_ir: int = 0
    # (caller, callee) -> [calls, inclusive Ir]; a function is (object, name)
    edges: dict = field(default_factory=dict)


def read(path):
    profile = Profile()
    objects, functions = {}, {}
    current_object = call_object = None
    current_fn = call_fn = None
    pending_calls = None  # the count of a `calls=` line awaiting its cost line
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            head = line[0]
            if head.isdigit() or head in "+-*":
                if pending_calls is not None:
                    parts = line.split()
                    edge = profile.edges.setdefault((current_fn, call_fn), [0, 0])
                    edge[0] += pending_calls
                    edge[1] += int(parts[1]) if len(parts) > 1 else 0
                    pending_calls = None
                    # cob= is not sticky: a call without one stays in ob=.
                    call_object = current_object
                continue
            named = _NAMED.match(line)
            if named:
                kind, number, name = named.groups()
                table = objects if kind.endswith("ob") else functions
                if name is not None:
                    table[number] = name
                if kind == "ob":
                    current_object = call_object = table[number]
                elif kind == "cob":
                    call_object = table[number]
                elif kind == "fn":
                    current_fn = (current_object, table[number])
                    call_object = current_object
                else:
                    call_fn = (call_object, table[number])
                continue
            if line.startswith("calls="):
                pending_calls = int(line[len("calls="):].split()[0])
            elif line.startswith("summary:") or line.startswith("totals:"):
                profile.total_ir = int(line.split()[1])
    return profile
