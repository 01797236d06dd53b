/* The checks `thpvm run`'s options share (option_args.h). */
#include "cli/option_args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/arch.h"
#include "lib/log.h"
#include "lib/util.h"

int arg_bad(const char *opt, const char *key, const char *val,
	    const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (key)
		pr_err("%s: %s must be %s, not '%s'", opt, key, what, val);
	else
		pr_err("%s %s: expected %s", opt, val, what);
	return -EINVAL;
}

/* The index of s in names (NULL-terminated), or -1. */
static int name_index(const char *s, const char *const *names)
{
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

/* names as "a, b or c", into buf. */
static const char *names_list(const char *const *names, char *buf,
			      size_t len)
{
	size_t n = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; names[i] && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s",
			      !i ? "" : names[i + 1] ? ", " : " or ",
			      names[i]);
	return buf;
}

int arg_choice(const char *opt, const char *key, const char *val,
	       const char *const *names)
{
	char list[256];
	int i = name_index(val, names);

	if (i >= 0)
		return i;
	return arg_bad(opt, key, val, "%s",
		       names_list(names, list, sizeof(list)));
}

int arg_on_off(const char *opt, const char *key, const char *val,
	       bool *out)
{
	static const char *const on_off[] = { "on", "off", NULL };
	int i = arg_choice(opt, key, val, on_off);

	if (i < 0)
		return i;
	*out = i == 0;
	return 0;
}

/* By name: -d's words, the transport= keys. */
static const char *const transports[] = { "pci", "mmio", NULL };
static const enum virtio_transport transport_of[] = {
	VIRTIO_TRANSPORT_PCI, VIRTIO_TRANSPORT_MMIO,
};

bool arg_is_transport(const char *word, enum virtio_transport *out)
{
	int i = name_index(word, transports);

	if (i < 0)
		return false;
	*out = transport_of[i];
	return true;
}

int arg_transport_offered(const char *opt, const char *val,
			  enum virtio_transport t)
{
	if (t != VIRTIO_TRANSPORT_MMIO || arch_facts.mmio_discovery)
		return 0;
	pr_err("%s %s: %s has no virtio-mmio; use pci", opt, val,
	       arch_facts.name);
	return -EINVAL;
}

int arg_transport(const char *opt, const char *key, const char *val,
		  enum virtio_transport *out)
{
	int i = arg_choice(opt, key, val, transports);
	char given[64];

	if (i < 0)
		return i;
	snprintf(given, sizeof(given), "%s%s%s", key ?: "", key ? "=" : "",
		 val);
	if (arg_transport_offered(opt, given, transport_of[i]))
		return -EINVAL;
	*out = transport_of[i];
	return 0;
}

int arg_uint(const char *opt, const char *key, const char *val,
	     unsigned long min, unsigned long max, const char *what,
	     unsigned long *out)
{
	if (uint_parse(val, max, out) || *out < min)
		return arg_bad(opt, key, val, "%s from %lu to %lu", what, min,
			       max);
	return 0;
}

int arg_size(const char *opt, const char *key, const char *val,
	     uint64_t min, uint64_t max, uint64_t *out)
{
	char lo[32], hi[32], range[80];

	if (!size_parse(val, out) && *out >= min && *out <= max)
		return 0;
	size_format(max, hi, sizeof(hi));
	if (min > 1)
		snprintf(range, sizeof(range), "from %s to %s",
			 size_format(min, lo, sizeof(lo)), hi);
	else
		snprintf(range, sizeof(range), "up to %s", hi);
	return arg_bad(opt, key, val, "a size %s (examples: 512M, 2G, 1024; "
		       "a bare number is MiB)", range);
}

int arg_path(const char *opt, const char *val, size_t size)
{
	if (val[0] && strlen(val) < size)
		return 0;
	pr_err("%s: the path must be 1 to %zu bytes long, not %zu", opt,
	       size - 1, strlen(val));
	return -ENAMETOOLONG;
}

int arg_excludes(const char *a, const char *b)
{
	pr_err("%s and %s exclude each other", a, b);
	return -EINVAL;
}

int arg_key_list(const char *opt, const char *list, const char *const *keys,
		 int (*parse_key)(void *ctx, const char *opt, int key,
				  const char *val),
		 void *ctx)
{
	/* Room for -n with a dozen forwards. */
	char buf[1024], names[128], *p = buf, *word, *val;
	int key, err;

	if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf)) {
		pr_err("%s: its KEY=VALUE list is longer than %zu bytes", opt,
		       sizeof(buf) - 1);
		return -EINVAL;
	}
	while ((word = strsep(&p, ","))) {
		val = strchr(word, '=');
		if (!val) {
			pr_err("%s: expected KEY=VALUE, not '%s'", opt, word);
			return -EINVAL;
		}
		*val++ = '\0';
		key = name_index(word, keys);
		if (key < 0) {
			pr_err("%s: unknown key \"%s\" (expected %s)", opt, word,
			       names_list(keys, names, sizeof(names)));
			return -EINVAL;
		}
		err = parse_key(ctx, opt, key, val);
		if (err)
			return err;
	}
	return 0;
}
