#pragma once

// ReleaseFreedMemory: gives the heap's free pages back to the system. glibc keeps what a large
// piece of work freed (a parsed request body, a checkpoint's headers and graph) in its arenas,
// so the resident set stays at the work's peak; malloc_trim releases free pages in the middle
// of the heap too, not only at its top. Call it after such work, not on a hot path (it walks
// the arenas). Blocks of 128 KiB and more never stay in `hubwatch serve`: it fixes glibc's
// mmap threshold there (cmd_serve.cc), so they are unmapped when freed. A no-op elsewhere than
// glibc. Thread-safe.

namespace hubwatch {

void ReleaseFreedMemory();

}  // namespace hubwatch
