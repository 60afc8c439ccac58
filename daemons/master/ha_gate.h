/*
 * The HA gate in front of the master's RPC service: while the master does
 * not lead (a standby, a deposed leader, a leader past its renewal
 * deadline) every request is answered with its method's response whose
 * Result is UNAVAILABLE, reason "not_leader", and a message naming the
 * leader when known; clients and workers then look the leader up in etcd.
 * Nothing reaches the store. While it leads, requests pass through.
 */
#ifndef MCREPL_MASTER_HA_GATE_H
#define MCREPL_MASTER_HA_GATE_H

#include <stdbool.h>
#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

#define HA_REASON_NOT_LEADER "not_leader"
#define HA_REASON_RECOVERING "recovering"

struct ha_gate {
	ProtobufCService base; /* first: the RPC server calls through it */
	ProtobufCService *inner;
	/* true: pass the request; else leader[0, cap) may name the leader */
	bool (*open)(void *arg, char *leader, size_t cap);
	/* true while a new leader's workers may still be re-registering:
	 * the methods of class HA_REFUSE (PutStart, Remove, Warmup,
	 * SubmitReplicaActionProposal) are refused and a GetReplicaList,
	 * BatchGetReplicaList (any entry), Stat or Exist that finds nothing
	 * is answered UNAVAILABLE, reason "recovering" (ask again); the
	 * classes are the method table's (methods.c) */
	bool (*recovering)(void *arg);
	void *arg;
	unsigned long refused, deferred;
};

void ha_gate_init(struct ha_gate *g, ProtobufCService *inner,
		  bool (*open)(void *arg, char *leader, size_t cap),
		  bool (*recovering)(void *arg), void *arg);

#endif
