/* Declarations shared by the test guest's kernel-mode parts. */
#ifndef TG_GUEST_H
#define TG_GUEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bootparam.h"

#define MAX_CPUS 64

/* Normalised view of what the loader passed, whatever the entry. */
struct e820_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
};

#define E820_RAM 1
#define E820_MAX BP_E820_MAX
#define CMDLINE_MAX 4096

struct boot_info {
	int entry;
	unsigned e820_count;
	struct e820_entry e820[E820_MAX];
	uint64_t initrd_addr;
	uint64_t initrd_size;
	uint64_t rsdp;		/* 0: search the BIOS areas */
	char cmdline[CMDLINE_MAX];
};

extern struct boot_info boot;

const char *raw_cmdline(int entry, uint64_t ptr);
void boot_info_init(int entry, uint64_t ptr);

/* Command line. */
enum check_id { CHK_E820, CHK_SMP, CHK_LAPIC, CHK_PIT, CHK_INITRD, CHK_COUNT };

/* vfeat= bits: virtio features the driver must not accept. */
#define VFEAT_NOEVENT		1u
#define VFEAT_NOINDIRECT	2u
#define VFEAT_NOMRG		4u	/* VIRTIO_NET_F_MRG_RXBUF */
#define VFEAT_NOCONT		8u	/* VIRTIO_BALLOON_F_CONT_PAGES */
#define BLKBENCH_QD_MAX		64
/* virtio= bits: the transports whose devices the drivers take. */
#define VIRTIO_T_PCI		1u
#define VIRTIO_T_MMIO		2u
#define MMIO_MAX_DEVS		16

/* A virtio-mmio device as Linux's virtio_mmio.device= announces it. */
struct mmio_param {
	uint64_t base, size;
	unsigned gsi;
};

struct params {
	bool has_ram, has_cpus, has_crc, touch, touch_all, has_rand, serve;
	bool has_exit_status, echo;
	bool pci, blk, blkbench, blk_evil, net, netbench, balloon;
	bool punch_holes;
	uint64_t usemem, reuse;	/* bytes, 0: not asked for */
	uint64_t ecam;		/* 0: configuration mechanism #1 */
	unsigned virtio;	/* VIRTIO_T_*; default both */
	struct mmio_param mmio[MMIO_MAX_DEVS];
	unsigned nmmio;
	unsigned vfeat_off;	/* VFEAT_* */
	unsigned blkbench_qd;
	uint32_t ip, hostip;	/* IPv4, host byte order */
	unsigned udp_port, net_ping_in;
	uint64_t netbench_packets;
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
void __attribute__((noreturn)) guest_exit(unsigned status);

/* Memory: bump allocator after the image, page tables. */
void *alloc_pages(unsigned n);
void mm_init(void);
uint64_t kernel_area_end(void);
void map_mmio(uint64_t addr, uint64_t size);
uint64_t free_ram(uint64_t size);
extern uint64_t page_table_root;

/* Buddy page allocator over the RAM touch= uses (buddy.c). */
#define BUDDY_MAX_ORDER 10	/* 4 MiB blocks, as Linux on x86 */
void buddy_init(void);
uint64_t buddy_alloc(unsigned order);
uint64_t buddy_take(unsigned order);
void buddy_free(uint64_t addr, unsigned order);
uint64_t buddy_free_bytes(void);
uint64_t buddy_total_bytes(void);
void buddy_set_table(uint64_t *table);
uint64_t buddy_alloc_movable(uint32_t entry);
void buddy_free_movable(uint64_t addr);
uint64_t buddy_compact(uint64_t *migrated);

/* Descriptors, interrupts, ring 3. */
#define VEC_LAPIC_TIMER 32
#define VEC_PIT 33
#define VEC_SPURIOUS 255
/* MSI-X: two per virtio device (config change, queue 0). */
#define VEC_VIRTIO_BASE 0x40
#define VEC_VIRTIO_COUNT 16

void desc_init(void);
void desc_load_ap(void);
long user_call(long (*fn)(long), long arg, void *stack_top);
long run_user(long (*fn)(long), long arg);
extern volatile unsigned lapic_ticks, pit_ticks;
extern volatile unsigned virtio_irqs[VEC_VIRTIO_COUNT];
void virtio_interrupt(unsigned v);

/* Time. */
extern uint64_t tsc_hz;
void tsc_calibrate(void);
uint64_t tsc_to_ns(uint64_t cycles);
uint64_t tsc_deadline(uint64_t ms);
void tsc_delay_us(uint64_t us);

/* Interrupt controllers. */
#define LAPIC_BASE 0xfee00000ULL
unsigned lapic_id(void);
void lapic_enable(void);
void lapic_eoi(void);
void lapic_send_ipi(unsigned apic_id, uint32_t icr_low);
void lapic_timer_periodic(uint8_t vector, uint32_t count);
void lapic_timer_stop(void);
#define IOAPIC_EDGE 0
#define IOAPIC_LEVEL (1u << 15)	/* trigger mode; polarity (13) stays 0 */
unsigned ioapic_pins(uint64_t base);
void ioapic_route(uint64_t base, unsigned pin, uint8_t vector, unsigned dest,
		  uint32_t mode);
void ioapic_mask(uint64_t base, unsigned pin);
void pic_mask_all(void);

/* Firmware tables. */
struct mp_info {
	bool found;
	const char *source;	/* "mptable" or "madt" */
	unsigned ncpus;
	uint8_t apic_ids[MAX_CPUS];
	uint64_t ioapic_addr;
	unsigned ioapic_gsi_base;	/* the GSI of its pin 0 */
	unsigned irq0_pin;
};

extern struct mp_info mp;
uint8_t checksum8(const void *p, unsigned n);
void mptable_scan(void);
bool madt_scan(void);

/* Checks. */
void check_smp(void);
void check_timers(void);
void check_initrd(void);
void run_touch_rand(void);
void run_blk(void);
void run_net(void);
bool run_balloon(void);
void __attribute__((noreturn)) balloon_serve(void);
uint32_t balloon_deflate_on_oom(void);
void run_usemem(void);
void usemem_reuse(void);

#endif
