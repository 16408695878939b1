#!/usr/bin/env bash
# make_test_pki.sh DIR: a throwaway PKI for the TLS tests and benchmarks, made with the openssl
# CLI (EC P-256 keys: fast to make). Writes into DIR:
#   ca.pem                      the test CA (trusted through hub.ca_file / NODE_EXTRA_CA_CERTS)
#   loopback.pem, loopback.key  a leaf for IP 127.0.0.1 and 127.0.0.2 (the Hub and CDN fronts)
#   other.pem, other.key        a leaf for DNS other.invalid only (a certificate for another name)
#   expired.pem, expired.key    a leaf for 127.0.0.1 and 127.0.0.2 valid in January 2020 only
#   ticket.key                  48 random bytes: TLS session tickets a restarted front still
#                               accepts (nghttpx --tls-ticket-key-file)
# Every leaf is signed by ca.pem and valid (expired.pem aside) for 2 days from now. Loopback only.
set -euo pipefail
dir=$1
mkdir -p "$dir"
cd "$dir"
ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.pem -days 3 -subj "/CN=hubwatch test CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  2>/dev/null
leaf_request() {  # leaf_request NAME SAN: NAME.key, NAME.csr and NAME.ext
  openssl req "${ec[@]}" -keyout "$1.key" -out "$1.csr" -subj "/CN=$1" 2>/dev/null
  printf '%s\n' "subjectAltName=$2" "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" \
    "subjectKeyIdentifier=hash" "authorityKeyIdentifier=keyid" >"$1.ext"
}
for spec in "loopback IP:127.0.0.1,IP:127.0.0.2" "other DNS:other.invalid"; do
  set -- $spec
  leaf_request "$1" "$2"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
    -extfile "$1.ext" -out "$1.pem" 2>/dev/null
done
# An expired leaf: OpenSSL 3.0's x509 cannot set a start date in the past; `openssl ca` can.
leaf_request expired "IP:127.0.0.1,IP:127.0.0.2"
: >index.txt
echo 1000 >serial
cat >ca.cnf <<'CNF'
[ca]
default_ca = test_ca
[test_ca]
database = index.txt
serial = serial
new_certs_dir = .
default_md = sha256
policy = any_name
unique_subject = no
[any_name]
commonName = supplied
CNF
openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in expired.csr -out expired.pem \
  -extfile expired.ext -startdate 20200101000000Z -enddate 20200201000000Z -notext 2>/dev/null
head -c 48 /dev/urandom >ticket.key
rm -f ./*.csr ./*.ext ca.cnf index.txt* serial* ./*.srl 1000.pem
