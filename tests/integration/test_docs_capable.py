#!/usr/bin/env python3
"""The commands README.md and docs/ show for a host with VT-x/AMD-V (a
Linux guest as users run one), run as printed (doc_blocks.py): on such a
host directly, on this project's machines inside the emulated AMD-V host
of tests/hosts/svm_host.py. Emulated, so only that they work is checked."""
import doc_blocks
import harness

globals().update(doc_blocks.tests("capable"))
harness.main(globals())
