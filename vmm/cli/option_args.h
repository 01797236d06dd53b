/* The checks `thpvm run`'s options share. Each reports a bad value once,
 * naming the option as messages spell it ("-c", "--balloon") and, for
 * one KEY=VALUE of a list, the key (key NULL: the option's own value),
 * and returns -errno; a good one is stored in *out. */
#ifndef THPVM_OPTION_ARGS_H
#define THPVM_OPTION_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "machine/machine.h"

/* "OPT VAL: expected WHAT", or "OPT: KEY must be WHAT, not 'VAL'", WHAT
 * made from fmt. Returns -EINVAL. */
int __attribute__((format(printf, 4, 5)))
arg_bad(const char *opt, const char *key, const char *val, const char *fmt,
	...);
/* val, one of names (NULL-terminated): its index, or -EINVAL after
 * naming them all. */
int arg_choice(const char *opt, const char *key, const char *val,
	       const char *const *names);
int arg_on_off(const char *opt, const char *key, const char *val,
	       bool *out);
/* pci or mmio, and one the arch has. */
int arg_transport(const char *opt, const char *key, const char *val,
		  enum virtio_transport *out);
/* Whether word names a transport (stored in *out); says nothing. */
bool arg_is_transport(const char *word, enum virtio_transport *out);
/* Transport t, as OPT VAL asked for it, is one the arch has (powerpc
 * has no virtio-mmio): 0, or -EINVAL after naming the arch. */
int arg_transport_offered(const char *opt, const char *val,
			  enum virtio_transport t);
/* val, a whole number from min to max; what says what it counts
 * ("seconds"). */
int arg_uint(const char *opt, const char *key, const char *val,
	     unsigned long min, unsigned long max, const char *what,
	     unsigned long *out);
/* val, a size from min to max bytes; a bare number is MiB. */
int arg_size(const char *opt, const char *key, const char *val,
	     uint64_t min, uint64_t max, uint64_t *out);
/* val, a path that fits a buffer of size bytes (not quoted back: it
 * may be as long as the message). */
int arg_path(const char *opt, const char *val, size_t size);
/* Options a and b were both given. Returns -EINVAL. */
int arg_excludes(const char *a, const char *b);
/* Hands each KEY=VALUE of list, comma-separated, to parse_key with the
 * key's index in keys (NULL-terminated); a word without '=' or an
 * unknown key is an error. The first error ends it. */
int arg_key_list(const char *opt, const char *list, const char *const *keys,
		 int (*parse_key)(void *ctx, const char *opt, int key,
				  const char *val),
		 void *ctx);

#endif
