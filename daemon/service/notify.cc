#include "daemon/service/notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace hubwatch::service {

Notifier Notifier::FromEnvironment() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  std::optional<std::chrono::microseconds> watchdog;
  if (const char* usec = std::getenv("WATCHDOG_USEC")) {
    const char* pid = std::getenv("WATCHDOG_PID");
    const long long value = std::atoll(usec);
    if (value > 0 && (!pid || std::atoll(pid) == static_cast<long long>(getpid()))) {
      watchdog = std::chrono::microseconds(value);
    }
  }
  return Notifier(socket ? socket : "", watchdog);
}

Status Notifier::Reloading() const {
  // Not the injected Clock: systemd compares this stamp with its own CLOCK_MONOTONIC, so it
  // must be that clock's reading, in tests too.
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const long long usec = static_cast<long long>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
  return Send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec));
}

Status Notifier::StatusLine(std::string_view line) const {
  std::string one(line);
  for (char& c : one) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return Send("STATUS=" + one);
}

Status Notifier::Send(std::string_view message) const {
  if (socket_.empty()) return Status::Ok();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_.size() >= sizeof(addr.sun_path) || (socket_[0] != '/' && socket_[0] != '@')) {
    return Error::InvalidInput("NOTIFY_SOCKET is not an absolute path or abstract name");
  }
  std::memcpy(addr.sun_path, socket_.data(), socket_.size());
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';
  const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_.size());
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Error::Io(std::string("notify: socket: ") + std::strerror(errno));
  Status result;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
    result = Error::Io(std::string("notify: connect: ") + std::strerror(errno));
  } else if (send(fd, message.data(), message.size(), MSG_DONTWAIT | MSG_NOSIGNAL) !=
             static_cast<ssize_t>(message.size())) {
    // Never blocks the event loop: a manager that stopped reading loses the message instead.
    result = Error::Io(std::string("notify: send: ") + std::strerror(errno));
  }
  close(fd);
  return result;
}

}  // namespace hubwatch::service
