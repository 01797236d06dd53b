#!/usr/bin/env python3
"""The layering rules of thpvm's tree (docs/architecture.md), checked on
the sources: each layer's C files include only their own layer's headers
and those of the layers it may use, no architecture's own names appear
outside its folder under arch/, and what a file keeps private (guest
RAM's region table) is named nowhere else.

Usage: layering.py [--stamp FILE] [ROOT]
Prints one line per broken rule and exits 1 if there is any; with
--stamp, writes FILE when the tree is clean (the build runs it so that a
wrong-way include fails the build, not only the tests)."""
import argparse
import os
import re
import sys

# What each layer may include besides itself, lowest layer first.
# arch/ stands for each architecture's folder: it implements the hooks
# that core/arch.h declares, and no other layer includes its headers (nor
# does one architecture include another's). Includes name a layer's
# folder from an include root: the tree's top (virtio/, arch/) or vmm/
# (every other layer).
LAYERS = {
    'lib': [],
    'core': ['lib'],
    'hw': ['lib', 'core'],
    'boot': ['lib', 'core'],
    'backend': ['lib'],
    'virtio': ['lib', 'core', 'backend'],
    'arch': ['lib', 'core', 'hw', 'boot'],
    'machine': ['lib', 'core', 'hw', 'boot', 'backend', 'virtio'],
    'control': ['lib', 'core', 'hw', 'boot', 'backend', 'virtio',
                'machine'],
    'cli': ['lib', 'core', 'hw', 'boot', 'backend', 'virtio', 'machine',
            'control'],
}

# The include root each layer's folder stands under.
TOP_LEVEL_LAYERS = ('virtio', 'arch')


def folder_of(layer):
    """A layer's folder, relative to the tree's top."""
    return layer if layer in TOP_LEVEL_LAYERS else 'vmm/' + layer

# Names that belong to one architecture: written anywhere else in C code
# (comments aside), they show its details leaking out. Case-insensitive
# words.
ARCH_NAMES = {
    'x86': [r'0xcf8', r'0xcfc', r'\w*config_address\w*', r'pci_ports',
            r'e820\w*', r'mptable\w*', r'mp_table',
            r'i8042\w*', r'cmos\w*', r'x86_\w+', r'BOOT_16', r'ioapic\w*',
            r'pic_master', r'pvh\w*', r'bzimage\w*', r'zero_page'],
    'arm64': [r'v?gic\w*', r'gicv[23]\w*', r'psci\w*', r'mpidr\w*',
              r'arm64_\w+', r'pl011\w*', r'KVM_ARM_\w+'],
    'powerpc': [r'spapr\w*', r'rtas\w*', r'xics\w*', r'ppc_\w+',
                r'hcall\w*', r'KVM_PPC_\w+', r'hvterm\w*', r'lpcr\w*'],
}

# Names only these files (the .c and its header) may use.
PRIVATE_NAMES = {
    'vmm/core/guest_ram': [r'regions', r'nr_regions', r'ram_region',
                           r'hugetlb_fd'],
}

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.M)
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def layer_of(path):
    """(layer, arch) of a path relative to an include root, or None."""
    parts = path.split('/')
    if parts[0] == 'arch' and len(parts) > 2:
        return 'arch', parts[1]
    if parts[0] in LAYERS and parts[0] != 'arch' and len(parts) > 1:
        return parts[0], None
    return None


def sources(root):
    """(path from the top, path from its include root, full path) of each
    C file under the folders that hold layers: vmm/, virtio/, arch/."""
    for top in ('vmm',) + TOP_LEVEL_LAYERS:
        inc_root = os.path.join(root, 'vmm' if top == 'vmm' else '')
        for dirpath, _, files in sorted(os.walk(os.path.join(root, top))):
            for f in sorted(files):
                if f.endswith(('.c', '.h', '.S')):
                    full = os.path.join(dirpath, f)
                    yield (os.path.relpath(full, root),
                           os.path.relpath(full, inc_root), full)


def check_includes(rel, text, where):
    layer, arch = where
    allowed = set(LAYERS[layer]) | {layer}
    for m in INCLUDE.finditer(text):
        inc = m.group(1)
        target = layer_of(inc)
        line = text.count('\n', 0, m.start()) + 1
        if target is None:
            yield f'{rel}:{line}: includes "{inc}", which names no layer'
            continue
        tlayer, tarch = target
        if tlayer not in allowed:
            yield (f'{rel}:{line}: {layer}/ includes "{inc}" from {tlayer}/,'
                   f' which it may not use')
        elif tlayer == 'arch' and arch is not None and tarch != arch:
            yield (f'{rel}:{line}: arch/{arch}/ includes "{inc}" of '
                   f'another architecture')


def code_only(text):
    """The text with comments and string literals blanked, lines kept."""
    blank = lambda m: re.sub(r'[^\n]', ' ', m.group(0))
    return STRING.sub(blank, COMMENT.sub(blank, text))


def check_arch_names(rel, text, where):
    layer, arch = where
    code = code_only(text)
    for name, words in ARCH_NAMES.items():
        if arch == name:
            continue
        pattern = re.compile(r'\b(' + '|'.join(words) + r')\b', re.I)
        for m in pattern.finditer(code):
            line = code.count('\n', 0, m.start()) + 1
            yield (f'{rel}:{line}: "{m.group(0)}" belongs to arch/{name}/')


def check_private_names(rel, text):
    code = code_only(text)
    for owner, words in PRIVATE_NAMES.items():
        if os.path.splitext(rel)[0] == owner:
            continue
        pattern = re.compile(r'\b(' + '|'.join(words) + r')\b')
        for m in pattern.finditer(code):
            line = code.count('\n', 0, m.start()) + 1
            yield f'{rel}:{line}: "{m.group(0)}" is private to {owner}.c'


def check(root):
    problems = []
    for rel, inc, full in sources(root):
        where = layer_of(inc)
        if where is None or not rel.startswith(folder_of(where[0]) + '/'):
            problems.append(f'{rel}: in no layer\'s folder (see LAYERS)')
            continue
        with open(full, encoding='utf-8', errors='replace') as f:
            text = f.read()
        problems += check_includes(rel, text, where)
        if not rel.endswith('.S'):
            problems += check_arch_names(rel, text, where)
            problems += check_private_names(rel, text)
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--stamp', help='file to write when the tree is clean')
    ap.add_argument('root', nargs='?',
                    default=os.path.join(os.path.dirname(__file__), '..',
                                         '..'))
    args = ap.parse_args()
    problems = check(args.root)
    for p in problems:
        print(p)
    if problems:
        print(f'layering: {len(problems)} broken rule(s); see '
              'docs/architecture.md')
        return 1
    if args.stamp:
        with open(args.stamp, 'w') as f:
            f.write('ok\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
