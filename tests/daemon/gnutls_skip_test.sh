#!/bin/sh
# usage: gnutls_skip_test.sh HUBWATCH_BINARY
# Passes when libgnutls's _gnutls_global_init_skip binds to the binary's definition (which
# returns 1: GnuTLS skips its implicit init, daemon/unused_gnutls.cc), as LD_DEBUG=bindings
# reports it; fails when it binds to libgnutls's own weak one or the binary does not load GnuTLS
# at all (then the hook has nothing left to do: remove it).
set -u
bin=$1
bindings=$(LD_DEBUG=bindings "$bin" --help 2>&1 >/dev/null | grep '_gnutls_global_init_skip')
echo "${bindings:-no binding of _gnutls_global_init_skip (is libgnutls loaded?)}"
case "$bindings" in
  *"libgnutls"*" to $bin [0]: normal symbol"*) exit 0 ;;
  *) exit 1 ;;
esac
