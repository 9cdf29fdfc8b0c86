#!/usr/bin/env python3
# Builds the API reference with gi-docgen, and fails on a missing doc.
#
#   build-reference.py GI_DOCGEN CONFIG GIR CONTENT_DIR OUTPUT_DIR
#
# `gi-docgen check` lists every public symbol of the GIR, and parameter of
# one, without a doc comment; each one is printed and fails the build. Then
# `gi-docgen generate --fatal-warnings` writes the reference (broken links
# in the doc comments and in the guide pages of docs/ fail it).
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import re
import subprocess
import sys

gi_docgen, config, gir, content_dir, output_dir = sys.argv[1:]

check = subprocess.run([gi_docgen, "check", "--config", config, gir],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
ansi = re.compile(r"\x1b\[[0-9;]*m")
missing = set()
for line in (ansi.sub("", l) for l in check.stdout.splitlines()):
    # A symbol, or a parameter of one, without its doc: keyed without the
    # source position, which moves with every edit.
    m = re.search(r"Symbol '([^']+)' at .* is not documented", line)
    p = re.search(r"Parameter '([^']+)' of symbol '([^']+)' is not documented", line)
    if m:
        missing.add(m.group(1))
    elif p:
        missing.add(f"{p.group(2)} (parameter {p.group(1)})")
    elif "WARNING" in line or "ERROR" in line:
        print(line, file=sys.stderr)
        missing.add(line)
if check.returncode != 0 and not missing:
    sys.exit(f"gi-docgen check failed:\n{check.stdout}")

for sym in sorted(missing):
    print(f"error: {sym} is not documented: write its doc comment", file=sys.stderr)
if missing:
    sys.exit(1)

gen = subprocess.run([gi_docgen, "generate", "--quiet", "--fatal-warnings", "--config", config,
                      "--content-dir", content_dir, "--output-dir", output_dir, "--no-namespace-dir", gir])
sys.exit(gen.returncode)
