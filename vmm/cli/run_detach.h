/* thpvm run --detach: the VM goes on in a process of its own, in a
 * session of its own (no terminal can stop it or hang it up), and the
 * command returns once that process says the VM is ready. */
#ifndef THPVM_RUN_DETACH_H
#define THPVM_RUN_DETACH_H

/* Forks before anything else is set up. The parent never returns: it
 * exits with 0 once the child calls run_detach_ready, or with the
 * child's own status if it ends before (having said why on stderr,
 * which the child shares until then). The child gets stdin and stdout
 * on /dev/null and the fd to hand to run_detach_ready. Returns -errno,
 * after a message, if there is no child. */
int run_detach_start(void);
/* The VM is up: lets the parent go, and sends later messages to
 * /dev/null unless stderr is a regular file (a log the user chose). */
void run_detach_ready(int fd);

#endif
