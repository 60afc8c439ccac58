/* READs raced on their own connections, without threads (data_client.h):
 * each slot sends its request, then receives its reply a piece at a time
 * as poll() says its socket is readable, so one stalled worker holds no
 * other READ back. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "data_client.h"
#include "netutil.h"

#define RECV_CHUNK (1u << 20)

void data_race_init(struct data_race *r, struct data_pool *pool, int timeout_ms)
{
	memset(r, 0, sizeof(*r));
	r->pool = pool;
	r->timeout_ms = timeout_ms;
	for (int i = 0; i < DATA_RACE_SLOTS; i++)
		r->slot[i].fd = -1;
}

bool data_race_busy(const struct data_race *r, int slot)
{
	return r->slot[slot].fd >= 0;
}

void data_race_cancel(struct data_race *r, int slot)
{
	struct data_race_slot *s = &r->slot[slot];

	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* The request on a connection (new unless reuse may take the pool's). */
static int send_req(struct data_race *r, struct data_race_slot *s, bool fresh,
		    char *err, size_t errlen)
{
	struct data_req req = {.op = DATA_OP_READ,
			       .segment_id = s->q.segment_id,
			       .offset = s->q.offset,
			       .length = s->q.head_len + s->q.len,
			       .grant = s->q.grant};
	uint8_t hdr[DATA_REQ_BYTES];
	size_t off = 0;
	int st = data_pool_take(r->pool, s->q.ep, r->timeout_ms, fresh, &s->fd,
				&s->reused, err, errlen);

	if (st)
		return st;
	s->deadline = net_now_ms() + r->timeout_ms;
	s->have_resp = false;
	s->got = 0;
	data_req_encode(&req, hdr);
	while (off < sizeof(hdr) && st == 0) {
		ssize_t n =
		    send(s->fd, hdr + off, sizeof(hdr) - off, MSG_NOSIGNAL);

		if (n > 0)
			off += (size_t)n;
		else if (n < 0 && (errno == EAGAIN || errno == EINTR))
			st = net_wait_fd(s->fd, POLLOUT, s->deadline);
		else
			st = n < 0 ? -errno : -ECONNRESET;
	}
	if (st) {
		snprintf(err, errlen, "%s: send failed: %s", s->q.ep,
			 strerror(-st));
		data_race_cancel(r, (int)(s - r->slot));
	}
	return st;
}

int data_race_start(struct data_race *r, int slot,
		    const struct data_read_req *q, char *err, size_t errlen)
{
	struct data_race_slot *s = &r->slot[slot];

	if (q->len > UINT64_MAX - q->head_len) {
		snprintf(err, errlen, "read of %llu + %llu bytes overflows",
			 (unsigned long long)q->head_len,
			 (unsigned long long)q->len);
		return -EINVAL;
	}
	s->q = *q;
	return send_req(r, s, false, err, errlen);
}

/* Where the next reply bytes go and how many are still due (0: whole). */
static uint64_t next_room(struct data_race_slot *s, uint8_t **p)
{
	uint64_t at = s->got;

	if (!s->have_resp) {
		*p = s->hdr + at;
		return DATA_RESP_BYTES - at;
	}
	if (s->resp.status != DATA_OK) {
		*p = (uint8_t *)s->text + at;
		return s->resp.length - at;
	}
	if (at < s->q.head_len) {
		*p = (uint8_t *)s->q.head + at;
		return s->q.head_len - at;
	}
	*p = (uint8_t *)s->q.buf + (at - s->q.head_len);
	return s->q.head_len + s->q.len - at;
}

/* The header just came: check it, start counting what follows. */
static int take_header(struct data_race_slot *s, char *err, size_t errlen)
{
	s->have_resp = true;
	s->got = 0;
	if (data_resp_decode(s->hdr, &s->resp) != 0 ||
	    (s->resp.status != DATA_OK && s->resp.length > DATA_ERR_MAX)) {
		snprintf(err, errlen, "%s: malformed reply", s->q.ep);
		return -EPROTO;
	}
	if (s->resp.status == DATA_OK &&
	    s->resp.length != s->q.head_len + s->q.len) {
		snprintf(err, errlen, "%s: read returned %llu bytes, not %llu",
			 s->q.ep, (unsigned long long)s->resp.length,
			 (unsigned long long)(s->q.head_len + s->q.len));
		return -EPROTO;
	}
	return 0;
}

/* The reply received whole: 0, or the worker's refusal. */
static int finish(struct data_race_slot *s, char *err, size_t errlen)
{
	if (s->resp.status == DATA_OK)
		return 0;
	s->text[s->resp.length] = '\0';
	snprintf(err, errlen, "%s refused: %s (%s)", s->q.ep, s->text,
		 data_status_str(s->resp.status));
	return data_status_errno(s->resp.status);
}

/* Receives what the socket holds: 1 when the reply is whole (*st its
 * status), 0 for more to come, or a negative transport errno. */
static int pump(struct data_race_slot *s, int *st, char *err, size_t errlen)
{
	for (;;) {
		uint8_t *p;
		uint64_t want = next_room(s, &p);
		ssize_t n;

		if (want == 0 && !s->have_resp) {
			int e = take_header(s, err, errlen);

			if (e)
				return e;
			continue;
		}
		if (want == 0) {
			*st = finish(s, err, errlen);
			return 1;
		}
		n = recv(s->fd, p, want > RECV_CHUNK ? RECV_CHUNK : want, 0);
		if (n > 0)
			s->got += (uint64_t)n;
		else if (n == 0)
			return -ECONNRESET;
		else if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		else if (errno != EINTR)
			return -errno;
	}
}

/* Slot s is done (*st): its connection back to the pool when the stream
 * is in step, else closed. */
static int settle(struct data_race *r, struct data_race_slot *s, int done,
		  int *st, char *err, size_t errlen)
{
	int slot = (int)(s - r->slot);

	if (done == 1 && s->resp.status == DATA_OK) {
		data_pool_give(r->pool, s->q.ep, s->fd);
		s->fd = -1;
		return slot;
	}
	data_race_cancel(r, slot);
	if (done == 1)
		return slot;
	/* a reused connection the peer had closed: once more on a new one */
	if (s->reused && !s->have_resp && s->got == 0) {
		data_pool_count_retry(r->pool);
		if (send_req(r, s, true, err, errlen) == 0)
			return -1;
		*st = -ECONNRESET;
		return slot;
	}
	snprintf(err, errlen, "%s: read failed: %s", s->q.ep, strerror(-done));
	*st = done;
	return slot;
}

/* One poll turn over the busy slots: the slot that finished, or -1. */
static int turn(struct data_race *r, int64_t until, int *st, char *err,
		size_t errlen)
{
	struct pollfd pfd[DATA_RACE_SLOTS];
	struct data_race_slot *who[DATA_RACE_SLOTS];
	int64_t now = net_now_ms(), first = until;
	nfds_t n = 0;

	for (int i = 0; i < DATA_RACE_SLOTS; i++) {
		struct data_race_slot *s = &r->slot[i];

		if (s->fd < 0)
			continue;
		if (now >= s->deadline) {
			snprintf(err, errlen, "%s: read timed out", s->q.ep);
			*st = -ETIMEDOUT;
			data_race_cancel(r, i);
			return i;
		}
		if (first < 0 || s->deadline < first)
			first = s->deadline;
		pfd[n] = (struct pollfd){.fd = s->fd, .events = POLLIN};
		who[n++] = s;
	}
	if (poll(pfd, n, net_remaining_ms(first)) < 0 && errno != EINTR)
		return -1;
	for (nfds_t i = 0; i < n; i++) {
		int done;

		if (!pfd[i].revents)
			continue;
		done = pump(who[i], st, err, errlen);
		if (done == 0)
			continue;
		done = settle(r, who[i], done, st, err, errlen);
		if (done >= 0)
			return done;
	}
	return -1;
}

int data_race_wait(struct data_race *r, int64_t until, int *st, char *err,
		   size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	for (;;) {
		bool busy = false;
		int done;

		for (int i = 0; i < DATA_RACE_SLOTS; i++)
			busy |= r->slot[i].fd >= 0;
		if (!busy)
			return -2;
		if (until >= 0 && net_now_ms() >= until)
			return -1;
		done = turn(r, until, st, err, errlen);
		if (done >= 0)
			return done;
	}
}
