/* The PS/2 controller (ports 0x60/0x64), only as far as a guest needs it
 * without a keyboard: self-tests answer, the command byte is kept, and the
 * reset line (command 0xfe, or output port bit 0 cleared) ends the VM. */
#ifndef THPVM_X86_I8042_H
#define THPVM_X86_I8042_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define I8042_DATA_PORT 0x60
#define I8042_CMD_PORT 0x64
#define I8042_IRQ 1		/* the keyboard's ISA line */

struct vm;

struct i8042 {
	pthread_mutex_t lock;
	struct vm *vm;
	uint8_t ctr;		/* controller command byte */
	uint8_t pending_cmd;	/* a command waiting for its data byte */
	uint8_t out;		/* output buffer */
	bool out_full;
};

void i8042_init(struct i8042 *kbc, struct vm *vm);
void i8042_data_access(void *kbc, uint64_t offset, uint8_t *data,
		       uint32_t len, bool is_write);
void i8042_cmd_access(void *kbc, uint64_t offset, uint8_t *data,
		      uint32_t len, bool is_write);

#endif
