/* Asynchronous etcd v3 JSON-gateway client (see etcd.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <json-c/json.h>

#include "clock.h"
#include "etcd.h"

#define ETCD_BODY_MAX (64u * 1024u)

struct etcd_ep {
	char host[256];
	uint16_t port;
	struct evhttp_connection *conn;
};

struct etcd_req;

struct etcd {
	struct event_base *base;
	struct etcd_ep ep[ETCD_MAX_ENDPOINTS];
	size_t n_ep, cur;
	int timeout_ms;
	struct etcd_req *reqs; /* in flight */
	size_t n_reqs;
};

enum req_kind { K_GRANT, K_KEEPALIVE, K_REVOKE, K_TXN, K_GET, K_DELETE };

struct etcd_req {
	struct etcd *e;
	struct etcd_req *prev, *next;
	enum req_kind kind;
	const char *path;
	char *body;
	size_t tries;
	etcd_cb cb;
	void *arg;
};

/* ---- base64 -------------------------------------------------------------- */

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *b64_encode(const char *s)
{
	size_t n = strlen(s), o = 0;
	char *out = malloc(4 * ((n + 2) / 3) + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)(unsigned char)s[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t)(unsigned char)s[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)s[i + 2];
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? b64[v & 63] : '=';
	}
	out[o] = '\0';
	return out;
}

static int b64_val(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;

	return p ? (int)(p - b64) : -1;
}

/* Decodes into out (cap bytes, NUL-terminated, truncated to fit). */
static void b64_decode(const char *s, char *out, size_t cap)
{
	uint32_t acc = 0;
	int bits = 0;
	size_t o = 0;

	for (; *s && *s != '='; s++) {
		int v = b64_val(*s);

		if (v < 0)
			break;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o + 1 < cap)
				out[o++] = (char)(acc >> bits & 0xff);
		}
	}
	out[o] = '\0';
}

/* ---- endpoints ----------------------------------------------------------- */

static int parse_endpoints(const char *list, struct etcd_ep *ep, size_t *n)
{
	const char *p = list;

	*n = 0;
	if (!list || !*list)
		return -1;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char item[300], *colon, *stop;
		unsigned long port;

		if (len == 0 || len >= sizeof(item) || *n >= ETCD_MAX_ENDPOINTS)
			return -1;
		memcpy(item, p, len);
		item[len] = '\0';
		colon = strncmp(item, "http://", 7) == 0 ? item + 7 : item;
		memmove(item, colon, strlen(colon) + 1);
		colon = strrchr(item, ':');
		if (!colon || colon == item)
			return -1;
		*colon = '\0';
		errno = 0;
		port = strtoul(colon + 1, &stop, 10);
		if (errno || *stop || port == 0 || port > 65535 ||
		    strlen(item) >= sizeof(ep[0].host))
			return -1;
		snprintf(ep[*n].host, sizeof(ep[0].host), "%s", item);
		ep[*n].port = (uint16_t)port;
		ep[*n].conn = NULL;
		(*n)++;
		p = end ? end + 1 : p + len;
	}
	return *n ? 0 : -1;
}

bool etcd_endpoints_valid(const char *endpoints)
{
	struct etcd_ep ep[ETCD_MAX_ENDPOINTS];
	size_t n;

	return parse_endpoints(endpoints, ep, &n) == 0;
}

struct etcd *etcd_create(struct event_base *base, const char *endpoints,
			 int timeout_ms, char *err, size_t errlen)
{
	struct etcd *e = calloc(1, sizeof(*e));

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (parse_endpoints(endpoints, e->ep, &e->n_ep) != 0) {
		snprintf(err, errlen,
			 "bad etcd endpoints '%s' (want host:port[,host:port]"
			 ", at most %d)",
			 endpoints ? endpoints : "", ETCD_MAX_ENDPOINTS);
		free(e);
		return NULL;
	}
	e->base = base;
	e->timeout_ms = timeout_ms > 0 ? timeout_ms : 1000;
	return e;
}

static void req_unlink(struct etcd_req *r)
{
	struct etcd *e = r->e;

	if (r->prev)
		r->prev->next = r->next;
	else
		e->reqs = r->next;
	if (r->next)
		r->next->prev = r->prev;
	e->n_reqs--;
}

static void req_free(struct etcd_req *r)
{
	free(r->body);
	free(r);
}

void etcd_destroy(struct etcd *e)
{
	struct etcd_req *r, *next;

	if (!e)
		return;
	/* callbacks libevent runs while connections are freed find cb NULL */
	for (r = e->reqs; r; r = r->next)
		r->cb = NULL;
	for (size_t i = 0; i < e->n_ep; i++)
		if (e->ep[i].conn)
			evhttp_connection_free(e->ep[i].conn);
	for (r = e->reqs; r; r = next) {
		next = r->next;
		req_free(r);
	}
	free(e);
}

size_t etcd_pending(const struct etcd *e)
{
	return e ? e->n_reqs : 0;
}

/* ---- replies ------------------------------------------------------------- */

static const char *jstr(json_object *o, const char *name)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, name, &v))
		return NULL;
	return json_object_get_string(v);
}

static uint64_t ju64(json_object *o, const char *name)
{
	const char *s = jstr(o, name);

	return s ? strtoull(s, NULL, 10) : 0;
}

static json_object *jobj(json_object *o, const char *name)
{
	json_object *v;

	return o && json_object_object_get_ex(o, name, &v) ? v : NULL;
}

static void read_kv(json_object *kvs, struct etcd_result *res)
{
	json_object *kv;
	const char *v;

	if (!kvs || !json_object_is_type(kvs, json_type_array) ||
	    json_object_array_length(kvs) == 0)
		return;
	kv = json_object_array_get_idx(kvs, 0);
	res->found = true;
	v = jstr(kv, "value");
	b64_decode(v ? v : "", res->value, sizeof(res->value));
	res->create_revision = ju64(kv, "create_revision");
	res->mod_revision = ju64(kv, "mod_revision");
	res->lease = (int64_t)ju64(kv, "lease");
}

static void parse_reply(enum req_kind kind, json_object *j,
			struct etcd_result *res)
{
	json_object *hdr;

	if (kind == K_KEEPALIVE)
		j = jobj(j, "result");
	hdr = jobj(j, "header");
	res->revision = ju64(hdr, "revision");
	res->cluster_id = ju64(hdr, "cluster_id");
	res->lease_id = (int64_t)ju64(j, "ID");
	res->ttl = (int64_t)ju64(j, "TTL");
	if (kind == K_GET)
		read_kv(jobj(j, "kvs"), res);
	if (kind == K_TXN) {
		json_object *rs = jobj(j, "responses"), *first;

		res->succeeded = json_object_get_boolean(jobj(j, "succeeded"));
		if (!res->succeeded && rs &&
		    json_object_is_type(rs, json_type_array) &&
		    json_object_array_length(rs) > 0) {
			first = json_object_array_get_idx(rs, 0);
			read_kv(jobj(jobj(first, "response_range"), "kvs"),
				res);
		}
	}
}

static int send_req(struct etcd_req *r);

static json_object *parse_json(const char *text, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *j =
	    tok ? json_tokener_parse_ex(tok, text, (int)len) : NULL;

	json_tokener_free(tok);
	return j;
}

static void on_reply(struct evhttp_request *hreq, void *arg)
{
	struct etcd_req *r = arg;
	struct etcd *e = r->e;
	struct etcd_result res;
	int code = hreq ? evhttp_request_get_response_code(hreq) : 0;
	struct evbuffer *in;
	size_t len;
	char *text;
	json_object *j;

	if (!r->cb)
		return; /* the client is being destroyed */
	memset(&res, 0, sizeof(res));
	if (code == 0) {
		/* transport: try the next endpoint, once per endpoint */
		if (r->tries < e->n_ep) {
			e->cur = (e->cur + 1) % e->n_ep;
			if (send_req(r) == 0)
				return;
		}
		res.status = -1;
		snprintf(res.err, sizeof(res.err),
			 "no etcd endpoint answered (last %s:%u)",
			 e->ep[e->cur].host, e->ep[e->cur].port);
		goto done;
	}
	in = evhttp_request_get_input_buffer(hreq);
	len = evbuffer_get_length(in);
	text = len <= ETCD_BODY_MAX ? (char *)evbuffer_pullup(in, -1) : NULL;
	j = text ? parse_json(text, len) : NULL;
	if (code != 200 || !j) {
		res.status = -2;
		snprintf(res.err, sizeof(res.err), "etcd %s: HTTP %d %.80s",
			 r->path, code, j ? jstr(j, "error") : "(not JSON)");
	} else {
		parse_reply(r->kind, j, &res);
	}
	json_object_put(j);
done:
	req_unlink(r);
	{
		etcd_cb cb = r->cb;
		void *cb_arg = r->arg;

		req_free(r);
		cb(&res, cb_arg);
	}
}

static struct evhttp_connection *conn_of(struct etcd *e)
{
	struct etcd_ep *ep = &e->ep[e->cur];
	struct timeval tv = net_timeval_ms(e->timeout_ms);

	if (!ep->conn) {
		ep->conn = evhttp_connection_base_new(e->base, NULL, ep->host,
						      ep->port);
		if (!ep->conn)
			return NULL;
		evhttp_connection_set_timeout_tv(ep->conn, &tv);
		evhttp_connection_set_retries(ep->conn, 0);
	}
	return ep->conn;
}

static int send_req(struct etcd_req *r)
{
	struct etcd *e = r->e;
	struct evhttp_connection *conn = conn_of(e);
	struct evhttp_request *h;
	struct evkeyvalq *hdrs;
	char host[300];

	r->tries++;
	h = conn ? evhttp_request_new(on_reply, r) : NULL;
	if (!h)
		return -1;
	hdrs = evhttp_request_get_output_headers(h);
	snprintf(host, sizeof(host), "%s:%u", e->ep[e->cur].host,
		 e->ep[e->cur].port);
	evhttp_add_header(hdrs, "Host", host);
	evhttp_add_header(hdrs, "Content-Type", "application/json");
	evbuffer_add(evhttp_request_get_output_buffer(h), r->body,
		     strlen(r->body));
	/* on failure libevent frees h */
	return evhttp_make_request(conn, h, EVHTTP_REQ_POST, r->path);
}

/* Takes body (malloc'd, freed here on failure). */
static int submit(struct etcd *e, enum req_kind kind, const char *path,
		  char *body, etcd_cb cb, void *arg)
{
	struct etcd_req *r = body ? calloc(1, sizeof(*r)) : NULL;

	if (!r) {
		free(body);
		return -1;
	}
	*r = (struct etcd_req){.e = e,
			       .kind = kind,
			       .path = path,
			       .body = body,
			       .cb = cb,
			       .arg = arg,
			       .next = e->reqs};
	if (e->reqs)
		e->reqs->prev = r;
	e->reqs = r;
	e->n_reqs++;
	if (send_req(r) != 0) {
		req_unlink(r);
		req_free(r);
		return -1;
	}
	return 0;
}

static char *json_take(json_object *j)
{
	char *s = j ? strdup(json_object_to_json_string_ext(
			  j, JSON_C_TO_STRING_PLAIN))
		    : NULL;

	json_object_put(j);
	return s;
}

static json_object *jnum(int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	return json_object_new_string(buf);
}

static json_object *jkey(const char *key)
{
	char *k = b64_encode(key);
	json_object *o = k ? json_object_new_string(k) : NULL;

	free(k);
	return o;
}

static char *id_body(int64_t id, const char *name)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, name, jnum(id));
	return json_take(j);
}

int etcd_lease_grant(struct etcd *e, int64_t ttl_s, etcd_cb cb, void *arg)
{
	return submit(e, K_GRANT, "/v3/lease/grant", id_body(ttl_s, "TTL"), cb,
		      arg);
}

int etcd_lease_keepalive(struct etcd *e, int64_t id, etcd_cb cb, void *arg)
{
	return submit(e, K_KEEPALIVE, "/v3/lease/keepalive", id_body(id, "ID"),
		      cb, arg);
}

int etcd_lease_revoke(struct etcd *e, int64_t id, etcd_cb cb, void *arg)
{
	return submit(e, K_REVOKE, "/v3/lease/revoke", id_body(id, "ID"), cb,
		      arg);
}

int etcd_get(struct etcd *e, const char *key, etcd_cb cb, void *arg)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "key", jkey(key));
	return submit(e, K_GET, "/v3/kv/range", json_take(j), cb, arg);
}

int etcd_delete(struct etcd *e, const char *key, etcd_cb cb, void *arg)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "key", jkey(key));
	return submit(e, K_DELETE, "/v3/kv/deleterange", json_take(j), cb, arg);
}

int etcd_put_if_absent(struct etcd *e, const char *key, const char *value,
		       int64_t lease, etcd_cb cb, void *arg)
{
	json_object *j = json_object_new_object();
	json_object *cmp = json_object_new_object(), *put, *rng, *op;
	json_object *ok = json_object_new_array(),
		    *ko = json_object_new_array();
	json_object *cmps = json_object_new_array();
	char *v = b64_encode(value);

	json_object_object_add(cmp, "key", jkey(key));
	json_object_object_add(cmp, "target", json_object_new_string("CREATE"));
	json_object_object_add(cmp, "create_revision", jnum(0));
	json_object_array_add(cmps, cmp);
	put = json_object_new_object();
	json_object_object_add(put, "key", jkey(key));
	json_object_object_add(put, "value",
			       json_object_new_string(v ? v : ""));
	json_object_object_add(put, "lease", jnum(lease));
	op = json_object_new_object();
	json_object_object_add(op, "request_put", put);
	json_object_array_add(ok, op);
	rng = json_object_new_object();
	json_object_object_add(rng, "key", jkey(key));
	op = json_object_new_object();
	json_object_object_add(op, "request_range", rng);
	json_object_array_add(ko, op);
	json_object_object_add(j, "compare", cmps);
	json_object_object_add(j, "success", ok);
	json_object_object_add(j, "failure", ko);
	free(v);
	return submit(e, K_TXN, "/v3/kv/txn", json_take(j), cb, arg);
}

/* ---- blocking get -------------------------------------------------------- */

struct sync_get {
	struct event_base *base;
	struct etcd_result *r;
	bool done;
};

static void on_sync_get(const struct etcd_result *res, void *arg)
{
	struct sync_get *g = arg;

	*g->r = *res;
	g->done = true;
	event_base_loopbreak(g->base);
}

int etcd_get_sync(const char *endpoints, const char *key, int timeout_ms,
		  struct etcd_result *r)
{
	struct sync_get g = {.r = r};
	struct etcd *e;
	int n;

	memset(r, 0, sizeof(*r));
	g.base = event_base_new();
	if (!g.base) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		return -1;
	}
	e = etcd_create(g.base, endpoints, 0, r->err, sizeof(r->err));
	n = e && e->n_ep ? (int)e->n_ep : 1;
	if (e)
		e->timeout_ms = timeout_ms / n > 0 ? timeout_ms / n : 1;
	if (e && etcd_get(e, key, on_sync_get, &g) == 0)
		event_base_dispatch(g.base);
	else if (e)
		snprintf(r->err, sizeof(r->err), "out of memory");
	etcd_destroy(e);
	event_base_free(g.base);
	if (!g.done)
		return -1;
	return r->status == 0 ? 0 : -1;
}
