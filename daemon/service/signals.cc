#include "daemon/service/signals.h"

#include <pthread.h>

#include <csignal>
#include <initializer_list>

namespace hubwatch::service {
namespace {

sigset_t ServiceSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, sig);
  return set;
}

}  // namespace

void BlockServiceSignals() {
  const sigset_t set = ServiceSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void UnblockServiceSignals() {
  const sigset_t set = ServiceSignals();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

}  // namespace hubwatch::service
