/* Minimal i8042: Linux's probe finds a controller that passes its self
 * tests and has no devices; writing 0xfe to the command port (the usual
 * way x86 guests reboot) ends the VM, as a reboot does under lkvm. */
#include "arch/x86/i8042.h"

#include <string.h>

#include "core/vm.h"

#define CMD_READ_CTR 0x20
#define CMD_WRITE_CTR 0x60
#define CMD_AUX_DISABLE 0xa7
#define CMD_AUX_ENABLE 0xa8
#define CMD_AUX_TEST 0xa9
#define CMD_SELF_TEST 0xaa
#define CMD_KBD_TEST 0xab
#define CMD_KBD_DISABLE 0xad
#define CMD_KBD_ENABLE 0xae
#define CMD_WRITE_OUTPUT 0xd1
#define CMD_RESET 0xfe

#define STATUS_OBF 0x01
#define STATUS_SYS 0x04		/* self test passed */
#define STATUS_CMD 0x08		/* last write was a command */

#define SELF_TEST_OK 0x55
#define OUTPUT_RESET_LINE 0x01	/* active low */

void i8042_init(struct i8042 *kbc, struct vm *vm)
{
	memset(kbc, 0, sizeof(*kbc));
	pthread_mutex_init(&kbc->lock, NULL);
	kbc->vm = vm;
	kbc->ctr = 0x30;	/* both ports disabled, no interrupts */
}

static void push_out(struct i8042 *kbc, uint8_t v)
{
	kbc->out = v;
	kbc->out_full = true;
}

static void command(struct i8042 *kbc, uint8_t cmd)
{
	switch (cmd) {
	case CMD_READ_CTR:
		push_out(kbc, kbc->ctr);
		break;
	case CMD_WRITE_CTR:
	case CMD_WRITE_OUTPUT:
		kbc->pending_cmd = cmd;
		break;
	case CMD_SELF_TEST:
		push_out(kbc, SELF_TEST_OK);
		break;
	case CMD_KBD_TEST:
	case CMD_AUX_TEST:
		push_out(kbc, 0);	/* interface OK */
		break;
	case CMD_RESET:
		vm_request_exit(kbc->vm, 0, VM_EXIT_RESET);
		break;
	default:
		/* Port enables/disables and the rest change nothing we
		 * model. */
		break;
	}
}

void i8042_data_access(void *opaque, uint64_t offset, uint8_t *data,
		       uint32_t len, bool is_write)
{
	struct i8042 *kbc = opaque;

	pthread_mutex_lock(&kbc->lock);
	if (!is_write) {
		memset(data, 0, len);
		data[0] = kbc->out;
		kbc->out_full = false;
	} else if (kbc->pending_cmd == CMD_WRITE_CTR) {
		kbc->ctr = data[0];
		kbc->pending_cmd = 0;
	} else if (kbc->pending_cmd == CMD_WRITE_OUTPUT) {
		kbc->pending_cmd = 0;
		if (!(data[0] & OUTPUT_RESET_LINE))
			vm_request_exit(kbc->vm, 0, VM_EXIT_RESET);
	}
	/* Bytes for the (absent) keyboard are dropped. */
	pthread_mutex_unlock(&kbc->lock);
}

void i8042_cmd_access(void *opaque, uint64_t offset, uint8_t *data,
		      uint32_t len, bool is_write)
{
	struct i8042 *kbc = opaque;

	pthread_mutex_lock(&kbc->lock);
	if (is_write) {
		command(kbc, data[0]);
	} else {
		memset(data, 0, len);
		data[0] = STATUS_SYS | (kbc->out_full ? STATUS_OBF : 0);
	}
	pthread_mutex_unlock(&kbc->lock);
}
