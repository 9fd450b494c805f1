/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The job spec of job_create as JSON (PROTOCOL.md): parsed into a struct
 * nr_job_spec with an error that names the field, validated (the job
 * contract's nr_job_spec_validate too), and printed back for job_status.
 * Also the JSON helpers the request handler shares (types in messages,
 * unknown fields).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/api/ctl_spec.h"
#include "proto/nr_text.h"

static const char *type_name(json_type t)
{
	switch (t) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

const char *nr_ctl_json_type(const json_t *v)
{
	return type_name(json_typeof(v));
}

/* v must be there and of type t: 0, or -EINVAL with "name: missing (what)" or
 * "name: expected <t>, got <its type>". */
static int require(const json_t *v, json_type t, const char *name, const char *what,
		   char *err, size_t errlen)
{
	if (!v) {
		snprintf(err, errlen, "%s: missing (%s)", name, what);
		return -EINVAL;
	}
	if (json_typeof(v) != t) {
		snprintf(err, errlen, "%s: expected %s, got %s", name, type_name(t), nr_ctl_json_type(v));
		return -EINVAL;
	}
	return 0;
}

static int get_uint(const json_t *v, const char *name, uint64_t lo, uint64_t hi,
		    const char *what, uint32_t *out, char *err, size_t errlen)
{
	json_int_t x;

	if (!json_is_integer(v)) {
		snprintf(err, errlen, "%s: expected an integer, got %s", name, nr_ctl_json_type(v));
		return -EINVAL;
	}
	x = json_integer_value(v);
	if (x < 0 || (uint64_t)x < lo || (uint64_t)x > hi) {
		if (what)
			snprintf(err, errlen, "%s: %" JSON_INTEGER_FORMAT " is not %s (%" PRIu64 "..%" PRIu64 ")",
				 name, x, what, lo, hi);
		else
			snprintf(err, errlen, "%s: %" JSON_INTEGER_FORMAT " is out of range (%" PRIu64 "..%" PRIu64 ")",
				 name, x, lo, hi);
		return -EINVAL;
	}
	*out = (uint32_t)x;
	return 0;
}

static int get_ip(const json_t *v, const char *name, uint32_t *out, char *err, size_t errlen)
{
	struct in_addr a;
	uint32_t h;

	if (!json_is_string(v)) {
		snprintf(err, errlen, "%s: expected an IPv4 address string, got %s", name, nr_ctl_json_type(v));
		return -EINVAL;
	}
	if (inet_pton(AF_INET, json_string_value(v), &a) != 1) {
		snprintf(err, errlen, "%s: \"%.64s\" is not an IPv4 address (dotted quad)", name,
			 json_string_value(v));
		return -EINVAL;
	}
	h = ntohl(a.s_addr);
	if (h == 0 || h == 0xffffffffu || (h >> 28) == 0xe) {
		snprintf(err, errlen, "%s: %s is not a unicast host address", name, json_string_value(v));
		return -EINVAL;
	}
	*out = a.s_addr;
	return 0;
}

static int get_mac(const json_t *v, const char *name, uint8_t mac[6], char *err, size_t errlen)
{
	const char *s;

	if (!json_is_string(v)) {
		snprintf(err, errlen, "%s: expected a MAC address string, got %s", name, nr_ctl_json_type(v));
		return -EINVAL;
	}
	s = json_string_value(v);
	if (nr_mac_parse(s, mac)) {
		snprintf(err, errlen, "%s: \"%.64s\" is not a MAC address (xx:xx:xx:xx:xx:xx)", name, s);
		return -EINVAL;
	}
	if (mac[0] & 1) {
		snprintf(err, errlen, "%s: %s is a multicast MAC, expected a host's unicast MAC", name, s);
		return -EINVAL;
	}
	return 0;
}

int nr_ctl_unknown_fields(const json_t *obj, const char *const *known, const char *where,
			  char *err, size_t errlen)
{
	const char *k;
	json_t *v;
	unsigned i;

	json_object_foreach((json_t *)obj, k, v) {
		for (i = 0; known[i]; i++)
			if (!strcmp(k, known[i]))
				break;
		if (!known[i]) {
			snprintf(err, errlen, "%s%.64s: unknown field", where, k);
			return -EINVAL;
		}
	}
	return 0;
}

/* Connection object o, named where ("spec.conns[2]" or "spec.channels[1].conns[2]"). */
static int parse_conn(const json_t *o, const char *where, struct nr_conn_spec *cs, char *err, size_t errlen)
{
	static const char *const known[] = { "src_ip", "dst_ip", "src_qpn", "dst_qpn", "ipsn",
					     "src_mac", "dst_mac", "src_sport", "dst_sport", NULL };
	static const char *const req[] = { "src_ip", "dst_ip", "src_qpn", "dst_qpn", "ipsn", NULL };
	static const char *const sports[] = { "src_sport", "dst_sport" };
	char name[96];
	json_t *v;
	unsigned k;

	if (!json_is_object(o)) {
		snprintf(err, errlen, "%s: expected an object, got %s", where, nr_ctl_json_type(o));
		return -EINVAL;
	}
	snprintf(name, sizeof(name), "%s.", where);
	if (nr_ctl_unknown_fields(o, known, name, err, errlen))
		return -EINVAL;
	for (k = 0; req[k]; k++) {
		if (!json_object_get(o, req[k])) {
			snprintf(err, errlen, "%s.%s: missing", where, req[k]);
			return -EINVAL;
		}
	}
#define NAME(f) (snprintf(name, sizeof(name), "%s." f, where), name)
	if (get_ip(json_object_get(o, "src_ip"), NAME("src_ip"), &cs->src_ip, err, errlen) ||
	    get_ip(json_object_get(o, "dst_ip"), NAME("dst_ip"), &cs->dst_ip, err, errlen) ||
	    get_uint(json_object_get(o, "src_qpn"), NAME("src_qpn"), 1, 0xffffff, "a 24-bit QPN",
		     &cs->src_qpn, err, errlen) ||
	    get_uint(json_object_get(o, "dst_qpn"), NAME("dst_qpn"), 1, 0xffffff, "a 24-bit QPN",
		     &cs->dst_qpn, err, errlen) ||
	    get_uint(json_object_get(o, "ipsn"), NAME("ipsn"), 0, 0xffffff, "a 24-bit PSN",
		     &cs->ipsn, err, errlen))
		return -EINVAL;
	v = json_object_get(o, "src_mac");
	if (v && get_mac(v, NAME("src_mac"), cs->src_mac, err, errlen))
		return -EINVAL;
	v = json_object_get(o, "dst_mac");
	if (v && get_mac(v, NAME("dst_mac"), cs->dst_mac, err, errlen))
		return -EINVAL;
#undef NAME
	for (k = 0; k < 2; k++) {
		uint32_t port;

		v = json_object_get(o, sports[k]);
		if (!v)
			continue;
		snprintf(name, sizeof(name), "%s.%s", where, sports[k]);
		if (get_uint(v, name, 1, 65535, "a UDP port", &port, err, errlen))
			return -EINVAL;
		*(k ? &cs->dst_sport : &cs->src_sport) = (uint16_t)port;
	}
	return 0;
}

/* "spec.conns[2]", or "spec.channels[1].conns[2]" in a job of several channels. */
static const char *conn_where(const struct nr_job_spec *s, uint32_t k, char *buf, size_t len)
{
	char name[48];

	snprintf(buf, len, "spec.%s", nr_job_conn_name(s, k, name, sizeof(name)));
	return buf;
}

static int check_dup_conns(const struct nr_job_spec *s, char *err, size_t errlen)
{
	char a[INET_ADDRSTRLEN], wi[64], wj[64];
	uint32_t i, j;

	for (i = 0; i < nr_job_conns(s); i++) {
		for (j = 0; j < i; j++) {
			const struct nr_conn_spec *x = &s->conns[i], *y = &s->conns[j];

			if (x->dst_ip == y->dst_ip && x->dst_qpn == y->dst_qpn) {
				snprintf(err, errlen, "%s: receiver %s qpn %u repeats %s",
					 conn_where(s, i, wi, sizeof(wi)), nr_ip4_str(x->dst_ip, a), x->dst_qpn,
					 conn_where(s, j, wj, sizeof(wj)));
				return -EINVAL;
			}
			if (x->src_ip == y->src_ip && x->src_qpn == y->src_qpn) {
				snprintf(err, errlen, "%s: sender %s qpn %u repeats %s",
					 conn_where(s, i, wi, sizeof(wi)), nr_ip4_str(x->src_ip, a), x->src_qpn,
					 conn_where(s, j, wj, sizeof(wj)));
				return -EINVAL;
			}
		}
	}
	return 0;
}

/*
 * The connection arrays of a spec: "conns" (one channel) or "channels", each
 * {"conns": [...]} with as many connections as the first.  *n_conns gets the
 * connections of a channel; arrays[0..*n_channels) the arrays.
 */
static int spec_conn_arrays(const json_t *o, const json_t **arrays, uint32_t *n_channels,
			    uint32_t *n_conns, char *err, size_t errlen)
{
	static const char *const known[] = { "conns", NULL };
	const json_t *conns = json_object_get(o, "conns"), *chans = json_object_get(o, "channels");
	char where[48];
	size_t n, k;

	if (conns && chans) {
		snprintf(err, errlen, "spec: conns and channels both given; use conns for a job of one "
			 "channel, channels (each with its conns) for several");
		return -EINVAL;
	}
	if (chans) {
		if (require(chans, JSON_ARRAY, "spec.channels", "one object a channel", err, errlen))
			return -EINVAL;
		n = json_array_size(chans);
		if (n < 1 || n > NR_MAX_CHANNELS) {
			snprintf(err, errlen, "spec.channels: %zu channels, expected 1..%u", n, NR_MAX_CHANNELS);
			return -EINVAL;
		}
		for (k = 0; k < n; k++) {
			const json_t *ch = json_array_get(chans, k);

			snprintf(where, sizeof(where), "spec.channels[%zu]", k);
			if (require(ch, JSON_OBJECT, where, "a channel", err, errlen))
				return -EINVAL;
			snprintf(where, sizeof(where), "spec.channels[%zu].", k);
			if (nr_ctl_unknown_fields(ch, known, where, err, errlen))
				return -EINVAL;
			snprintf(where, sizeof(where), "spec.channels[%zu].conns", k);
			arrays[k] = json_object_get(ch, "conns");
			if (require(arrays[k], JSON_ARRAY, where, "one connection per rank", err, errlen))
				return -EINVAL;
		}
	} else {
		if (require(conns, JSON_ARRAY, "spec.conns", "one connection per rank", err, errlen))
			return -EINVAL;
		arrays[0] = conns;
		n = 1;
	}
	*n_channels = (uint32_t)n;
	*n_conns = (uint32_t)json_array_size(arrays[0]);
	if (*n_conns < 1 || *n_conns > NR_MAX_CONNS) {
		snprintf(err, errlen, "%s: %u connections, expected 1..%u (one per rank)",
			 chans ? "spec.channels[0].conns" : "spec.conns", *n_conns, NR_MAX_CONNS);
		return -EINVAL;
	}
	for (k = 1; k < n; k++)
		if (json_array_size(arrays[k]) != *n_conns) {
			snprintf(err, errlen, "spec.channels[%zu].conns: %zu connections, channel 0 has %u: "
				 "every channel has one per rank", k, json_array_size(arrays[k]), *n_conns);
			return -EINVAL;
		}
	return 0;
}

struct nr_job_spec *nr_ctl_spec_from_json(const json_t *o, char *err, size_t errlen)
{
	static const char *const known[] = {
		"mtu",        "msg_size",     "pool_msgs",   "mode",        "reduce",
		"timeout_ms", "pkey",         "conns",       "channels",    "short_ppm",
		"short_dscp", "short_scale",  "short_first", "spray_ports", "reorder_pkts",
		"dtype",      "prio_classes", "selective",   NULL
	};
	const json_t *arrays[NR_MAX_CHANNELS];
	struct nr_job_spec *s = NULL;
	uint32_t n, n_ch, i;
	const json_t *v;
	char e2[256], where[64];

	if (require(o, JSON_OBJECT, "spec", "the job spec object", err, errlen) ||
	    nr_ctl_unknown_fields(o, known, "spec.", err, errlen) ||
	    spec_conn_arrays(o, arrays, &n_ch, &n, err, errlen))
		return NULL;
	s = calloc(1, nr_job_spec_size(n * n_ch));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->n_conns = n;
	s->n_channels = n_ch;
	s->mtu = 1024;
	s->msg_size = 65536;
	s->pool_msgs = 8;
	s->timeout_ms = 5000;
	s->mode = NR_SUM_ORDERED;

	if ((v = json_object_get(o, "mtu"))) {
		if (get_uint(v, "spec.mtu", 256, NR_MAX_MTU, NULL, &s->mtu, err, errlen))
			goto fail;
		if (s->mtu & (s->mtu - 1)) {
			snprintf(err, errlen, "spec.mtu: %u is not a RoCE path MTU (256, 512, 1024, 2048 or 4096)",
				 s->mtu);
			goto fail;
		}
	}
	if ((v = json_object_get(o, "msg_size"))) {
		/* a whole number of elements: nr_job_spec_validate, once dtype is known */
		if (get_uint(v, "spec.msg_size", 2, 1u << 30, NULL, &s->msg_size, err, errlen))
			goto fail;
	}
	if ((v = json_object_get(o, "pool_msgs"))) {
		if (get_uint(v, "spec.pool_msgs", 2, 65536, NULL, &s->pool_msgs, err, errlen))
			goto fail;
		if (s->pool_msgs % 2) {
			snprintf(err, errlen, "spec.pool_msgs: %u is odd (credits W = pool_msgs / 2)",
				 s->pool_msgs);
			goto fail;
		}
	}
	if ((v = json_object_get(o, "timeout_ms")) &&
	    get_uint(v, "spec.timeout_ms", 1, 3600000, NULL, &s->timeout_ms, err, errlen))
		goto fail;
	if ((v = json_object_get(o, "pkey"))) {
		uint32_t pkey;

		if (get_uint(v, "spec.pkey", 0, 0xffff, NULL, &pkey, err, errlen))
			goto fail;
		s->pkey = (uint16_t)pkey;
	}
	if ((v = json_object_get(o, "short_ppm")) &&
	    get_uint(v, "spec.short_ppm", 0, NR_SHORT_PPM_MAX, NULL, &s->short_ppm, err, errlen))
		goto fail;
	if ((v = json_object_get(o, "short_dscp"))) {
		uint32_t d;

		if (get_uint(v, "spec.short_dscp", 0, 63, NULL, &d, err, errlen))
			goto fail;
		s->short_dscp = (uint8_t)d;
	}
	if ((v = json_object_get(o, "spray_ports"))) {
		uint32_t sp;

		if (get_uint(v, "spec.spray_ports", 1, NR_MAX_SPRAY, NULL, &sp, err, errlen))
			goto fail;
		s->spray_ports = (uint8_t)sp;
	}
	if ((v = json_object_get(o, "prio_classes"))) {
		uint32_t pc;

		if (get_uint(v, "spec.prio_classes", 1, NR_MAX_CLASSES, NULL, &pc, err, errlen))
			goto fail;
		s->prio_classes = (uint8_t)pc;
	}
	if ((v = json_object_get(o, "reorder_pkts"))) {
		uint32_t r;

		if (get_uint(v, "spec.reorder_pkts", 0, NR_MAX_REORDER, NULL, &r, err, errlen))
			goto fail;
		s->reorder_pkts = (uint16_t)r;
	}
	if ((v = json_object_get(o, "short_scale"))) {
		if (!json_is_boolean(v)) {
			snprintf(err, errlen, "spec.short_scale: expected true or false, got %s",
				 nr_ctl_json_type(v));
			goto fail;
		}
		s->short_scale = json_is_true(v);
	}
	if ((v = json_object_get(o, "short_first"))) {
		if (!json_is_boolean(v)) {
			snprintf(err, errlen, "spec.short_first: expected true or false, got %s",
				 nr_ctl_json_type(v));
			goto fail;
		}
		s->short_first = json_is_true(v);
	}
	if ((v = json_object_get(o, "selective"))) {
		uint32_t sel;

		/* a flag: true or false, or 0 or 1 */
		if (json_is_boolean(v)) {
			s->selective = json_is_true(v);
		} else if (json_is_integer(v)) {
			if (get_uint(v, "spec.selective", 0, 1, NULL, &sel, err, errlen))
				goto fail;
			s->selective = (uint8_t)sel;
		} else {
			snprintf(err, errlen,
				 "spec.selective: expected true or false (or 0 or 1), got %s",
				 nr_ctl_json_type(v));
			goto fail;
		}
	}
	if ((v = json_object_get(o, "mode"))) {
		const char *m = json_string_value(v);

		if (!json_is_string(v)) {
			snprintf(err, errlen, "spec.mode: expected a string, got %s", nr_ctl_json_type(v));
			goto fail;
		}
		if (!strcmp(m, "ordered")) {
			s->mode = NR_SUM_ORDERED;
		} else if (!strcmp(m, "streaming")) {
			s->mode = NR_SUM_STREAMING;
		} else {
			snprintf(err, errlen, "spec.mode: \"%.32s\" is not a sum mode (ordered or streaming)", m);
			goto fail;
		}
	}
	if ((v = json_object_get(o, "reduce"))) {
		const char *m = json_string_value(v);
		unsigned op;

		if (!json_is_string(v)) {
			snprintf(err, errlen, "spec.reduce: expected a string, got %s", nr_ctl_json_type(v));
			goto fail;
		}
		for (op = 0; op < NR_REDUCE_OPS && strcmp(m, nr_reduce_name(op)); op++)
			;
		if (op == NR_REDUCE_OPS) {
			snprintf(err, errlen,
				 "spec.reduce: \"%.32s\" is not a reduce op (sum, max or bor)", m);
			goto fail;
		}
		s->reduce = (uint8_t)op;
	}
	if ((v = json_object_get(o, "dtype"))) {
		const char *m = json_string_value(v);
		unsigned t;

		if (!json_is_string(v)) {
			snprintf(err, errlen, "spec.dtype: expected a string, got %s", nr_ctl_json_type(v));
			goto fail;
		}
		for (t = 0; t < NR_ELEM_TYPES && strcmp(m, nr_elem_name(t)); t++)
			;
		if (t == NR_ELEM_TYPES) {
			snprintf(err, errlen, "spec.dtype: \"%.32s\" is not an element type (fp32, bf16 "
				 "or fp16)", m);
			goto fail;
		}
		s->dtype = (uint8_t)t;
	}
	for (i = 0; i < n * n_ch; i++)
		if (parse_conn(json_array_get(arrays[i / n], i % n), conn_where(s, i, where, sizeof(where)),
			       &s->conns[i], err, errlen))
			goto fail;
	if (check_dup_conns(s, err, errlen))
		goto fail;
	/* The engine's own checks: one validation for every backend. */
	e2[0] = '\0';
	if (nr_job_spec_validate(s, e2, sizeof(e2))) {
		snprintf(err, errlen, "%s%s", strncmp(e2, "spec", 4) ? "spec." : "",
			 e2[0] ? e2 : "invalid job spec");
		goto fail;
	}
	return s;
fail:
	free(s);
	return NULL;
}

static json_t *conn_to_json(const struct nr_conn_spec *cs)
{
	char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN], m[NR_MAC_STRLEN];
	json_t *cj;
	unsigned k;

	cj = json_pack("{s:s,s:s,s:I,s:I,s:I}", "src_ip", nr_ip4_str(cs->src_ip, a),
		       "dst_ip", nr_ip4_str(cs->dst_ip, b), "src_qpn", (json_int_t)cs->src_qpn,
		       "dst_qpn", (json_int_t)cs->dst_qpn, "ipsn", (json_int_t)cs->ipsn);
	for (k = 0; k < 2; k++) {
		const uint8_t *mac = k ? cs->dst_mac : cs->src_mac;
		uint16_t sport = k ? cs->dst_sport : cs->src_sport;

		if (sport)
			json_object_set_new(cj, k ? "dst_sport" : "src_sport", json_integer(sport));
		if (!(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]))
			continue;
		json_object_set_new(cj, k ? "dst_mac" : "src_mac", json_string(nr_mac_str(mac, m)));
	}
	return cj;
}

json_t *nr_ctl_spec_to_json(const struct nr_job_spec *s)
{
	json_t *o, *chans = json_array();
	uint32_t c, i;

	for (c = 0; c < nr_job_channels(s); c++) {
		json_t *conns = json_array();

		for (i = 0; i < s->n_conns; i++)
			json_array_append_new(conns, conn_to_json(&s->conns[c * s->n_conns + i]));
		json_array_append_new(chans, json_pack("{s:o}", "conns", conns));
	}
	o = json_pack("{s:I,s:I,s:I,s:s,s:s,s:s,s:I}", "mtu", (json_int_t)s->mtu, "msg_size",
		      (json_int_t)s->msg_size, "pool_msgs", (json_int_t)s->pool_msgs, "mode",
		      s->mode == NR_SUM_STREAMING ? "streaming" : "ordered", "reduce",
		      nr_reduce_name(s->reduce), "dtype", nr_elem_name(s->dtype), "timeout_ms",
		      (json_int_t)s->timeout_ms);
	if (s->pkey)
		json_object_set_new(o, "pkey", json_integer(s->pkey));
	if (s->spray_ports > 1)
		json_object_set_new(o, "spray_ports", json_integer(s->spray_ports));
	if (s->reorder_pkts)
		json_object_set_new(o, "reorder_pkts", json_integer(s->reorder_pkts));
	if (s->prio_classes > 1)
		json_object_set_new(o, "prio_classes", json_integer(s->prio_classes));
	if (s->selective)
		json_object_set_new(o, "selective", json_true());
	if (s->short_ppm) {
		json_object_set_new(o, "short_ppm", json_integer(s->short_ppm));
		json_object_set_new(o, "short_dscp", json_integer(s->short_dscp));
		json_object_set_new(o, "short_scale", json_boolean(s->short_scale));
		json_object_set_new(o, "short_first", json_boolean(s->short_first));
	}
	if (nr_job_channels(s) > 1)
		json_object_set_new(o, "channels", chans);
	else {
		json_object_set(o, "conns", json_object_get(json_array_get(chans, 0), "conns"));
		json_decref(chans);
	}
	return o;
}
