/* The control socket commands of a running VM: info, stat, pause, resume,
 * stop, balloon from balloon_control.c and mem from mem_control.c
 * (docs/control-protocol.md). */
#ifndef THPVM_VM_CONTROL_H
#define THPVM_VM_CONTROL_H

struct control_server;
struct machine;

/* Registers the commands on srv (before control_server_start()); m must
 * outlive the server. Returns 0 or -errno. */
int vm_control_register(struct control_server *srv, struct machine *m);

#endif
