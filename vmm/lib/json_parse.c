/* JSON parsing (see json.h) on jansson: the control socket's input is
 * untrusted, and jansson's parser is small, widely used and fuzzed
 * continuously upstream. Its tree is copied into struct json_value, which
 * keeps members in document order and bounds nesting by JSON_MAX_DEPTH,
 * so that whatever was parsed can be written back (json_write_value). */
#include "lib/json.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void value_clear(struct json_value *v)
{
	size_t i;

	switch (v->type) {
	case JSON_TYPE_STRING:
		free(v->string.s);
		break;
	case JSON_TYPE_ARRAY:
		for (i = 0; i < v->array.len; i++)
			value_clear(&v->array.items[i]);
		free(v->array.items);
		break;
	case JSON_TYPE_OBJECT:
		for (i = 0; i < v->object.len; i++) {
			free(v->object.members[i].key);
			value_clear(&v->object.members[i].value);
		}
		free(v->object.members);
		break;
	default:
		break;
	}
	v->type = JSON_TYPE_NULL;
}

static char *copy_bytes(const char *s, size_t len)
{
	char *c = malloc(len + 1);

	if (c) {
		memcpy(c, s, len);
		c[len] = '\0';
	}
	return c;
}

/* Copies jansson's j into v. Returns 0, -ENOMEM, or -E2BIG when it nests
 * deeper than JSON_MAX_DEPTH; v holds what it took either way. */
static int value_copy(struct json_value *v, json_t *j, unsigned depth)
{
	size_t i, n;
	json_t *item;
	const char *key;
	int err = 0;

	memset(v, 0, sizeof(*v));
	switch (json_typeof(j)) {
	case JSON_TRUE:
	case JSON_FALSE:
		v->type = JSON_TYPE_BOOL;
		v->boolean = json_is_true(j);
		return 0;
	case JSON_INTEGER:
		v->type = JSON_TYPE_NUMBER;
		v->number.i = json_integer_value(j);
		v->number.d = (double)v->number.i;
		v->number.is_int = true;
		return 0;
	case JSON_REAL:
		v->type = JSON_TYPE_NUMBER;
		v->number.d = json_real_value(j);
		return 0;
	case JSON_STRING:
		v->string.s = copy_bytes(json_string_value(j),
					 json_string_length(j));
		if (!v->string.s)
			return -ENOMEM;
		v->type = JSON_TYPE_STRING;
		v->string.len = json_string_length(j);
		return 0;
	case JSON_ARRAY:
	case JSON_OBJECT:
		break;
	default:
		return 0;
	}
	if (depth == JSON_MAX_DEPTH)
		return -E2BIG;
	if (json_is_array(j)) {
		n = json_array_size(j);
		v->type = JSON_TYPE_ARRAY;
		v->array.items = calloc(n ? n : 1, sizeof(*v->array.items));
		if (!v->array.items)
			return -ENOMEM;
		json_array_foreach(j, i, item) {
			err = value_copy(&v->array.items[i], item, depth + 1);
			v->array.len = i + 1;
			if (err)
				return err;
		}
		return 0;
	}
	/* jansson keeps an object's members in document order. */
	n = json_object_size(j);
	v->type = JSON_TYPE_OBJECT;
	v->object.members = calloc(n ? n : 1, sizeof(*v->object.members));
	if (!v->object.members)
		return -ENOMEM;
	json_object_foreach(j, key, item) {
		struct json_member *m = &v->object.members[v->object.len++];

		m->key_len = strlen(key);
		m->key = copy_bytes(key, m->key_len);
		if (!m->key)
			return -ENOMEM;
		err = value_copy(&m->value, item, depth + 1);
		if (err)
			return err;
	}
	return 0;
}

/* jansson says "duplicate object key near '"KEY"'"; the protocol's own
 * words name the member. */
static void duplicate_message(struct json_error *err, const char *text)
{
	const char *near = strstr(text, "near '\"");
	size_t len = near ? strlen(near + 7) : 0;

	if (len >= 2 && !strcmp(near + 7 + len - 2, "\"'"))
		snprintf(err->msg, sizeof(err->msg),
			 "member \"%.*s\" given twice", (int)(len - 2),
			 near + 7);
	else
		snprintf(err->msg, sizeof(err->msg), "%s", text);
}

int json_parse(const char *text, size_t len, struct json_value **out,
	       struct json_error *err)
{
	struct json_value *v;
	json_error_t jerr;
	json_t *j;
	int ret;

	/* Any value at the top (the caller checks for an object); a key
	 * given twice, and U+0000 in a string, are errors. */
	j = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES,
		       &jerr);
	if (!j) {
		if (json_error_code(&jerr) == json_error_out_of_memory)
			return -ENOMEM;
		err->offset = jerr.position;
		if (json_error_code(&jerr) == json_error_duplicate_key)
			duplicate_message(err, jerr.text);
		else if (json_error_code(&jerr) == json_error_null_character)
			snprintf(err->msg, sizeof(err->msg),
				 "\\u0000 in a string is not supported");
		else
			snprintf(err->msg, sizeof(err->msg), "%s", jerr.text);
		return -EINVAL;
	}
	v = malloc(sizeof(*v));
	ret = v ? value_copy(v, j, 0) : -ENOMEM;
	json_decref(j);
	if (ret) {
		if (v)
			json_free(v);
		if (ret == -ENOMEM)
			return ret;
		err->offset = JSON_OFFSET_NONE;
		snprintf(err->msg, sizeof(err->msg),
			 "nesting deeper than %d levels", JSON_MAX_DEPTH);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

void json_free(struct json_value *v)
{
	if (!v)
		return;
	value_clear(v);
	free(v);
}

const struct json_value *json_get(const struct json_value *obj,
				  const char *key)
{
	size_t i;

	if (!obj || obj->type != JSON_TYPE_OBJECT)
		return NULL;
	for (i = 0; i < obj->object.len; i++)
		if (!strcmp(obj->object.members[i].key, key))
			return &obj->object.members[i].value;
	return NULL;
}

const char *json_get_string(const struct json_value *obj, const char *key)
{
	const struct json_value *v = json_get(obj, key);

	return v && v->type == JSON_TYPE_STRING ? v->string.s : NULL;
}

bool json_get_bool(const struct json_value *obj, const char *key, bool *out)
{
	const struct json_value *v = json_get(obj, key);

	if (!v || v->type != JSON_TYPE_BOOL)
		return false;
	*out = v->boolean;
	return true;
}

bool json_get_u64(const struct json_value *obj, const char *key,
		  uint64_t *out)
{
	const struct json_value *v = json_get(obj, key);

	if (!v || v->type != JSON_TYPE_NUMBER || !v->number.is_int ||
	    v->number.i < 0)
		return false;
	*out = (uint64_t)v->number.i;
	return true;
}

bool json_get_double(const struct json_value *obj, const char *key,
		     double *out)
{
	const struct json_value *v = json_get(obj, key);

	if (!v || v->type != JSON_TYPE_NUMBER)
		return false;
	*out = v->number.d;
	return true;
}
