/*
 * The worker's data port: serves the protocol of data_proto.h on a libevent
 * loop. READ and WRITE only inside a bound segment and only with the
 * master's grant for exactly that op and region, under that segment's own
 * key, not expired (grant.h); a READ only while the region's stamp still
 * names the grant's object; anything else is refused with a status and a
 * reason, never read or written. Payloads stream: a READ reply references segment memory (no
 * copy) and a WRITE payload goes straight into the segment as it arrives,
 * so one large transfer never holds up the loop or other connections.
 *
 * No reply carries bytes written after its READ was admitted: a reply
 * holds its range until the socket has taken it (hold.h); a WRITE admitted
 * into a held range first closes the connections whose replies hold it
 * (counted cut_replies), and a READ of a range a WRITE is streaming into is
 * refused (DENIED, as a stale region). Replies must drain at min_body_rate
 * per body_timeout_ms window, or their connection is closed
 * (reply_timeouts).
 *
 * Segments are registered once (memory the caller owns and keeps mapped
 * until the server and its event_base are freed) and bound to the master's
 * segment id when mounted; a re-mount rebinds. The segment's grant key, the
 * master's incarnation and its clock come with each mount (and the clock
 * with each heartbeat). Counters are
 * cumulative per slot across rebinding.
 *
 * Thread-safety: a server belongs to the thread running its event_base;
 * call everything from that thread (or before the loop runs). The process
 * must ignore SIGPIPE.
 */
#ifndef MCREPL_WORKER_DATA_SERVER_H
#define MCREPL_WORKER_DATA_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "data_proto.h"
#include "grant.h"

struct data_server;

struct data_server_config {
	const char *host;      /* bind address; "127.0.0.1" */
	uint16_t port;	       /* 0 = ephemeral, see data_server_port() */
	uint64_t max_io_bytes; /* largest READ/WRITE length; 1 GiB */
	size_t out_high_water; /* stop reading a peer above this backlog */
	/* Close a connection that has sent nothing for this long while it
	 * has no reply pending (0 = never). A connection serves any number
	 * of requests until then; see data_proto.h. 60000. */
	uint32_t idle_timeout_ms;
	/* Close a connection whose request header is not whole this long
	 * after its first byte (0 = never); netlimits.h. */
	uint32_t header_timeout_ms;
	/* Connections at once; more are closed on accept (0 = the fd limit
	 * less NET_FD_HEADROOM); netlimits.h. accept(2) errors (EMFILE)
	 * pause the listener for NET_ACCEPT_RETRY_MS, logged once a second. */
	uint32_t max_connections;
	/* A WRITE payload (granted or being discarded) must receive
	 * min_body_rate bytes per second, checked over each window of
	 * body_timeout_ms (the rest of a shorter payload), or its connection
	 * is closed: a slow writer cannot hold a slot (0 = never). Replies
	 * waiting to be sent must drain at the same rate over the same
	 * window (all of them when fewer), or the connection is closed. */
	uint32_t body_timeout_ms;
	uint64_t min_body_rate;
	/* Request bytes one connection buffers (its read high-water mark;
	 * granted payloads go straight into the segment past the buffer),
	 * and the bytes all connections may hold while paused for not
	 * reading their replies; a connection that would go past that
	 * budget is closed. A connection also pauses at DATA_MAX_QUEUED
	 * unflushed replies, whatever their bytes. netlimits.h. */
	uint64_t conn_input;
	uint64_t input_budget;
	/* Serve READ and WRITE without grants. Only for the benchmark
	 * baseline that measures what grants cost (the worker's
	 * --insecure_no_grants_for_benchmarks, loopback only; BENCHMARKS.md);
	 * never a default. false. */
	bool grants_off;
};

/* Replies a connection may have queued before it stops reading: a peer
 * that pipelines tiny READs and never reads the replies holds at most
 * this many (each costs an evbuffer chain, whatever its length). */
#define DATA_MAX_QUEUED 256

void data_server_config_init(struct data_server_config *cfg);

/* Binds and listens; cfg is copied. NULL with a reason in err. */
struct data_server *data_server_create(struct event_base *base,
				       const struct data_server_config *cfg,
				       char *err, size_t errlen);

/* Closes every connection and the listener, frees. Accepts NULL. */
void data_server_destroy(struct data_server *s);

uint16_t data_server_port(const struct data_server *s);

/* Registers [mem, mem+len) (borrowed) as a new slot, unbound (every
 * request for it is refused until data_server_bind). Returns the slot
 * (0, 1, ...) or -1 when out of memory. */
int data_server_add_segment(struct data_server *s, void *mem, uint64_t len);

/* Serves slot as segment_id (0 = unbind). */
void data_server_bind(struct data_server *s, int slot, uint64_t segment_id);

/* Check the grants of slot's segment with key, that segment's own (its
 * MountSegmentResponse's), under the master incarnation (grant.h); NULL:
 * none (every READ and WRITE of the slot refused). Each slot has its own:
 * a key never opens another slot. */
void data_server_set_grant_key(struct data_server *s, int slot,
			       const uint8_t key[GRANT_SECRET_BYTES],
			       uint64_t incarnation);

/* The master answered a call sent at local_sent_ms (net_now_ms()) with its
 * clock at master_now_ms: grant expiries are judged on local time plus
 * (master_now_ms - local_sent_ms), never behind the master (grant.h). */
void data_server_set_master_clock(struct data_server *s, uint64_t master_now_ms,
				  int64_t local_sent_ms);

/* The master freed [offset, +length) of segment_id while the WRITE grant
 * it issued there for object_id, expiring at until_ms (master clock),
 * still ran: refuse every WRITE under that grant from now on (DENIED, as a
 * grant that does not verify) and cut one in flight (revoke.h). Kept until
 * until_ms. 0, or -1 (segment not bound here, or its revocations full):
 * the caller must not acknowledge it. */
int data_server_revoke_write(struct data_server *s, uint64_t segment_id,
			     uint64_t offset, uint64_t length,
			     uint64_t object_id, uint64_t until_ms);

/* Cumulative counters of a slot (zeros for an unknown slot). */
void data_server_slot_stats(const struct data_server *s, int slot,
			    struct data_stats *out);

/* Server-wide counters. */
struct data_server_counters {
	uint64_t refused_writes; /* grant, range or size refusals */
	uint64_t refused_reads;
	uint64_t refused_grant;	   /* forged, or for another op/region */
	uint64_t refused_expired;  /* expired grants (cut writes included) */
	uint64_t refused_stale;	   /* READ of a region holding another
				   * (answered DENIED alike: no oracle) */
	uint64_t cut_writes;	   /* WRITEs cut: grant expired or revoked */
	uint64_t refused_revoked;  /* WRITEs under a revoked grant (answered
				   * DENIED alike; cut ones included) */
	uint64_t bad_streams;	   /* connections closed for bad input */
	uint64_t connections;	   /* open now */
	uint64_t accepted;	   /* connections accepted, cumulative */
	uint64_t idle_closed;	   /* closed by the idle timeout */
	uint64_t header_timeouts;  /* closed by the header timeout */
	uint64_t refused;	   /* closed on accept: over the cap */
	uint64_t body_timeouts;	   /* closed: a payload slower than the rate */
	uint64_t paused;	   /* times reading paused for unread replies */
	uint64_t budget_closed;	   /* closed: past input_budget when paused */
	uint64_t input_held;	   /* bytes held now by paused connections */
	uint64_t cut_replies;	   /* closed: a WRITE landed where their READ
				   * reply was still unsent (hold.h) */
	uint64_t reply_timeouts;   /* closed: replies sent slower than the
				   * rate (body_timeout_ms, min_body_rate) */
	uint64_t held_replies;	   /* READ replies in flight now */
	uint64_t writes_streaming; /* granted WRITEs landing now */
};
void data_server_counters(const struct data_server *s,
			  struct data_server_counters *out);

#endif
