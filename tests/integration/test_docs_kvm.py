#!/usr/bin/env python3
"""The commands README.md and docs/ show that need /dev/kvm (the blocks
marked needs=kvm, doc_blocks.py), run as printed: in meson's 'kvm'
suite, so that a machine without /dev/kvm runs them inside the emulated
AMD-V host (.ci/run)."""
import doc_blocks
import harness

globals().update(doc_blocks.tests("kvm"))
harness.main(globals())
