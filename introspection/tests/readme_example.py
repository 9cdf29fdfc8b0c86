#!/usr/bin/python3
# Runs the Python example of README.md (the indented block under
# "## Python"), so that what the README shows keeps working.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import sys

readme = open(sys.argv[1]).read()
section = readme[readme.index("## Python\n"):]
section = section[:section.index("\n## ", 1)]
code = "\n".join(line[4:] for line in section.splitlines() if line.startswith("    ") or not line.strip())
scope = {}
exec(compile(code, "README.md (## Python)", "exec"), scope)
scope["system"].shutdown()
print("the README's Python example ran")
