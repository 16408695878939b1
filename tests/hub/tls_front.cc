#include "tests/hub/tls_front.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

namespace hubwatch::tls_test {
namespace {

sockaddr_in Loopback(const std::string& host, uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  return addr;
}

bool Accepts(const std::string& host, uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr = Loopback(host, port);
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

// Starts `args` with stdout and stderr on /dev/null (nghttpx writes its own log files). The child
// is killed when the thread that started it dies (PR_SET_PDEATHSIG), so a test killed by a
// timeout leaves no front behind. Between fork and exec only async-signal-safe calls.
Result<pid_t> Spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return Error::Io("cannot start " + args[0]);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent is already gone
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, 1);
      dup2(null, 2);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

std::string NghttpxPath() {
  for (const char* candidate :
       {"/usr/sbin/nghttpx", "/usr/bin/nghttpx", "/usr/local/bin/nghttpx"}) {
    if (access(candidate, X_OK) == 0) return candidate;
  }
  return "";
}

Result<TestPki> SharedTestPki() {
  static const Result<TestPki> pki = []() -> Result<TestPki> {
    char dir_template[] = "/tmp/hubwatch-pki.XXXXXX";
    if (mkdtemp(dir_template) == nullptr) return Error::Io("mkdtemp failed");
    TestPki p;
    p.dir = dir_template;
    const std::string command = std::string("bash ") + HUBWATCH_TLS_PKI_SCRIPT + " " + p.dir;
    if (std::system(command.c_str()) != 0) return Error::Io("failed: " + command);
    p.ca = p.dir + "/ca.pem";
    p.loopback_cert = p.dir + "/loopback.pem";
    p.loopback_key = p.dir + "/loopback.key";
    p.other_cert = p.dir + "/other.pem";
    p.other_key = p.dir + "/other.key";
    p.expired_cert = p.dir + "/expired.pem";
    p.expired_key = p.dir + "/expired.key";
    p.ticket_key = p.dir + "/ticket.key";
    return p;
  }();
  // Removed at exit (after every front: a front's logs live in its work dir, not here).
  static const struct Cleanup {
    ~Cleanup() {
      if (pki.ok()) {
        std::error_code ignored;
        std::filesystem::remove_all(pki->dir, ignored);
      }
    }
  } cleanup;
  return pki;
}

uint16_t FreePort(const std::string& host) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr = Loopback(host, 0);
  socklen_t length = sizeof addr;
  uint16_t port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

TlsFront::TlsFront(FrontOptions options, std::string work_dir)
    : options_(std::move(options)), work_dir_(std::move(work_dir)) {
  if (options_.port == 0) options_.port = FreePort(options_.host);
  access_log_ =
      work_dir_ + "/front-" + options_.host + "-" + std::to_string(options_.port) + ".log";
}

Result<std::unique_ptr<TlsFront>> TlsFront::Start(FrontOptions options, std::string work_dir) {
  if (NghttpxPath().empty()) return Error::Io("nghttpx is not installed (nghttp2-proxy)");
  std::unique_ptr<TlsFront> front(new TlsFront(std::move(options), std::move(work_dir)));
  std::remove(front->access_log_.c_str());
  if (Status s = front->Launch(); !s.ok()) return s.error();
  return front;
}

TlsFront::~TlsFront() { Stop(); }

std::string TlsFront::url() const {
  return "https://" + options_.host + ":" + std::to_string(options_.port);
}

Status TlsFront::Launch() {
  const std::string port = std::to_string(options_.port);
  std::vector<std::string> args = {
      NghttpxPath(),
      "--conf=/dev/null",  // never the system's /etc/nghttpx/nghttpx.conf
      "--single-process",
      "--workers=1",
      "--frontend=" + options_.host + "," + port,
      "--backend=" + options_.backend_host + "," + std::to_string(options_.backend_port),
      "--backend-connections-per-frontend=0",
      "--npn-list=" + options_.alpn,
      "--no-via",
      "--no-location-rewrite",
      "--no-ocsp",
      "--accesslog-file=" + access_log_,
      "--accesslog-format=$protocol_version $remote_port $tls_session_reused $method $path $status",
      "--errorlog-file=" + work_dir_ + "/front-" + options_.host + "-" + port + ".err",
  };
  if (!options_.ticket_key.empty()) {
    args.push_back("--tls-ticket-key-file=" + options_.ticket_key);
    args.push_back("--tls-ticket-key-cipher=aes-128-cbc");  // 48-byte keys
  }
  args.push_back(options_.key);
  args.push_back(options_.cert);
  Result<pid_t> pid = Spawn(args);
  if (!pid.ok()) return pid.error();
  pid_ = *pid;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!Accepts(options_.host, options_.port)) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = 0;
      return Error::Io("nghttpx exited at start (see " + work_dir_ + ")");
    }
    if (std::chrono::steady_clock::now() > deadline) return Error::Io("nghttpx did not listen");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return Status::Ok();
}

Status TlsFront::Restart() {
  Stop();
  return Launch();
}

void TlsFront::Stop() {
  if (pid_ == 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = 0;
}

std::vector<AccessLogEntry> TlsFront::AccessLog() const {
  std::vector<AccessLogEntry> entries;
  std::ifstream in(access_log_);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    AccessLogEntry e;
    std::string reused;
    if (fields >> e.protocol >> e.remote_port >> reused >> e.method >> e.path >> e.status) {
      e.session_reused = reused == "r";
      entries.push_back(std::move(e));
    }
  }
  return entries;
}

size_t TlsFront::Connections() const {
  std::set<int> ports;
  for (const AccessLogEntry& e : AccessLog()) ports.insert(e.remote_port);
  return ports.size();
}

}  // namespace hubwatch::tls_test
