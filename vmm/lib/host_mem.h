/* The host's page sizes, read at run time: an arm64 host may run with 4,
 * 16 or 64 KiB pages, and its transparent huge pages (a PMD) are then 2,
 * 32 or 512 MiB. Guest RAM alignment, the balloon's release extents and
 * the huge-page figures follow these, never a constant. */
#ifndef THPVM_LIB_HOST_MEM_H
#define THPVM_LIB_HOST_MEM_H

#include <stdint.h>

#define HOST_THP_SIZE_PATH "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"

/* The base page size (sysconf). */
uint64_t host_page_size(void);

/* The transparent huge page size, from path (HOST_THP_SIZE_PATH); when
 * the file is missing or holds no power of two above page_size, the PMD
 * size that page_size implies (a page of 8-byte entries, each mapping a
 * page: 2 MiB for 4 KiB pages). */
uint64_t host_thp_size_from(const char *path, uint64_t page_size);

/* host_thp_size_from(HOST_THP_SIZE_PATH, host_page_size()). */
uint64_t host_thp_size(void);

/* The host's RAM plus swap (sysinfo): the most guest RAM it can ever
 * back at once. 0 when it cannot be read. */
uint64_t host_memory_size(void);

#endif
