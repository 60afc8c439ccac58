# The code the daemons and tools share, by what it is:
#   runtime/common/   small shared pieces: sockets and clocks (netutil),
#                     principals and HMAC proofs (auth; libcrypto),
#                     TLS contexts and peer checks (tls; libssl and
#                     libevent_openssl),
#                     big-endian bytes (bytes.h), connections per peer
#                     address (peer_table: the RPC and HTTP servers' caps)
#   runtime/rpc/      the RPC layer: frame codec, libevent framing, server,
#                     dispatch, blocking and async clients; with the
#                     protobuf-c code generated from proto/mcrepl.proto
#   runtime/data/     the data plane: wire headers (data_proto), grants,
#                     the worker's data server, copy engines (TCP here;
#                     RDMA in runtime/rdma/, mk/rdma.mk)
#   runtime/client/   the client library: store_client over the master's
#                     RPC and pooled data connections (data_client)
#
#   $(BUILD)/gen/mcrepl.pb-c.{c,h}   generated from proto/mcrepl.proto
#   $(DAEMON_LIB)    $(BUILD)/libmcrepl-daemon.a: the generated code and
#                    every .c file of the four directories
#   DAEMON_CFLAGS    what code using these headers compiles with: give it to
#                    a directory with CFLAGS.<dir> := $(DAEMON_CFLAGS) and
#                    make its objects wait for the generated header with
#                    $(call objs,<dir>): | $(RPC_GEN_H)
#   DAEMON_LIBS      what links against $(DAEMON_LIB) needs; link order:
#                    own objects, $(DAEMON_LIB), $(UTIL_LIB) if used,
#                    $(MCREPL_LINK), $(ALL_LDFLAGS) $(DAEMON_LIBS) -lm
#
# Daemon code sees the public headers and util only (Makefile), plus
# the directories above.
#
# protobuf-c 1.4's MCREPL_RPC__*__INIT macros cast away const from
# protobuf_c_empty_string, which -Wcast-qual reports at every expansion site
# (-isystem does not help for macros). Daemon code therefore initialises
# messages with the generated functions: mcrepl_rpc__exist_request__init(&req).
# The generated .c is built with the same flags plus -Wno-cast-qual only.

DAEMON_PKGS := libevent libevent_openssl libprotobuf-c libssl libcrypto json-c
DAEMON_PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(DAEMON_PKGS) 2>/dev/null)
DAEMON_LIBS := $(shell $(PKG_CONFIG) --libs $(DAEMON_PKGS) 2>/dev/null || \
	echo -levent_openssl -levent -lprotobuf-c -lssl -lcrypto -ljson-c)
DAEMON_DIRS := runtime/common runtime/rpc runtime/data runtime/client
DAEMON_CFLAGS := -I$(BUILD)/gen $(addprefix -I,$(DAEMON_DIRS)) \
	$(DAEMON_PKG_CFLAGS)

RPC_GEN_C := $(BUILD)/gen/mcrepl.pb-c.c
RPC_GEN_H := $(BUILD)/gen/mcrepl.pb-c.h
RPC_GEN_OBJ := $(BUILD)/obj/gen/mcrepl.pb-c.o
DAEMON_LIB := $(BUILD)/libmcrepl-daemon.a

CFLAGS.$(BUILD)/gen := $(DAEMON_CFLAGS) -Wno-cast-qual
$(foreach d,$(DAEMON_DIRS),$(eval CFLAGS.$(d) := $$(DAEMON_CFLAGS)))

# A multi-target pattern rule: protoc-c runs once for both outputs.
$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: proto/%.proto
	$(call quiet,PROTOC)mkdir -p $(@D) && \
	protoc-c --proto_path=proto --c_out=$(@D) $<

# Order-only: objects wait for the generated header (-MMD records the real
# dependency once they have been built).
$(call objs,$(DAEMON_DIRS)): | $(RPC_GEN_H)

$(DAEMON_LIB): $(RPC_GEN_OBJ) $(call objs,$(DAEMON_DIRS))
	$(archive)

rpc: $(DAEMON_LIB)
all: $(DAEMON_LIB)

.PHONY: rpc
