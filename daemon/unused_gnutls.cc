// GnuTLS is in hubwatch's process only because Debian's libcurl links LDAP and RTMP, which link
// it; hubwatch speaks TLS through libcurl's OpenSSL backend and never through GnuTLS. GnuTLS
// initialises itself from a library constructor at load time unless the program defines this
// exported hook (the same switch as GNUTLS_NO_IMPLICIT_INIT=1): that constructor's global state
// was ~0.8 MiB of resident memory (BENCHMARKS.md "The real wire"). Code that does use GnuTLS
// calls gnutls_global_init() itself (OpenLDAP's and librtmp's TLS code and libcurl's GnuTLS
// backend all do), so skipping the implicit call breaks nothing. The symbol is exported from the
// executable by daemon/CMakeLists.txt (--export-dynamic-symbol) so that the dynamic linker binds
// libgnutls's weak definition to this one.

extern "C" __attribute__((visibility("default"))) int _gnutls_global_init_skip() { return 1; }
