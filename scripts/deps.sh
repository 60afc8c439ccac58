#!/bin/sh
# Check the build dependencies; install them with apt-get when running as
# root on Debian/Ubuntu, else say exactly what is missing and how to get it.
set -u
missing=""
have_pc() { pkg-config --exists "$1" 2>/dev/null; }
command -v cc >/dev/null 2>&1 || missing="$missing gcc"
command -v make >/dev/null 2>&1 || missing="$missing make"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
command -v c++ >/dev/null 2>&1 || missing="$missing g++"
have_pc check || missing="$missing check"
have_pc libprotobuf-c || missing="$missing libprotobuf-c-dev"
command -v protoc-c >/dev/null 2>&1 || missing="$missing protobuf-c-compiler"
have_pc libevent || missing="$missing libevent-dev"
have_pc libevent_openssl || missing="$missing libevent-dev"
have_pc libcrypto || missing="$missing libssl-dev"
have_pc libssl || missing="$missing libssl-dev"
have_pc libibverbs || missing="$missing libibverbs-dev"
have_pc librdmacm || missing="$missing librdmacm-dev"
have_pc json-c || missing="$missing libjson-c-dev"
# xxHash (header only, nothing links it): the library's and the daemons' string hash.
have_pc libxxhash || missing="$missing libxxhash-dev"
# Optional, installed as root like the rest, else named: the tests that
# need them skip, each with a line saying so.
optional() { # PACKAGE "what skips without it"
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		missing="$missing $1"
	else
		echo "deps: optional $1 missing: $2 will be skipped" >&2
	fi
}
# the etcd binary the HA tests start
command -v etcd >/dev/null 2>&1 ||
	optional etcd-server "the master HA tests (check_ha)"
# promtool, which lints the master's and the worker's /metrics
command -v promtool >/dev/null 2>&1 ||
	optional prometheus "the promtool lint of /metrics"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "deps: installing:$missing"
	if ! apt-get install -y -q $missing >/dev/null 2>&1; then
		apt-get update -q >/dev/null 2>&1
		apt-get install -y -q $missing || {
			echo "deps: apt-get install failed for:$missing" >&2
			exit 1
		}
	fi
	exit 0
fi
echo "deps: missing build dependencies:$missing" >&2
echo "deps: install them with: sudo apt-get install -y$missing" >&2
exit 1
