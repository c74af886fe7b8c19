# SPDX-License-Identifier: GPL-2.0
"""A strict reader of Prometheus' text exposition format (0.0.4), for the tests.

Usage: python3 promtext.py FILE PREFIX
Reads FILE as the format says it must be: every sample's family has one HELP
and one TYPE line before its samples, a family's samples are together, names
and label names are valid, label values are quoted and escaped, values are
numbers, counters are named *_total and not negative, no sample repeats, and
every metric name starts with PREFIX. Prints the samples as JSON lines
{"name":..., "labels":{...}, "value":...}; exits 1 with the line at fault.
"""
import json
import math
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*$")
TYPES = ("counter", "gauge", "untyped", "summary", "histogram")


def fail(n, line, why):
    sys.exit("line %d: %s: %r" % (n, why, line))


def labels(n, line, s):
    """The label set of s (what is between the braces), as a dict."""
    out, i = {}, 0
    while i < len(s):
        m = re.match(r"([^=]*)=\"", s[i:])
        if not m or not LABEL.match(m.group(1)) or m.group(1).startswith("__"):
            fail(n, line, "bad label name")
        name, i, v = m.group(1), i + m.end(), ""
        while True:
            if i >= len(s):
                fail(n, line, "unterminated label value")
            c = s[i]
            if c == "\\":
                if i + 1 >= len(s) or s[i + 1] not in '\\"n':
                    fail(n, line, "bad escape in a label value")
                v += "\n" if s[i + 1] == "n" else s[i + 1]
                i += 2
            elif c == '"':
                i += 1
                break
            else:
                v += c
                i += 1
        if name in out:
            fail(n, line, "label repeated")
        out[name] = v
        if i < len(s):
            if s[i] != ",":
                fail(n, line, "labels not separated by a comma")
            i += 1
    return out


def number(n, line, s):
    if s in ("NaN", "+Inf", "-Inf"):
        return float(s.replace("Inf", "inf").replace("NaN", "nan"))
    if not re.match(r"-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$", s):
        fail(n, line, "value not a number")
    return float(s)


def read(text, prefix):
    helps, types, done, seen, samples = {}, {}, set(), set(), []
    current = None
    if text and not text.endswith("\n"):
        fail(0, text[-40:], "no newline at the end")
    for n, line in enumerate(text.split("\n")[:-1], 1):
        if line.startswith("#"):
            m = re.match(r"# (HELP|TYPE) (\S+) (.+)$", line)
            if not m:
                fail(n, line, "comment that is neither HELP nor TYPE")
            kind, name, rest = m.groups()
            if not NAME.match(name) or not name.startswith(prefix):
                fail(n, line, "bad metric name")
            table = helps if kind == "HELP" else types
            if name in table or name in done:
                fail(n, line, kind + " again")
            if kind == "TYPE" and rest not in TYPES:
                fail(n, line, "unknown type")
            if current and current != name:
                done.add(current)
            current = name
            table[name] = rest
            continue
        m = re.match(r"([^{ ]+)(?:\{(.*)\})? (\S+)$", line)
        if not m:
            fail(n, line, "not a sample")
        name, lab, val = m.groups()
        if not NAME.match(name) or not name.startswith(prefix):
            fail(n, line, "bad metric name")
        if name != current or name not in helps or name not in types:
            fail(n, line, "sample without its family's HELP and TYPE just before")
        lab = labels(n, line, lab or "")
        v = number(n, line, val)
        if types[name] == "counter":
            if not name.endswith("_total"):
                fail(n, line, "counter not named *_total")
            if math.isnan(v) or v < 0:
                fail(n, line, "counter below 0")
        key = (name, tuple(sorted(lab.items())))
        if key in seen:
            fail(n, line, "sample repeated")
        seen.add(key)
        samples.append({"name": name, "labels": lab, "value": v})
    for name in helps:
        if name not in types:
            fail(0, name, "HELP without TYPE")
    return samples


if __name__ == "__main__":
    for s in read(open(sys.argv[1]).read(), sys.argv[2]):
        print(json.dumps(s))
