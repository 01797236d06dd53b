/* A writer of ACPI Machine Language (ACPI 6.5, chapters 19 and 20): the
 * bytecode of a DSDT, the part of the ACPI tables that describes devices
 * by name, with their identity and resources. It writes the subset a VMM
 * needs to describe a fixed machine: scopes, devices, named data
 * (integers, strings, EISA IDs, buffers, packages) and resource
 * templates. Objects with a body (scopes, devices, packages) are opened,
 * filled and closed with aml_end; their lengths are filled in on close.
 *
 * Errors stick, as with boot/fdt_writer.h: after the first one (a name
 * that is no ACPI name, data where AML allows none, a package of more
 * than 255 elements, no memory) every call does nothing and aml_finish
 * returns it, so a block is written as a plain list of calls and checked
 * once. */
#ifndef THPVM_AML_H
#define THPVM_AML_H

#include <stddef.h>
#include <stdint.h>

#define AML_MAX_DEPTH 16

struct aml_frame {
	size_t start;		/* where its PkgLength is reserved */
	unsigned kind;		/* aml.c's */
	unsigned elements;	/* a package's, so far */
};

struct aml_writer {
	uint8_t *buf;
	size_t len, cap;
	int err;		/* first error, as -errno */
	unsigned depth;		/* objects open */
	int name_pending;	/* aml_name was written, its object not yet */
	struct aml_frame open[AML_MAX_DEPTH];
};

void aml_init(struct aml_writer *w);
/* Hands over the bytecode (*aml, *len; the caller frees *aml) once every
 * object is closed; or frees it and returns the first error (-EINVAL for
 * AML that would be malformed, -ENOMEM). */
int aml_finish(struct aml_writer *w, uint8_t **aml, size_t *len);

/* Names are paths of up to four-character segments, "\\" for the root
 * first if absolute: "_SB", "\\_SB.PCI0", "COM1". Segments shorter than
 * four characters are padded with '_' as ASL does ("_SB" is "_SB_"). */

/* Scope (name) { ... } and Device (name) { ... }, ended by aml_end. */
void aml_scope(struct aml_writer *w, const char *name);
void aml_device(struct aml_writer *w, const char *name);
/* Name (name, object): the next data object written is its value. */
void aml_name(struct aml_writer *w, const char *name);

/* Data objects: the value of the pending aml_name, or an element of the
 * package open. */
void aml_integer(struct aml_writer *w, uint64_t value);
void aml_string(struct aml_writer *w, const char *s);
/* EisaId ("PNP0501"): three capital letters and four hex digits,
 * compressed into a 32-bit integer as ACPI's _HID and _CID take them. */
void aml_eisaid(struct aml_writer *w, const char *id);
void aml_buffer(struct aml_writer *w, const uint8_t *data, size_t len);
/* Package () { ... }, ended by aml_end; at most 255 elements. */
void aml_package(struct aml_writer *w);
/* Closes the innermost scope, device or package. */
void aml_end(struct aml_writer *w);

/* A resource template (ACPI 6.5, 6.4): descriptors added one by one,
 * then written as a buffer by aml_resources, which adds the end tag. */
#define AML_RESOURCES_MAX 256

struct aml_resources {
	uint8_t buf[AML_RESOURCES_MAX];
	size_t len;
	int err;		/* -ENOSPC once a descriptor did not fit */
};

/* Extended interrupt flags; the default is edge-triggered, active high,
 * exclusive. */
#define AML_IRQ_LEVEL		(1u << 0)
#define AML_IRQ_ACTIVE_LOW	(1u << 1)
#define AML_IRQ_SHARED		(1u << 2)

void aml_res_init(struct aml_resources *r);
/* IO (Decode16, base, base, 1, len). */
void aml_res_io(struct aml_resources *r, uint16_t base, uint8_t len);
/* IRQNoFlags () {irq}: an ISA IRQ (0-15), edge-triggered, active high. */
void aml_res_irq(struct aml_resources *r, unsigned irq);
/* Memory32Fixed (ReadWrite, base, size). */
void aml_res_memory32_fixed(struct aml_resources *r, uint32_t base,
			    uint32_t size);
/* Interrupt (ResourceConsumer, ...) {gsi} with AML_IRQ_* flags. */
void aml_res_interrupt(struct aml_resources *r, uint32_t gsi,
		       unsigned flags);
/* What a host bridge hands down to its buses: WordBusNumber for buses
 * first..last, DWordMemory (non-cacheable, read-write) for a window. */
void aml_res_bus_numbers(struct aml_resources *r, uint16_t first,
			 uint16_t last);
void aml_res_memory32_window(struct aml_resources *r, uint32_t base,
			     uint32_t size);
/* ResourceTemplate () { ... }: r's descriptors and the end tag, as a
 * buffer data object. */
void aml_resources(struct aml_writer *w, const struct aml_resources *r);

#endif
