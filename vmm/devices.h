/* The VM's virtio devices, created from the configuration after the
 * platform (arch_vm_init) and destroyed after the vCPUs have stopped. */
#ifndef THPVM_DEVICES_H
#define THPVM_DEVICES_H

struct virtio_balloon;
struct vm;

int devices_create(struct vm *vm);
void devices_destroy(struct vm *vm);
/* Pausing the VM (its vCPUs parked): every device finishes what it took
 * and takes nothing new until devices_resume. */
void devices_pause(struct vm *vm);
void devices_resume(struct vm *vm);
/* The balloon, or NULL when the VM has none. */
struct virtio_balloon *devices_balloon(struct vm *vm);

#endif
