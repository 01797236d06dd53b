/* The PC CMOS real-time clock (ports 0x70/0x71): the host's UTC time in
 * BCD, and 128 bytes of CMOS memory. */
#ifndef THPVM_X86_CMOS_RTC_H
#define THPVM_X86_CMOS_RTC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define CMOS_RTC_PORT 0x70
#define CMOS_RTC_PORTS 2

struct cmos_rtc {
	pthread_mutex_t lock;
	uint8_t index;
	uint8_t cmos[128];
};

void cmos_rtc_init(struct cmos_rtc *rtc);
void cmos_rtc_access(void *rtc, uint64_t offset, uint8_t *data, uint32_t len,
		     bool is_write);

#endif
