#pragma once

// The real wire for tests and benchmarks: a throwaway PKI (make_test_pki.sh, the openssl CLI)
// and nghttpx processes terminating TLS (ALPN h2,http/1.1 by default) before fakehub's
// cleartext listeners. Each front writes an access log that says which protocol and which client
// connection (its remote port) served each request. Loopback addresses only.
//
// Thread safety: none; use from one thread. A TlsFront owns its nghttpx process and kills it
// when destroyed.

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "estimator/base/result.h"

namespace hubwatch::tls_test {

// The nghttpx executable, "" when it is not installed (Debian: nghttp2-proxy).
std::string NghttpxPath();

struct TestPki {
  std::string dir;
  std::string ca;                           // the test CA, PEM
  std::string loopback_cert, loopback_key;  // IP SANs 127.0.0.1 and 127.0.0.2
  std::string other_cert, other_key;        // DNS other.invalid only
  std::string expired_cert, expired_key;    // 127.0.0.1 and 127.0.0.2, expired in 2020
  std::string ticket_key;                   // session ticket key (48 bytes)
};

// Made once per process (in a fresh temp dir), then returned again.
Result<TestPki> SharedTestPki();

// A port that was free on `host` a moment ago (bound to port 0, then released).
uint16_t FreePort(const std::string& host);

struct AccessLogEntry {
  std::string protocol;  // "HTTP/2", "HTTP/1.1"
  int remote_port = 0;   // one client connection per port
  bool session_reused = false;
  std::string method;
  std::string path;
  int status = 0;
};

struct FrontOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: a free one
  std::string backend_host = "127.0.0.1";
  uint16_t backend_port = 0;
  std::string cert;
  std::string key;
  std::string alpn = "h2,http/1.1";  // "http/1.1": a front that speaks no h2
  // A fixed session ticket key: sessions survive Restart(). "": a fresh key per process.
  std::string ticket_key;
};

class TlsFront {
 public:
  // Starts nghttpx and waits (up to 5 s) until it accepts connections. Its logs go to work_dir.
  static Result<std::unique_ptr<TlsFront>> Start(FrontOptions options, std::string work_dir);
  ~TlsFront();
  TlsFront(const TlsFront&) = delete;
  TlsFront& operator=(const TlsFront&) = delete;

  std::string url() const;  // "https://HOST:PORT"
  uint16_t port() const { return options_.port; }
  pid_t pid() const { return pid_; }  // 0 when stopped
  // Kills the process (connections die with it) and starts a new one on the same port, with the
  // same certificate; returns once it accepts connections.
  Status Restart();
  void Stop();  // kills the process; idempotent
  std::vector<AccessLogEntry> AccessLog() const;
  // Distinct client connections seen in the access log.
  size_t Connections() const;

 private:
  TlsFront(FrontOptions options, std::string work_dir);
  Status Launch();

  FrontOptions options_;
  std::string work_dir_;
  std::string access_log_;
  pid_t pid_ = 0;
};

}  // namespace hubwatch::tls_test
