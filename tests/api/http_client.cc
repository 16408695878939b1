#include "tests/api/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace hubwatch::api::testing {

RawConnection::RawConnection(uint16_t port, int receive_buffer) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  if (receive_buffer > 0) {
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) ::close(fd_);
}

bool RawConnection::Send(const std::string& bytes) {
  size_t sent = 0;
  while (fd_ >= 0 && sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return fd_ >= 0;
}

std::string RawConnection::ReadUntil(const std::function<bool(const std::string&)>& done,
                                     std::chrono::milliseconds timeout) {
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (fd_ >= 0 && !eof_ && !(done && done(out))) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    char buf[16384];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof_ = true;
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::string RawConnection::ReadToEof(std::chrono::milliseconds timeout) {
  return ReadUntil(nullptr, timeout);
}

bool RawConnection::ClosedWithin(std::chrono::milliseconds timeout) {
  ReadToEof(timeout);
  return eof_;
}

HttpResponse ParseResponse(const std::string& raw, bool to_head) {
  HttpResponse r;
  r.raw = raw;
  const size_t end = raw.find("\r\n\r\n");
  if (end == std::string::npos || raw.compare(0, 9, "HTTP/1.1 ") != 0) return r;
  r.status = std::atoi(raw.substr(9, 3).c_str());
  size_t line = raw.find("\r\n") + 2;
  while (line < end) {
    const size_t next = raw.find("\r\n", line);
    const std::string h = raw.substr(line, next - line);
    const size_t colon = h.find(':');
    if (colon != std::string::npos) {
      std::string name = h.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      size_t v = colon + 1;
      while (v < h.size() && h[v] == ' ') ++v;
      r.headers[name] = h.substr(v);
    }
    line = next + 2;
  }
  r.body = raw.substr(end + 4);
  if (r.headers.count("content-length") && !to_head) {
    const size_t length = std::stoul(r.headers["content-length"]);
    if (r.body.size() < length) {
      r.status = 0;  // truncated
    } else {
      r.body.resize(length);
    }
  }
  return r;
}

HttpResponse Request(uint16_t port, const std::string& method, const std::string& target,
                     const std::string& body, const Headers& headers) {
  RawConnection c(port);
  if (!c.connected()) return {};
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                    "\r\nConnection: close\r\n";
  for (const auto& [name, value] : headers) req += name + ": " + value + "\r\n";
  if (!body.empty() || method == "POST") {
    req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  req += "\r\n" + body;
  c.Send(req);
  return ParseResponse(c.ReadToEof(std::chrono::seconds(30)), method == "HEAD");
}

}  // namespace hubwatch::api::testing
