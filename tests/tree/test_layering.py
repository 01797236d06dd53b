"""tests/tree/layering.py: the real tree keeps the rules, and each kind
of broken rule, written into a small tree of its own, is found."""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import layering  # noqa: E402


def problems(files):
    """The checker's findings on a tree holding only files {path: text}."""
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)
        return layering.check(root)


def test_real_tree_is_clean():
    found = layering.check(os.path.join(HERE, "..", ".."))
    assert found == [], "\n".join(found)


def test_downward_includes_pass():
    assert problems({
        "vmm/core/vm.c": '#include "core/vm.h"\n#include "lib/log.h"\n',
        "virtio/blk.c": '#include "backend/disk_image.h"\n',
        "arch/x86/boot.c": '#include "boot/elf_image.h"\n',
        "vmm/cli/main.c": '#include "control/control_server.h"\n',
    }) == []


def test_upward_include_found():
    found = problems({"vmm/core/vm.c": '#include "machine/machine.h"\n'})
    assert len(found) == 1 and "vmm/core/vm.c:1" in found[0], found


def test_include_of_arch_header_from_above_found():
    found = problems({
        "vmm/cli/cmd_run.c": '\n#include "arch/x86/arch_vm.h"\n',
    })
    assert len(found) == 1 and "vmm/cli/cmd_run.c:2" in found[0], found


def test_include_of_another_arch_found():
    found = problems({"arch/arm64/gic.c": '#include "arch/x86/layout.h"\n'})
    assert len(found) == 1 and "another architecture" in found[0], found


def test_include_without_layer_found():
    found = problems({"virtio/net.c": '#include "tap.h"\n'})
    assert len(found) == 1 and "names no layer" in found[0], found


def test_file_outside_every_layer_found():
    """A C file where no layer is (vmm/ itself, a folder of vmm/ that is
    no layer, arch/ itself) is named, not passed over unchecked."""
    found = problems({
        "vmm/stray.c": '#include "cli/commands.h"\n',
        "vmm/tools/x.c": "int x;\n",
        "vmm/virtio/y.c": "int y;\n",
        "arch/z.c": "int z;\n",
        "vmm/core/vm.c": '#include "lib/log.h"\n',
    })
    assert sorted(found) == [
        "arch/z.c: in no layer's folder (see LAYERS)",
        "vmm/stray.c: in no layer's folder (see LAYERS)",
        "vmm/tools/x.c: in no layer's folder (see LAYERS)",
        "vmm/virtio/y.c: in no layer's folder (see LAYERS)"], found


def test_arch_name_in_code_found():
    found = problems({
        "vmm/core/vm.c": "/* e820, as x86 says */\nstatic const char *s = "
                     '"e820";\nint n = x86_e820_build(0);\n',
    })
    assert len(found) == 1 and "vmm/core/vm.c:3" in found[0], found
    assert problems({"arch/x86/memory_map.c": "int x86_e820_build(void);\n"}
                    ) == []


def test_private_name_found():
    found = problems({
        "vmm/core/guest_ram.c": "struct ram_region *r = ram->regions;\n",
        "vmm/core/guest_ram.h": "struct ram_region regions[4];\n",
        "virtio/balloon.c": "/* no regions here */\n"
                            "n = ram->nr_regions;\n",
    })
    assert len(found) == 1 and "virtio/balloon.c:2" in found[0], found


if __name__ == "__main__":
    harness.main(globals())
