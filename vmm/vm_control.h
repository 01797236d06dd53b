/* The control socket commands of a running VM: info, stat, pause, resume,
 * stop and balloon (docs/control-protocol.md). */
#ifndef THPVM_VM_CONTROL_H
#define THPVM_VM_CONTROL_H

#include <stdint.h>

struct control_server;
struct json_value;
struct json_writer;
struct vm;

/* Registers the commands on srv (before control_server_start()); vm must
 * outlive the server. Returns 0 or -errno. */
int vm_control_register(struct control_server *srv, struct vm *vm);

/* The balloon size a balloon request asks for (one of "inflate",
 * "deflate" or "set", in bytes; none: target unchanged), given guest
 * RAM and the current balloon target. Returns 0, or fills reply with
 * the error and returns -EINVAL (malformed) or -ERANGE. */
int vm_balloon_request_target(const struct json_value *request, uint64_t ram,
			      uint64_t target, uint64_t *out,
			      struct json_writer *reply);

#endif
