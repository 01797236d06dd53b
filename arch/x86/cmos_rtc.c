/* CMOS RTC: reads of the clock registers return the host's current UTC
 * time; the guest cannot set the clock (writes to it are ignored), which
 * is what Linux's boot-time read of the wall clock needs. */
#include "arch/x86/cmos_rtc.h"

#include <string.h>
#include <time.h>

#define RTC_SECONDS 0x00
#define RTC_MINUTES 0x02
#define RTC_HOURS 0x04
#define RTC_WEEKDAY 0x06
#define RTC_DAY 0x07
#define RTC_MONTH 0x08
#define RTC_YEAR 0x09
#define RTC_STATUS_A 0x0a
#define RTC_STATUS_B 0x0b
#define RTC_STATUS_C 0x0c
#define RTC_STATUS_D 0x0d
#define RTC_CENTURY 0x32

#define STATUS_A_DIVIDER 0x26		/* 32.768 kHz, 1024 Hz rate */
#define STATUS_B_24H 0x02
#define STATUS_D_VALID 0x80		/* battery good */
#define INDEX_NMI_DISABLE 0x80

static uint8_t bcd(unsigned v)
{
	return (uint8_t)((v / 10) << 4 | (v % 10));
}

void cmos_rtc_init(struct cmos_rtc *rtc)
{
	memset(rtc, 0, sizeof(*rtc));
	pthread_mutex_init(&rtc->lock, NULL);
	rtc->cmos[RTC_STATUS_A] = STATUS_A_DIVIDER;
	rtc->cmos[RTC_STATUS_B] = STATUS_B_24H;
	rtc->cmos[RTC_STATUS_D] = STATUS_D_VALID;
}

static uint8_t read_reg(struct cmos_rtc *rtc, uint8_t reg)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	switch (reg) {
	case RTC_SECONDS: return bcd(tm.tm_sec);
	case RTC_MINUTES: return bcd(tm.tm_min);
	case RTC_HOURS: return bcd(tm.tm_hour);
	case RTC_WEEKDAY: return bcd(tm.tm_wday + 1);
	case RTC_DAY: return bcd(tm.tm_mday);
	case RTC_MONTH: return bcd(tm.tm_mon + 1);
	case RTC_YEAR: return bcd(tm.tm_year % 100);
	case RTC_CENTURY: return bcd((tm.tm_year + 1900) / 100);
	case RTC_STATUS_C: return 0;	/* no interrupt flags */
	default: return rtc->cmos[reg];
	}
}

void cmos_rtc_access(void *opaque, uint64_t offset, uint8_t *data,
		     uint32_t len, bool is_write)
{
	struct cmos_rtc *rtc = opaque;

	pthread_mutex_lock(&rtc->lock);
	if (offset == 0) {
		if (is_write)
			rtc->index = data[0] & ~INDEX_NMI_DISABLE;
		else
			data[0] = 0xff;	/* the index port is write-only */
	} else if (is_write) {
		if (rtc->index > RTC_STATUS_D)
			rtc->cmos[rtc->index] = data[0];
	} else {
		data[0] = read_reg(rtc, rtc->index);
	}
	for (uint32_t i = 1; i < len && !is_write; i++)
		data[i] = 0xff;
	pthread_mutex_unlock(&rtc->lock);
}
