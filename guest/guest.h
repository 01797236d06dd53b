/* Declarations shared by the test guest's kernel-mode parts, whatever
 * the arch. Each arch's arch.h (guest/arch/<arch>/, on the include path
 * of that arch's build only) adds its boot_info, check ids, interrupt
 * numbers and the hooks the shared code calls (docs/test-guest.md). */
#ifndef TG_GUEST_H
#define TG_GUEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_CPUS 64
/* How long each arch's smp and timer checks wait for their CPUs and
 * ticks. Generous: under nested emulation a vCPU may wait seconds to be
 * run, and each wait ends as soon as what it waits for has happened. */
#define SMP_WAIT_MS	10000
#define TIMER_WAIT_MS	10000

/* A range of guest-physical memory the loader described (x86: an e820
 * entry; arm64: a device tree memory node, always usable RAM). */
struct mem_range {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
};

#define MEM_RAM 1
#define CMDLINE_MAX 4096

/* vfeat= bits: virtio features the driver must not accept. */
#define VFEAT_NOEVENT		1u
#define VFEAT_NOINDIRECT	2u
#define VFEAT_NOMRG		4u	/* VIRTIO_NET_F_MRG_RXBUF */
#define VFEAT_NOCONT		8u	/* VIRTIO_BALLOON_F_CONT_PAGES */
#define BLKBENCH_QD_MAX		64
/* virtio= bits: the transports whose devices the drivers take. */
#define VIRTIO_T_PCI		1u
#define VIRTIO_T_MMIO		2u
/* The longest virtio-9p mount tag the checks take. */
#define P9_TAG_MAX		64

#include "arch.h"

/* A virtio-mmio device as Linux's virtio_mmio.device= announces it (or,
 * on arm64, as a device tree node gives it: gsi is then the SPI). */
struct mmio_param {
	uint64_t base, size;
	unsigned gsi;
};

struct params {
	bool has_ram, has_cpus, has_crc, touch, touch_all, has_rand, serve;
	bool has_exit_status, echo;
	bool pci, blk, blkbench, blk_evil, blk_stream, blk_verify;
	bool net, netbench, balloon, rng;
	bool dhcp;		/* net: ask a DHCP server for the address */
	bool vcons;
	bool p9, p9_hostile, p9bench, p9bench_wait;
	char p9_tag[P9_TAG_MAX + 1];	/* "": the first virtio-9p device */
	char p9_ro_tag[P9_TAG_MAX + 1];	/* "": no read-only checks */
	bool balloon_flood;
	bool mem, mem_evil;
	bool punch_holes;
	uint64_t usemem, reuse;	/* bytes, 0: not asked for */
	uint64_t ecam;		/* 0: the arch's other way (x86: mechanism #1) */
	unsigned virtio;	/* VIRTIO_T_*; default both */
	struct mmio_param mmio[MMIO_MAX_DEVS];
	unsigned nmmio;
	unsigned vfeat_off;	/* VFEAT_* */
	unsigned blkbench_qd;		/* per queue */
	unsigned blkbench_queues;
	uint32_t ip, hostip;	/* IPv4, host byte order */
	unsigned udp_port, net_ping_in, net_udp_in;
	uint64_t netbench_packets;
	uint64_t p9bench_reads, p9bench_files, p9bench_creates;
	uint64_t ram;
	unsigned cpus;
	uint32_t initrd_crc;
	uint64_t touch_size;
	uint64_t touch_stride;
	uint64_t rand_reads;
	unsigned exit_status;
	unsigned skip;		/* 1 << enum check_id */
};

extern struct params params;

bool cmdline_has_token(const char *cl, const char *tok);
void parse_params(const char *cl);
bool params_want_blk(void);
bool params_want_9p(void);

/* Output and results. */
void serial_init(void);
void serial_putc(char c);
int serial_getline(char *buf, unsigned size, uint64_t timeout_ms);
void vprint(const char *fmt, va_list ap);
void print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sprint(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void report(bool ok, const char *check, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void count_result(bool ok);
extern unsigned checks_passed, checks_failed;
void __attribute__((noreturn)) guest_exit(unsigned status);

/* Memory: bump allocator after the image, identity mappings. */
void *alloc_pages(unsigned n);
uint64_t kernel_area_end(void);
void map_mmio(uint64_t addr, uint64_t size);
/* Identity-maps [addr, addr + size) as ordinary RAM (x86). */
void map_ram(uint64_t addr, uint64_t size);
uint64_t free_ram(uint64_t size);

/* Buddy page allocator over the RAM touch= uses (buddy.c). */
#define BUDDY_MAX_ORDER 10	/* 4 MiB blocks, as Linux on x86 */
void buddy_init(uint64_t hotplug_end);
uint64_t buddy_alloc(unsigned order);
uint64_t buddy_take(unsigned order);
void buddy_free(uint64_t addr, unsigned order);
uint64_t buddy_free_bytes(void);
uint64_t buddy_total_bytes(void);
void buddy_set_table(uint64_t *table);
uint64_t buddy_alloc_movable(uint32_t entry);
void buddy_free_movable(uint64_t addr);
uint64_t buddy_compact(uint64_t *migrated);
/* Hotplugged memory (guest/mem.c), below buddy_init's hotplug_end: a
 * plugged range joins the free pages; a range leaves, whole pageblocks,
 * only when all its pages are free or movable and those fit elsewhere,
 * as Linux offlines a memory block (its movable pages migrate, counted
 * in *migrated). Both false when they cannot. */
bool buddy_add(uint64_t addr, uint64_t size);
bool buddy_remove(uint64_t addr, uint64_t size, uint64_t *migrated);

/* User mode (x86 ring 3, arm64 EL0) and interrupts. */
long run_user(long (*fn)(long), long arg);
/* How many CPUs can run user-mode work at once: those up, at most
 * USER_CPUS (1, the boot CPU, when skip=smp started no other). */
unsigned user_cpu_count(void);
/* Runs fn(args[i]) in user mode on CPU i for each i < n, all at once
 * (CPU 0 is the caller), into results[i]. False if n is over
 * user_cpu_count(), a CPU did not finish within ms, or one has not
 * finished an earlier call's work (user_cpus.c). */
bool run_user_cpus(unsigned n, long (*fn)(long), const long *args,
		   long *results, uint64_t ms);
/* From CPU n's idle loop: the work run_user_cpus gave it, if any. */
void user_work_run(unsigned n);
/* The arch's part: from the boot CPU, before CPU n first runs user-mode
 * work (its stacks); wake CPU n from its idle loop; on CPU n, fn(arg) in
 * user mode. */
void arch_user_prepare(unsigned n);
void arch_cpu_wake(unsigned n);
long run_user_on(unsigned n, long (*fn)(long), long arg);
extern volatile unsigned virtio_irqs[VEC_VIRTIO_COUNT];
void virtio_interrupt(unsigned v);

/* Time: a counter user mode reads too (x86: the TSC, calibrated; arm64:
 * the virtual counter), clock_now() in io.h. */
extern uint64_t clock_hz;
uint64_t clock_to_ns(uint64_t cycles);
uint64_t clock_deadline(uint64_t ms);
void clock_delay_us(uint64_t us);

/* Checks and workloads every arch runs. */
void check_initrd(void);
void run_touch_rand(void);
void run_blk(void);
void run_net(void);
void run_rng(void);
void run_vcons(void);
void run_9p(void);
bool run_balloon(void);
void __attribute__((noreturn)) balloon_serve(void);
uint32_t balloon_deflate_on_oom(void);
void run_usemem(void);
void usemem_reuse(void);
/* Checks that the pages usemem holds (some migrated) still hold their
 * data: one usemem-verify result; nothing if usemem has not run. */
void usemem_verify(void);
/* virtio-mem (mem.c, x86): run_mem starts the driver (and with mem_evil
 * runs its hostile requests); once the buddy allocator covers
 * mem_region_end() (0 without a device), mem_follow plugs or unplugs to
 * the host's requested size, and mem_serve does so for ever. */
bool run_mem(void);
uint64_t mem_region_end(void);
void mem_follow(void);
void __attribute__((noreturn)) mem_serve(void);

#endif
