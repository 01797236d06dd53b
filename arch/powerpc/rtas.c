/* RTAS calls. The argument block is big-endian, as RTAS runs:
 * token, nargs, nret, then nargs arguments and nret results, 32 bits
 * each. Everything in it comes from the guest and is checked. */
#include "arch/powerpc/rtas.h"

#include <endian.h>
#include <string.h>
#include <time.h>

#include "arch/powerpc/arch_vm.h"
#include "arch/powerpc/hcall.h"
#include "arch/powerpc/layout.h"
#include "arch/powerpc/phb.h"
#include "arch/powerpc/vcpu.h"
#include "core/vcpu.h"
#include "core/vm.h"
#include "lib/log.h"
#include "lib/util.h"

/* The entry: mr r4,r3; lis r3,0; ori r3,r3,H_RTAS; sc 1; blr. */
const uint8_t spapr_rtas_blob[] = {
	0x7c, 0x64, 0x1b, 0x78,
	0x3c, 0x60, 0x00, 0x00,
	0x60, 0x63, 0xf0, 0x00,
	0x44, 0x00, 0x00, 0x22,
	0x4e, 0x80, 0x00, 0x20,
};
const size_t spapr_rtas_blob_size = sizeof(spapr_rtas_blob);

#define RTAS_MAX_CELLS	16	/* arguments and results together */
#define RTAS_HEADER	12	/* token, nargs, nret */


/* ibm,os-term's message: as much as is worth a log line. */
#define OS_TERM_MSG_MAX	256

enum {
	TOKEN_GET_TIME_OF_DAY = 0x2001,
	TOKEN_POWER_OFF,
	TOKEN_SYSTEM_REBOOT,
	TOKEN_OS_TERM,
	TOKEN_QUERY_CPU_STOPPED_STATE,
	TOKEN_START_CPU,
	TOKEN_STOP_SELF,
	TOKEN_READ_PCI_CONFIG,
	TOKEN_WRITE_PCI_CONFIG,
	TOKEN_IBM_READ_PCI_CONFIG,
	TOKEN_IBM_WRITE_PCI_CONFIG,
	TOKEN_CHANGE_MSI,
	TOKEN_QUERY_INTERRUPT_SOURCE_NUMBER,
};

const struct rtas_token spapr_rtas_tokens[] = {
	{ "get-time-of-day", TOKEN_GET_TIME_OF_DAY },
	{ "power-off", TOKEN_POWER_OFF },
	{ "system-reboot", TOKEN_SYSTEM_REBOOT },
	{ "ibm,os-term", TOKEN_OS_TERM },
	{ "query-cpu-stopped-state", TOKEN_QUERY_CPU_STOPPED_STATE },
	{ "start-cpu", TOKEN_START_CPU },
	{ "stop-self", TOKEN_STOP_SELF },
	{ "read-pci-config", TOKEN_READ_PCI_CONFIG },
	{ "write-pci-config", TOKEN_WRITE_PCI_CONFIG },
	{ "ibm,read-pci-config", TOKEN_IBM_READ_PCI_CONFIG },
	{ "ibm,write-pci-config", TOKEN_IBM_WRITE_PCI_CONFIG },
	{ "ibm,change-msi", TOKEN_CHANGE_MSI },
	{ "ibm,query-interrupt-source-number",
	  TOKEN_QUERY_INTERRUPT_SOURCE_NUMBER },
	{ NULL, 0 },
};

/* A call's view of its block: arguments in, results out. */
struct rtas_call {
	struct vcpu *vcpu;
	uint32_t nargs, nret;
	uint8_t *cells;		/* nargs + nret big-endian cells */
};

static uint32_t arg(const struct rtas_call *c, unsigned i)
{
	uint32_t v;

	memcpy(&v, c->cells + 4 * i, 4);
	return be32toh(v);
}

static void ret(struct rtas_call *c, unsigned i, int32_t value)
{
	uint32_t v = htobe32((uint32_t)value);

	if (i < c->nret)
		memcpy(c->cells + 4 * (c->nargs + i), &v, 4);
}

/* Whether the call has the cells it needs; if not, says so in its
 * status when it has room for one. */
static bool shape_ok(struct rtas_call *c, uint32_t nargs, uint32_t nret)
{
	if (c->nargs == nargs && c->nret == nret)
		return true;
	ret(c, 0, RTAS_PARAM_ERROR);
	return false;
}

static void get_time_of_day(struct rtas_call *c)
{
	struct timespec ts;
	struct tm tm;

	if (!shape_ok(c, 0, 8))
		return;
	if (clock_gettime(CLOCK_REALTIME, &ts) || !gmtime_r(&ts.tv_sec, &tm)) {
		ret(c, 0, RTAS_HW_ERROR);
		return;
	}
	ret(c, 0, RTAS_SUCCESS);
	ret(c, 1, tm.tm_year + 1900);
	ret(c, 2, tm.tm_mon + 1);
	ret(c, 3, tm.tm_mday);
	ret(c, 4, tm.tm_hour);
	ret(c, 5, tm.tm_min);
	ret(c, 6, tm.tm_sec);
	ret(c, 7, (int32_t)ts.tv_nsec);
}

/* power-off takes the power-on mask (2 cells); system-reboot nothing. */
static void power_off(struct rtas_call *c, uint32_t nargs)
{
	if (!shape_ok(c, nargs, 1))
		return;
	ret(c, 0, RTAS_SUCCESS);
	vm_request_exit(c->vcpu->vm, 0, VM_EXIT_RESET);
}

/* The guest is about to panic: its message, then it goes on (to reboot,
 * with Linux's panic=). */
static void os_term(struct rtas_call *c)
{
	char msg[OS_TERM_MSG_MAX];
	const uint8_t *p;
	uint64_t gpa;
	size_t n;

	if (!shape_ok(c, 1, 1))
		return;
	gpa = arg(c, 0);
	for (n = 0; n < sizeof(msg) - 1; n++) {
		p = guest_ram_ptr(&c->vcpu->vm->ram, gpa + n, 1);
		if (!p || !*p)
			break;
		msg[n] = *p >= 0x20 && *p < 0x7f ? (char)*p : '?';
	}
	msg[n] = '\0';
	pr_err("guest: ibm,os-term: %s", msg);
	ret(c, 0, RTAS_SUCCESS);
}

/* The vCPU whose interrupt server number (its id) is arg i, or NULL. */
static struct vcpu *cpu_arg(struct rtas_call *c, unsigned i)
{
	struct vm *vm = c->vcpu->vm;
	uint32_t id = arg(c, i);

	return id < vm->nr_vcpus ? &vm->vcpus[id] : NULL;
}

/* query-cpu-stopped-state's answers. */
#define CPU_STOPPED	0
#define CPU_RUNNING	2

static void query_cpu_stopped_state(struct rtas_call *c)
{
	struct vcpu *cpu;

	if (!shape_ok(c, 1, 2))
		return;
	cpu = cpu_arg(c, 0);
	if (!cpu) {
		ret(c, 0, RTAS_PARAM_ERROR);
		return;
	}
	ret(c, 0, RTAS_SUCCESS);
	ret(c, 1, vcpu_powered_off(cpu) ? CPU_STOPPED : CPU_RUNNING);
}

/* start-cpu: a stopped vCPU enters the guest at args 1 with r3 = arg 2
 * (LPCR as every vCPU's, which H_SET_MODE keeps in step). */
static void start_cpu(struct rtas_call *c)
{
	struct vcpu *cpu;

	if (!shape_ok(c, 3, 1))
		return;
	cpu = cpu_arg(c, 0);
	if (!cpu) {
		ret(c, 0, RTAS_PARAM_ERROR);
		return;
	}
	if (!vcpu_powered_off(cpu) ||
	    ppc_vcpu_enter(cpu, arg(c, 1), arg(c, 2), 0)) {
		ret(c, 0, RTAS_HW_ERROR);
		return;
	}
	vcpu_set_powered_off(cpu, false);
	ret(c, 0, RTAS_SUCCESS);
}

/* stop-self: the calling vCPU stops until started again; it does not
 * return to the guest, so there is no status to write. */
static void stop_self(struct rtas_call *c)
{
	if (shape_ok(c, 0, 1))
		vcpu_set_powered_off(c->vcpu, true);
}

/* The bridge's bus unit ID in args i and i + 1. */
static uint64_t buid_arg(const struct rtas_call *c, unsigned i)
{
	return (uint64_t)arg(c, i) << 32 | arg(c, i + 1);
}

/* PCI configuration space: (addr, size) -> (status, value) and
 * (addr, size, value) -> status on the one bridge; the ibm, forms name
 * the bridge by its bus unit ID (two cells) after addr. */
static void pci_config(struct rtas_call *c, bool ibm, bool is_write)
{
	unsigned at = ibm ? 3 : 1;
	uint64_t buid = PPC_PHB_BUID;
	uint32_t value = 0;
	int status;

	if (!shape_ok(c, at + 1 + is_write, is_write ? 1 : 2))
		return;
	if (ibm)
		buid = buid_arg(c, 1);
	if (is_write)
		value = arg(c, at + 1);
	status = phb_cfg_access(c->vcpu->vm, buid, arg(c, 0), arg(c, at),
				&value, is_write);
	ret(c, 0, status);
	if (!is_write && !status)
		ret(c, 1, (int32_t)value);
}

/* The change-msi type result. */
#define MSI_TYPE_MSIX	2

/* (addr, buid, function, number, sequence) -> (status, granted, next
 * sequence[, type]): the sequence number is for calls firmware spreads
 * over several; thpvm's finish in one. */
static void change_msi(struct rtas_call *c)
{
	uint32_t granted = 0;
	int status;

	if (c->nargs != 6 || (c->nret != 3 && c->nret != 4)) {
		ret(c, 0, RTAS_PARAM_ERROR);
		return;
	}
	status = phb_change_msi(c->vcpu->vm, buid_arg(c, 1), arg(c, 0),
				arg(c, 3), arg(c, 4), &granted);
	ret(c, 0, status);
	if (status)
		return;
	ret(c, 1, (int32_t)granted);
	ret(c, 2, (int32_t)(arg(c, 5) + 1));
	ret(c, 3, MSI_TYPE_MSIX);
}

/* (addr, buid, vector) -> (status, source, edge-triggered). */
static void query_interrupt_source_number(struct rtas_call *c)
{
	uint32_t source = 0;
	int status;

	if (!shape_ok(c, 4, 3))
		return;
	status = phb_query_msi(c->vcpu->vm, buid_arg(c, 1), arg(c, 0),
			       arg(c, 3), &source);
	ret(c, 0, status);
	if (status)
		return;
	ret(c, 1, (int32_t)source);
	ret(c, 2, 1);
}

int64_t spapr_rtas_call(struct vcpu *vcpu, uint64_t args_gpa)
{
	uint32_t header[3];
	struct rtas_call c = { .vcpu = vcpu };
	const uint8_t *head;
	uint32_t token;

	head = guest_ram_ptr(&vcpu->vm->ram, args_gpa, RTAS_HEADER);
	if (!head)
		return H_PARAMETER;
	memcpy(header, head, sizeof(header));
	token = be32toh(header[0]);
	c.nargs = be32toh(header[1]);
	c.nret = be32toh(header[2]);
	if (c.nargs > RTAS_MAX_CELLS || c.nret > RTAS_MAX_CELLS - c.nargs)
		return H_PARAMETER;
	c.cells = guest_ram_ptr(&vcpu->vm->ram, args_gpa + RTAS_HEADER,
				4 * (c.nargs + c.nret));
	if (!c.cells)
		return H_PARAMETER;
	switch (token) {
	case TOKEN_GET_TIME_OF_DAY:
		get_time_of_day(&c);
		break;
	case TOKEN_POWER_OFF:
		power_off(&c, 2);
		break;
	case TOKEN_SYSTEM_REBOOT:
		power_off(&c, 0);
		break;
	case TOKEN_OS_TERM:
		os_term(&c);
		break;
	case TOKEN_QUERY_CPU_STOPPED_STATE:
		query_cpu_stopped_state(&c);
		break;
	case TOKEN_START_CPU:
		start_cpu(&c);
		break;
	case TOKEN_STOP_SELF:
		stop_self(&c);
		break;
	case TOKEN_READ_PCI_CONFIG:
	case TOKEN_WRITE_PCI_CONFIG:
	case TOKEN_IBM_READ_PCI_CONFIG:
	case TOKEN_IBM_WRITE_PCI_CONFIG:
		pci_config(&c, token >= TOKEN_IBM_READ_PCI_CONFIG,
			   token == TOKEN_WRITE_PCI_CONFIG ||
			   token == TOKEN_IBM_WRITE_PCI_CONFIG);
		break;
	case TOKEN_CHANGE_MSI:
		change_msi(&c);
		break;
	case TOKEN_QUERY_INTERRUPT_SOURCE_NUMBER:
		query_interrupt_source_number(&c);
		break;
	default:
		pr_warn_ratelimited("vCPU %u: unknown RTAS token 0x%x",
				    vcpu->id, token);
		ret(&c, 0, RTAS_PARAM_ERROR);
	}
	return H_SUCCESS;
}
