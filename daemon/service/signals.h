#pragma once

// The signals `hubwatch serve` handles: SIGTERM and SIGINT stop it, SIGHUP reloads it. Until
// the service has installed its handlers, their default action would kill the process (a
// SIGHUP in the first milliseconds of a start: exit 129); blocked, they wait instead.

namespace hubwatch::service {

// Blocks the three in the calling thread and in every thread it starts afterwards (threads
// inherit the mask). main() calls it for `serve` before anything else runs.
void BlockServiceSignals();
// Unblocks them in the calling thread. REQUIRES: their handlers are installed.
void UnblockServiceSignals();

}  // namespace hubwatch::service
